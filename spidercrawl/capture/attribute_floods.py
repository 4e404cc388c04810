"""A crawled page's HTML without its attribute floods, before anything parses it.

A start tag of thousands of attributes costs every HTML parser time growing with the
square of their number (:func:`~spidercrawl.document.html.without_attribute_floods`):
Scrapy's selectors, which the spider reads links and article markers with, as much as
our readers. The response is given on with such tags cut in its bytes (its charset then
decided on them as on any page's: a page whose charset lies is still read by its bytes),
and the cut logged.
"""

from __future__ import annotations

import logging

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import HtmlResponse, Response

from spidercrawl.document.html import MAX_ATTRIBUTES, without_attribute_floods

logger = logging.getLogger(__name__)


class AttributeFloodMiddleware:
    """Cuts attribute floods out of HTML responses (see module doc)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AttributeFloodMiddleware:
        return cls()

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if not isinstance(response, HtmlResponse):
            return response
        body = response.body
        bounded = without_attribute_floods(body)
        if bounded is body:
            return response
        logger.info(
            "%s: start tags of more than %d attributes cut before the page is parsed",
            response.url, MAX_ATTRIBUTES,
        )  # fmt: skip
        return response.replace(body=bounded)  # its bytes: its charset decided as ever
