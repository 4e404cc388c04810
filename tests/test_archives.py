"""Archives at corpus scale: every host of a WARC collection learned from its own archived
pages (rendered in the real Chromium, as a crawl learns), then each record extracted by
its host's model (the arbiter where its host has none), with the corpus filters; and the
same extraction as a datatrove pipeline step between our WARC reader and datatrove's JSONL
writer on its local executor."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from spidercrawl.learn.model import SiteModel
from spidercrawl.runner import PROJECT_ROOT
from tests.test_walls import CLOUDFLARE, DATADOME

DEMO = PROJECT_ROOT / "demo" / "harbourtimes.example"


# A second site's templates (its news, its features, its live pages and its briefs, the
# last with two training pages only), the story's wrapper and its paragraphs' class each
# their own.
QUAY_TEMPLATES = [
    ("div", "story", "story-text", "body-text"),
    ("section", "feature", "feature-copy", "copy"),
    ("article", "live", "live-entries", "entry"),
    ("main", "brief", "brief-body", "brief-line"),
]


def quay_page(number: int, template: int | None = None) -> bytes:
    """A story of a second site, in the template ``number % 3`` of its first three (or
    ``template``)."""
    tag, outer, inner, paragraph = QUAY_TEMPLATES[number % 3 if template is None else template]
    paragraphs = "".join(
        f"<p class='{paragraph}'>Quay story {number}, part {k}: the ferry{number} operator "
        f"and the dock{k} workers agreed on new timetables for the winter{number} season.</p>"
        for k in range(7)
    )
    return (
        f"<html lang='en'><head><title>Quay story {number}</title><meta name='description' "
        f"content='ferry{number} timetables for winter{number}'></head><body><header>"
        "<a href='/'>Quay News</a> <a href='/ferries/'>Ferries</a></header><div id='main'>"
        f"<{tag} class='{outer}'><h1>Ferry{number} timetables agreed</h1><div class='{inner}'>"
        f"{paragraphs}</div></{tag}><aside><a href='/x'>Most read</a></aside></div><footer>"
        "<p>Quay News Ltd</p></footer></body></html>"
    ).encode()


def small_page(number: int) -> bytes:
    text = "".join(f"<p>Small site note {number}.{k} about the harbour wall repairs.</p>"
                   for k in range(5))  # fmt: skip
    return f"<html><head><title>Note {number}</title></head><body>{text}</body></html>".encode()


def demo_pages() -> list[tuple[str, bytes]]:
    rows = [line.split("\t") for line in (DEMO / "index.tsv").read_text().splitlines() if line]
    return [(url.replace("://", "://www.", 1), (DEMO / "pages" / f"{page}.html").read_bytes())
            for page, url in rows]  # fmt: skip


def write_warc(path: Path, records: list[tuple[str, bytes, str] | tuple[str, bytes, str, str]]):
    """Response records of (URL, body, WARC-Date[, HTTP status line: 200 OK by default])."""
    with path.open("wb") as file:
        writer = WARCWriter(file, gzip=True)
        for url, body, date, *status in records:
            status_line = status[0] if status else "200 OK"
            headers = StatusAndHeaders(status_line, [("Content-Type", "text/html")], "HTTP/1.1")
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), http_headers=headers,
                warc_headers_dict={"WARC-Date": date},
            )  # fmt: skip
            writer.write_record(record)


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> Path:
    """learn.warc.gz: 20 demo pages (www.harbourtimes.example), 14 quay.example pages (4
    in each of three templates, 2 briefs), 3 small.example pages, 10 walls.example pages
    (five Cloudflare challenges answered 403, five DataDome captchas answered 200);
    test.warc.gz: the other 10 demo pages, 5 new quay.example pages (one a brief), 2
    small.example pages."""
    root = tmp_path_factory.mktemp("archive")
    demo = demo_pages()
    learn = [(url, body, "2026-03-01T10:00:00Z") for url, body in demo[:20]]
    learn += [(f"https://quay.example/ferries/story-{n}.html", quay_page(n), "2026-03-02T10:00:00Z")
              for n in range(12)]  # fmt: skip
    learn += [(f"https://quay.example/briefs/{n}.html", quay_page(n, 3), "2026-03-02T10:00:00Z")
              for n in range(12, 14)]  # fmt: skip
    learn += [(f"https://small.example/n/{n}", small_page(n), "2026-03-03T10:00:00Z")
              for n in range(3)]  # fmt: skip
    learn += [(f"https://walls.example/a/{n}", CLOUDFLARE.encode(), "2026-03-03T10:00:00Z",
               "403 Forbidden") for n in range(5)]  # fmt: skip
    learn += [(f"https://walls.example/b/{n}", DATADOME.encode(), "2026-03-03T10:00:00Z")
              for n in range(5)]  # fmt: skip
    write_warc(root / "learn.warc.gz", learn)
    test = [(url, body, "2026-04-01T10:00:00Z") for url, body in demo[20:]]
    test += [(f"https://quay.example/ferries/story-{n}.html", quay_page(n), "2026-05-01T10:00:00Z")
             for n in range(20, 24)]  # fmt: skip
    test += [("https://quay.example/briefs/24.html", quay_page(24, 3), "2026-05-01T10:00:00Z")]
    test += [(f"https://small.example/n/{n}", small_page(n), "2026-05-01T10:00:00Z")
             for n in range(10, 12)]  # fmt: skip
    write_warc(root / "test.warc.gz", test)
    return root


@pytest.fixture(scope="module")
def learned(collection: Path, chromium_path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spidercrawl.learn", "archive", str(collection / "learn.warc.gz"),
         "--models", str(collection / "models")],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def extract(collection: Path, out: str, *options: str) -> tuple[list[dict], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "spidercrawl.extract", "--no-progress", *options,
         str(collection / "test.warc.gz"), "-o", str(collection / out)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = (collection / out).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines], proc.stderr


def test_two_hosts_are_learned_from_the_archive_and_the_others_say_why(collection, learned):
    assert learned.returncode == 0, learned.stderr[-3000:] + learned.stdout
    rows = {line.split()[0]: line for line in learned.stdout.splitlines()[1:] if line.strip()}
    assert (collection / "models" / "harbourtimes.example" / "model.npz").is_file()
    assert (collection / "models" / "quay.example" / "model.npz").is_file()
    assert " yes " in rows["harbourtimes.example"] and " yes " in rows["quay.example"]
    # What each host's learning said: how it was learned, the render decision.
    for site in ("harbourtimes.example", "quay.example"):
        assert "; learned a model from " in rows[site], rows[site]
        assert "; fast path o" in rows[site], rows[site]  # on, or off and why
    assert "fewer than LEARN_MIN_PAGES (10)" in rows["small.example"]
    assert "no model: 0 of 10 pages were articles" in rows["walls.example"]
    # Served as archived: the 403s as 403s (walls whatever their body), the captchas as 200s.
    walls = "pages blocked (HTTP 403, Cloudflare challenge, DataDome captcha)"
    assert walls in rows["walls.example"]
    assert not (collection / "models" / "walls.example").exists()
    assert "2 of 4 hosts have a model" in learned.stdout
    # Every training page learned from, every template among them a layout of its own,
    # the briefs of two pages too: no more of them will come to be learned later.
    assert "learned from 14 of 14 articles" in rows["quay.example"]
    quay = SiteModel.load(collection / "models" / "quay.example")
    assert [layout.training_["pages"] for layout in quay.layouts_] == [4, 4, 4, 2]


def test_each_record_is_read_by_its_hosts_model(collection, learned):
    items, log = extract(collection, "all.jsonl", "--models", str(collection / "models"))
    by_site: dict[str, list[dict]] = {}
    for item in items:
        by_site.setdefault(item["site"], []).append(item)
    assert len(by_site["harbourtimes.example"]) == 10 and len(by_site["quay.example"]) == 5
    assert {i["method"] for i in by_site["harbourtimes.example"] + by_site["quay.example"]} == {
        "rules"
    }
    assert by_site["small.example"] and all(
        i["method"] != "rules" for i in by_site["small.example"]
    )
    assert all("part 6" in item["text"] for item in by_site["quay.example"])
    assert "Most read" not in " ".join(item["text"] for item in by_site["quay.example"])
    report = [line for line in log.splitlines() if "quay.example" in line]
    assert report and report[-1].split()[-5:] == ["5", "yes", "5", "0", "0"], report


def test_the_corpus_filters(collection, learned):
    models = ["--models", str(collection / "models")]
    items, _ = extract(collection, "hosts.jsonl", *models, "--hosts", "quay.example,small.example")
    assert {item["site"] for item in items} == {"quay.example", "small.example"}
    items, log = extract(collection, "since.jsonl", *models, "--since", "2026-04-15")
    assert {item["site"] for item in items} == {"quay.example", "small.example"}
    assert "10 by WARC-Date" in log
    items, _ = extract(collection, "lang.jsonl", *models, "--lang", "de")
    assert items == []
    items, _ = extract(
        collection, "lang-en.jsonl", *models, "--lang", "en", "--hosts", "quay.example"
    )
    assert len(items) == 5


def test_a_datatrove_pipeline_writes_our_fields(collection, learned, tmp_path):
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    from spidercrawl.datatrove import SiteModelExtractor, WarcReader

    source = tmp_path / "warc"
    source.mkdir()
    (source / "test.warc.gz").write_bytes((collection / "test.warc.gz").read_bytes())
    LocalPipelineExecutor(
        pipeline=[
            WarcReader(str(source)),
            SiteModelExtractor(models=str(collection / "models")),
            JsonlWriter(str(tmp_path / "out")),
        ],
        tasks=1, workers=1, logging_dir=str(tmp_path / "logs"),
    ).run()  # fmt: skip
    written = [json.loads(line) for path in sorted((tmp_path / "out").glob("*.jsonl.gz"))
               for line in gzip.decompress(path.read_bytes()).decode().splitlines()]  # fmt: skip
    assert len(written) == 17
    quay = [doc for doc in written if doc["metadata"]["url"].startswith("https://quay.example")]
    assert len(quay) == 5 and all(doc["metadata"]["method"] == "rules" for doc in quay)
    assert all(doc["metadata"]["title"].startswith("Quay story") for doc in quay)
    assert all("part 6" in doc["text"] and "Most read" not in doc["text"] for doc in quay)
