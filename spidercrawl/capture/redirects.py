"""Redirects off the site are refused, in plain fetches and in the browser.

A page of the site that answers with a redirect to another host would be fetched there
and delivered under the site's name; a redirect is also a way to make the crawler fetch
internal addresses. Plain fetches: a 3xx whose ``Location`` leaves the site is refused
before Scrapy's redirect middleware follows it. The browser follows redirects itself
(Playwright's route filter is not asked for them): a rendered page whose final URL left
the site is refused before its capture becomes a page item. Each refusal is counted
(``spidercrawl/pages/offsite_redirects``) and logged.

The spider says which URLs stay on a request's site (its ``stays_on_site(meta, url)``).

Scrapy's meta refresh middleware takes any ``<meta http-equiv="refresh">`` of under
``METAREFRESH_MAXDELAY`` seconds for a redirect, and makes a new request of it, past the
checks above. Here two such refreshes are not followed, the page read as it is: one that
names the page itself (a live page reloading every minute: a request to the URL just
fetched is a duplicate, which Scrapy's filter drops without a word, and with it the
page), and one that leaves the site (followed, it would send the crawler to any host, as
a script's navigation, not followed in the browser, would).
"""

from __future__ import annotations

import logging
from urllib.parse import urljoin

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response
from scrapy.utils.response import get_meta_refresh
from w3lib.url import canonicalize_url

logger = logging.getLogger(__name__)

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class OffsiteRedirectMiddleware:
    """Refuses responses that lead off the request's site (see module doc)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OffsiteRedirectMiddleware:
        return cls(crawler)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        spider = self.crawler.spider
        stays = getattr(spider, "stays_on_site", None)
        if stays is None:
            return response
        if response.status in REDIRECT_STATUSES and b"Location" in response.headers:
            location = response.headers[b"Location"].decode("latin-1")
            target = urljoin(response.url, location)
            if not stays(request.meta, target):
                self._refuse(request, target)
        elif response.url != request.url and not stays(request.meta, response.url):
            self._refuse(request, response.url)  # the browser followed it
        return response

    def _refuse(self, request: Request, target: str) -> None:
        self.crawler.stats.inc_value("spidercrawl/pages/offsite_redirects")
        logger.warning("Refused a redirect off the site: %s -> %s", request.url, target)
        raise IgnoreRequest(f"redirected off the site to {target}")


class SiteMetaRefreshMiddleware(MetaRefreshMiddleware):
    """Scrapy's meta refresh middleware, but for a refresh that names the page itself or
    leaves the site: that page is read as it is (see the module doc)."""

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if not isinstance(response, HtmlResponse):
            return super().process_response(request, response)  # Scrapy's takes no spider
        _, url = get_meta_refresh(response, ignore_tags=self._ignore_tags)
        if url and _names_itself(url, request, response):
            logger.debug("%s: its meta refresh reloads the page itself: read as it is",
                         response.url)  # fmt: skip
            return response
        stays = getattr(self.crawler.spider, "stays_on_site", None)
        if url and stays is not None and not stays(request.meta, url):
            logger.info("%s: its meta refresh leads off the site to %s: not followed (the "
                        "page fetched is read)", response.url, url[:300])  # fmt: skip
            return response
        return super().process_response(request, response)


def _names_itself(url: str, request: Request, response: Response) -> bool:
    """Whether ``url`` is the page's own: as fetched, as requested, or as asked before an
    HTTP redirect (its fragment aside)."""
    fetched = [response.url, request.url, *request.meta.get("redirect_urls", [])]
    return canonicalize_url(url) in {canonicalize_url(own) for own in fetched}
