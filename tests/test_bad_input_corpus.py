"""A corpus of hostile inputs for the extract command: each is made here (no bomb is kept
in the repository), handed to ``python -m spidercrawl.extract`` as a user would, and must
end within 30 s and 1 GB with a clear line and the good pages of the same run extracted.

Before, the WARC bomb took over 4 GB and was killed at 170 s with no output, the page
nested 100,000 levels deep was killed at 150 s, the 50 MB page took 52 s and 1.5 GB, and
records cut short gave an empty or a partial article with no word of it.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from spidercrawl.files import PROJECT_ROOT

STORY = "<html><body><h1>Harbour</h1>" + "<p>The harbour council met today. </p>" * 40
GOOD = (STORY + "</body></html>").encode()
LIMIT_SECONDS, LIMIT_BYTES = 30, 2**30


def warc(records: list[tuple[str, bytes, list[tuple[str, str]]]], gzipped: bool) -> bytes:
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=gzipped)
    for url, payload, headers in records:
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), *headers], "HTTP/1.1")
        record = writer.create_warc_record(
            url, "response", payload=io.BytesIO(payload), http_headers=http
        )
        writer.write_record(record)
    return buffer.getvalue()


def gzip_bomb(unpacked: int) -> bytes:
    """An HTML page of about ``unpacked`` bytes (whole MBs of zeros), gzipped to about a
    thousandth of its size. Each MB is compressed once: after a full flush the compressor
    starts afresh, so every MB of zeros packs to the same bytes, repeated here (deflating
    2 GB took seconds of every run); the gzip trailer's CRC-32 and length are the whole
    page's, so the bomb is a valid gzip stream to its end."""
    head, zeros = b"<html><body><p>", b"\0" * 2**20
    megabytes = unpacked // len(zeros)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip framing
    start = packer.compress(head) + packer.flush(zlib.Z_FULL_FLUSH)
    one_mb = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    last_block = packer.flush()[:-8]  # the final empty block, less the trailer
    crc = zlib.crc32(head)
    for _ in range(megabytes):
        crc = zlib.crc32(zeros, crc)
    size = (len(head) + megabytes * len(zeros)) & 0xFFFFFFFF
    return start + one_mb * megabytes + last_block + struct.pack("<II", crc, size)


def test_the_bomb_is_a_valid_gzip_stream_of_its_size() -> None:
    """The bomb is what it claims: a whole gzip stream that unpacks to its size."""
    bomb, unpacked = gzip_bomb(8 * 2**20), zlib.decompressobj(31)
    total = len(unpacked.decompress(bomb)) + len(unpacked.flush())
    assert unpacked.eof and total == len(b"<html><body><p>") + 8 * 2**20


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_bomb(2 * 2**30)  # 2 GB once unpacked


def extract(tmp_path: Path, *files: Path) -> tuple[Run, float, int]:
    """The extract command on ``files``: what it said, seconds, and its peak memory in
    bytes (that one process's, from ``wait4``)."""
    stderr = tmp_path / "stderr.txt"
    started = time.perf_counter()
    with stderr.open("wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "spidercrawl.extract", "--no-progress",
             "-o", str(tmp_path / "out.jsonl"), *map(str, files)],
            cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=errors,
        )  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    return Run(process.returncode, stderr.read_text("utf-8")), seconds, usage.ru_maxrss * 1024


@dataclass
class Run:
    returncode: int
    stderr: str


def articles(tmp_path: Path) -> list[dict]:
    lines = (tmp_path / "out.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("gzipped", [True, False])
def test_a_warc_compression_bomb_is_skipped_in_bounded_time_and_memory(
    tmp_path, gzipped, bomb
) -> None:
    path = tmp_path / ("bomb.warc.gz" if gzipped else "bomb.warc")
    path.write_bytes(warc([
        ("http://x.example/bomb", bomb, [("Content-Encoding", "gzip")]),
        ("http://x.example/good", GOOD, []),
    ], gzipped))  # fmt: skip
    result, seconds, peak = extract(tmp_path, path)
    assert seconds < LIMIT_SECONDS and peak < LIMIT_BYTES, (seconds, peak)
    assert "more than 33554432 bytes (a bomb?): skipped" in result.stderr
    assert [a["url"] for a in articles(tmp_path)] == ["http://x.example/good"]


@pytest.mark.parametrize("gzipped", [True, False])
def test_a_warc_record_cut_short_is_reported_not_extracted(tmp_path, gzipped) -> None:
    whole = warc([("http://x.example/a", GOOD, []), ("http://x.example/b", GOOD, [])], gzipped)
    path = tmp_path / ("cut.warc.gz" if gzipped else "cut.warc")
    path.write_bytes(whole[:-40])
    result, _, _ = extract(tmp_path, path)
    assert [a["url"] for a in articles(tmp_path)] == ["http://x.example/a"]
    assert "cut short" in result.stderr


def test_a_warc_cut_inside_its_first_record_says_so(tmp_path) -> None:
    path = tmp_path / "stub.warc.gz"
    path.write_bytes(warc([("http://x.example/a", GOOD, [])], True)[:200])
    result, _, _ = extract(tmp_path, path)
    assert articles(tmp_path) == [] and result.returncode == 1
    assert "no WARC record could be read" in result.stderr or "cut short" in result.stderr


def test_a_page_nested_100000_deep_is_flattened_in_bounded_time(tmp_path) -> None:
    depth = 100_000
    path = tmp_path / "deep.html"
    path.write_text(STORY + "<div>" * depth + "deep text" + "</div>" * depth + "</body></html>")
    result, seconds, peak = extract(tmp_path, path)
    assert seconds < LIMIT_SECONDS and peak < LIMIT_BYTES, (seconds, peak)
    (article,) = articles(tmp_path)
    assert "The harbour council met today." in article["text"]
    assert "flattened" in result.stderr


def test_a_page_over_the_size_limit_is_refused_at_once(tmp_path) -> None:
    huge = tmp_path / "huge.html"
    with huge.open("w") as file:
        file.write(STORY)
        for _ in range(50):
            file.write("<p>" + "word " * 200_000 + "</p>")  # 50 MB in all
    good = tmp_path / "good.html"
    good.write_bytes(GOOD)
    result, seconds, peak = extract(tmp_path, huge, good)
    assert seconds < LIMIT_SECONDS and peak < LIMIT_BYTES, (seconds, peak)
    assert "more than a page may have" in result.stderr
    assert [Path(a["url"]).name for a in articles(tmp_path)] == ["good.html"]


def test_a_tag_of_200000_attributes_is_cut_and_its_page_extracted_in_bounded_time(
    tmp_path,
) -> None:
    """Every parser of the page (ours, the peers', lexbor's) compares each attribute of a
    tag with those before it: 200,000 took minutes of CPU. Values quoted around ``<`` and
    ``>``, which a tag pattern of brackets would not see as one tag, included."""
    flood = " ".join(f'data-a{n}="x<y>"' if n % 2 else f"a{n}" for n in range(200_000))
    path = tmp_path / "flood.html"
    path.write_text(STORY.replace("<h1>", f'<h1 class="title" {flood}>') + "</body></html>")
    result, seconds, peak = extract(tmp_path, path)
    assert seconds < LIMIT_SECONDS and peak < LIMIT_BYTES, (seconds, peak)
    (article,) = articles(tmp_path)
    assert "The harbour council met today." in article["text"]
    assert "1 start tag(s) of more than 2000 attributes: cut after the first 2000" in result.stderr
