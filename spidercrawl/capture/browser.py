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
``RENDER_GRACE``
    Seconds a whole render may take beyond ``RENDER_TIMEOUT`` (load, capture, closing)
    before it fails and the page is read from its raw HTML.
``RENDER_CLOSE_TIMEOUT``
    Seconds closing a page, a context, the browser or the driver may take.
``RENDER_SLOW_LOG``
    Seconds after which a render still in flight is logged with what it waits for.
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
import time
from asyncio import FIRST_COMPLETED
from collections.abc import Iterable
from typing import Any, ClassVar
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from playwright.async_api import Browser, BrowserContext
from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler
from scrapy_playwright.page import PageMethod
from scrapy_playwright.provider import PlaywrightBrowserProvider

from spidercrawl.capture.render_watch import (
    STAGE_CLOSING,
    STAGE_NAVIGATION,
    STAGE_SCRIPTS,
    RenderWatch,
    close_quietly,
)

logger = logging.getLogger(__name__)

PLAYWRIGHT_HANDLER = "spidercrawl.capture.browser.OneBrowserHandler"
PLAYWRIGHT_PROVIDER = "spidercrawl.capture.browser.LazyPlaywright"
DEFAULT_BROWSER_PATH = "/usr/bin/chromium"
IMAGES_OFF = "--blink-settings=imagesEnabled=false"  # Chromium fetches no image at all


class RenderTimeoutError(Exception):
    """A render that did not end within its bound (``RENDER_TIMEOUT`` plus
    ``RENDER_GRACE``): the page is then read from its raw HTML, as a failed render is."""


class OneBrowserHandler(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler, one instance per crawl for every scheme, with every
    wait on the browser bounded.

    Scrapy builds a download handler per scheme, and each scrapy-playwright handler launches
    a browser of its own: a run over http and https sites (local copies beside live sites,
    or a distributed worker, which cannot know its sites' schemes in advance) would run two
    Chromiums. Here the second scheme gets the first one's handler, closed once.

    Bounds (see :mod:`spidercrawl.capture.render_watch` for the record behind the logs):

    - a whole render (new page, navigation, load, capture, content, close) ends within
      ``RENDER_TIMEOUT + RENDER_GRACE`` seconds or fails with :class:`RenderTimeoutError`, its
      page closed; a page's script that never yields cannot hold a crawl;
    - the browser context is renewed by generations: after ``RENDER_PAGES_PER_CONTEXT``
      pages new pages open in a new context at once, and the old one is closed when its
      last page is done, or after a render's bound at most. No page waits for another;
    - closing pages, contexts, the browser and the driver at the end is bounded too;
    - the page methods (the wait for the document, the capture) are not each followed by
      a wait for Playwright's load state (:meth:`_apply_page_methods`).
    """

    _by_crawler: ClassVar[WeakKeyDictionary[Crawler, OneBrowserHandler]] = WeakKeyDictionary()
    _closed = False

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        settings = crawler.settings
        self.pages_per_context = max(0, settings.getint("RENDER_PAGES_PER_CONTEXT"))
        self.render_bound = settings.getfloat("RENDER_TIMEOUT") + settings.getfloat("RENDER_GRACE")
        self.close_timeout = max(1.0, settings.getfloat("RENDER_CLOSE_TIMEOUT"))
        self.generation = 0
        self.pages_in_generation = 0
        self.creating: dict[str, int] = {}  # context name -> pages asked for, not yet open
        self.retiring: set[asyncio.Task] = set()
        self.watch = RenderWatch(slow_after=max(1.0, settings.getfloat("RENDER_SLOW_LOG")))
        self.watch_task: asyncio.Task | None = None
        self.page_places = asyncio.Semaphore(max(1, settings.getint("RENDER_CONCURRENCY")))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OneBrowserHandler:
        if crawler not in cls._by_crawler:
            cls._by_crawler[crawler] = cls(crawler)
        return cls._by_crawler[crawler]

    @property
    def context_name(self) -> str:
        return f"render-{self.generation}"

    async def _download_request(self, request: Any, spider: Any = None) -> Any:
        """The render, within its bound: past it, or when the crawl is closing, the page is
        closed and the request fails with :class:`RenderTimeoutError` (the spider then
        reads the page's raw HTML)."""
        if self.watch_task is None:
            self.watch_task = asyncio.ensure_future(self._watch())
        # A place among RENDER_CONCURRENCY pages, across context generations; the wait is
        # bounded by the renders holding the places, each within its own bound.
        async with self.page_places:
            return await self._bounded_render(request, spider)

    async def _bounded_render(self, request: Any, spider: Any) -> Any:
        flight = self.watch.start(id(request), request.url)
        render = asyncio.ensure_future(super()._download_request(request, spider))
        stopped = asyncio.ensure_future(flight.stopped.wait())
        try:
            done, _ = await asyncio.wait(
                {render, stopped}, timeout=self.render_bound, return_when=FIRST_COMPLETED
            )
            if render in done:
                return render.result()
            why = (
                "the crawl is closing"
                if stopped in done
                else f"no render within {self.render_bound:.0f} s"
            )
            self.stats.inc_value("spidercrawl/render/timed_out")
            logger.warning("Rendering %s stopped (%s), waiting for %s", request.url, why,
                           flight.stage)  # fmt: skip
            raise RenderTimeoutError(f"{why} (waiting for {flight.stage})")
        finally:
            stopped.cancel()
            if not render.done():
                render.cancel()  # scrapy-playwright closes no page it was cancelled in
                if flight.page is not None:
                    await close_quietly(flight.page, self.close_timeout)
            self.watch.end(id(request))

    async def _apply_page_methods(self, page: Any, request: Any, spider: Any) -> None:
        """The request's page methods, each awaited in turn, and no wait for the page's
        load state after each (scrapy-playwright waits for it, within the navigation
        timeout). The capture's own wait in the page bounds the load and stops it
        (``capture/middleware.py``), and after that stop, or after a script's navigation
        the crawl aborted before the load event, Chromium gives Playwright no load event
        for the document: the wait would hold such a render for the whole
        ``RENDER_TIMEOUT`` and fail it, though its document is there."""
        for method in request.meta.get("playwright_page_methods") or ():
            if not isinstance(method, PageMethod):
                logger.warning("%s: a page method that is not one ignored: %r", request.url, method)
                continue
            call = getattr(page, method.method) if isinstance(method.method, str) else method.method
            args = method.args if isinstance(method.method, str) else (page, *method.args)
            result = call(*args, **method.kwargs)
            method.result = await result if inspect.isawaitable(result) else result

    async def _create_page(self, request: Any, spider: Any) -> Any:
        """A new page in the current context generation (see the class doc)."""
        if self.pages_per_context and self.pages_in_generation >= self.pages_per_context:
            self._renew_context()
        self.pages_in_generation += 1
        name = self.context_name
        request.meta["playwright_context"] = name
        flight = self.watch.flights.get(id(request))
        self.creating[name] = self.creating.get(name, 0) + 1
        try:
            page = await super()._create_page(request, spider)
        finally:
            if name in self.creating:  # not yet retired (see _retire's deadline)
                self.creating[name] -= 1
        if flight is not None:
            flight.page = page
            flight.stage = STAGE_NAVIGATION
            page.once("domcontentloaded", lambda *_: setattr(flight, "stage", STAGE_SCRIPTS))
            page.once("close", lambda *_: setattr(flight, "stage", STAGE_CLOSING))
        return page

    def _renew_context(self) -> None:
        old = self.context_name
        made = self.pages_in_generation
        self.generation += 1
        self.pages_in_generation = 0
        task = asyncio.ensure_future(self._retire(old, made))
        self.retiring.add(task)
        task.add_done_callback(self.retiring.discard)

    async def _retire(self, name: str, made: int) -> None:
        """Close an old context once its pages are done, or after a render's bound: every
        render that opened a page in it has ended by then, one way or the other."""
        deadline = time.monotonic() + self.render_bound + self.close_timeout
        while time.monotonic() < deadline:
            wrapper = self.context_wrappers.get(name)
            if not self.creating.get(name) and (wrapper is None or not wrapper.context.pages):
                break
            await asyncio.sleep(0.1)
        else:
            logger.warning(
                "Browser context %r still had pages after %.0f s: closed all the same",
                name, self.render_bound + self.close_timeout,
            )  # fmt: skip
        self.creating.pop(name, None)
        wrapper = self.context_wrappers.pop(name, None)
        if wrapper is None:
            return
        try:
            await asyncio.wait_for(wrapper.context.close(), self.close_timeout)
        except TimeoutError:
            logger.warning("Browser context %r did not close within %.0f s", name,
                           self.close_timeout)  # fmt: skip
        except Exception as error:  # the browser went away meanwhile
            logger.debug("Closing browser context %r: %s", name, error)
        logger.debug("Browser context %r closed after %d pages", name, made)

    async def _watch(self) -> None:
        """Logs renders that run long and a crawl whose renders stopped ending; when the
        crawl is told to stop (a SIGTERM), stops the renders in flight at once, so that
        their pages are read from their raw HTML rather than waited for."""
        stopping_seen = False
        while not self._closed:
            await asyncio.sleep(1.0)
            self.watch.report()
            engine = getattr(self._crawler, "engine", None)
            stopping = engine is not None and not engine.running and engine.spider is not None
            if stopping and self.watch.flights and not stopping_seen:
                stopping_seen = True
                logger.warning(
                    "The crawl is stopping: %d renders in flight are stopped, their pages "
                    "read from their raw HTML", len(self.watch.flights),
                )  # fmt: skip
            if stopping:
                for flight in self.watch.flights.values():
                    flight.stopped.set()

    async def _close(self) -> None:
        """scrapy-playwright's close, each step within ``RENDER_CLOSE_TIMEOUT``: a browser
        or driver that does not answer cannot hold the end of a crawl."""
        if self.watch_task is not None:
            self.watch_task.cancel()
        for task in list(self.retiring):
            task.cancel()
        steps = [
            ("browser contexts", lambda: asyncio.gather(
                *[w.context.close() for w in self.context_wrappers.values()],
                return_exceptions=True,
            )),
            ("browser", lambda: self.browser.close() if hasattr(self, "browser") else None),
            ("Playwright's driver", lambda: (
                self.browser_provider.close() if getattr(self, "browser_provider", None)
                else None
            )),
        ]  # fmt: skip
        for what, step in steps:
            try:
                awaitable = step()
                if awaitable is not None:
                    await asyncio.wait_for(awaitable, self.close_timeout)
            except TimeoutError:
                logger.warning("Closing the %s took over %.0f s: left to end with the process",
                               what, self.close_timeout)  # fmt: skip
            except Exception as error:
                logger.debug("Closing the %s: %s", what, error)
            if what == "browser contexts":
                self.context_wrappers.clear()
        if hasattr(self, "browser"):
            logger.info("Browser closed")

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
        # No cap on contexts: the handler renews its one context by generations, an old
        # one closed when its pages are done (OneBrowserHandler); a cap of one would make
        # the new context wait for the old one to close.
        settings.set("PLAYWRIGHT_MAX_CONTEXTS", 0, priority="addon")
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
