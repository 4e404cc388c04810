"""Downloader middleware that renders marked requests and runs the block capture script.

A request with ``meta["render"] = True`` is sent through scrapy-playwright: Chromium
loads the page, ``capture.js`` runs in it, and the page is closed by the handler right
after (we never ask for the page object, so no page can be left open). The script's
result reaches the callback as ``response.meta["capture"]``; when there is none (the
URL was a download, the script failed) ``response.meta["capture_error"]`` says why.
Other requests pass through to Scrapy's plain HTTP downloader.
"""

from __future__ import annotations

import logging
from importlib import resources

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy_playwright.page import PageMethod

logger = logging.getLogger(__name__)


def capture_script() -> str:
    """The page script, read once from the package."""
    return resources.files("spidercrawl.capture").joinpath("capture.js").read_text("utf-8")


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
        self, max_block_html: int, max_blocks: int, viewport: tuple[int, int] = (1600, 4000)
    ) -> None:
        self.script = capture_script()
        self.options = {"maxHtmlChars": max_block_html, "maxBlocks": max_blocks}
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
        )

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if not request.meta.get("render") or "playwright_page_methods" in request.meta:
            return None
        request.meta["playwright"] = True
        request.meta.setdefault("playwright_context_kwargs", self.context)
        request.meta["playwright_page_methods"] = [
            PageMethod("evaluate", self.script, self.options)
        ]
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if not request.meta.get("render"):
            return response
        methods = request.meta.get("playwright_page_methods") or []
        result = methods[0].result if methods and hasattr(methods[0], "result") else None
        if isinstance(result, dict):
            request.meta["capture"] = result
        elif "playwright_suggested_filename" in request.meta:
            request.meta["capture_error"] = "download (not a web page)"
        else:
            request.meta["capture_error"] = "capture script returned no result"
        return response
