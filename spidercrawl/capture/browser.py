"""Browser set-up: turns spidercrawl's ``RENDER_*`` settings into scrapy-playwright's.

It is a Scrapy add-on so that ``-s RENDER_...=`` on the command line and what the spider
sets from its arguments (the crawled host, its scheme) are read after every other source,
just before the settings freeze.

Settings (defaults in ``spidercrawl/settings.py``):

``RENDER_BROWSER_PATH``
    Chromium executable. Default: ``$SPIDERCRAWL_CHROMIUM`` or ``/usr/bin/chromium``.
``RENDER_BROWSER_ARGS``
    Command-line flags for Chromium; the defaults keep it off the network except for the
    pages it is asked to load (no sync, no component updates, no QUIC).
``RENDER_CONCURRENCY``
    Browser pages open at once (one context, so this bounds Chromium's memory).
``RENDER_PAGES_PER_CONTEXT``
    Pages rendered in one browser context before it is closed and made anew (0: never),
    so that what one context keeps (cookies, caches, the driver's records of its pages)
    is bounded over a long crawl of many sites.
``RENDER_TIMEOUT``
    Seconds a navigation may take before the page fails with a timeout.
``RENDER_BLOCK_RESOURCES``
    Abort requests for the resource types in ``RENDER_BLOCKED_RESOURCE_TYPES`` (images,
    media, fonts by default): they do not change the text and cost most of the bytes.
``RENDER_ALLOWED_HOSTS``
    If non-empty, sub-resources from other hosts are aborted. The spider sets it to the
    crawled host when it crawls a local copy (``-a base_url=``), which has no third parties.
``RENDER_VIEWPORT``
    Browser window size; 1600x4000 like the ziyan-spider data, so geometry carries across.
    Chromium, and Playwright's driver before it, are started with the first page to
    render, not with the crawl (:class:`LazyPlaywright`): a learned site whose pages all
    take the fast path never starts them.
``RENDER_SCHEMES``
    URL schemes routed through the browser (http and https). One handler serves them all
    (:class:`OneBrowserHandler`), so a run has one Chromium, whatever its sites' schemes.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import shutil
from collections.abc import Iterable
from typing import Any, ClassVar
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from playwright.async_api import Browser, BrowserContext
from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings
from scrapy_playwright.handler import DEFAULT_CONTEXT_NAME, ScrapyPlaywrightDownloadHandler
from scrapy_playwright.provider import PlaywrightBrowserProvider

logger = logging.getLogger(__name__)

PLAYWRIGHT_HANDLER = "spidercrawl.capture.browser.OneBrowserHandler"
PLAYWRIGHT_PROVIDER = "spidercrawl.capture.browser.LazyPlaywright"
DEFAULT_BROWSER_PATH = "/usr/bin/chromium"
IMAGES_OFF = "--blink-settings=imagesEnabled=false"  # Chromium fetches no image at all


class OneBrowserHandler(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler, one instance per crawl for every scheme.

    Scrapy builds a download handler per scheme, and each scrapy-playwright handler launches
    a browser of its own: a run over http and https sites (local copies beside live sites,
    or a distributed worker, which cannot know its sites' schemes in advance) would run two
    Chromiums. Here the second scheme gets the first one's handler, closed once.
    """

    _by_crawler: ClassVar[WeakKeyDictionary[Crawler, OneBrowserHandler]] = WeakKeyDictionary()
    _closed = False

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.pages_per_context = max(0, crawler.settings.getint("RENDER_PAGES_PER_CONTEXT"))
        self.pages_made: dict[str, int] = {}
        self.creating = 0  # pages asked for and not yet open (not in context.pages yet)
        self.rotation_lock = asyncio.Lock()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OneBrowserHandler:
        if crawler not in cls._by_crawler:
            cls._by_crawler[crawler] = cls(crawler)
        return cls._by_crawler[crawler]

    async def _create_page(self, request: Any, spider: Any) -> Any:
        """A new page; after ``RENDER_PAGES_PER_CONTEXT`` pages in a context, the context is
        closed first (once its open pages are done) and made anew, so that what a context
        keeps (cookies, caches, the driver's records of its pages) stays bounded over a
        long crawl (docs/measurements.md has the memory over 2,000 pages)."""
        name = request.meta.setdefault("playwright_context", DEFAULT_CONTEXT_NAME)
        if self.pages_per_context and self.pages_made.get(name, 0) >= self.pages_per_context:
            async with self.rotation_lock:
                if self.pages_made.get(name, 0) >= self.pages_per_context:  # not done meanwhile
                    await self._close_when_idle(name)
                    self.pages_made[name] = 0
        self.pages_made[name] = self.pages_made.get(name, 0) + 1
        self.creating += 1
        try:
            return await super()._create_page(request, spider)
        finally:
            self.creating -= 1

    async def _close_when_idle(self, name: str) -> None:
        wrapper = self.context_wrappers.get(name)
        if wrapper is None:
            return
        while self.creating or wrapper.context.pages:  # each page ends within its timeouts
            await asyncio.sleep(0.05)
        await wrapper.context.close()
        self.context_wrappers.pop(name, None)
        logger.debug("Browser context %r closed after %d pages", name, self.pages_made[name])

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        result = super().close()
        if inspect.isawaitable(result):
            await result


class LazyPlaywright(PlaywrightBrowserProvider):
    """scrapy-playwright's browser provider, its Playwright driver started with the first
    browser rather than with the engine. The engine waits for the handler's start before
    its first request: the driver's 0.36 s were a sixth of a 17-article fast-path crawl
    (``benchmarks/multi_layout_crawl.py``, nytimes.com), spent on a browser it never used."""

    _started = False

    async def start(self) -> None:
        """Nothing yet: see :meth:`launch_browser`."""

    async def _start_driver(self) -> None:
        if not self._started:
            self._started = True
            logger.info("Starting Playwright's driver: the first page to render")
            await super().start()

    async def launch_browser(self) -> Browser:
        # The handler asks behind its launch lock, so the driver starts once.
        await self._start_driver()
        return await super().launch_browser()

    async def launch_persistent_context(self, context_kwargs: dict) -> BrowserContext:
        await self._start_driver()
        return await super().launch_persistent_context(context_kwargs)


class SubresourceFilter:
    """Decides which in-page requests the browser aborts (scrapy-playwright's predicate)."""

    def __init__(self, blocked_types: Iterable[str], allowed_hosts: Iterable[str]) -> None:
        self.blocked_types = frozenset(blocked_types)
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)

    def __call__(self, request) -> bool:
        if request.resource_type in self.blocked_types:
            return True
        if self.allowed_hosts:
            host = (urlsplit(request.url).hostname or "").lower()
            return host not in self.allowed_hosts and not request.url.startswith("data:")
        return False


def browser_path(settings: BaseSettings) -> str:
    """The Chromium executable to launch, with a clear error if it is not there."""
    path = settings.get("RENDER_BROWSER_PATH") or os.environ.get(
        "SPIDERCRAWL_CHROMIUM", DEFAULT_BROWSER_PATH
    )
    resolved = shutil.which(path) or (path if os.path.exists(path) else None)
    if not resolved:
        logger.error(
            "Chromium not found at %r: install it (apt-get install -y chromium) or set "
            "RENDER_BROWSER_PATH / SPIDERCRAWL_CHROMIUM",
            path,
        )
        return path
    return resolved


class RenderAddon:
    """Configures scrapy-playwright from the ``RENDER_*`` settings."""

    def update_settings(self, settings: BaseSettings) -> None:
        for scheme in settings.getlist("RENDER_SCHEMES"):
            handlers = settings.getdict("DOWNLOAD_HANDLERS")
            handlers[scheme] = PLAYWRIGHT_HANDLER
            settings.set("DOWNLOAD_HANDLERS", handlers, priority="addon")
        blocked = (
            settings.getlist("RENDER_BLOCKED_RESOURCE_TYPES")
            if settings.getbool("RENDER_BLOCK_RESOURCES")
            else []
        )
        args = settings.getlist("RENDER_BROWSER_ARGS")
        if "image" in blocked:
            # Images are switched off in the renderer, not aborted: Chromium can leave an
            # aborted image request pending, and its page's load event then never comes
            # (scrapy-playwright issue 349): three abcnews.go.com slideshows of dragnet
            # timed out after 30 s that now load in half a second.
            args = [*args, IMAGES_OFF]
            blocked = [kind for kind in blocked if kind != "image"]
        settings.set(
            "PLAYWRIGHT_LAUNCH_OPTIONS",
            {"executable_path": browser_path(settings), "headless": True, "args": args},
            priority="addon",
        )
        # No startup context: Chromium starts with the first page rendered (its context
        # made with the viewport each render request carries: capture/middleware.py). A
        # site whose pages all take the fast path never starts it.
        settings.set("PLAYWRIGHT_CONTEXTS", {}, priority="addon")
        settings.set("PLAYWRIGHT_BROWSER_PROVIDER", PLAYWRIGHT_PROVIDER, priority="addon")
        settings.set("PLAYWRIGHT_MAX_CONTEXTS", 1, priority="addon")
        settings.set(
            "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", settings.getint("RENDER_CONCURRENCY"), "addon"
        )
        settings.set(
            "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT",
            settings.getfloat("RENDER_TIMEOUT") * 1000,
            priority="addon",
        )
        allowed = settings.getlist("RENDER_ALLOWED_HOSTS")
        if blocked or allowed:
            settings.set("PLAYWRIGHT_ABORT_REQUEST", SubresourceFilter(blocked, allowed), "addon")
