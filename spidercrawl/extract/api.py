"""Extraction without a crawl: an article item from HTML you already hold.

    from spidercrawl import extract_html
    article = extract_html(open("page.html", "rb").read(), url="https://npr.org/...")
    article["text"], article["title"], article["published"]

The item is the one a crawl delivers for a page fetched without a browser: with a site's
model (``models/<site>/``), the model's extraction rules, their check and text density's
agreement (``method: rules``); without one, or where the rules fail or are doubted, the
consensus of text density, readability-lxml and trafilatura on the HTML (``method:
density`` or ``raw-consensus``, how it was chosen in ``method_note``;
``raw_consensus=False``: text density alone, quicker). The cross-site model needs the
rendered page's blocks (geometry and CSS), which raw HTML does not have.

Given the response's HTTP status and headers (``head``: an archived record's), the page
is judged as the crawl judges a live one, by the same recognisers: a bot wall (a 403
challenge, a 200 captcha) is no article (:class:`BlockedPageError`), and the
``X-Robots-Tag`` and ``tdm-reservation`` headers join the page's meta tags in
``reserved``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from spidercrawl import settings as crawl_settings
from spidercrawl.archive import MAX_PAGE_BYTES
from spidercrawl.capture.static import static_capture
from spidercrawl.document.html import UnusableDocumentError, decode_html, parse_raw_html
from spidercrawl.document.response import ResponseHead
from spidercrawl.document.walls import Wall
from spidercrawl.extract.chain import ExtractionChain
from spidercrawl.extract.fast_path import cut_raw_html
from spidercrawl.extract.item import article_item
from spidercrawl.extract.readers import Peers
from spidercrawl.items import ArticleItem
from spidercrawl.learn.model import SiteModel

_chains: dict[bool, ExtractionChain] = {}


class BlockedPageError(Exception):
    """The response is a bot wall, not the article: never extracted."""

    def __init__(self, url: str, wall: Wall) -> None:
        super().__init__(f"{url}: blocked ({wall.describe()})")
        self.wall = wall


def _chain(raw_consensus: bool) -> ExtractionChain:
    """The chain for pages without a browser, made once per process (the peers' imports
    take a second)."""
    if raw_consensus not in _chains:
        _chains[raw_consensus] = ExtractionChain(
            time_budget=crawl_settings.EXTRACT_TIME_BUDGET,  # the crawl's default
            peers=Peers() if raw_consensus else None,
        )
    return _chains[raw_consensus]


def load_site_model(model: SiteModel | str | Path | None) -> SiteModel | None:
    """A site model, from itself or its folder (``models/<site>``)."""
    if model is None or isinstance(model, SiteModel):
        return model
    return SiteModel.load(Path(model))


def extract_html(
    html: str | bytes,
    url: str | None = None,
    site_model: SiteModel | str | Path | None = None,
    *,
    content_type: str = "",
    head: ResponseHead | None = None,
    robots_agents: Iterable[str] | None = None,
    headline_in_text: bool = True,
    raw_consensus: bool = True,
    with_html: bool = True,
) -> ArticleItem:
    """The article item of one page's HTML (bytes: valid UTF-8, else the HTTP
    ``content_type``'s or the page's declared charset, else windows-1252).

    ``url`` gives relative links, the canonical URL and dates in the path their meaning;
    ``site_model`` is a learned :class:`SiteModel` or its folder. ``headline_in_text``
    False leaves the headline to ``title`` (``ARTICLE_HEADLINE_IN_TEXT``);
    ``raw_consensus`` False reads the page by text density alone (``RAW_CONSENSUS``). A
    page of more than ``MAX_PAGE_BYTES`` is a ValueError.

    ``head``: the response's status and headers; with it, a bot wall raises
    :class:`BlockedPageError`, and its headers' reservations are the item's too.
    ``robots_agents``: whose robots directives count besides every crawler's
    (``ROBOTS_AGENTS`` by default). ``with_html`` False leaves the item's ``html`` and
    ``markdown`` empty, for a caller that keeps the text and metadata alone.
    """
    if len(html) > MAX_PAGE_BYTES:  # bounded time and memory: as the crawl's DOWNLOAD_MAXSIZE
        raise ValueError(f"a page of {len(html)} bytes, more than {MAX_PAGE_BYTES}: not read")
    url = url or ""
    content_type = content_type or (head.first("Content-Type") if head is not None else "")
    text = html if isinstance(html, str) else decode_html(html, content_type or None)[0]
    if head is not None and (wall := head.wall(text)) is not None:
        raise BlockedPageError(url, wall)
    model = load_site_model(site_model)
    try:  # parsed once, as the crawl's fast path does: metadata and rules from one tree
        capture = cut_raw_html(parse_raw_html(text), url, model)[0]
    except UnusableDocumentError:
        capture = static_capture(text, url)
    agents = crawl_settings.ROBOTS_AGENTS if robots_agents is None else robots_agents
    meta = capture.get("meta") or {}
    page = {
        **capture,
        "reservations": (head or ResponseHead()).reservations(meta, agents=agents),
        "url": url,
        "site": (urlsplit(url).hostname or "").removeprefix("www."),
        "rendered_html": text,
        "crawled_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    result = _chain(raw_consensus).extract(page, model)  # fetched without a browser: stage 1
    return article_item(
        page, result.extraction, result.method, model, result.note, (), headline_in_text,
        with_html,
    )  # fmt: skip
