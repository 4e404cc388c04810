"""Archived records read as the crawl reads live pages. Every HTML record of a WARC is a
document through our datatrove reader, whatever its WARC headers (datatrove's own reader
asks libmagic, which takes real article pages for scripts); a record's HTTP status and
headers reach the crawl's recognisers of walls, paywalls and reservations, in ``python -m
spidercrawl.extract`` (with and without ``--models``) and in a datatrove pipeline. Real
WARC files written with warcio, the real command, datatrove's local executor."""

from __future__ import annotations

import gzip
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

SCRIPT = (
    "<script type='text/javascript'>\nvar _gaq = _gaq || [];\n_gaq.push(['_setAccount', "
    "'UA-1']);\n(function() { var ga = document.createElement('script'); ga.async = true; "
    "})();\n</script>\n"
)


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


# Pages libmagic names application/javascript: a blank line before the doctype, and IE's
# conditional comments, each with a script early in its head.
BLANK_LINE_DOCTYPE = story("blank", SCRIPT, "\n\n<!DOCTYPE html>\n<html lang='en'>")
IE_CONDITIONAL = story(
    "conditional", SCRIPT,
    "<!--[if lt IE 9]><html class='ie8' lang='en'><![endif]-->\n"
    "<!--[if gt IE 8]><!--><html lang='en'><!--<![endif]-->\n",
)  # fmt: skip
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


def run_pipeline(warcs: Path, reader: object, out: Path, *steps: object) -> list[dict]:
    """A datatrove pipeline on its local executor: ``reader``, ``steps``, a JSONL writer;
    the documents written."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    LocalPipelineExecutor(
        pipeline=[reader, *steps, JsonlWriter(str(out / "docs"))],
        tasks=1, workers=1, logging_dir=str(out / "logs"),
    ).run()  # fmt: skip
    return [json.loads(line) for path in sorted((out / "docs").glob("*.jsonl.gz"))
            for line in gzip.decompress(path.read_bytes()).decode().splitlines()]  # fmt: skip


def test_every_html_record_is_a_document_through_our_reader(tmp_path) -> None:
    from datatrove.pipeline.readers import WarcReader as DatatroveWarcReader

    from spidercrawl.datatrove import WarcReader

    records = [
        Record("https://old.example/blank", BLANK_LINE_DOCTYPE),
        Record("https://old.example/conditional", IE_CONDITIONAL),
        Record("https://old.example/plain", story("plain")),
        # No Content-Type at all: the markup says HTML.
        Record("https://old.example/untyped", story("untyped", SCRIPT, "\n<html>"), headers=()),
        Record("https://old.example/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(200),
               headers=(("Content-Type", "image/png"),)),
        Record("https://old.example/app.js", b"var harbour = {quay: 1};\n" * 20,
               headers=(("Content-Type", "application/javascript"),)),
    ]  # fmt: skip
    pages = {record.url for record in records[:4]}
    warcs = tmp_path / "warc"
    warcs.mkdir()
    write_warc(warcs / "old.warc.gz", records)

    theirs = run_pipeline(warcs, DatatroveWarcReader(str(warcs)), tmp_path / "datatrove")
    ours = run_pipeline(warcs, WarcReader(str(warcs)), tmp_path / "ours")

    read = {doc["metadata"]["url"] for doc in ours}
    assert read == pages, read  # every HTML record, and nothing else
    assert all(doc["metadata"]["http_status"] == 200 for doc in ours)
    blank = next(doc for doc in ours if doc["metadata"]["url"].endswith("/blank"))
    assert "Paragraph 5 of the blank story" in blank["text"]
    lost = pages - {doc["metadata"]["url"] for doc in theirs}
    # libmagic (file 5.44 here) calls the first two application/javascript.
    assert {"https://old.example/blank", "https://old.example/conditional"} <= lost, lost


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


def test_a_datatrove_pipeline_drops_walls_and_counts_them(pushback_warc, tmp_path):
    from spidercrawl.datatrove import SiteModelExtractor, WarcReader

    out = tmp_path / "run"
    docs = run_pipeline(
        pushback_warc.parent, WarcReader(str(pushback_warc.parent)), out,
        SiteModelExtractor(models=None, robots_agents=["GPTBot"]),
    )  # fmt: skip
    by_name = {doc["metadata"]["url"].rsplit("/", 1)[-1]: doc for doc in docs}
    assert sorted(by_name) == ["googlebot", "gptbot", "gptbot-meta", "locked", "noai", "plain",
                               "tdm"]  # fmt: skip
    assert by_name["gptbot"]["metadata"]["reserved"] == ["noai"]
    assert "reserved" not in by_name["googlebot"]["metadata"]
    assert by_name["locked"]["metadata"]["access"] == "paywalled"
    assert all("http_headers" not in doc["metadata"] for doc in docs)
    stats = json.loads((out / "logs" / "stats.json").read_text())
    reader, extractor = (
        {name: v["total"] if isinstance(v, dict) else v for name, v in step["stats"].items()}
        for step in stats[:2]
    )
    assert reader["redirects_and_errors"] == 1 and reader["documents"] == 9, reader
    assert extractor["blocked"] == 2, extractor
    assert extractor["blocked/cloudflare_challenge"] == 1
    assert extractor["blocked/datadome_captcha"] == 1
    assert extractor["paywalled"] == 1 and extractor["reserved"] == 4
    assert extractor["reserved/noai"] == 3 and extractor["reserved/tdm"] == 1
