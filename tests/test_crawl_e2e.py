"""End to end: `scrapy crawl news` through the CLI, Chromium, and a real local HTTP server."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import SnapshotRequestHandler, serving
from spidercrawl.snapshot import SiteSnapshot
from tests.conftest import run_crawl

pytestmark = pytest.mark.browser


def normalise(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def demo_crawl(tmp_path_factory, chromium_path):
    out = tmp_path_factory.mktemp("crawl") / "pages.jsonl"
    with serving(DEMO_SITE) as server:
        # A browser context made anew every 7 pages, so the rotation is part of every check.
        result = run_crawl(
            "harbourtimes.example", server.base_url, out, "-s", "RENDER_PAGES_PER_CONTEXT=7"
        )
        hits = dict(server.hits)
    return result, hits


def test_every_demo_article_is_rendered_once(demo_crawl) -> None:
    result, _ = demo_crawl
    assert result.returncode == 0, result.log[-3000:]
    snapshot = SiteSnapshot(DEMO_SITE)
    paths = sorted(re.sub(r"^http://[^/]+", "", item["url"]) for item in result.items)
    assert paths == sorted(snapshot.path_of.values())
    assert all(item["site"] == "harbourtimes.example" for item in result.items)
    assert "30 pages rendered, 0 by the fast path, 0 failed" in result.log


def test_the_browser_context_is_made_anew_every_so_many_pages(demo_crawl) -> None:
    """30 pages at 7 a context: 5 contexts, a new one opened while the old one's last
    pages finish; never more than RENDER_CONCURRENCY pages open across them."""
    result, _ = demo_crawl
    assert "'playwright/context_count': 5," in result.log
    assert "'playwright/page_count': 30," in result.log
    assert "'playwright/page_count/max_concurrent': 2," in result.log
    assert "Traceback" not in result.log


def test_discovery_used_robots_sitemap_and_feed(demo_crawl) -> None:
    result, hits = demo_crawl
    assert hits.get("/sitemap.xml") and hits.get("/feed.xml")
    # Fetched once: the spider reads its sitemaps from what Scrapy's robots middleware got.
    assert hits["/robots.txt"] == 1
    # page 007 links to /private/..., which robots.txt disallows: never requested
    assert not any(path.startswith("/private/") for path in hits)
    assert {item["discovered_by"] for item in result.items} <= {"sitemap", "feed", "link"}


def test_blocks_carry_css_geometry_and_paths(demo_crawl) -> None:
    result, _ = demo_crawl
    for item in result.items:
        assert len(item["texts"]) >= 20
        for block in item["texts"]:
            assert set(block) >= {"bound", "computed", "element", "path", "selector", "text"}
            assert block["bound"]["width"] > 0 and block["bound"]["height"] > 0
            assert len(block["path"]) == len(block["selector"])
        assert item["body"]["computed"]["font-family"]
        # RENDER_VIEWPORT reaches the browser context made with the first render.
        assert item["body"]["bound"]["width"] == 1600


def test_article_paragraphs_are_blocks(demo_crawl) -> None:
    result, _ = demo_crawl
    snapshot = SiteSnapshot(DEMO_SITE)
    by_path = {re.sub(r"^http://[^/]+", "", i["url"]): i for i in result.items}
    for page_id, path in snapshot.path_of.items():
        blocks = {normalise("".join(b["text"])) for b in by_path[path]["texts"]}
        gold = snapshot.gold_path(page_id).read_text("utf-8").splitlines()
        missing = [line for line in gold if normalise(line) not in blocks]
        assert not missing, f"{page_id}: gold lines not captured as blocks: {missing[:2]}"


def test_page_metadata_is_captured(demo_crawl) -> None:
    result, _ = demo_crawl
    # Three pages in ten carry broken metadata on purpose (tools/build_demo_site.py); the
    # capture copies it as it is, broken or not.
    broken = {"title": 0, "author": 0, "date": 0}
    for item in result.items:
        assert item["status"] == 200
        assert item["lang"] == "en-GB"
        title = item["titles"][0]
        assert title.endswith("| The Harbour Times") or title == "The Harbour Times"
        broken["title"] += title == "The Harbour Times"
        assert item["descriptions"] and item["descriptions"][0] == item["og"]["og:description"]
        assert item["canonical_url"].startswith("https://harbourtimes.example/")
        assert item["jsonld"][0]["type"] == ["NewsArticle"]
        broken["author"] += not item["jsonld"][0]["author"]
        published = item["og"]["article:published_time"]
        assert published.startswith("2026-") or published == "Updated recently"
        broken["date"] += published == "Updated recently"
        assert item["hidden_text_chars"] > 0  # the display:none legal note
        assert 'data-sc-block="0"' in item["rendered_html"]
        # comments are drawn by JavaScript: only a real browser sees them
        assert any(b["element"]["classes"] == ["comment"] for b in item["texts"])
    assert broken == {"title": 3, "author": 3, "date": 3}


def test_max_pages_limits_the_crawl(tmp_path, chromium_path) -> None:
    with serving(DEMO_SITE) as server:
        result = run_crawl(
            "harbourtimes.example", server.base_url, tmp_path / "five.jsonl",
            "-a", "max_pages=5", "-a", "max_depth=0",
        )  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == 5
    assert "max_pages=5, max_depth=0" in result.log


class TroubleHandler(SnapshotRequestHandler):
    """The snapshot server plus the failures a real site throws at a crawler."""

    def _respond(self, send_body: bool) -> None:
        if self.path == "/error/500":
            self._send(500, b"server error", "text/html", send_body)
        elif self.path == "/slow.html":
            time.sleep(8)
            self._send(200, b"<p>too late</p>", "text/html", send_body)
        elif self.path == "/hang":  # a frame that never arrives: its page never loads
            time.sleep(15)
            self._send(200, b"<p>never seen</p>", "text/html", send_body)
        elif self.path in ("/away.html", "/away-in-browser.html"):
            # Off the site: the same server under another host name (an internal address,
            # as far as the site is concerned); the second only when the browser asks.
            browser = self.headers.get("Sec-Fetch-Dest") == "document"  # Chromium sends it
            if self.path == "/away.html" or browser:
                self.send_response(302)
                port = self.server.server_address[1]
                self.send_header("Location", f"http://localhost:{port}/pages/good0.html")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._send(200, b"<p>A page the browser is sent away from.</p>", "text/html",
                           send_body)  # fmt: skip
        else:
            super()._respond(send_body)


def build_trouble_site(root: Path) -> Path:
    site = root / "trouble.example"
    pages = site / "pages"
    pages.mkdir(parents=True)
    for n in range(3):
        (pages / f"good{n}.html").write_text(f"<html><body><p>Good page {n}.</p></body></html>")
    (pages / "empty.html").write_text("")
    (pages / "script-error.html").write_text(
        "<html><body><script>throw new Error('boom');</script><p>Still here.</p></body></html>"
    )
    (pages / "latin1.html").write_bytes(
        '<html><head><meta charset="windows-1252"></head><body><p>Caf\u00e9 cr\u00e8me.</p>'
        "</body></html>".encode("cp1252")
    )
    paragraph = "<p>" + "Lorem ipsum dolor sit amet. " * 180 + "</p>\n"
    (pages / "huge.html").write_text("<html><body>" + paragraph * 2100 + "</body></html>")
    (pages / "broken.html").write_text("<html><body><div><p>Unclosed <b>tags<div>and more")
    (pages / "runaway-title.html").write_text(  # the browser shows none of its text
        "<html><head><title>Runaway<script>var x = 1;</script></head>"
        "<body><p>Only the raw HTML shows this.</p></body></html>"
    )
    (pages / "stalled.html").write_text(
        "<html><body><p>Here at once.</p><iframe src='/hang'></iframe></body></html>"
    )
    extra = ["/missing.html", "/error/500", "/slow.html", "/files/doc.pdf", "/away.html",
             "/away-in-browser.html"]  # fmt: skip
    (site / "files" / "files").mkdir(parents=True)
    (site / "files" / "files" / "doc.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    write_sitemap(site, [f"/pages/{p.name}" for p in sorted(pages.iterdir())] + extra)
    return site


def write_sitemap(site: Path, locs: list[str], path: str = "sitemap.xml") -> None:
    """A sitemap of ``locs`` served at ``/path``; at ``/sitemap.xml`` (the default) it is
    served instead of the generated one."""
    target = site / "files" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
        + "</urlset>"
    )


@pytest.mark.parametrize("obey", [True, False])
def test_a_sitemap_only_robots_txt_names_is_crawled(tmp_path, chromium_path, obey) -> None:
    """Articles listed only in a sitemap that robots.txt names (no feed, an empty
    /sitemap.xml, no links followed) are found whether or not robots.txt is obeyed: obeyed,
    the file Scrapy's middleware fetched is read (and fetched once); not obeyed, the spider
    fetches it itself."""
    site = tmp_path / "harbourtimes.example"
    shutil.copytree(DEMO_SITE, site)
    paths = list(SiteSnapshot(DEMO_SITE).path_of.values())[:2]
    (site / "files" / "robots.txt").write_text("User-agent: *\nSitemap: /maps/news.xml\n")
    write_sitemap(site, [])
    write_sitemap(site, paths, "maps/news.xml")
    (site / "files" / "feed.xml").write_text('<rss version="2.0"><channel></channel></rss>')
    with serving(site) as server:
        result = run_crawl(
            "harbourtimes.example", server.base_url, tmp_path / "pages.jsonl",
            "-a", "max_depth=0", "-s", f"ROBOTSTXT_OBEY={obey}",
        )  # fmt: skip
        hits = dict(server.hits)
    assert result.returncode == 0, result.log[-3000:]
    assert sorted(urlsplit(item["url"]).path for item in result.items) == sorted(paths)
    assert hits["/maps/news.xml"] == 1
    assert hits["/robots.txt"] == 1


def test_bad_pages_are_logged_and_counted_and_lose_nothing(tmp_path, chromium_path) -> None:
    site = build_trouble_site(tmp_path)
    assert (site / "pages" / "huge.html").stat().st_size > 10_000_000
    with serving(site, handler_class=TroubleHandler) as server:
        result = run_crawl(
            "trouble.example", server.base_url, tmp_path / "out.jsonl",
            "-a", "render=all", "-s", "RENDER_TIMEOUT=6", "-s", "RETRY_TIMES=0",
            "-s", "RENDER_LOAD_WAIT=1",
            # The 10 MB page's capture takes seconds on a loaded machine: this test is about
            # its blocks, not the render's bound (tests/test_hostile_pages.py is).
            "-s", "RENDER_GRACE=60",
        )  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    by_name = {item["url"].rsplit("/", 1)[-1]: item for item in result.items}
    # Its document came at once, its load event never: captured by the browser all the same.
    stalled = by_name["stalled.html"]
    assert normalise("".join(stalled["texts"][0]["text"])) == "Here at once."
    assert not stalled.get("render_failed")
    assert "'spidercrawl/render/captured_before_load': 1," in result.log
    assert {"good0.html", "good1.html", "good2.html", "latin1.html"} <= set(by_name)
    assert {"script-error.html", "broken.html", "huge.html", "empty.html"} <= set(by_name)
    latin = normalise("".join(by_name["latin1.html"]["texts"][0]["text"]))
    assert latin == "Caf\u00e9 cr\u00e8me."
    assert by_name["empty.html"]["texts"] == []
    assert "No visible text blocks on" in result.log
    assert len(by_name["huge.html"]["texts"]) == 2100
    log = result.log
    assert re.search(r"Page failed: \S+/missing.html \(http 404\)", log)
    assert re.search(r"Page failed: \S+/error/500 \(http 500\)", log)
    # The browser timed out on slow.html: its raw HTML (fetched before the render) stands in.
    assert re.search(r"Rendering failed: \S+/slow.html \(\w*Timeout", log)
    assert by_name["slow.html"]["render_failed"] and not by_name["slow.html"]["texts"]
    assert re.search(r"Page failed: \S+/files/doc.pdf \(", log)
    assert re.search(r"'spidercrawl/pages/failed': 3,", log)
    # The browser showed no text of runaway-title.html; its raw HTML has some, and is read.
    runaway = by_name["runaway-title.html"]
    assert runaway["render_failed"] == "no text shown; its raw HTML has some"
    assert runaway["capture_mode"] == "http" and "Only the raw HTML" in runaway["rendered_html"]
    assert re.search(r"Rendering failed: \S+/runaway-title.html \(no text shown", log)
    assert re.search(r"'spidercrawl/pages/raw_fallback': 2,", log)
    # Redirects to another host are refused, fetched plainly or in the browser.
    assert not {"away.html", "away-in-browser.html"} & set(by_name)
    assert all("localhost" not in item["url"] for item in result.items)
    assert re.search(r"Refused a redirect off the site: \S+/away.html -> http://localhost", log)
    assert re.search(r"Refused a redirect off the site: \S+/away-in-browser.html -> ", log)
    assert "'spidercrawl/pages/offsite_redirects': 2," in log
    assert "Traceback" not in log


def test_rendered_pages_keep_their_raw_html(demo_crawl) -> None:
    """The peers of the consensus read the HTML the server sent, not the browser's DOM."""
    result, hits = demo_crawl
    snapshot = SiteSnapshot(DEMO_SITE)
    by_path = {re.sub(r"^http://[^/]+", "", i["url"]): i for i in result.items}
    for page_id, path in snapshot.path_of.items():
        item = by_path[path]
        assert item["raw_html"] == snapshot.page_bytes(page_id).decode("utf-8")
        assert item["rendered_html"] != item["raw_html"]  # the DOM has the capture's marks
        assert hits[path] == 2  # a plain fetch for the raw HTML, then the browser


def test_a_local_copy_is_never_left_for_the_live_site(tmp_path, chromium_path) -> None:
    """A copy's robots.txt and sitemap that name the live site's hosts (absolute URLs, as
    saved pages keep them) must not send the crawl there: such URLs are counted and the
    first one logged, and the copy's own pages are crawled as before."""
    site = tmp_path / "harbourtimes.example"
    shutil.copytree(DEMO_SITE, site)
    (site / "files" / "robots.txt").write_text(
        "User-agent: *\nDisallow: /private/\nSitemap: /sitemap.xml\n"
        "Sitemap: http://sitemaps.harbourtimes.example/news.xml\n"
    )
    paths = list(SiteSnapshot(DEMO_SITE).path_of.values())
    write_sitemap(site, [f"https://www.harbourtimes.example{paths[0]}", *paths])
    with serving(site) as server:
        result = run_crawl(
            "harbourtimes.example", server.base_url, tmp_path / "copy.jsonl",
            "-a", "max_pages=2", "-a", "max_depth=0",
        )  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == 2
    assert all(item["url"].startswith(server.base_url) for item in result.items)
    assert "harbourtimes.example: not fetching http://sitemaps.harbourtimes.example" in result.log
    assert "'spidercrawl/discovery/offsite': 2," in result.log
    assert "DNS lookup failed" not in result.log and "ERR_NAME" not in result.log
