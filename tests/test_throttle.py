"""The crawl's AutoThrottle: a 304 Not Modified sets the pace as a 200 does; everything
else is Scrapy's (real Scrapy crawler, download slot and responses)."""

from __future__ import annotations

from scrapy.core.downloader import Slot
from scrapy.extensions.throttle import AutoThrottle
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from spidercrawl.capture.throttle import NotModifiedAutoThrottle

START_DELAY = 0.5
LATENCY = 0.01  # a quick server: the delay should come down towards latency / concurrency


def delay_after(throttle_class: type[AutoThrottle], status: int, responses: int = 5) -> float:
    crawler = get_crawler(settings_dict={"AUTOTHROTTLE_ENABLED": True})
    crawler._apply_settings()
    throttle = throttle_class.from_crawler(crawler)
    throttle.mindelay, throttle.maxdelay = 0.0, 60.0
    slot = Slot(concurrency=4, delay=START_DELAY, jitter=0)
    for _ in range(responses):
        throttle._adjust_delay(slot, LATENCY, Response("http://127.0.0.1/a", status=status))
    return slot.delay


def test_scrapy_keeps_the_delay_on_304s_and_ours_lowers_it() -> None:
    assert delay_after(AutoThrottle, 304) == START_DELAY  # the rule this module changes
    assert delay_after(NotModifiedAutoThrottle, 304) < START_DELAY / 10
    assert delay_after(NotModifiedAutoThrottle, 304) == delay_after(AutoThrottle, 200)


def test_error_pages_still_do_not_speed_the_crawl_up() -> None:
    for status in (404, 500, 503, 301):
        assert delay_after(NotModifiedAutoThrottle, status) == START_DELAY


def test_the_crawl_uses_it_instead_of_scrapys() -> None:
    from scrapy.utils.project import get_project_settings

    extensions = get_project_settings().getdict("EXTENSIONS")
    assert extensions["scrapy.extensions.throttle.AutoThrottle"] is None
    assert "spidercrawl.capture.throttle.NotModifiedAutoThrottle" in extensions


def test_a_render_after_a_plain_fetch_leaves_the_pace_to_that_fetch() -> None:
    """A render's latency is mostly Chromium's work: where a plain fetch of the page came
    just before (its raw HTML in the request), that fetch set the pace; a page rendered
    directly still sets it."""
    from scrapy import Request
    from scrapy.utils.project import get_project_settings

    from spidercrawl.capture.middleware import BlockCaptureMiddleware

    project = get_project_settings()
    names = ("RENDER_VIEWPORT", "CAPTURE_MAX_BLOCK_HTML", "CAPTURE_MAX_BLOCKS", "RENDER_LOAD_WAIT")
    crawler = get_crawler(settings_dict={name: project[name] for name in names})
    middleware = BlockCaptureMiddleware.from_crawler(crawler)
    after_fetch = Request("http://127.0.0.1/a", meta={"render": True, "raw_html": "<p>x</p>"})
    directly = Request("http://127.0.0.1/b", meta={"render": True})
    plain = Request("http://127.0.0.1/c")
    for request in (after_fetch, directly, plain):
        middleware.process_request(request)
    assert after_fetch.meta["playwright"] and after_fetch.meta["autothrottle_dont_adjust_delay"]
    assert directly.meta["playwright"] and "autothrottle_dont_adjust_delay" not in directly.meta
    assert "autothrottle_dont_adjust_delay" not in plain.meta
