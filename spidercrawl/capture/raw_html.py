"""Keeps each rendered page's raw HTML beside the browser's DOM.

Sites never seen are extracted by the consensus of our blocks and two peers that read the
page's markup as the server sent it (:mod:`spidercrawl.extract.consensus`): on the
browser's DOM they do worse (scripts' additions, hidden elements). The browser does not
hand the raw document back, so a render request that does not carry it yet
(``meta["raw_html"]``, as the fast path's fetch of a page it gave up on does) is first
fetched plainly, the body is kept, and the request goes on to the browser ahead of the
queue (its priority raised by one), so that few bodies wait in memory at a time. A plain
fetch costs a few milliseconds on a site that takes a second to render. The page item gets
the body as ``raw_html``.

Setting: ``CAPTURE_RAW_HTML`` (default True; False renders directly, and sites never seen
are extracted from their blocks alone).
"""

from __future__ import annotations

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse


class RawHtmlMiddleware:
    """A plain fetch before the render, for render requests without the raw HTML."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RawHtmlMiddleware:
        if not crawler.settings.getbool("CAPTURE_RAW_HTML"):
            raise NotConfigured("CAPTURE_RAW_HTML is off")
        return cls()

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        meta = request.meta
        if meta.get("render") and "raw_html" not in meta and not meta.get("raw_first"):
            meta["render"] = False
            meta["raw_first"] = True
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if not request.meta.get("raw_first"):
            return response
        if response.status >= 400 or not isinstance(response, TextResponse):
            return response  # an error page or a download: the browser would get it too
        meta = {**request.meta, "render": True, "raw_html": response.text}
        meta.pop("raw_first")
        return request.replace(meta=meta, dont_filter=True, priority=request.priority + 1)
