"""Builds a :class:`~spidercrawl.items.PageItem` from a rendered response and its capture."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scrapy.http import Response

from spidercrawl.document.structured import clean_records, clean_types
from spidercrawl.items import PageItem
from spidercrawl.memory import page_digest

# Keys of the capture result copied into the item as they are.
_CAPTURED_FIELDS = (
    "titles",
    "descriptions",
    "body",
    "texts",
    "canonical_url",
    "lang",
    "og",
    "meta",
    "time_datetimes",
    "jsonld",
    "jsonld_types",
    "viewport",
    "fast_path_article",
    "headlines",
    "decks",
    "hidden_text_chars",
    "blocks_truncated",
)


def build_page_item(
    response: Response,
    capture: dict[str, Any],
    site: str,
    discovered_by: str,
    keep_html: bool = True,
) -> PageItem:
    """One page item: the capture's fields plus what the crawl knows about the response."""
    item = PageItem(
        url=response.url,
        site=site,
        requested_url=response.request.url if response.request else response.url,
        status=response.status,
        discovered_by=discovered_by,
        crawled_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    for field in _CAPTURED_FIELDS:
        if field in capture:
            item[field] = capture[field]
    item.setdefault("texts", [])
    # Structured data as the browser read it may take any shape: plain records only.
    item["jsonld"] = clean_records(capture.get("jsonld"))
    item["jsonld_types"] = clean_types(capture.get("jsonld_types"))
    item["capture_mode"] = capture.get("capture_mode", "browser")
    if response.meta.get("fast_path_rejected"):
        item["fast_path_rejected"] = response.meta["fast_path_rejected"]
        item["fast_path_version"] = response.meta.get("fast_path_version", "")
    if response.meta.get("render_skipped"):
        item["render_skipped"] = response.meta["render_skipped"]
    item["rendered_html"] = response.text if keep_html else ""
    raw_html = response.meta.get("raw_html")
    if keep_html and raw_html:
        item["raw_html"] = raw_html
    if raw_html is None and item["capture_mode"] != "browser":
        raw_html = response.text  # fetched plainly: the server's HTML itself
    if raw_html:
        item["page_digest"] = page_digest(raw_html)
    return item
