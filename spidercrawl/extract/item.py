"""The article item of a page: extraction plus metadata, title and headline.

Shared by the crawl's pipeline and by extraction without a crawl (:mod:`spidercrawl.extract.api`),
so that both deliver the same item for the same page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spidercrawl.document.access import (
    article_access,
    html_without_prompts,
    page_prompts,
    without_prompts,
)
from spidercrawl.document.blocks import block_text
from spidercrawl.document.captured import Page
from spidercrawl.document.deck import decks_in_blocks, decks_of_field, lead_with_deck
from spidercrawl.document.markdown import article_markdown
from spidercrawl.document.page import first_description, html_headlines
from spidercrawl.document.repeats import without_repeats
from spidercrawl.extract.metadata import article_metadata, best_title
from spidercrawl.extract.titles import headline_candidates, lead_with_headline, without_headline
from spidercrawl.items import ArticleItem
from spidercrawl.learn.model import SiteModel
from spidercrawl.text import composed, word_count


def article_item(
    page: Mapping[str, Any],
    extraction: Any,
    method: str,
    model: SiteModel | None,
    note: str = "",
    site_names: Iterable[str] = (),
    headline_in_text: bool = True,
    with_html: bool = True,
) -> ArticleItem:
    """The article item of one page, from whichever extraction was used; its text starts
    with the visible headline, or, if ``headline_in_text`` is False, leaves out the one
    the extraction took (the title carries it). A
    :class:`~spidercrawl.document.captured.Page` gives the blocks it has built already.
    ``with_html`` False leaves ``html`` and ``markdown`` empty, for a caller that keeps
    the text alone: a peer reader's clean HTML is built from the page again when asked."""
    text = extraction.text if extraction is not None else ""
    html = extraction.html if extraction is not None and with_html else ""
    text, prompts = without_prompts(text)  # a paywall's prompt is no part of the article
    html = html_without_prompts(html, prompts)
    text, html, _ = without_repeats(text, html)  # a placeholder shown at every embed, once
    access = article_access(page.get("jsonld") or [], prompts or _page_prompts(page))
    language = model.content_language() if model is not None else ""
    metadata = article_metadata(page, text, site_names, language)
    if page.get("texts"):
        blocks = Page.of(page).blocks_without_densities()
        headlines = headline_candidates(page, blocks)
        decks = decks_in_blocks(
            [block.text for block in blocks], page.get("descriptions") or [],
            [*metadata.titles, *headlines],
        )  # fmt: skip
    else:  # fetched without a browser: the page's <h1> headings stand in for title blocks
        headlines = page.get("headlines")
        if headlines is None:
            headlines = html_headlines(page.get("rendered_html") or "")
        decks = decks_of_field(page.get("decks"))  # found as the page was parsed
    title = best_title(metadata.titles, headlines)
    text, html = lead_with_deck(text, html, decks)  # a deck first, on a paragraph of its own
    words = word_count(text)  # without a deck, of the text the fast path's check tokenized
    body = text
    if headline_in_text and title in headlines:
        text, html = lead_with_headline(text, html, title)
        if text is not body:  # the headline went first, on a paragraph of its own
            words += word_count(title)
    elif not headline_in_text and title:  # the headline is in ``title`` only
        text, html = without_headline(text, html, title)
        if text is not body:  # its headline paragraph, the headline's words, went
            words -= word_count(title)
    text, html, title = composed(text), composed(html), composed(title)
    item = ArticleItem(
        url=page.get("url"),
        canonical_url=metadata.canonical_url,
        site=page.get("site"),
        title=title,
        description=composed(first_description(page)),
        authors=metadata.authors,
        published=metadata.published,
        modified=metadata.modified,
        image=metadata.image,
        text=text,
        html=html,
        markdown=article_markdown(text, html) if with_html else "",
        lang=metadata.lang,
        method=method,
        method_note=note,
        model_version=model.version_ if model is not None else "",
        confidence=getattr(extraction, "confidence", 0.5 if text else 0.0),
        word_count=words,
        crawled_at=page.get("crawled_at"),
        post_of=page.get("post_of") or "",
        validators=page.get("validators"),
        page_digest=page.get("page_digest"),
    )
    if access:  # absent where nothing says
        item["access"] = access
    reserved = page.get("reservations")
    if isinstance(reserved, list) and reserved:
        item["reserved"] = [str(name) for name in reserved]
    return item


def _page_prompts(page: Mapping[str, Any]) -> list[str]:
    """The subscription prompts on the page outside the article (its blocks, or its HTML
    where it has none)."""
    blocks = [block_text(raw.get("text")) for raw in page.get("texts") or []]
    return page_prompts(blocks, "" if blocks else page.get("rendered_html") or "")
