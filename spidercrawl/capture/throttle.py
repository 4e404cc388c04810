"""AutoThrottle that lets a ``304 Not Modified`` set the pace as a 200 does.

Scrapy's AutoThrottle never lowers a site's delay on a response other than 200: error
pages and redirections are small and quick, and following their latency would speed up
a crawl exactly when the server struggles. A 304 is neither: it is the server's answer to
our conditional request for a page we already have (``CONDITIONAL_FETCH``), as cheap for
it as for us. A scheduled crawl of a site that changed little is mostly 304s, so with
Scrapy's rule its delay stayed where the first few pages left it: measured on the demo
site of 240 pages (``benchmarks/multi_layout_crawl.py``), the crawl of the unchanged
site took 19.2 s, four times the 4.9 s of the crawl that fetched and extracted every
page. Everything else (start delay, target concurrency, maximum delay, raising the delay
on slow or failing responses) is Scrapy's.

The other half of the crawl's pacing is in :mod:`spidercrawl.capture.middleware`: a render
request's latency is the whole render (Chromium's layout and the capture script, 0.3-0.5
s a page here against the server's 1 ms), which AutoThrottle took for a slow server and
spaced renders by. Where a plain fetch of the page came just before (the raw HTML the
peers read, or the fast path's try), that fetch has given AutoThrottle the server's own
latency, and the render is marked ``autothrottle_dont_adjust_delay`` (Scrapy's meta key);
a page rendered directly still sets the pace. The demo's render-only crawl of 240 pages:
83.0 s -> 56.4 s (55.6 s with AutoThrottle off).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.extensions.throttle import AutoThrottle

from spidercrawl.capture.conditional import NOT_MODIFIED

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.http import Response


class NotModifiedAutoThrottle(AutoThrottle):
    """:class:`~scrapy.extensions.throttle.AutoThrottle`, with 304s counted as 200s (stat
    ``spidercrawl/throttle/not_modified_lowered_delay``: the 304s that lowered the delay,
    which Scrapy's rule would have kept). It overrides AutoThrottle's ``_adjust_delay``,
    a private method: Scrapy is pinned in requirements.txt, and tests/test_throttle.py
    fails if an upgrade moves it."""

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        if response.status != NOT_MODIFIED:
            super()._adjust_delay(slot, latency, response)
            return
        before = slot.delay
        super()._adjust_delay(slot, latency, response.replace(status=200))
        if slot.delay < before:
            self.crawler.stats.inc_value("spidercrawl/throttle/not_modified_lowered_delay")
