"""A page the browser fails on still gives its article, from its raw HTML.

A real HTTP server whose article pages load a script that never arrives in time, so
Chromium's navigation times out; the spider then fetches the page plainly and the article
comes from the raw HTML (text density), with the reason in the log and the stats. So does
a page the browser shows no text of though its HTML has some (a ``<title>`` never closed).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from tests.conftest import loopback_server, run_crawl

pytestmark = pytest.mark.browser
HOST = "slowscript.example"
ARTICLE = "/news/2024/05/the-lighthouse-keeper-retires-after-forty-years.html"


def article_html() -> bytes:
    paragraphs = "".join(
        f"<p>Paragraph {n}: the lighthouse keeper climbed the hundred and twelve steps every "
        "evening for forty years, and on Friday the town thanked him with a brass band.</p>"
        for n in range(6)
    )
    return (
        "<html><head><title>The lighthouse keeper retires</title>"
        "<script src='/slow.js'></script></head><body><nav><a href='/'>Home</a></nav>"
        f"<h1>The lighthouse keeper retires</h1><article>{paragraphs}</article>"
        "<footer>The Slow Script Gazette</footer></body></html>"
    ).encode()


class PageHandler(BaseHTTPRequestHandler):
    """Serves pages quietly; subclasses say which."""

    def send_page(self, body: bytes, kind: str = "") -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind or "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class SlowScriptHandler(PageHandler):
    def do_GET(self) -> None:
        if self.path == "/slow.js":
            time.sleep(8)  # longer than the crawl's RENDER_TIMEOUT
            body, kind = b"//", "application/javascript"
        elif self.path == "/":
            body, kind = f"<html><body><a href='{ARTICLE}'>Keeper</a></body></html>".encode(), ""
        elif self.path == ARTICLE:
            body, kind = article_html(), ""
        else:
            self.send_error(404)
            return
        self.send_page(body, kind)


@pytest.fixture(scope="module")
def slow_site() -> Iterator[str]:
    with loopback_server(SlowScriptHandler) as base_url:
        yield base_url


def test_a_page_the_browser_fails_on_comes_from_its_raw_html(slow_site, tmp_path) -> None:
    result = run_crawl(
        HOST,
        slow_site,
        tmp_path / "articles.jsonl",
        "-s", "RENDER_TIMEOUT=2", "-s", "RETRY_TIMES=0", "-s", f"MODELS_DIR={tmp_path / 'm'}",
        pages=False,
    )  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    assert [item["url"].endswith(ARTICLE) for item in result.items] == [True]
    article = result.items[0]
    assert "Paragraph 5: the lighthouse keeper" in article["text"]
    assert article["method"] == "density"
    assert "Rendering failed: " in result.log and "extracting from its HTML" in result.log
    assert "1 from raw HTML (the browser failed or showed no text)" in result.log
    assert article["method_note"].startswith("the browser failed (")


RUNAWAY = "/news/2024/05/the-harbour-closes-for-the-storm.html"


class RunawayTitleHandler(PageHandler):
    """A site whose article's ``<title>`` is never closed: in a browser the title holds the
    whole document and the page shows nothing."""

    def do_GET(self) -> None:
        if self.path == "/":
            body = f"<html><body><a href='{RUNAWAY}'>Storm</a></body></html>".encode()
        elif self.path == RUNAWAY:
            paragraphs = "".join(
                f"<p>Paragraph {n}: the harbour closed at noon as the storm came in from the "
                "west, and the ferries stayed tied up until the wind dropped after dark.</p>"
                for n in range(6)
            )
            body = (
                "<html><head><title>The harbour closes for the storm\n"
                "<meta name='description' content='Ferries stay in port.'></head><body>"
                f"<nav><a href='/'>Home</a></nav><article>{paragraphs}</article></body></html>"
            ).encode()
        else:
            self.send_error(404)
            return
        self.send_page(body)


def test_a_page_the_browser_shows_no_text_of_comes_from_its_raw_html(tmp_path) -> None:
    with loopback_server(RunawayTitleHandler) as base_url:
        result = run_crawl(
            "runaway.example", base_url, tmp_path / "articles.jsonl",
            "-s", f"MODELS_DIR={tmp_path / 'm'}",
            pages=False,
        )  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    assert [item["url"].endswith(RUNAWAY) for item in result.items] == [True]
    article = result.items[0]
    assert "Paragraph 5: the harbour closed at noon" in article["text"]
    assert article["title"] == "The harbour closes for the storm"
    assert article["method"] == "density"
    assert article["method_note"].startswith("the browser failed (no text shown; its raw HTML")
    assert "1 from raw HTML (the browser failed or showed no text)" in result.log
