"""Keeps each rendered page's raw HTML beside the browser's DOM.

Sites never seen are extracted by the consensus of our blocks and two peers that read the
page's markup as the server sent it (:mod:`spidercrawl.extract.decision`): on the
browser's DOM they do worse (scripts' additions, hidden elements). The browser does not
hand the raw document back, so a render request that does not carry it yet
(``meta["raw_html"]``, as the fast path's fetch of a page it gave up on does) is first
fetched plainly, the body is kept (decoded as every raw-HTML reader decodes it: valid
UTF-8 wins over a declared charset; ``meta["raw_encoding"]`` names the one used), and the
request goes on to the browser ahead of the queue (its priority raised by one), so that
few bodies wait in memory at a time. A plain fetch costs a few milliseconds on a site
that takes a second to render. The page item gets the body as ``raw_html``. The plain
fetch's headers go with it (``meta["raw_headers"]``, of every plain fetch of an article
page, the fast path's too): a page read again from its kept raw HTML (the browser failed,
or showed far less) is judged by them too (``X-Robots-Tag``, ``tdm-reservation``).

Setting: ``CAPTURE_RAW_HTML`` (default True; False renders directly, and sites never seen
are extracted from their blocks alone).
"""

from __future__ import annotations

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse

from spidercrawl.document.html import decode_html


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
        if "render" in request.meta and not request.meta.get("playwright"):
            request.meta["raw_headers"] = response_headers(response)  # an article's, plainly
        if not request.meta.get("raw_first"):
            return response
        if response.status >= 400 or not isinstance(response, TextResponse):
            return response  # an error page or a download: the browser would get it too
        content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
        text, encoding = decode_html(response.body, content_type)
        meta = {**request.meta, "render": True, "raw_html": text, "raw_encoding": encoding}
        meta.pop("raw_first")
        return request.replace(meta=meta, dont_filter=True, priority=request.priority + 1)


# Headers of the kept body that no longer describe it (it is kept decoded, as text).
_BODY_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})


def response_headers(response: Response) -> list[list[str]]:
    """The response's headers as ``[name, value]`` pairs of text (plain data: a queued
    request's meta goes to Redis as JSON), those about the body's bytes left out."""
    return [
        [name.decode("latin-1"), value.decode("latin-1")]
        for name, values in response.headers.items()
        if name.decode("latin-1").lower() not in _BODY_HEADERS
        for value in values
    ]
