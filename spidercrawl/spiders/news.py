"""The ``news`` spider: finds one site's articles and renders each of them once.

Usage::

    scrapy crawl news -a site=npr.org
    scrapy crawl news -a site=harbourtimes.example -a base_url=http://127.0.0.1:8000/ \\
        -a max_pages=20 -O pages.jsonl

Arguments:

``site``
    The site's name (a host name). Items carry it; models are stored under it.
``base_url``
    Where to fetch the site from, when that is not ``https://SITE/`` (a local copy
    served by ``python -m spidercrawl.serve``). The items keep the name ``site``.
``max_pages``
    Render at most this many pages (default ``NEWS_MAX_PAGES``, 0 = no limit).
``max_depth``
    How many links deep to follow from the home page (default ``NEWS_MAX_DEPTH``).
``render``
    ``articles`` (default ``NEWS_RENDER``) renders article pages only; ``all`` every page.

Discovery, cheapest first, all over plain HTTP: the sitemaps named in robots.txt and
``/sitemap.xml`` (news sitemaps included), the RSS/Atom feeds the home page links to, then
links followed from the home page. URLs from news sitemaps and feeds are articles by
definition and go straight to the browser; any other page is fetched plainly first and
rendered only if it declares itself an article (og:type, JSON-LD) or, failing that,
has an article-shaped URL.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.sitemap import sitemap_urls_from_robots
from twisted.python.failure import Failure
from w3lib.url import canonicalize_url

from spidercrawl import discovery
from spidercrawl.capture.page_item import build_page_item
from spidercrawl.capture.static import static_capture
from spidercrawl.items import PageItem

logger = logging.getLogger(__name__)

RENDER_MODES = ("articles", "all")
HTML_CONTENT_TYPES = {"text/html", "application/xhtml+xml"}


class NewsSpider(scrapy.Spider):
    """Crawls one news site and yields a :class:`PageItem` per rendered article."""

    name = "news"

    def __init__(
        self,
        site: str = "",
        base_url: str = "",
        max_pages: str | int | None = None,
        max_depth: str | int | None = None,
        render: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        site = site.strip().lower()
        if not site:
            raise ValueError("which site? scrapy crawl news -a site=HOST (e.g. -a site=npr.org)")
        if "://" in site:
            site = urlsplit(site).hostname or ""
        self.site = site.removeprefix("www.")
        self.base_url = (base_url or f"https://{site}/").rstrip("/") + "/"
        base = urlsplit(self.base_url)
        if base.scheme not in ("http", "https") or not base.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.base_host = base.hostname
        self.is_local_copy = bool(base_url) and base.hostname != site
        self.allowed_domains = [self.base_host]
        # Checked here, so that the crawl command rejects them before the engine starts;
        # the settings' defaults fill in what is not given (from_crawler).
        self._args = {
            "max_pages": None if max_pages in (None, "") else _count("max_pages", max_pages, 0),
            "max_depth": None if max_depth in (None, "") else _count("max_depth", max_depth, 0),
            "render": render,
        }
        if render and render.lower() not in RENDER_MODES:
            raise ValueError(f"-a render= takes one of {', '.join(RENDER_MODES)}, got {render!r}")
        self.max_pages = 0
        self.max_depth = 0
        self.render_mode = "articles"
        self._scheduled: set[str] = set()  # canonical URLs sent to the browser
        self._visited: set[str] = set()  # canonical URLs fetched plainly
        # Not ``allow_domains``: Scrapy compares it with the host *and port* of each link, so
        # a local copy on 127.0.0.1:8000 would follow none of its own links.
        self._links = LinkExtractor(unique=True)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> NewsSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        args = spider._args
        spider.max_pages = _count("max_pages", args["max_pages"], settings.getint("NEWS_MAX_PAGES"))
        spider.max_depth = _count("max_depth", args["max_depth"], settings.getint("NEWS_MAX_DEPTH"))
        spider.render_mode = (args["render"] or settings.get("NEWS_RENDER")).lower()
        if spider.render_mode not in RENDER_MODES:
            raise ValueError(f"render must be one of {RENDER_MODES}, got {spider.render_mode!r}")
        spider.keep_html = settings.getbool("CAPTURE_KEEP_HTML")
        # Read by the render add-on, which runs after the spider is created.
        settings.set("RENDER_SCHEMES", [urlsplit(spider.base_url).scheme], priority="spider")
        if spider.is_local_copy:
            settings.set("RENDER_ALLOWED_HOSTS", [spider.base_host], priority="spider")
        return spider

    # --- discovery -----------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        logger.info(
            "Crawling %s from %s (max_pages=%s, max_depth=%s, render=%s)",
            self.site,
            self.base_url,
            self.max_pages or "unlimited",
            self.max_depth,
            self.render_mode,
        )
        yield scrapy.Request(
            urljoin(self.base_url, "robots.txt"),
            callback=self.parse_robots,
            errback=self.on_discovery_error,
            meta={"dont_obey_robotstxt": True},
            priority=30,
        )
        yield scrapy.Request(
            urljoin(self.base_url, "sitemap.xml"),
            callback=self.parse_sitemap,
            errback=self.on_discovery_error,
            priority=20,
        )
        yield scrapy.Request(
            self.base_url,
            callback=self.parse_page,
            errback=self.on_discovery_error,
            meta={"hops": 0, "discovered_by": "start"},
            priority=10,
        )

    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        for url in sitemap_urls_from_robots(response.body, base_url=response.url):
            yield self._sitemap_request(url)

    def parse_sitemap(self, response: Response) -> Iterator[scrapy.Request]:
        content = discovery.read_sitemap(response)
        if content is None:
            logger.debug("Not a sitemap: %s", response.url)
            return
        self.crawler.stats.inc_value("spidercrawl/discovery/sitemaps")
        for url in content.sitemaps:
            yield self._sitemap_request(url)
        source = "news-sitemap" if content.is_news else "sitemap"
        for url in content.urls:
            render = self.render_mode == "all" or discovery.looks_like_article_url(url)
            if content.is_news or render:
                yield from self._render(url, source)
            else:
                yield from self._visit(url, source, hops=self.max_depth)

    def parse_feed(self, response: Response) -> Iterator[scrapy.Request]:
        self.crawler.stats.inc_value("spidercrawl/discovery/feeds")
        for url in discovery.feed_entry_urls(response):
            yield from self._render(url, "feed")

    def parse_page(self, response: Response) -> Iterator[scrapy.Request]:
        """A plainly fetched page: render it if it is an article, follow its links."""
        if not isinstance(response, TextResponse):
            return
        hops = response.meta.get("hops", 0)
        if hops == 0:
            for url in discovery.feed_urls(response):
                yield scrapy.Request(url, callback=self.parse_feed, errback=self.on_discovery_error)
        if self.render_mode == "all" or discovery.is_article(response):
            yield from self._render(response.url, response.meta.get("discovered_by", "link"))
        yield from self._follow_links(response, hops)

    def _follow_links(self, response: Response, hops: int) -> Iterator[scrapy.Request]:
        if hops >= self.max_depth:
            return
        for link in self._links.extract_links(response):
            if not self._on_site(link.url):
                continue
            if discovery.looks_like_article_url(link.url):
                yield from self._render(link.url, "link")
            else:
                yield from self._visit(link.url, "link", hops=hops + 1)

    def _on_site(self, url: str) -> bool:
        """Whether a link stays on the crawled site (its host or a subdomain; any port)."""
        host = (urlsplit(url).hostname or "").lower()
        return host == self.base_host or host.endswith(f".{self.base_host}")

    def _sitemap_request(self, url: str) -> scrapy.Request:
        return scrapy.Request(url, callback=self.parse_sitemap, errback=self.on_discovery_error)

    def _visit(self, url: str, source: str, hops: int) -> Iterator[scrapy.Request]:
        key = canonicalize_url(url)
        if key in self._visited or key in self._scheduled or self._budget_spent():
            return
        self._visited.add(key)
        yield scrapy.Request(
            url,
            callback=self.parse_page,
            errback=self.on_discovery_error,
            meta={"hops": hops, "discovered_by": source},
        )

    def _budget_spent(self) -> bool:
        return bool(self.max_pages) and len(self._scheduled) >= self.max_pages

    def _render(self, url: str, source: str) -> Iterator[scrapy.Request]:
        key = canonicalize_url(url)
        if key in self._scheduled or self._budget_spent():
            return
        self._scheduled.add(key)
        self.crawler.stats.inc_value(f"spidercrawl/discovery/{source}")
        yield scrapy.Request(
            url,
            callback=self.parse_article,
            errback=self.on_render_error,
            meta={"render": True, "discovered_by": source},
            dont_filter=True,  # the same URL may have been fetched plainly before
            priority=5,
        )

    # --- rendered pages ------------------------------------------------------------

    def parse_article(self, response: Response) -> Iterator[PageItem | scrapy.Request]:
        stats = self.crawler.stats
        capture = response.meta.get("capture")
        content_type = _content_type(response)
        if content_type and content_type not in HTML_CONTENT_TYPES:
            self._count_failure(response.url, f"not an HTML page: {content_type}")
            return
        if not isinstance(response, TextResponse):
            self._count_failure(response.url, "not an HTML page")
            return
        if capture is None:
            reason = response.meta.get("capture_error") or "the capture script returned nothing"
            if "download" in reason:
                self._count_failure(response.url, reason)
                return
            yield from self._from_raw_html(response, reason)  # the browser's DOM, unmeasured
            return
        item = build_page_item(
            response,
            capture,
            site=self.site,
            discovered_by=response.meta.get("discovered_by", "link"),
            keep_html=self.keep_html,
        )
        rendered = item["capture_mode"] == "browser"
        stats.inc_value("spidercrawl/pages/rendered" if rendered else "spidercrawl/pages/fast_path")
        if not item["texts"] and rendered:
            stats.inc_value("spidercrawl/pages/no_text_blocks")
            logger.warning("No visible text blocks on %s (empty page?)", response.url)
        if item.get("blocks_truncated"):
            stats.inc_value("spidercrawl/pages/blocks_truncated")
            logger.warning(
                "%s has more text blocks than CAPTURE_MAX_BLOCKS: kept the first %d",
                response.url,
                len(item["texts"]),
            )
        stats.max_value("spidercrawl/pages/max_blocks", len(item["texts"]))
        done = _pages_done(stats)
        if sum(done) % 25 == 0:
            logger.info(
                "%s: %d pages (%d rendered, %d by the fast path)", self.site, sum(done), *done
            )
        yield item
        # Related-article links lead to more articles; other links go one level at most.
        yield from self._follow_links(response, hops=max(self.max_depth - 1, 0))

    def _from_raw_html(self, response: Response, reason: str) -> Iterator[PageItem]:
        """A page item from the HTML alone (no blocks), so that a page the browser could
        not capture still gives its article: the site's rules or text density cut it."""
        self.crawler.stats.inc_value("spidercrawl/pages/raw_fallback")
        logger.warning("Rendering failed: %s (%s); extracting from its HTML", response.url, reason)
        item = build_page_item(
            response,
            static_capture(response.text, response.url),
            site=self.site,
            discovered_by=response.meta.get("discovered_by", "link"),
            keep_html=True,
        )
        item["render_failed"] = reason
        yield item

    def parse_raw(self, response: Response) -> Iterator[PageItem]:
        """A page fetched plainly after the browser failed on it."""
        reason = response.meta.get("render_failed", "the browser failed")
        content_type = _content_type(response)
        if not isinstance(response, TextResponse) or (
            content_type and content_type not in HTML_CONTENT_TYPES
        ):
            self._count_failure(response.url, f"{reason}; and not an HTML page plainly")
            return
        yield from self._from_raw_html(response, reason)

    def on_render_error(self, failure: Failure) -> Iterator[scrapy.Request | PageItem]:
        """An HTTP error fails the page; a browser failure (timeout, crash) fetches it
        plainly once, to extract it from its raw HTML."""
        request = failure.request  # type: ignore[attr-defined]
        if failure.check(IgnoreRequest) and not failure.check(HttpError):
            logger.debug("Not rendered (ignored): %s", request.url)  # robots.txt, offsite
            return
        reason = _describe_failure(failure)
        if failure.check(HttpError) or request.meta.get("render_failed"):
            self._count_failure(request.url, reason)
            return
        raw_html = request.meta.get("raw_html")
        if raw_html is not None:  # fetched plainly before the render: no second fetch
            response = HtmlResponse(request.url, body=raw_html, encoding="utf-8", request=request)
            yield from self._from_raw_html(response, reason)
            return
        yield scrapy.Request(
            request.url,
            callback=self.parse_raw,
            errback=self.on_raw_error,
            meta={"render_failed": reason, "discovered_by": request.meta.get("discovered_by")},
            dont_filter=True,
            priority=5,
        )

    def on_raw_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        reason = f"{request.meta.get('render_failed')}; plainly: {_describe_failure(failure)}"
        self._count_failure(request.url, reason)

    def on_discovery_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        self.crawler.stats.inc_value("spidercrawl/discovery/failed")
        logger.info("Discovery fetch failed for %s: %s", request.url, _describe_failure(failure))

    def _count_failure(self, url: str, reason: str) -> None:
        self.crawler.stats.inc_value("spidercrawl/pages/failed")
        self.crawler.stats.inc_value(f"spidercrawl/pages/failed/{_reason_key(reason)}")
        logger.warning("Page failed: %s (%s)", url, reason)

    def closed(self, reason: str) -> None:
        stats = self.crawler.stats
        rendered, fast = _pages_done(stats)
        failed = stats.get_value("spidercrawl/pages/failed", 0)
        raw = stats.get_value("spidercrawl/pages/raw_fallback", 0)
        logger.info(
            "%s: %d pages rendered, %d by the fast path, %d failed, %d from raw HTML (the "
            "browser failed), %d scheduled (%s)",
            self.site,
            rendered,
            fast,
            failed,
            raw,
            len(self._scheduled),
            reason,
        )
        if not rendered and not fast and self._scheduled:
            logger.error(
                "No page of %s could be rendered: is Chromium installed and the site reachable?",
                self.site,
            )


def _pages_done(stats: Any) -> tuple[int, int]:
    """(pages rendered, pages fetched by the fast path) so far."""
    return (
        stats.get_value("spidercrawl/pages/rendered", 0),
        stats.get_value("spidercrawl/pages/fast_path", 0),
    )


def _describe_failure(failure: Failure) -> str:
    """A short reason: the HTTP status, or the exception's type and first line."""
    response = getattr(failure.value, "response", None)
    if response is not None:
        return f"http {response.status}"
    message = str(failure.value).strip().splitlines()
    first = message[0][:160] if message else ""
    return f"{type(failure.value).__name__}: {first}" if first else type(failure.value).__name__


def _reason_key(reason: str) -> str:
    """A stats key for a failure reason: ``http 404`` -> ``http_404``."""
    return reason.split(":")[0].strip().replace(" ", "_")


def _content_type(response: Response) -> str:
    """The response's media type, lower case, without parameters ('' when not sent)."""
    raw = response.headers.get("Content-Type") or b""
    return raw.decode("latin-1").split(";")[0].strip().lower()


def _count(name: str, value: str | int | None, default: int) -> int:
    """A spider argument that must be a whole number >= 0, with a clear error if not."""
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < 0:
        raise ValueError(f"-a {name}= takes a whole number >= 0, got {value!r}")
    return number
