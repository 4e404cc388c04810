"""The ``news`` spider: finds each site's articles and renders each of them once.

Usage::

    scrapy crawl news -a site=npr.org
    scrapy crawl news -a site=npr.org,bbc.co.uk
    scrapy crawl news -a sites=sites.txt
    scrapy crawl news -a site=harbourtimes.example -a base_url=http://127.0.0.1:8000/ \\
        -a max_pages=20 -O pages.jsonl
    scrapy crawl news -s REDIS_URL=redis://127.0.0.1:6379/0   # sites from Redis

Arguments:

``site``
    The site's name (a host name), or several, comma-separated. Items carry it; models
    are stored under it.
``sites``
    A sites file: one ``HOST`` or ``HOST BASE_URL`` per line (:mod:`spidercrawl.sites`).
    Every site gets its own limits, its own log lines and a summary line at the end; one
    browser serves them all.
``base_url``
    Where to fetch the site from, when that is not ``https://SITE/`` (a local copy
    served by ``python -m spidercrawl.serve``). The items keep the name ``site``.
``max_pages``
    Render at most this many pages per site (default ``NEWS_MAX_PAGES``, 0 = no limit).
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

With ``REDIS_URL`` (:mod:`spidercrawl.distributed`), the scheduler and the pages already
claimed live in Redis, sites come from a Redis queue when the worker is idle, and the worker
stops once that queue and the request queue stay empty for ``REDIS_IDLE_CLOSE`` seconds.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import BaseSettings
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.misc import load_object
from scrapy.utils.sitemap import sitemap_urls_from_robots
from twisted.python.failure import Failure
from w3lib.url import canonicalize_url

from spidercrawl import discovery
from spidercrawl.capture.page_item import build_page_item
from spidercrawl.capture.static import static_capture
from spidercrawl.document.density import shows_text
from spidercrawl.document.reservations import TdmPolicy
from spidercrawl.document.response import ResponseHead
from spidercrawl.document.walls import Wall, visible_words
from spidercrawl.items import PageItem
from spidercrawl.signals import page_claimed
from spidercrawl.sites import Ledger, LocalLedger, SiteSpec, sites_from_arguments

logger = logging.getLogger(__name__)

RENDER_MODES = ("articles", "all")
MEMORY_LOG_EVERY = 1000  # pages between log lines of the process's memory
SUMMARY_VERDICTS = (  # per-site stats of the delivery pipeline and the conditional fetch
    ("new", "new"),
    ("changed", "changed"),
    ("unchanged", "unchanged"),
    ("duplicate", "duplicates"),
    ("not_modified", "not modified (HTTP 304)"),
    ("near_duplicate", "near-duplicates of another article"),
    ("extractor_errors", "made by the next extractor after an error"),
    ("empty", "empty (not delivered)"),
    ("paywalled_skipped", "paywalled (not delivered: SKIP_PAYWALLED)"),
    ("reserved_skipped", "reserved by the site (not delivered: RESPECT_RESERVATIONS)"),
)
TDMREP_PATH = "/.well-known/tdmrep.json"
HTML_CONTENT_TYPES = {"text/html", "application/xhtml+xml"}
SPIDER_ARGUMENTS = ("site", "sites", "base_url", "max_pages", "max_depth", "render")
SCRAPY_SPIDER_ARGUMENTS = frozenset({"_job"})  # what Scrapy itself may pass a spider


class NewsSpider(scrapy.Spider):
    """Crawls news sites and yields a :class:`PageItem` per rendered article."""

    name = "news"

    def __init__(
        self,
        site: str = "",
        base_url: str = "",
        max_pages: str | int | None = None,
        max_depth: str | int | None = None,
        render: str | None = None,
        sites: str = "",
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - SCRAPY_SPIDER_ARGUMENTS)
        if unknown:  # a misspelt -a max_page=3 would crawl without a limit
            raise ValueError(
                f"unknown argument -a {unknown[0]}=...; the arguments are "
                f"{', '.join(SPIDER_ARGUMENTS)}"
            )
        super().__init__(**kwargs)
        self.specs = sites_from_arguments(site, sites, base_url)
        # One site: its name, for the components that serve a single site (evaluation).
        self.site = self.specs[0].name if len(self.specs) == 1 else ""
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
        self.targets: dict[str, SiteCrawl] = {}
        self.pages_done = 0
        self.robots_shared = False  # see from_crawler
        self.ledger: Ledger = LocalLedger()
        self.robots_agents: list[str] = []  # ROBOTS_AGENTS: their robots directives count
        self.site_queue: Any = None  # with Redis: where the sites come from
        # Not ``allow_domains``: Scrapy compares it with the host *and port* of each link, so
        # a local copy on 127.0.0.1:8000 would follow none of its own links.
        self._links = LinkExtractor(unique=True)

    @classmethod
    def check_arguments(cls, settings: BaseSettings, **arguments: Any) -> None:
        """ValueError with a one-line reason if the arguments cannot make a crawl."""
        spider = cls(**arguments)
        if not spider.specs and not settings.get("REDIS_URL"):
            raise ValueError(
                "which site? scrapy crawl news -a site=HOST (e.g. -a site=npr.org), "
                "-a site=a.com,b.com or -a sites=FILE"
            )

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> NewsSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        _ROBOTS_LOGGER.addFilter(_one_line)
        settings = crawler.settings
        cls.check_arguments(settings, **kwargs)
        args = spider._args
        spider.max_pages = _count("max_pages", args["max_pages"], settings.getint("NEWS_MAX_PAGES"))
        spider.max_depth = _count("max_depth", args["max_depth"], settings.getint("NEWS_MAX_DEPTH"))
        spider.render_mode = (args["render"] or settings.get("NEWS_RENDER")).lower()
        if spider.render_mode not in RENDER_MODES:
            raise ValueError(f"render must be one of {RENDER_MODES}, got {spider.render_mode!r}")
        spider.keep_html = settings.getbool("CAPTURE_KEEP_HTML")
        spider.robots_agents = [a.strip() for a in settings.getlist("ROBOTS_AGENTS") if a.strip()]
        # Obeying robots.txt with a parser that keeps the file: Scrapy's middleware fetches
        # it, and the spider reads its sitemaps from there (on_robots).
        spider.robots_shared = settings.getbool("ROBOTSTXT_OBEY") and hasattr(
            load_object(settings["ROBOTSTXT_PARSER"]), "keeps_body"
        )
        if spider.robots_shared:
            crawler.signals.connect(spider.on_robots, signal=signals.robots_parsed)
        # Read by the render add-on, which runs after the spider is created.
        if settings.get("REDIS_URL"):  # sites arrive during the crawl, from anywhere
            from spidercrawl.distributed.sites import RedisSiteQueue

            spider.site_queue = RedisSiteQueue.from_crawler(crawler)
            crawler.signals.connect(spider.on_idle, signal=signals.spider_idle)
            crawler.signals.connect(spider.on_page_claimed, signal=page_claimed)
        elif all(spec.is_local_copy for spec in spider.specs):
            hosts = sorted({spec.base_host for spec in spider.specs})
            settings.set("RENDER_ALLOWED_HOSTS", hosts, priority="spider")
        return spider

    def site_names(self) -> list[str]:
        """The sites this run was asked to crawl (their feeds are written even if empty)."""
        return [spec.name for spec in self.specs]

    # --- discovery -----------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        if self.site_queue is not None:
            self.site_queue.push(self.specs)  # -a site= with Redis: into the shared queue
            return  # the sites are taken from the queue when this worker is idle
        if len(self.specs) > 1:
            logger.info("Crawling %d sites: %s", len(self.specs), ", ".join(self.site_names()))
        for spec in self.specs:
            for request in self._start_site(spec):
                yield request

    def _start_site(self, spec: SiteSpec) -> Iterator[scrapy.Request]:
        target = self._register(spec)
        logger.info(
            "%s: crawling from %s (max_pages=%s, max_depth=%s, render=%s)",
            spec.name,
            spec.base_url,
            self.max_pages or "unlimited",
            self.max_depth,
            self.render_mode,
        )
        base_url, site = target.spec.base_url, spec.name
        if not self.robots_shared:
            yield from self._discovery_request(
                urljoin(base_url, "robots.txt"), site, self.parse_robots, 30,
                {"dont_obey_robotstxt": True},
            )  # fmt: skip
        yield scrapy.Request(  # TDMRep: which of the site's paths reserve their text
            urljoin(base_url, TDMREP_PATH),
            callback=self.parse_tdmrep,
            errback=self.on_tdmrep_error,
            meta={"site": site},
            dont_filter=True,
            priority=40,
        )
        yield from self._discovery_request(
            urljoin(base_url, "sitemap.xml"), site, self.parse_sitemap, 20
        )
        yield from self._discovery_request(
            base_url, site, self.parse_page, 10, {"hops": 0, "discovered_by": "start"}
        )

    def _register(self, spec: SiteSpec) -> SiteCrawl:
        if spec.name not in self.targets:
            self.targets[spec.name] = SiteCrawl(spec)
        elif self.site_queue is not None:  # started again: its tdmrep.json is read afresh
            self.targets[spec.name].tdm_known = False
        return self.targets[spec.name]

    def _target(self, meta: dict[str, Any]) -> SiteCrawl:
        """The site a request belongs to (with Redis, possibly started by another worker)."""
        name = str(meta.get("site") or self.site)
        target = self.targets.get(name)
        if target is None:
            spec = self.site_queue.spec(name) if self.site_queue is not None else None
            target = self._register(spec or SiteSpec.parse(name))
        return target

    def stays_on_site(self, meta: dict[str, Any], url: str) -> bool:
        """Whether ``url`` is on the site of the request with ``meta`` (a redirect that
        leaves it is refused: :mod:`spidercrawl.capture.redirects`). An article page
        (a request to render, or its plain fetch) must stay; discovery (robots.txt,
        feeds, sitemaps, pages read for links) may go where a feed may be read."""
        target = self._target(meta)
        return target.on_site(url) if "render" in meta else target.may_discover(url)

    def on_idle(self, spider: scrapy.Spider | None = None) -> None:
        """With Redis: take the next site from the queue, or wait while others crawl."""
        scheduler = self.crawler.engine.scheduler
        scheduler.release_ended()  # idle: what it was handed has ended
        taken = self.site_queue.pop(scheduler.worker)
        if taken is not None:
            for request in self._start_site(taken.spec):
                self.crawler.engine.crawl(request)
            self.site_queue.started(taken)  # its start requests are queued (or it goes back)
            raise DontCloseSpider
        if self.site_queue.keep_waiting():
            raise DontCloseSpider

    def parse_tdmrep(self, response: Response) -> None:
        """The site's ``/.well-known/tdmrep.json`` (document/reservations.py)."""
        target = self._target(response.meta)
        text = response.text if isinstance(response, TextResponse) else ""
        self._tdm_read(target, TdmPolicy.parse(text), text)
        if target.tdm.rules:
            logger.info(
                "%s: its tdmrep.json has %d rules (text-and-data-mining reservations)",
                target.name, len(target.tdm.rules),
            )  # fmt: skip

    def on_tdmrep_error(self, failure: Failure) -> None:
        """Most sites have no tdmrep.json: nothing reserved by the site."""
        logger.debug("No tdmrep.json: %s", _describe_failure(failure))
        request = failure.request  # type: ignore[attr-defined]
        self._tdm_read(self._target(request.meta), TdmPolicy(), "")

    def _tdm_read(self, target: SiteCrawl, policy: TdmPolicy, text: str) -> None:
        """This worker read the site's tdmrep.json: its policy, and with Redis shared for
        the workers that render the site's other pages (distributed/tdm.py): "" where it
        holds no rule (none, unreadable, too long)."""
        target.tdm, target.tdm_known = policy, True
        if self.site_queue is not None:
            self.site_queue.tdm.share(target.name, text if policy.rules else "")

    def tdm_policy(self, site: str) -> TdmPolicy | None:
        """The site's tdmrep.json policy; None while it is not known (its fetch still on its
        way: the page waits at the item step, pipelines/tdm_policy.py). With Redis, the
        policy shared there, asked with each page (a site queued again is read again, by
        whichever worker starts it, and its file may have changed: until it is read anew,
        not known); where none is shared (yet, or Redis lost it), what this worker read for
        the site's start, else None."""
        target = self._target({"site": site})
        own = target.tdm if target.tdm_known else None
        if self.site_queue is not None:
            return self.site_queue.tdm.policy(target.name, own)
        return own

    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        """The sitemaps of a robots.txt the spider fetched itself (see :meth:`on_robots`)."""
        yield from self._robots_sitemaps(self._target(response.meta), response.body, response.url)

    def on_robots(self, robotparser: Any, request: scrapy.Request) -> None:
        """The sitemaps of the robots.txt Scrapy's robots middleware has just fetched before
        ``request``, for every site whose ``base_url`` is on that host (the middleware
        fetches a host's robots.txt once, whichever of its sites asked first): the spider
        does not fetch it a second time (``robots_shared``; :mod:`spidercrawl.capture.robots`).
        Another host's robots.txt (a subdomain's, a feed service's) starts no discovery."""
        if "site" in request.meta:
            self._target(request.meta)  # with Redis, a site this worker has not met yet
        url = urlsplit(request.url)
        robots_url = f"{url.scheme}://{url.netloc}/robots.txt"
        for target in list(self.targets.values()):
            if urlsplit(target.spec.base_url).netloc != url.netloc:
                continue
            for sitemap in self._robots_sitemaps(target, robotparser.body, robots_url):
                self.crawler.engine.crawl(sitemap)

    def _robots_sitemaps(
        self, target: SiteCrawl, body: bytes, url: str
    ) -> Iterator[scrapy.Request]:
        for sitemap in sitemap_urls_from_robots(body, base_url=url):
            if self._kept(target, sitemap, target.may_discover(sitemap)):
                yield from self._sitemap_request(sitemap, target.name)

    def parse_sitemap(self, response: Response) -> Iterator[scrapy.Request]:
        content = discovery.read_sitemap(response)
        if content is None:
            logger.debug("Not a sitemap: %s", response.url)
            return
        target = self._target(response.meta)
        self.crawler.stats.inc_value("spidercrawl/discovery/sitemaps")
        for url in content.sitemaps:
            if self._kept(target, url, target.may_discover(url)):
                yield from self._sitemap_request(url, target.name)
        source = "news-sitemap" if content.is_news else "sitemap"
        for url in content.urls:
            if not self._kept(target, url, target.on_site(url)):
                continue
            render = self.render_mode == "all" or discovery.looks_like_article_url(url)
            if content.is_news or render:
                yield from self._render(target, url, source)
            else:
                yield from self._visit(target, url, source, hops=self.max_depth)

    def parse_feed(self, response: Response) -> Iterator[scrapy.Request]:
        self.crawler.stats.inc_value("spidercrawl/discovery/feeds")
        target = self._target(response.meta)
        for url in discovery.feed_entry_urls(response):
            if self._kept(target, url, target.on_site(url)):
                yield from self._render(target, url, "feed")

    def parse_page(self, response: Response) -> Iterator[scrapy.Request]:
        """A plainly fetched page: render it if it is an article, follow its links."""
        if not isinstance(response, TextResponse):
            return
        target = self._target(response.meta)
        hops = response.meta.get("hops", 0)
        if hops == 0:
            for url in discovery.feed_urls(response):
                if self._kept(target, url, target.may_discover(url)):
                    yield from self._discovery_request(url, target.name, self.parse_feed)
        if self.render_mode == "all" or discovery.is_article(response):
            source = response.meta.get("discovered_by", "link")
            yield from self._render(target, response.url, source)
        yield from self._follow_links(target, response, hops)

    def _follow_links(
        self, target: SiteCrawl, response: Response, hops: int
    ) -> Iterator[scrapy.Request]:
        if hops >= self.max_depth:
            return
        hrefs = response.meta.get("hrefs")  # a fast-path page, parsed already
        if hrefs is not None:
            urls = discovery.absolute_links(response.url, hrefs)
        else:
            urls = [link.url for link in self._links.extract_links(response)]
        for url in urls:
            if not target.on_site(url):
                continue
            if discovery.looks_like_article_url(url):
                yield from self._render(target, url, "link")
            else:
                yield from self._visit(target, url, "link", hops=hops + 1)

    def _kept(self, target: SiteCrawl, url: str, allowed: bool) -> bool:
        """``allowed``, and when not, the URL counted (``spidercrawl/discovery/offsite``) and
        the first one logged: a sitemap or feed that names pages of another host would
        otherwise send the crawl there (a local copy's to the live site)."""
        if allowed:
            return True
        target.offsite += 1
        self.crawler.stats.inc_value("spidercrawl/discovery/offsite")
        if target.offsite == 1:
            logger.info(
                "%s: not fetching %s, which is off the site (%s); such URLs from sitemaps and "
                "feeds are counted in spidercrawl/discovery/offsite", target.name, url,
                target.spec.base_host if target.spec.is_local_copy else target.name,
            )  # fmt: skip
        return False

    def _sitemap_request(self, url: str, site: str) -> Iterator[scrapy.Request]:
        yield from self._discovery_request(url, site, self.parse_sitemap)

    def _discovery_request(
        self,
        url: str,
        site: str,
        callback: Any,
        priority: int = 0,
        meta: dict[str, Any] | None = None,
    ) -> Iterator[scrapy.Request]:
        """A robots.txt, sitemap, feed or start page. With Redis it is claimed in the
        ledger, which starts afresh when a site is queued again: Scrapy's duplicate filter
        there outlives the run, and would let no second run fetch the site's sitemap."""
        shared = self.site_queue is not None
        request = scrapy.Request(
            url,
            callback=callback,
            errback=self.on_discovery_error,
            meta={"site": site, **(meta or {})},
            dont_filter=shared,
            priority=priority,
        )
        if not shared or self._claimed(request, "visit", site, 0):
            yield request

    def _visit(
        self, target: SiteCrawl, url: str, source: str, hops: int
    ) -> Iterator[scrapy.Request]:
        request = scrapy.Request(
            url,
            callback=self.parse_page,
            errback=self.on_discovery_error,
            meta={"hops": hops, "discovered_by": source, "site": target.name},
            dont_filter=self.site_queue is not None,  # claimed in the ledger (see above)
        )
        if self._claimed(request, "visit", target.name, self.max_pages):
            yield request

    def _render(self, target: SiteCrawl, url: str, source: str) -> Iterator[scrapy.Request]:
        request = scrapy.Request(
            url,
            callback=self.parse_article,
            errback=self.on_render_error,
            meta={"render": True, "discovered_by": source, "site": target.name},
            dont_filter=True,  # the same URL may have been fetched plainly before
            priority=5,
        )
        if not self._claimed(request, "render", target.name, self.max_pages):
            return
        if self.site_queue is None:  # with Redis, counted once claimed (on_page_claimed)
            self._count_scheduled(target, source)
        yield request

    def _claimed(self, request: scrapy.Request, kind: str, site: str, max_pages: int) -> bool:
        """Whether ``request`` may go, its page (``kind``: render or visit) claimed for
        this run. With Redis the scheduler claims it as it queues the request, in one step
        (a claim left without its request, Redis dying in between, lost the page)."""
        key = canonicalize_url(request.url)
        if self.site_queue is None:
            claim = self.ledger.claim_render if kind == "render" else self.ledger.claim_visit
            return claim(site, key, max_pages)
        from spidercrawl.distributed.sites import CLAIM_META, PageClaim

        request.meta[CLAIM_META] = PageClaim(kind, site, key, max_pages)
        return True

    def on_page_claimed(self, request: scrapy.Request, claim: Any) -> None:
        """With Redis: a page this worker sent to the browser was claimed and queued."""
        if claim.kind == "render":
            self._count_scheduled(self._target(request.meta), request.meta.get("discovered_by"))

    def _count_scheduled(self, target: SiteCrawl, source: str | None) -> None:
        target.scheduled += 1
        self.crawler.stats.inc_value(f"spidercrawl/discovery/{source or 'link'}")

    # --- rendered pages ------------------------------------------------------------

    def parse_article(self, response: Response) -> Iterator[PageItem | scrapy.Request]:
        stats = self.crawler.stats
        target = self._target(response.meta)
        capture = response.meta.get("capture")
        content_type = _content_type(response)
        if content_type and content_type not in HTML_CONTENT_TYPES:
            self._count_failure(target, response.url, f"not an HTML page: {content_type}")
            return
        if not isinstance(response, TextResponse):
            self._count_failure(target, response.url, "not an HTML page")
            return
        wall = _head(response).wall(response.text)
        if wall is not None:  # a challenge in the article's place: never an article
            self._count_blocked(target, response.url, wall)
            return
        if capture is None:
            reason = response.meta.get("capture_error") or "the capture script returned nothing"
            if "download" in reason:
                self._count_failure(target, response.url, reason)
                return
            yield from self._from_raw_html(target, response, reason)  # the browser's DOM
            return
        item = build_page_item(
            response,
            capture,
            site=target.name,
            discovered_by=response.meta.get("discovered_by", "link"),
            keep_html=self.keep_html,
        )
        if response.meta.get("validators"):
            item["validators"] = response.meta["validators"]
        item["reservations"] = self._reservations(target, response, item)
        rendered = item["capture_mode"] == "browser"
        stats.inc_value("spidercrawl/pages/rendered" if rendered else "spidercrawl/pages/fast_path")
        if rendered:
            target.rendered += 1
        else:
            target.fast_path += 1
        raw_html = response.meta.get("raw_html") or ""
        if item["texts"] and rendered and raw_html and (why := _shows_far_less(item, raw_html)):
            # A script blanked the page (or left a line of it): judged on its raw HTML, not
            # dropped as "not an article" for a DOM that lost its prose.
            stats.inc_value("spidercrawl/pages/far_less_than_raw_html")
            yield from self._from_kept_raw_html(target, response.request, why, response.url)
            return
        if not item["texts"] and rendered:
            stats.inc_value("spidercrawl/pages/no_text_blocks")
            if shows_text(response.meta.get("raw_html") or ""):
                # The browser showed nothing of text its HTML holds (a <title> never closed
                # takes the whole page): read the raw HTML, as for a failed render.
                reason = "no text shown; its raw HTML has some"
                yield from self._from_kept_raw_html(target, response.request, reason, response.url)
                return
            logger.warning(
                "%s: No visible text blocks on %s (empty page?)", target.name, response.url
            )
        if item.get("blocks_truncated"):
            stats.inc_value("spidercrawl/pages/blocks_truncated")
            logger.warning(
                "%s: %s has more text blocks than CAPTURE_MAX_BLOCKS: kept the first %d",
                target.name,
                response.url,
                len(item["texts"]),
            )
        stats.max_value("spidercrawl/pages/max_blocks", len(item["texts"]))
        self.pages_done += 1
        if self.pages_done % MEMORY_LOG_EVERY == 0:  # a long crawl must hold flat memory
            logger.info(
                "%d pages in all; this process holds %.0f MB (the browser apart)",
                self.pages_done, _resident_mb(),
            )  # fmt: skip
        if target.done % 25 == 0:
            logger.info(
                "%s: %d pages (%d rendered, %d by the fast path)",
                target.name, target.done, target.rendered, target.fast_path,
            )  # fmt: skip
        yield item
        # Related-article links lead to more articles; other links go one level at most.
        yield from self._follow_links(target, response, hops=max(self.max_depth - 1, 0))

    def _from_raw_html(
        self, target: SiteCrawl, response: Response, reason: str
    ) -> Iterator[PageItem]:
        """A page item from the HTML alone (no blocks), so that a page the browser could
        not capture still gives its article: the site's rules or text density cut it."""
        wall = _head(response).wall(response.text)
        if wall is not None:
            self._count_blocked(target, response.url, wall)
            return
        self.crawler.stats.inc_value("spidercrawl/pages/raw_fallback")
        target.raw_fallback += 1
        logger.warning(
            "%s: Rendering failed: %s (%s); extracting from its HTML",
            target.name, response.url, reason,
        )  # fmt: skip
        item = build_page_item(
            response,
            static_capture(response.text, response.url),
            site=target.name,
            discovered_by=response.meta.get("discovered_by", "link"),
            keep_html=True,
        )
        item["render_failed"] = reason
        item["reservations"] = self._reservations(target, response, item)
        yield item

    def _from_kept_raw_html(
        self, target: SiteCrawl, request: scrapy.Request, reason: str, url: str
    ) -> Iterator[PageItem]:
        """:meth:`_from_raw_html` of the raw HTML the plain fetch before the render kept in
        ``request.meta`` (no second fetch), as the page at ``url``."""
        raw_html = request.meta["raw_html"]
        headers = [tuple(pair) for pair in request.meta.get("raw_headers") or ()]
        response = HtmlResponse(
            url, headers=headers, body=raw_html, encoding="utf-8", request=request
        )  # with the plain fetch's headers: X-Robots-Tag, tdm-reservation count here too
        yield from self._from_raw_html(target, response, reason)

    def parse_raw(self, response: Response) -> Iterator[PageItem]:
        """A page fetched plainly after the browser failed on it."""
        target = self._target(response.meta)
        reason = response.meta.get("render_failed", "the browser failed")
        content_type = _content_type(response)
        if not isinstance(response, TextResponse) or (
            content_type and content_type not in HTML_CONTENT_TYPES
        ):
            self._count_failure(target, response.url, f"{reason}; and not an HTML page plainly")
            return
        yield from self._from_raw_html(target, response, reason)

    def on_render_error(self, failure: Failure) -> Iterator[scrapy.Request | PageItem]:
        """An HTTP error fails the page; a browser failure (timeout, crash) fetches it
        plainly once, to extract it from its raw HTML."""
        request = failure.request  # type: ignore[attr-defined]
        target = self._target(request.meta)
        if failure.check(IgnoreRequest) and not failure.check(HttpError):
            logger.debug("Not rendered (ignored): %s", request.url)  # robots.txt, offsite
            return
        reason = _describe_failure(failure)
        wall = _wall_of(failure)
        if wall is not None:
            self._count_blocked(target, request.url, wall)
            return
        if failure.check(HttpError) or request.meta.get("render_failed"):
            self._count_failure(target, request.url, reason)
            return
        if request.meta.get("raw_html") is not None:  # fetched plainly before the render
            yield from self._from_kept_raw_html(target, request, reason, request.url)
            return
        yield scrapy.Request(
            request.url,
            callback=self.parse_raw,
            errback=self.on_raw_error,
            meta={
                "render_failed": reason,
                "discovered_by": request.meta.get("discovered_by"),
                "site": target.name,
            },
            dont_filter=True,
            priority=5,
        )

    def on_raw_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        wall = _wall_of(failure)
        if wall is not None:
            self._count_blocked(self._target(request.meta), request.url, wall)
            return
        reason = f"{request.meta.get('render_failed')}; plainly: {_describe_failure(failure)}"
        self._count_failure(self._target(request.meta), request.url, reason)

    def on_discovery_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        self.crawler.stats.inc_value("spidercrawl/discovery/failed")
        target = self.targets.get(request.meta.get("site", ""))
        if target is not None and request.url == target.spec.base_url:
            # Sitemaps and feeds may be missing; a home page that fails is a site down.
            target.home_failed = _describe_failure(failure)
            wall = _wall_of(failure)
            if wall is not None:
                target.home_failed = f"blocked: {wall.describe()}"
                self._count_blocked(target, request.url, wall)
            logger.warning(
                "%s: its home page %s failed (%s): the site is unreachable or moved",
                target.name, request.url, target.home_failed,
            )  # fmt: skip
            return
        logger.info(
            "%s: discovery fetch failed for %s: %s",
            request.meta.get("site", ""), request.url, _describe_failure(failure),
        )  # fmt: skip

    def _count_blocked(self, target: SiteCrawl, url: str, wall: Wall) -> None:
        """A page answered by a bot wall: counted per site and kind, never an article."""
        stats = self.crawler.stats
        stats.inc_value("spidercrawl/pages/blocked")
        stats.inc_value(f"spidercrawl/pages/blocked/{wall.key}")
        stats.inc_value(f"spidercrawl/site/{target.name}/blocked")
        target.blocked[wall.describe()] += 1
        logger.warning("%s: Page blocked: %s (%s)", target.name, url, wall.describe())

    def _reservations(self, target: SiteCrawl, response: Response, item: PageItem) -> list[str]:
        """What the page reserves of its text (its robots meta tags, ``X-Robots-Tag`` and
        ``tdm-reservation`` headers, for every crawler or one of ``ROBOTS_AGENTS``), and
        the site's tdmrep.json for its path (not known yet: the page waits for it at the
        item step, pipelines/tdm_policy.py)."""
        policy = self.tdm_policy(target.name)
        by_site = policy is not None and policy.reserves(urlsplit(response.url).path)
        return _head(response).reservations(item.get("meta") or {}, by_site, self.robots_agents)

    def _count_failure(self, target: SiteCrawl, url: str, reason: str) -> None:
        self.crawler.stats.inc_value("spidercrawl/pages/failed")
        self.crawler.stats.inc_value(f"spidercrawl/pages/failed/{_reason_key(reason)}")
        target.failed += 1
        logger.warning("%s: Page failed: %s (%s)", target.name, url, reason)

    def nothing_fetched(self) -> str:
        """Why no page of any site could be fetched, when every request failed (a site
        down, a wrong address): the crawl command then exits with status 1, so that a
        scheduled crawl's failure is noticed. "" when any page came (or was unchanged)."""
        if self.site_queue is not None or not self.targets:
            return ""
        stats = self.crawler.stats
        came = sum(target.done for target in self.targets.values())
        unchanged = sum(
            stats.get_value(f"spidercrawl/site/{name}/not_modified", 0) for name in self.targets
        )
        failed = sum(target.failed for target in self.targets.values())
        blocked = sum(sum(target.blocked.values()) for target in self.targets.values())
        down = [t.name for t in self.targets.values() if t.home_failed]
        if came or unchanged or not (failed or down or blocked):
            return ""
        if blocked and not failed:
            kinds = _wall_kinds(t.blocked for t in self.targets.values())
            return f"every page was blocked ({blocked} pages: {kinds})"
        return (
            f"no page could be fetched ({failed} failed, {blocked} blocked; home page down: "
            f"{', '.join(down) or 'none'})"
        )

    def closed(self, reason: str) -> None:
        """One summary line per site: its pages, then what became of its articles."""
        stats = self.crawler.stats
        for target in self.targets.values():
            verdicts = ", ".join(
                f"{stats.get_value(f'spidercrawl/site/{target.name}/{key}', 0)} {label}"
                for key, label in SUMMARY_VERDICTS
            )
            logger.info(
                "%s: %d pages rendered, %d by the fast path, %d failed, %d from raw HTML (the "
                "browser failed or showed no text), %d scheduled; articles: %s (%s)",
                target.name, target.rendered, target.fast_path, target.failed,
                target.raw_fallback, target.scheduled, verdicts, reason,
            )  # fmt: skip
            blocked = sum(target.blocked.values())
            if blocked:
                logger.warning(
                    "%s: %d of %d pages blocked (%s)",
                    target.name, blocked, blocked + target.done + target.failed,
                    _wall_kinds([target.blocked]),
                )  # fmt: skip
            # An unchanged site answers every page 304: nothing to render, all is well.
            unchanged = stats.get_value(f"spidercrawl/site/{target.name}/not_modified", 0)
            if self.site_queue is not None:
                # With Redis, the pages this worker queued may be rendered by another (or
                # wait there for the next worker, Redis gone): not the browser's doing.
                continue
            if target.home_failed and not target.done and not target.scheduled:
                logger.error(
                    "%s: nothing crawled: its home page failed (%s)",
                    target.name, target.home_failed,
                )  # fmt: skip
            elif (
                not target.rendered
                and not target.fast_path
                and target.scheduled > unchanged + blocked
            ):
                logger.error(
                    "No page of %s could be rendered: is Chromium installed and the site "
                    "reachable?",
                    target.name,
                )


_ROBOTS_LOGGER = logging.getLogger("scrapy.downloadermiddlewares.robotstxt")


def _one_line(record: logging.LogRecord) -> bool:
    """Scrapy logs a robots.txt it cannot download with a traceback; for a site that is
    down (one of hundreds in a sites file) the one line with the error is enough."""
    record.exc_info = None
    record.exc_text = None
    return True


@dataclass
class SiteCrawl:
    """One site of the run: where it is fetched from and what became of its pages."""

    spec: SiteSpec
    scheduled: int = 0  # pages this worker sent to the browser
    rendered: int = 0
    fast_path: int = 0
    failed: int = 0
    raw_fallback: int = 0
    home_failed: str = ""  # why the home page could not be fetched
    blocked: Counter[str] = field(default_factory=Counter)  # pages a bot wall answered, by kind
    tdm: TdmPolicy = field(default_factory=TdmPolicy)  # its tdmrep.json's reservations
    tdm_known: bool = False  # its tdmrep.json read by this process for the site's start
    offsite: int = 0  # feed entries, sitemap URLs, feeds and sitemaps off the site, not fetched

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def done(self) -> int:
        return self.rendered + self.fast_path

    def on_site(self, url: str) -> bool:
        """Whether a URL stays on the site: its host or a subdomain, any port. A live site's
        host is its name (``npr.org`` takes ``www.npr.org`` and ``text.npr.org``, whichever
        ``base_url`` starts from); a local copy's (``base_url`` elsewhere) is the copy's."""
        host = (urlsplit(url).hostname or "").lower()
        base = self.spec.base_host if self.spec.is_local_copy else self.spec.name
        return host == base or host.endswith(f".{base}")

    def may_discover(self, url: str) -> bool:
        """Whether a feed or sitemap may be read from ``url``: one on the site, or one a
        live site names on another host (a feed on a feed service, a sitemap robots.txt
        points to elsewhere). A local copy never reaches out to the live site."""
        return self.on_site(url) or not self.spec.is_local_copy


def _resident_mb() -> float:
    """This process's resident memory now, in MB (Linux; elsewhere its peak)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _describe_failure(failure: Failure) -> str:
    """A short reason: the HTTP status, or the exception's type and first line."""
    response = getattr(failure.value, "response", None)
    if response is not None:
        return f"http {response.status}"
    message = str(failure.value).strip().splitlines()
    first = message[0][:160] if message else ""
    return f"{type(failure.value).__name__}: {first}" if first else type(failure.value).__name__


# A rendered page shows "far less" than its raw HTML where it shows under this share of the
# raw HTML's visible words, of at least RAW_PROSE_WORDS, with no block of prose length.
FAR_LESS_SHARE = 0.1
RAW_PROSE_WORDS = 150
PROSE_BLOCK_CHARS = 80


def _shows_far_less(item: PageItem, raw_html: str) -> str:
    """Why the browser's DOM of a page shows far less text than its raw HTML holds (a
    script emptied or replaced the body), "" where it does not."""
    texts = [" ".join(str(t) for t in raw.get("text") or []) for raw in item["texts"]]
    if any(len(text) >= PROSE_BLOCK_CHARS for text in texts):
        return ""
    shown = sum(len(text.split()) for text in texts)
    raw = visible_words(raw_html)
    if raw < RAW_PROSE_WORDS or shown >= FAR_LESS_SHARE * raw:
        return ""
    return f"the browser showed {shown} words of the {raw} its raw HTML holds"


def _wall_of(failure: Failure) -> Wall | None:
    """The bot wall an HTTP error is (403, 429, 503), None for any other failure."""
    response = getattr(failure.value, "response", None)
    if response is None:
        return None
    html = response.text if isinstance(response, TextResponse) else ""
    return _head(response).wall(html)


def _head(response: Response) -> ResponseHead:
    """The response's status and headers, as the archive readers give a WARC record's."""
    return ResponseHead(
        response.status,
        tuple(
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, values in response.headers.items()
            for value in values
        ),
    )


def _wall_kinds(counts: Iterable[Counter[str]]) -> str:
    """The walls' HTTP statuses and vendors, each once: "HTTP 403, Cloudflare challenge"."""
    parts: dict[str, None] = {}
    for count in counts:
        for described in count:
            parts.update(dict.fromkeys(part.strip() for part in described.split(",")))
    return ", ".join(sorted(parts, key=lambda part: (not part.startswith("HTTP"), part)))


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
