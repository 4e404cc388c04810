"""Downloader middleware that renders marked requests and runs the block capture script.

A request with ``meta["render"] = True`` is sent through scrapy-playwright: Chromium
loads the page, ``capture.js`` runs in it, and the page is closed by the handler right
after (we never ask for the page object, so no page can be left open). The script's
result reaches the callback as ``response.meta["capture"]``; when there is none (the
URL was a download, the script failed) ``response.meta["capture_error"]`` says why.
Other requests pass through to Scrapy's plain HTTP downloader.

Navigation waits for the response (``commit``), then, in the page, for the document to be
parsed (within ``RENDER_TIMEOUT``) and for the page's ``load`` event at most
``RENDER_LOAD_WAIT`` seconds; then its loading is stopped and the capture runs. Waiting for
``load`` itself failed pages whose load never comes: a subresource that hangs, or an image
the crawl blocks, which Chromium can leave pending (scrapy-playwright issue 349). Three of
dragnet's abcnews.go.com slideshows and a contracostatimes.com story timed out after 30 s
and fell back to their raw HTML; their document was there in a third of a second.

A document whose loading stops before it is parsed never sends ``DOMContentLoaded``: a
script that navigates while the page is parsed (a redirect in the head), whose navigation
the crawl aborts (``capture/render_watch.py``), stops the parser. Waited for in the
navigation, such a page would hold its render for the whole ``RENDER_TIMEOUT``; the wait
in the page sees it at once, and the render fails (:class:`DocumentNotParsedError`): the
page is read from its raw HTML.
"""

from __future__ import annotations

import json
import logging
from importlib import resources
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response, TextResponse
from scrapy.statscollectors import StatsCollector
from scrapy_playwright.page import PageMethod

from spidercrawl.document.consent import CONSENT_CSS
from spidercrawl.document.misread import misread_charset, reread_text, reread_value

logger = logging.getLogger(__name__)

# Script navigations aborted, windows the page opens closed (capture/render_watch.py).
PAGE_GUARD = "spidercrawl.capture.render_watch.guard_page"

# What the wait in the page found (:data:`WAIT_FOR_DOCUMENT`).
LOADED = "loaded"  # the document parsed and its load event fired
LOAD_STOPPED = "load stopped"  # parsed, its loading stopped after the load wait
NOT_PARSED = "not parsed"  # its loading stopped before the document was parsed
PARSE_TIMED_OUT = "parse timed out"  # not parsed within the bound: its loading stopped
FOUND = {
    "loaded": LOADED,
    "load_stopped": LOAD_STOPPED,
    "not_parsed": NOT_PARSED,
    "parse_timed_out": PARSE_TIMED_OUT,
}

# Waits until the document is parsed (its readiness leaves "loading") within ``parseMs``,
# then for the page's load event within ``loadMs``; past either bound it stops the page's
# loading (as a reader's Stop button does: what has arrived stays; its frames, whose text
# the capture never reads, are removed, as a frame still loading holds the page's load
# back). A document that became "complete" without DOMContentLoaded (the navigation
# timing has none) stopped loading before it was parsed. Chromium tells Playwright of no
# load event after such a stop: the handler makes no wait for one after the page methods
# (capture/browser.py: OneBrowserHandler._apply_page_methods).
WAIT_FOR_DOCUMENT = """([parseMs, loadMs, found]) => new Promise((resolve) => {
  let bounded = false;
  const stop = () => {
    bounded = true;
    document.querySelectorAll("iframe, frame").forEach((frame) => frame.remove());
    window.stop();
  };
  const parsed = () => {
    if (document.readyState === "interactive") return true;
    const timing = performance.getEntriesByType("navigation")[0];
    return !timing || timing.domContentLoadedEventStart > 0;
  };
  const whenParsed = () => {
    if (!parsed()) { resolve(found.not_parsed); return; }
    if (document.readyState === "complete") { resolve(found.loaded); return; }
    const timer = setTimeout(() => { stop(); resolve(found.load_stopped); }, loadMs);
    window.addEventListener("load", () => {
      clearTimeout(timer);
      if (!bounded) resolve(found.loaded);
    }, { once: true });
  };
  if (document.readyState !== "loading") { whenParsed(); return; }
  const timer = setTimeout(() => { stop(); resolve(found.parse_timed_out); }, parseMs);
  const changed = () => {
    if (document.readyState === "loading" || bounded) return;
    clearTimeout(timer);
    document.removeEventListener("readystatechange", changed);
    whenParsed();
  };
  document.addEventListener("readystatechange", changed);
})"""


class DocumentNotParsedError(Exception):
    """A rendered page whose document was not parsed: the render fails, and the spider
    reads the page from its raw HTML."""


async def wait_for_document(page: Any, parse_ms: int, load_ms: int) -> str:
    """The page method before the capture (:data:`WAIT_FOR_DOCUMENT`): what it found, or
    :class:`DocumentNotParsedError` where the document was not parsed (raised here, so
    that no further wait follows)."""
    found = await page.evaluate(WAIT_FOR_DOCUMENT, [parse_ms, load_ms, FOUND])
    if found == NOT_PARSED:
        raise DocumentNotParsedError(
            "its loading stopped before its document was parsed (a script navigating away stops it)"
        )
    if found == PARSE_TIMED_OUT:
        raise DocumentNotParsedError(f"its document was not parsed within {parse_ms / 1000:.0f} s")
    return found


def capture_script() -> str:
    """The page script, read once from the package."""
    return resources.files("spidercrawl.capture").joinpath("capture.js").read_text("utf-8")


def capture_script_as_json() -> str:
    """The page script, its result handed back as one JSON string (``undefined`` as
    ``null``, as Playwright would give it). Returned as an object, the result crosses
    Playwright's protocol member by member in its own serialized form, each part checked
    in Python: on large pages that took four to six times what the script itself does
    (docs/measurements.md)."""
    return (
        "(options) => JSON.stringify((\n"
        + capture_script()
        + "\n)(options), (key, value) => (value === undefined ? null : value))"
    )


def capture_from_json(text: str) -> dict | None:
    """The capture script's result read from its JSON; None if it is not a JSON object."""
    try:
        result = json.loads(text)
    except ValueError:
        return None
    return result if isinstance(result, dict) else None


class _WithoutTraceback(logging.Filter):
    """Drops the traceback scrapy-playwright attaches to every failed page.

    A timeout or a refused connection is an expected event on the web; the spider logs
    one line per failed page with its URL and reason, which is what a user needs.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Closing page due to failed request"):
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


_PLAYWRIGHT_LOG_FILTER = _WithoutTraceback()


class BlockCaptureMiddleware:
    """Adds the browser and the capture script to render requests, unpacks the result.

    ``CAPTURE_MAX_BLOCK_HTML`` (characters, default 65536) caps the innerHTML kept per
    block and ``CAPTURE_MAX_BLOCKS`` (default 5000) the blocks kept per page, so one
    pathological page cannot blow up an item.
    """

    def __init__(
        self,
        max_block_html: int,
        max_blocks: int,
        viewport: tuple[int, int] = (1600, 4000),
        load_wait: float = 10.0,
        parse_wait: float = 30.0,
        stats: StatsCollector | None = None,
    ) -> None:
        self.script = capture_script_as_json()
        self.options = {
            "maxHtmlChars": max_block_html,
            "maxBlocks": max_blocks,
            "consentSelector": CONSENT_CSS,
        }
        self.load_wait_ms = int(max(load_wait, 0.0) * 1000)
        self.parse_wait_ms = int(max(parse_wait, 0.0) * 1000)
        self.stats = stats
        # The browser context is made with the first render request (none at start-up).
        self.context = {"viewport": {"width": viewport[0], "height": viewport[1]}}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BlockCaptureMiddleware:
        logging.getLogger("scrapy-playwright").addFilter(_PLAYWRIGHT_LOG_FILTER)
        width, height = crawler.settings.getlist("RENDER_VIEWPORT")
        return cls(
            max_block_html=crawler.settings.getint("CAPTURE_MAX_BLOCK_HTML"),
            max_blocks=crawler.settings.getint("CAPTURE_MAX_BLOCKS"),
            viewport=(int(width), int(height)),
            load_wait=crawler.settings.getfloat("RENDER_LOAD_WAIT"),
            parse_wait=crawler.settings.getfloat("RENDER_TIMEOUT"),
            stats=crawler.stats,
        )

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if not request.meta.get("render") or "playwright_page_methods" in request.meta:
            return None
        request.meta["playwright"] = True
        if "raw_html" in request.meta:
            # The plain fetch of this page just before gave AutoThrottle the server's pace;
            # this request's latency is mostly Chromium's work and the capture's
            # (spidercrawl/capture/throttle.py).
            request.meta.setdefault("autothrottle_dont_adjust_delay", True)
        request.meta.setdefault("playwright_context_kwargs", self.context)
        request.meta.setdefault("playwright_page_init_callback", PAGE_GUARD)
        request.meta.setdefault("playwright_page_goto_kwargs", {"wait_until": "commit"})
        request.meta["playwright_page_methods"] = [
            PageMethod(wait_for_document, self.parse_wait_ms, self.load_wait_ms),
            PageMethod("evaluate", self.script, self.options),
        ]
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if not request.meta.get("render"):
            return response
        methods = request.meta.get("playwright_page_methods") or []
        found = methods[0].result if len(methods) > 1 else LOADED
        if found == LOAD_STOPPED:
            logger.debug(
                "%s: captured before its load event (none within %.0f s)",
                request.url,
                self.load_wait_ms / 1000,
            )
            if self.stats is not None:
                self.stats.inc_value("spidercrawl/render/captured_before_load")
        result = methods[-1].result if methods and hasattr(methods[-1], "result") else None
        if isinstance(result, str):  # the capture script's JSON (capture_script_as_json)
            result = capture_from_json(result)
        if isinstance(result, dict):
            result, response = self._read_as_utf8(request, result, response)
            request.meta["capture"] = result
            response = _at_document_url(response, result)
        elif "playwright_suggested_filename" in request.meta:
            request.meta["capture_error"] = "download (not a web page)"
        else:
            request.meta["capture_error"] = "capture script returned no result"
        return response

    def _read_as_utf8(
        self, request: Request, capture: dict, response: Response
    ) -> tuple[dict, Response]:
        """The capture and the DOM read again as UTF-8 where the browser read a UTF-8 page
        in the single-byte charset it declares (document/misread.py); else as they are."""
        charset = misread_charset(capture.get("charset"), request.meta.get("raw_encoding"))
        if charset is None:
            return capture, response
        logger.info(
            "%s: its bytes are UTF-8 but the browser read them as %s: its text read again "
            "as UTF-8", request.url, charset,
        )  # fmt: skip
        if self.stats is not None:
            self.stats.inc_value("spidercrawl/render/charset_corrected")
        reread = reread_value(capture, charset)
        if isinstance(response, TextResponse):
            body = reread_text(response.text, charset).encode("utf-8")
            response = response.replace(body=body, encoding="utf-8")
        return reread, response


def _at_document_url(response: Response, capture: dict) -> Response:
    """The response under its document's URL (the navigation's, after HTTP redirects),
    not the one a script wrote into the address bar with the history API: the browser's
    address is what ``history.pushState`` last set, and an article must keep the URL it
    was fetched at."""
    document_url = capture.get("document_url")
    if (
        isinstance(document_url, str)
        and document_url.startswith(("http://", "https://"))
        and document_url != response.url
    ):
        logger.debug("%s: its script set the address %s", document_url, response.url)
        return response.replace(url=document_url)
    return response
