"""The fast path: pages of a learned site are fetched plainly and cut by its rules.

Rendering is the slowest part of a crawl by far. For a site whose model (saved under
``MODELS_DIR/<site>/``, or just learned in this crawl) has usable extraction rules, this
middleware turns the spider's render requests into plain HTTP requests. When the response
comes back it applies the rules and checks the result against what the site's articles
look like (:meth:`ExtractionRules.check`). A page that passes reaches the spider with the
metadata of its raw HTML (``capture_mode = "http"``, no blocks); a page that fails (the
rules match nothing or too much, the text needs JavaScript, the template changed) is sent
back to the browser, and its page item says why (``fast_path_rejected``).

The render decision is learned with the model: where the rules did not find on the raw
HTML of the training pages the article they found in the browser's DOM (scripts draw it;
:attr:`ExtractionRules.render_reason`), every layout of the site needing the browser, the
site is rendered directly and the log says why ("rendered directly, as the model ...
decided when it was learned (...)"). It is made again whenever the model is relearned.

Bad input: a page above ``FAST_PATH_MAX_BYTES`` (4 MB) is read without its scripts' and
styles' content (JSON-LD kept; a page of today often carries megabytes of its application's
state inline); one still above it or with more than ``FAST_PATH_MAX_ELEMENTS`` (25,000)
elements goes to the browser, with the reason in the log and in its page item; markup that
does not parse, likewise. A page whose declared charset
lies (UTF-8 declared, windows-1252 sent, or the reverse) is read by its bytes
(:func:`~spidercrawl.document.html.decode_html`) and logged.

Settings: ``FAST_PATH_ENABLED`` (default True; needs ``LEARN_ENABLED``), ``MODELS_DIR``,
``FAST_PATH_MAX_BYTES``, ``FAST_PATH_MAX_ELEMENTS``. Stats: ``spidercrawl/fast_path/accepted``,
``.../rejected``, ``.../charset_corrected``, ``.../scripts_left_out``, ``.../render_decision``
(sites rendered by it), the pipeline counts how each accepted page's article was checked
(``.../check/prose``, ``.../check/density``, ``.../check/doubted``:
:class:`~spidercrawl.extract.chain.ChainResult`).
"""

from __future__ import annotations

import codecs
import itertools
import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse

from spidercrawl.capture.static import static_capture
from spidercrawl.document.html import (
    UnusableDocumentError,
    decode_html,
    parse_raw_html,
    within_size,
)
from spidercrawl.document.page import first_description
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.rules import FastPathArticle, RuleCheck
from spidercrawl.learn.store import ModelStore
from spidercrawl.signals import site_model_changed, site_needs_browser

if TYPE_CHECKING:
    import lxml.html

logger = logging.getLogger(__name__)


class FastPathMiddleware:
    """Plain fetch + extraction rules for learned sites; the browser for the rest."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not (settings.getbool("FAST_PATH_ENABLED") and settings.getbool("LEARN_ENABLED")):
            raise NotConfigured("the fast path is off (FAST_PATH_ENABLED or LEARN_ENABLED)")
        self.crawler = crawler
        self.store = ModelStore(settings.get("MODELS_DIR"))
        self.models: dict[str, SiteModel | None] = {}  # per site: a model with usable rules
        self.max_bytes = settings.getint("FAST_PATH_MAX_BYTES")
        self.max_elements = settings.getint("FAST_PATH_MAX_ELEMENTS")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FastPathMiddleware:
        middleware = cls(crawler)
        crawler.signals.connect(middleware.model_changed, signal=site_model_changed)
        crawler.signals.connect(middleware.needs_browser, signal=site_needs_browser)
        return middleware

    def needs_browser(self, site: str, reason: str) -> None:
        """The site's articles are drawn by scripts: render its pages directly."""
        self.models[site] = None
        logger.info("%s: fast path off for this crawl (%s)", site, reason)

    def model_changed(self, site: str, model: SiteModel | None) -> None:
        self.models[site] = self._fast_path_model(site, model)
        if self.models[site]:
            logger.info("%s: fast path on (plain HTTP + extraction rules)", site)
        elif not _render_reason(model):
            logger.info("%s: fast path off (pages are rendered)", site)

    def _model_of(self, site: str) -> SiteModel | None:
        if site not in self.models:
            self.models[site] = self._fast_path_model(site, self.store.load(site))
        return self.models[site]

    def _fast_path_model(self, site: str, model: SiteModel | None) -> SiteModel | None:
        """``model`` if the fast path should use it: usable rules that held on the raw HTML
        of its training pages (the render decision, learned with the model)."""
        if model is None or model.usable_rules() is None:
            return None
        reason = _render_reason(model)
        if reason:
            self.crawler.stats.inc_value("spidercrawl/fast_path/render_decision")
            logger.info(
                "%s: rendered directly, as the model %s decided when it was learned (%s)",
                site, model.version_, reason,
            )  # fmt: skip
            return None
        return model

    def _site(self, request: Request) -> str:
        spider = self.crawler.spider
        return str(request.meta.get("site") or getattr(spider, "site", "") or "")

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        meta = request.meta
        if not meta.get("render") or "fast_path_rejected" in meta:
            return None
        if self._model_of(self._site(request)) is None:
            return None
        meta["render"] = False
        meta["fast_path"] = True
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if not request.meta.get("fast_path"):
            return response
        if response.status >= 400:
            return response  # an HTTP error: the browser would get it too
        site = self._site(request)
        model = self._model_of(site)
        if model is None:  # the model was retired while the page was on its way
            return _to_browser(request, "the site's template is being learned again")
        if not isinstance(response, TextResponse):
            return _to_browser(request, "not a text response")
        text, encoding = response.text, response.encoding
        if not response.body.isascii():  # the declared charset matters: is it true?
            text, encoding = decode_html(response.body, _header(response, b"Content-Type"))
        rewritten = _codec(encoding) != _codec(response.encoding)
        if rewritten:  # the page's charset lies
            self.crawler.stats.inc_value("spidercrawl/fast_path/charset_corrected")
            logger.info(
                "%s: %s declares %s but its bytes are %s: read as %s",
                site, response.url, response.encoding, encoding, encoding,
            )  # fmt: skip
        # Bounds: parsing and the rules are linear in the page's size and elements, so these
        # two bound the time a page can take here; beyond them the browser has it. A page
        # over the size is read without its scripts' content where that brings it under.
        bounded = within_size(text, self.max_bytes)
        if bounded is not text:
            size = f"{len(response.body) / 2**20:.1f} MB of HTML"
            limit = f"FAST_PATH_MAX_BYTES ({self.max_bytes / 2**20:.1f} MB)"
            if bounded is None:
                why = f"{size}, above {limit} even without its scripts and styles"
                return self._give_up(request, site, response.url, why)
            self.crawler.stats.inc_value("spidercrawl/fast_path/scripts_left_out")
            logger.info(
                "%s: %s read without its scripts' and styles' content (%s, above %s)",
                site, response.url, size, limit,
            )  # fmt: skip
            text, rewritten = bounded, True
        if rewritten:
            response = response.replace(body=text.encode("utf-8"), encoding="utf-8")
        try:  # one parse serves the metadata and the rules
            document = parse_raw_html(text)
        except UnusableDocumentError as error:
            return self._give_up(request, site, response.url, str(error))
        elements = sum(1 for _ in itertools.islice(document.iter(), self.max_elements + 1))
        if elements > self.max_elements:
            why = f"more than {self.max_elements} elements (FAST_PATH_MAX_ELEMENTS)"
            return self._give_up(request, site, response.url, why, text, encoding)
        capture, verdict = cut_raw_html(document, response.url, model)
        stats = self.crawler.stats
        if verdict is None or not verdict.ok:
            why = verdict.reason if verdict else "no usable rules"
            stats.inc_value("spidercrawl/fast_path/rejected")
            logger.info("%s: rendering %s instead (%s)", site, response.url, why)
            request.meta["fast_path_version"] = model.version_
            return _to_browser(request, why, response.text, encoding)
        stats.inc_value("spidercrawl/fast_path/accepted")
        request.meta["capture"] = capture
        request.meta["hrefs"] = document.xpath("//a/@href")  # the spider's links: no 2nd parse
        return response

    def _give_up(
        self,
        request: Request,
        site: str,
        url: str,
        why: str,
        raw_html: str | None = None,
        raw_encoding: str = "",
    ) -> Request:
        self.crawler.stats.inc_value("spidercrawl/fast_path/rejected")
        logger.info("%s: rendering %s instead (%s)", site, url, why)
        return _to_browser(request, why, raw_html, raw_encoding)


def _header(response: Response, name: bytes) -> str:
    return (response.headers.get(name) or b"").decode("latin-1")


def _codec(encoding: str | None) -> str:
    """An encoding's canonical name ('latin-1' and 'iso-8859-1' are one)."""
    try:
        return codecs.lookup(encoding or "").name
    except LookupError:
        return str(encoding)


def cut_raw_html(
    document: lxml.html.HtmlElement, url: str, model: SiteModel | None
) -> tuple[dict[str, Any], RuleCheck | None]:
    """What the fast path does to a parsed raw page: its metadata, and where ``model`` has
    usable rules, its article cut by them and checked (None without rules). An article
    that passes rides in the capture (``fast_path_article``), so the pipeline takes it as
    it is: the page is parsed and cut once. Also :func:`spidercrawl.extract_html`'s."""
    capture = static_capture(document, url)  # first: the rules drop scripts
    rules = model.usable_rules() if model is not None else None
    if rules is None:
        return capture, None
    result = rules.extract(document)
    verdict = rules.check(result, first_description(capture))
    if verdict.ok:
        capture["fast_path_article"] = FastPathArticle(result, model.version_)
    return capture, verdict


def _render_reason(model: SiteModel | None) -> str:
    """Why the model's pages need the browser ("" when the fast path can take them)."""
    rules = model.usable_rules() if model is not None else None
    return getattr(rules, "render_reason", "") if rules is not None else ""


def _to_browser(
    request: Request, reason: str, raw_html: str | None = None, raw_encoding: str = ""
) -> Request:
    """The same request, now for the browser, remembering why the fast path gave it up (and
    the raw HTML it fetched and the encoding it was read in, so that the page is not
    fetched plainly twice)."""
    meta: dict[str, Any] = {**request.meta, "render": True, "fast_path_rejected": reason}
    if raw_html is not None:
        meta["raw_html"] = raw_html
        meta["raw_encoding"] = _codec(raw_encoding) if raw_encoding else ""
    meta.pop("fast_path", None)
    return request.replace(meta=meta, dont_filter=True)
