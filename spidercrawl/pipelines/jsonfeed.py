"""One JSON Feed 1.1 document per site (https://jsonfeed.org/version/1.1).

Articles of each site are collected during the crawl; when the spider closes they are
merged with the items of the site's existing feed document and with the newest lines of
its articles file (same ``id``: the newer one wins; so the articles of a killed crawl reach
the feed with the next run), newest first, capped at ``JSONFEED_MAX_ITEMS``, checked
against the specification's rules (``jsonfeed-1.1.schema.json``, written from the spec),
and written atomically: a crash never leaves a half-written feed. Fields the spec has no
place for go under the ``_spidercrawl`` extension object.

Settings: ``JSONFEED_ENABLED`` (True), ``JSONFEED_PATH`` (``output/%(site)s/feed.json``),
``JSONFEED_MAX_ITEMS`` (500).
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from spidercrawl.document.markdown import without_heading
from spidercrawl.extract.formats import ArticleFormats
from spidercrawl.extract.titles import without_headline
from spidercrawl.files import safe_name, write_json_atomically
from spidercrawl.pipelines.articles_file import (
    articles_file_path,
    articles_file_template,
    last_lines,
)
from spidercrawl.pipelines.delivery import article_formats

logger = logging.getLogger(__name__)

VERSION = "https://jsonfeed.org/version/1.1"
SCHEMA_FILE = "jsonfeed-1.1.schema.json"
_EXTENSION = "_spidercrawl"
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


@lru_cache(maxsize=1)
def feed_validator() -> Any:
    """A JSON Schema validator of JSON Feed 1.1 documents."""
    from jsonschema import Draft202012Validator

    text = resources.files("spidercrawl.pipelines").joinpath(SCHEMA_FILE).read_text("utf-8")
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)  # a broken schema would pass or fail anything
    return Draft202012Validator(schema)


def feed_errors(document: object) -> list[str]:
    """Where ``document`` breaks the JSON Feed 1.1 rules ([] when it is valid)."""
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(top)'}: {error.message}"
        for error in feed_validator().iter_errors(document)
    ]


def _full_datetime(value: str) -> str:
    """RFC 3339 date-times only: a date alone, or a time without its zone, would claim
    what nobody knows (the value stays in ``_spidercrawl``)."""
    return value if _RFC3339.match(value) else ""


def feed_item(article: dict[str, Any], formats: ArticleFormats | None = None) -> dict[str, Any]:
    """An article as a JSON Feed item: ``content_text`` always (a feed item needs content),
    ``content_html`` and the Markdown (``_spidercrawl.markdown``) where ``formats`` keeps
    them."""
    formats = formats or ArticleFormats()
    url = article.get("canonical_url") or article.get("url") or ""
    if article.get("duplicate_of"):  # a near-duplicate of another article: not in the feed
        url = ""
    item: dict[str, Any] = {"id": url, "url": url}
    text = str(article.get("text") or "")
    markdown = str(article.get("markdown") or "")
    html = str(article.get("html") or "")
    if article.get("title"):
        item["title"] = article["title"]
        # Feed readers show the title above the content: the headline the article's text
        # starts with (ARTICLE_HEADLINE_IN_TEXT) would be read twice.
        text, html = without_headline(text, html, str(article["title"]))
        markdown = without_heading(markdown, str(article["title"]))
    # A line written without its text (ARTICLE_FORMATS) gives its Markdown as the text.
    item["content_text"] = text or markdown
    if html and formats.keeps("html"):
        item["content_html"] = html
    if article.get("description"):
        item["summary"] = article["description"]
    if article.get("image"):
        item["image"] = article["image"]
    for field, key in (("published", "date_published"), ("modified", "date_modified")):
        if date := _full_datetime(str(article.get(field) or "")):
            item[key] = date
    if article.get("authors"):
        item["authors"] = [{"name": name} for name in article["authors"]]
    if article.get("lang"):
        item["language"] = article["lang"]
    item[_EXTENSION] = {
        key: article.get(key)
        for key in (
            "site",
            "published",
            "modified",
            "method",
            "method_note",
            "model_version",
            "confidence",
            "word_count",
            "crawled_at",
            "update",
            "post_of",
            "access",
            "reserved",
        )
        if article.get(key) not in (None, "", [])
    }
    if formats.keeps("markdown") and markdown:
        item[_EXTENSION]["markdown"] = markdown
    return item


def _newest_first(item: dict[str, Any]) -> tuple[str, str]:
    extension = item.get(_EXTENSION) or {}
    return (
        str(item.get("date_published") or extension.get("published") or ""),
        str(extension.get("crawled_at") or ""),
    )


class JsonFeedPipeline:
    """Collects each site's articles and writes its JSON Feed document at the end."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("JSONFEED_ENABLED"):
            raise NotConfigured("JSONFEED_ENABLED is off")
        if not settings.getbool("LEARN_ENABLED"):
            raise NotConfigured("LEARN_ENABLED is off: page items, no articles to feed")
        if settings.get("REDIS_URL"):
            raise NotConfigured("with Redis, python -m spidercrawl.collect writes the feeds")
        self.crawler = crawler
        self.formats = article_formats(crawler)
        self.articles_template = articles_file_template(settings)
        self.path_template = settings.get("JSONFEED_PATH")
        self.max_items = max(1, settings.getint("JSONFEED_MAX_ITEMS"))
        self.items: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        self.home_pages: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> JsonFeedPipeline:
        return cls(crawler)

    def path(self, site: str) -> Path:
        return Path(self.path_template % {"site": safe_name(site)})

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "text" not in adapter or "method" not in adapter:  # not an article
            return item
        article = dict(adapter.items())
        site = str(article.get("site") or "unknown")
        entry = feed_item(article, self.formats)
        if not entry["id"]:
            return item
        self.items[site][entry["id"]] = entry
        self.home_pages.setdefault(site, f"https://{site}/")
        if len(self.items[site]) > 2 * self.max_items:  # bound memory on huge crawls
            kept = sorted(self.items[site].values(), key=_newest_first, reverse=True)
            self.items[site] = {i["id"]: i for i in kept[: self.max_items]}
        return item

    def open_spider(self) -> None:
        """The crawled sites get their feed written even when no article of theirs is new."""
        for site in getattr(self.crawler.spider, "site_names", list)():
            self.items.setdefault(site, {})
            self.home_pages.setdefault(site, f"https://{site}/")

    def close_spider(self, spider: Spider | None = None) -> None:
        for site, items in self.items.items():
            write_site_feed(
                site,
                self.path(site),
                items,
                articles_file_path(self.articles_template, site),
                self.max_items,
                self.home_pages.get(site, f"https://{site}/"),
                self.formats,
            )


def write_site_feed(
    site: str,
    path: Path,
    items: dict[str, dict[str, Any]],
    articles_path: Path | None,
    max_items: int,
    home_page: str = "",
    formats: ArticleFormats | None = None,
) -> None:
    """Merge the feed at ``path`` with the newest delivered articles and ``items`` (feed
    entries by id), check it against the spec and write it atomically."""
    merged = {i["id"]: i for i in _previous_items(path)}
    if articles_path is not None:
        delivered = (feed_item(a, formats) for a in last_lines(articles_path, 2 * max_items))
        merged.update((i["id"], i) for i in delivered if i["id"])
    merged.update(items)
    valid = []
    for entry in sorted(merged.values(), key=_newest_first, reverse=True):
        problems = feed_errors({"version": VERSION, "title": site, "items": [entry]})
        if problems:
            logger.warning("Left out of %s's feed: %s (%s)", site, entry["id"], problems[0])
            continue
        valid.append(entry)
    document = {
        "version": VERSION,
        "title": site,
        "home_page_url": home_page or f"https://{site}/",
        "description": f"Articles of {site}, extracted by spidercrawl",
        "items": valid[:max_items],
    }
    problems = feed_errors({**document, "items": []})  # the items were checked above
    if problems:  # the document's own fields: this would be our own bug
        logger.error("%s: JSON Feed not written, it breaks the spec: %s", site, problems[0])
        return
    write_json_atomically(path, document)
    logger.info(
        "%s: JSON Feed with %d items (%d new or changed in this crawl) written to %s",
        site, len(document["items"]), len(items), path,
    )  # fmt: skip


def _previous_items(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        document = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as error:
        logger.warning("Ignoring the unreadable feed %s (%s)", path, error)
        return []
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        if items is not None or not isinstance(document, dict):
            logger.warning("Ignoring the feed %s: it holds no list of items", path)
        return []
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("id"), str) and i["id"]]
