"""What each render in flight waits for, and what a page may do to the browser.

Every wait on the browser has a bound (``capture/browser.py``); this module keeps the
record that makes a long wait visible. :class:`RenderWatch` knows, for each page being
rendered, since when and at which stage (a new browser page, the navigation, the page's
load and the capture script, closing); its :meth:`RenderWatch.report` logs each render
past ``RENDER_SLOW_LOG`` seconds once, naming the stage, and says when no render has
ended for that long while some are in flight (a crawl that stopped moving).

:func:`guard_page` is installed on every rendered page before it loads:

- a navigation of the main frame after its document came (a script that sends the
  browser to a consent wall, an app store, another host, or ``location.reload()``) is
  aborted, so the document read is the one fetched. HTTP redirects of the first
  navigation are the server's and are not affected (the browser follows them itself);
- ``window.open`` opens nothing, and windows the page opens otherwise are closed as
  they appear.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

STAGE_PAGE = "a new browser page"
STAGE_NAVIGATION = "the navigation (the document to arrive)"
STAGE_SCRIPTS = "the page's load event and the capture script"
STAGE_CLOSING = "the page to close"


@dataclass
class RenderInFlight:
    """One render: its URL, when it began, the stage it waits in and its page once open."""

    url: str
    started: float
    stage: str = STAGE_PAGE
    page: Any = None
    reported: bool = False
    stopped: asyncio.Event = field(default_factory=asyncio.Event)  # set: give up now

    def seconds(self, now: float) -> float:
        return now - self.started


@dataclass
class RenderWatch:
    """The renders in flight, keyed by the Scrapy request's id."""

    slow_after: float
    flights: dict[int, RenderInFlight] = field(default_factory=dict)
    last_end: float = field(default_factory=time.monotonic)
    stall_reported: bool = False

    def start(self, key: int, url: str) -> RenderInFlight:
        flight = RenderInFlight(url=url, started=time.monotonic())
        self.flights[key] = flight
        return flight

    def end(self, key: int) -> None:
        self.flights.pop(key, None)
        self.last_end = time.monotonic()
        self.stall_reported = False

    def report(self) -> None:
        """Log each render past ``slow_after`` once, and a stall once while it lasts."""
        now = time.monotonic()
        for flight in self.flights.values():
            if not flight.reported and flight.seconds(now) >= self.slow_after:
                flight.reported = True
                logger.warning(
                    "Still rendering %s after %.0f s: waiting for %s",
                    flight.url, flight.seconds(now), flight.stage,
                )  # fmt: skip
        if self.flights and not self.stall_reported and now - self.last_end >= self.slow_after:
            self.stall_reported = True
            waiting = "; ".join(
                f"{f.url} ({f.stage}, {f.seconds(now):.0f} s)" for f in self.flights.values()
            )
            logger.warning(
                "No render has ended for %.0f s; %d in flight: %s",
                now - self.last_end, len(self.flights), waiting[:2000],
            )  # fmt: skip


async def close_quietly(page: Any, timeout: float) -> bool:
    """Close a browser page within ``timeout`` seconds; False if it did not close (the
    context it belongs to is closed later all the same)."""
    try:
        await asyncio.wait_for(page.close(run_before_unload=False), timeout)
    except TimeoutError:
        logger.warning("A browser page did not close within %.0f s: %s", timeout, page.url)
        return False
    except Exception as error:  # the page or its browser is gone already
        logger.debug("Closing a browser page: %s", error)
    return True


POPUP_CLOSE_TIMEOUT = 5.0
# Before the page's scripts: window.open opens nothing (50 windows opened at once held a
# page's DOMContentLoaded past 6 s on two cores). A window opened some other way is
# closed as it appears.
NO_WINDOWS = "window.open = () => null;"


async def guard_page(page: Any, request: Any) -> None:
    """scrapy-playwright's page init callback (see the module doc): registered after the
    handler's own route, this route is asked first for every request of the page."""

    async def route_guard(route: Any, browser_request: Any) -> None:
        frame = browser_request.frame if browser_request.is_navigation_request() else None
        if frame is not None and frame == page.main_frame and page.main_frame.url != "about:blank":
            logger.info(
                "%s: its script navigated to %s: not followed (the page fetched is read)",
                request.url, browser_request.url[:300],
            )  # fmt: skip
            # "aborted" leaves the current document in place; other error codes would
            # show Chromium's error page instead.
            await route.abort("aborted")
            return
        await route.fallback()

    closing: set[asyncio.Future] = set()

    def close_popup(popup: Any) -> None:
        task = asyncio.ensure_future(close_quietly(popup, POPUP_CLOSE_TIMEOUT))
        closing.add(task)  # held until done: the loop keeps only weak references
        task.add_done_callback(closing.discard)

    page.on("popup", close_popup)
    await page.add_init_script(NO_WINDOWS)
    await page.route("**", route_guard)
