"""Archived records read as the crawl reads live pages: a record's HTTP status and
headers reach the crawl's recognisers of walls, paywalls and reservations in ``python -m
spidercrawl.extract``, with and without ``--models``. Real WARC files written with warcio,
the real command."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from spidercrawl.runner import PROJECT_ROOT
from tests.test_walls import CLOUDFLARE, DATADOME


def story(name: str, head: str = "", opening: str = "<!DOCTYPE html>\n<html lang='en'>") -> bytes:
    """An article page of its own words (near-duplicates aside), ``head`` in its head."""
    paragraphs = "".join(
        f"<p>Paragraph {n} of the {name} story: the harbour council voted on the {name}{n} "
        f"quay, and residents who live near the {name}{n + 6} pier said it would change "
        "the town for good.</p>"
        for n in range(6)
    )
    return (
        f"{opening}<head><meta charset='utf-8'><title>The {name} story</title>{head}</head>"
        f"<body><article><h1>The {name} story</h1>{paragraphs}</article></body></html>"
    ).encode()


PAYWALLED = story(
    "locked",
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": '
    '"NewsArticle", "headline": "Locked", "isAccessibleForFree": false}</script>',
)


@dataclass(frozen=True)
class Record:
    url: str
    body: bytes
    status: str = "200 OK"
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/html; charset=utf-8"),)


def write_warc(path: Path, records: list[Record]) -> Path:
    """A gzipped WARC of response records, none with WARC-Identified-Payload-Type."""
    with path.open("wb") as file:
        writer = WARCWriter(file, gzip=True)
        for record in records:
            http = StatusAndHeaders(record.status, list(record.headers), "HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                record.url, "response", payload=io.BytesIO(record.body), http_headers=http,
            ))  # fmt: skip
    return path


def html(*extra: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return (("Content-Type", "text/html; charset=utf-8"), *extra)


PUSHBACK = [
    Record("https://news.example/plain", story("plain")),
    Record("https://news.example/noai", story("noai"), headers=html(("X-Robots-Tag", "noai"))),
    Record("https://news.example/googlebot", story("googlebot"),
           headers=html(("X-Robots-Tag", "googlebot: noindex"))),
    Record("https://news.example/gptbot", story("gptbot"),
           headers=html(("X-Robots-Tag", "GPTBot: noai"))),
    Record("https://news.example/gptbot-meta",
           story("meta", '<meta name="GPTBot" content="noai">')),
    Record("https://news.example/tdm", story("tdm"), headers=html(("tdm-reservation", "1"))),
    Record("https://news.example/locked", PAYWALLED),
    Record("https://news.example/moved", b"<html><body>Moved</body></html>", "301 Moved",
           html(("Location", "https://news.example/plain"))),
    Record("https://walls.example/challenge", CLOUDFLARE.encode(), "403 Forbidden",
           html(("Server", "cloudflare"))),
    Record("https://walls.example/captcha", DATADOME.encode()),
]  # fmt: skip


def extract(warc: Path, out: Path, *options: str) -> tuple[dict[str, dict], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "spidercrawl.extract", "--no-progress", *options, str(warc),
         "-o", str(out)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return {item["url"].rsplit("/", 1)[-1]: item for item in items}, proc.stderr


@pytest.fixture(scope="module")
def pushback_warc(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pushback") / "warc"
    folder.mkdir()
    return write_warc(folder / "pushback.warc.gz", PUSHBACK)


def test_the_extract_command_reads_a_records_status_and_headers(pushback_warc, tmp_path):
    items, log = extract(pushback_warc, tmp_path / "all.jsonl")
    # Walls and a redirect are no articles; every other page is one.
    assert sorted(items) == ["googlebot", "gptbot", "gptbot-meta", "locked", "noai", "plain",
                             "tdm"], log[-3000:]  # fmt: skip
    assert items["noai"]["reserved"] == ["noai"]
    assert items["tdm"]["reserved"] == ["tdm"]
    # A directive for one search engine, or for an agent not in ROBOTS_AGENTS: not ours.
    for name in ("plain", "googlebot", "gptbot", "gptbot-meta"):
        assert "reserved" not in items[name], items[name].get("reserved")
    assert items["locked"]["access"] == "paywalled"
    walls = "DataDome captcha: 1; HTTP 403, Cloudflare challenge: 1"
    assert f"walls.example: 2 of 2 records blocked ({walls}), 0 paywalled, 0 reserved" in log
    news = "news.example: 0 of 7 records blocked, 1 paywalled, 2 reserved (noai: 1, tdm: 1)"
    assert news in log
    assert "walls.example/challenge: blocked (HTTP 403, Cloudflare challenge)" in log
    assert "7 articles extracted" in log and "1 redirects or HTTP errors, 2 walls" in log

    models = tmp_path / "models"  # no host has a model: every record by the arbiter
    models.mkdir()
    items, log = extract(pushback_warc, tmp_path / "agents.jsonl", "--models", str(models),
                         "--robots-agents", "GPTBot")  # fmt: skip
    assert len(items) == 7 and "challenge" not in items and "captcha" not in items
    assert items["gptbot"]["reserved"] == ["noai"]
    assert items["gptbot-meta"]["reserved"] == ["noai"]
    assert "reserved" not in items["googlebot"]
    table = [line for line in log.splitlines() if "walls.example " in line]
    assert table and table[-1].split()[-5:] == ["2", "no", "0", "0", "0"], table
    news = "news.example: 0 of 7 records blocked, 1 paywalled, 4 reserved (noai: 3, tdm: 1)"
    assert news in log
