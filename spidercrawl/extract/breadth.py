"""Breadth mode (``RENDER = "learning"``): a browser only for the pages a site model learns
from.

A corpus crawl of many sites with a few pages each spends most of its time rendering
pages in Chromium, though the consensus of the readers of raw HTML
(:mod:`spidercrawl.extract.decision`) reads most pages nearly as well as the rendered
path (docs/measurements.md). In breadth mode a site that has no model yet has its article pages
fetched plainly and extracted from their raw HTML; only once the site has shown enough
pages to be learned (``LEARN_MIN_PAGES`` fetched plainly) are its next ``LEARN_MIN_PAGES``
rendered, the pages its model learns from; after those, plain again, and once the model is
learned the fast path (:mod:`spidercrawl.extract.fast_path`) takes its pages. A site of a
few pages is never rendered; a large one costs ``LEARN_MIN_PAGES`` renders.

A page fetched this way that is not text, is over ``FAST_PATH_MAX_BYTES`` even without
its scripts' and styles' content, or does not parse goes to the browser, as the fast
path's would. Its page item says why it was not
rendered (``render_skipped``); the learning pipeline extracts it at once rather than
holding it for a model. The default, ``RENDER = "always"``, renders every article page.

Stats: ``spidercrawl/breadth/plain`` (pages fetched plainly), ``.../rendered_to_learn``.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse

from spidercrawl.capture.static import static_capture
from spidercrawl.document.html import UnusableDocumentError, parse_raw_html, within_size
from spidercrawl.learn.model import MODEL_FILE
from spidercrawl.learn.store import ModelStore
from spidercrawl.signals import site_model_changed

logger = logging.getLogger(__name__)

RENDER_MODES = ("always", "learning")
SKIPPED = "breadth mode: the site is not learned yet (RENDER=learning)"


class BreadthMiddleware:
    """Render requests of sites without a model become plain fetches, but for the pages a
    model learns from (see the module doc)."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        mode = str(settings.get("RENDER")).lower()
        if mode not in RENDER_MODES:
            raise ValueError(f"RENDER must be one of {', '.join(RENDER_MODES)}, got {mode!r}")
        if mode != "learning":
            raise NotConfigured("RENDER is 'always': every article page is rendered")
        self.crawler = crawler
        self.store = ModelStore(settings.get("MODELS_DIR"))
        self.learn_pages = max(1, settings.getint("LEARN_MIN_PAGES"))
        self.max_bytes = settings.getint("FAST_PATH_MAX_BYTES")
        self.seen: Counter[str] = Counter()  # per site: article pages asked for
        self.learned: dict[str, bool] = {}  # per site: a model exists (saved or learned)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BreadthMiddleware:
        middleware = cls(crawler)
        crawler.signals.connect(middleware.model_changed, signal=site_model_changed)
        return middleware

    def model_changed(self, site: str, model: Any) -> None:
        """A model put in use, or retired (the template drifted): then the site's next
        ``LEARN_MIN_PAGES`` pages are rendered, for the model learned again."""
        self.learned[site] = model is not None
        if model is None:
            self.seen[site] = self.learn_pages

    def _learned(self, site: str) -> bool:
        if site not in self.learned:
            self.learned[site] = (self.store.folder(site) / MODEL_FILE).is_file()
        return self.learned[site]

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        meta = request.meta
        if not meta.get("render") or meta.get("fast_path") or "fast_path_rejected" in meta:
            return None
        if "render_skipped" in meta or "breadth_rejected" in meta or "render_to_learn" in meta:
            return None  # decided already (a request comes back here after its raw fetch)
        site = str(meta.get("site") or "")
        if self._learned(site):
            return None  # the fast path takes it, or the model decided it needs the browser
        self.seen[site] += 1
        number = self.seen[site]
        if self.learn_pages < number <= 2 * self.learn_pages:
            meta["render_to_learn"] = True
            self.crawler.stats.inc_value("spidercrawl/breadth/rendered_to_learn")
            if number == self.learn_pages + 1:
                logger.info(
                    "%s: %d pages so far: rendering the next %d to learn the site from",
                    site, self.learn_pages, self.learn_pages,
                )  # fmt: skip
            return None
        meta["render"] = False
        meta["render_skipped"] = SKIPPED
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        meta = request.meta
        if "render_skipped" not in meta or meta.get("render"):
            return response
        if response.status >= 400:
            return response  # an HTTP error: the browser would get it too
        why = ""
        bounded = None
        if not isinstance(response, TextResponse):
            why = "not a text response"
        elif (bounded := within_size(response.text, self.max_bytes)) is None:
            why = (
                f"{len(response.body) / 2**20:.1f} MB of HTML, above FAST_PATH_MAX_BYTES "
                "even without its scripts and styles"
            )
        else:
            try:
                meta["capture"] = static_capture(parse_raw_html(bounded), response.url)
            except UnusableDocumentError as error:
                why = str(error)
        if why:
            logger.info("%s: rendering %s instead (%s)", meta.get("site"), response.url, why)
            return _to_browser(request, why)
        self.crawler.stats.inc_value("spidercrawl/breadth/plain")
        if bounded is not response.text:  # read without its scripts: the same for the rest
            logger.info(
                "%s: %s read without its scripts' and styles' content (%.1f MB of HTML, above "
                "FAST_PATH_MAX_BYTES)", meta.get("site"), response.url, len(response.body) / 2**20,
            )  # fmt: skip
            response = response.replace(body=bounded.encode("utf-8"), encoding="utf-8")
        return response


def _to_browser(request: Request, reason: str) -> Request:
    meta: dict[str, Any] = {**request.meta, "render": True, "breadth_rejected": reason}
    meta.pop("render_skipped", None)
    meta.pop("capture", None)
    return request.replace(meta=meta, dont_filter=True)
