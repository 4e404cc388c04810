"""An article's metadata from its page item: title, authors, dates, language, image, URL.

Structured metadata (JSON-LD, OpenGraph, ``<meta>``, ``<time>``) comes first because
publishers write it for machines; what is missing or broken is left empty rather than
guessed. Libraries do the hard parts: ``python-dateutil`` parses dates, ``htmldate`` finds a
publication date in scripts, URLs and text when no metadata gives one, ``py3langid`` checks
the declared language against the text.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

from dateutil import parser as date_parser
from dateutil.parser import UnknownTimezoneWarning

from spidercrawl.document.html import LastAnswer, without_attribute_floods
from spidercrawl.document.language import declared_language, language
from spidercrawl.document.page import first_value, names_title, title_key

EARLIEST_DATE = datetime(1990, 1, 1, tzinfo=UTC)  # no news site is older than the web
# Chinese, Japanese and Korean titles put no spaces around separators ("标题_新闻_腾讯网").
_CJK = "\u3040-\u9fff\uac00-\ud7af\uff01-\uff60"
_TITLE_SEPARATORS = re.compile(
    r"\s+[|\-\u2013\u2014:\u00b7\u2022\u00bb\u00ab/]\s+|\s*::\s*|(?<=\w):\s+|\s+\|"
    rf"|(?<=[{_CJK}])\s*[_|\uff5c\u2013\u2014-]\s*|\s*[_|\uff5c\u2013\u2014-]\s*(?=[{_CJK}])"
)
_GENERIC_LABELS = frozenset({"www", "com", "net", "org", "edu", "gov", "co", "news", "blogs"})
_BYLINE_PREFIX = re.compile(r"^(by|von|par|por|di|door)\s+", re.IGNORECASE)
_AUTHOR_SPLIT = re.compile(r"\s*(?:,|;|\||&|\band\b|\bund\b|\bet\b|\by\b)\s*", re.IGNORECASE)
_PUBLISHED_KEYS = (
    "date",
    "pubdate",
    "publishdate",
    "dc.date.issued",
    "dc.date",
    "parsely-pub-date",
    "sailthru.date",
)
_AUTHOR_KEYS = ("author", "parsely-author", "sailthru.author", "dc.creator", "byl")
_MAX_AUTHOR_WORDS = 5


@dataclass
class ArticleMetadata:
    titles: list[str] = field(default_factory=list)  # from metadata, best first
    authors: list[str] = field(default_factory=list)
    published: str = ""  # ISO 8601; a date without time when only the day is known
    modified: str = ""
    lang: str = ""
    image: str = ""
    canonical_url: str = ""


def site_names(page: Mapping[str, Any], known: Iterable[str] = ()) -> set[str]:
    """Names a site goes by, normalised: og:site_name, its host's main label, and
    ``known`` (title segments seen on many of the site's pages, see :class:`SiteTitles`)."""
    names = {title_key(first_value([(page.get("og") or {}).get("og:site_name")]))}
    host = urlsplit(str(page.get("url") or "")).hostname or ""
    site = str(page.get("site") or host)
    labels = [label for label in site.split(".") if label not in _GENERIC_LABELS]
    names.update(title_key(label) for label in labels[:1] if len(label) >= 3)
    names.update(known)
    return {name for name in names if name}


def _segment_spans(title: str) -> list[tuple[int, int]]:
    """(start, end) of each segment of a title split at its separators."""
    spans, start = [], 0
    for separator in _TITLE_SEPARATORS.finditer(title):
        spans.append((start, separator.start()))
        start = separator.end()
    spans.append((start, len(title)))
    return [(a, b) for a, b in spans if title[a:b].strip()]


def title_segments(title: str) -> list[str]:
    title = " ".join(title.split())
    return [title[a:b] for a, b in _segment_spans(title)]


class SiteTitles:
    """Learns a site's own name from its pages' titles: the first or last segment that
    recurs in many different titles ("... | Guardian Unlimited", "The Hindu : ..."), or a
    whole title that many pages share ("SuperSoccer")."""

    def __init__(self, min_share: float = 0.3) -> None:
        self.min_share = min_share
        self.titles: set[str] = set()
        self.edges: Counter[str] = Counter()
        self.whole: Counter[str] = Counter()

    def observe(self, page: Mapping[str, Any]) -> None:
        for title in (page.get("titles") or [])[:1]:
            self.whole[title_key(title)] += 1
            if title in self.titles:
                continue
            self.titles.add(title)
            parts = title_segments(title)
            if len(parts) > 1:  # any segment that recurs ("_新闻_腾讯网"); headlines do not
                self.edges.update({title_key(part) for part in parts})

    def names(self) -> set[str]:
        pages = sum(self.whole.values())
        needed = max(2, self.min_share * len(self.titles))
        names = {name for name, count in self.edges.items() if count >= needed}
        needed = max(2, self.min_share * pages)
        names |= {name for name, count in self.whole.items() if count >= needed}
        return {name for name in names if name}


def clean_title(title: str, names: set[str]) -> str:
    """A title without the site's name around it ("Storm hits coast | The Times" ->
    "Storm hits coast"); empty when the title is nothing but the site's name."""
    title = " ".join(title.split())
    spans = _segment_spans(title)

    # A segment that merely contains a short name ("新闻" in a short headline) is taken for
    # the name only if it is not the title's longest segment, its headline.
    headline = max(spans, key=lambda span: span[1] - span[0], default=(0, 0))

    def is_site(span: tuple[int, int]) -> bool:
        key = title_key(title[span[0] : span[1]])
        loose = span != headline
        return bool(key) and any(
            key == n or (n in key and len(key) <= len(n) + 8 and (loose or len(n) >= 6))
            for n in names
        )

    while len(spans) > 1 and is_site(spans[-1]):
        spans.pop()
    while len(spans) > 1 and is_site(spans[0]):
        spans.pop(0)
    if not spans or (len(spans) == 1 and is_site(spans[0])):
        return ""
    return title[spans[0][0] : spans[-1][1]].strip()


def metadata_titles(page: Mapping[str, Any], known: Iterable[str] = ()) -> list[str]:
    """Title candidates from metadata, best first, cleaned of the site's name."""
    names = site_names(page, known)
    jsonld = [obj.get("headline") for obj in page.get("jsonld") or []]
    og = (page.get("og") or {}).get("og:title")
    raw = [*jsonld, og, *(page.get("titles") or [])]
    titles = []
    for candidate in raw:
        cleaned = clean_title(candidate, names) if isinstance(candidate, str) else ""
        if cleaned and cleaned not in titles:
            titles.append(cleaned)
    return titles


_HOUR = 3600
# Time-zone abbreviations common in news metadata ("Mon, 12 May 2014 10:00 EDT"), as UTC
# offsets in seconds. dateutil knows only UTC and the machine's own zone: it would drop the
# others and warn once per page (UnknownTimezoneWarning). Ambiguous ones (IST) are left out.
TIMEZONE_OFFSETS = {
    **dict.fromkeys(("UT", "UTC", "GMT", "Z", "WET"), 0),
    "EST": -5 * _HOUR, "EDT": -4 * _HOUR, "CST": -6 * _HOUR, "CDT": -5 * _HOUR,
    "MST": -7 * _HOUR, "MDT": -6 * _HOUR, "PST": -8 * _HOUR, "PDT": -7 * _HOUR,
    "AKST": -9 * _HOUR, "AKDT": -8 * _HOUR, "HST": -10 * _HOUR,
    "BST": _HOUR, "WEST": _HOUR, "CET": _HOUR, "CEST": 2 * _HOUR, "EET": 2 * _HOUR,
    "EEST": 3 * _HOUR, "MSK": 3 * _HOUR, "SGT": 8 * _HOUR, "HKT": 8 * _HOUR,
    "AWST": 8 * _HOUR, "JST": 9 * _HOUR, "KST": 9 * _HOUR, "ACST": int(9.5 * _HOUR),
    "AEST": 10 * _HOUR, "AEDT": 11 * _HOUR, "NZST": 12 * _HOUR, "NZDT": 13 * _HOUR,
}  # fmt: skip


def parse_date(value: str) -> datetime | None:
    """A date from a metadata value, or None when it is not one, or not plausible."""
    value = value.strip()
    if not value or len(value) > 64:
        return None
    try:
        parsed = date_parser.isoparse(value)
    except (ValueError, OverflowError):
        try:
            with warnings.catch_warnings():  # an unknown zone: the time is kept as local
                warnings.simplefilter("ignore", UnknownTimezoneWarning)
                parsed = date_parser.parse(value, fuzzy=False, tzinfos=TIMEZONE_OFFSETS)
        except (ValueError, OverflowError, TypeError):
            return None
    aware = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if not EARLIEST_DATE <= aware <= datetime.now(UTC) + timedelta(days=2):
        return None
    return parsed


def _iso(value: datetime, date_only: bool = False) -> str:
    if date_only:
        return value.date().isoformat()
    return value.isoformat(timespec="seconds")


def _has_time(value: str) -> bool:
    return bool(re.search(r"\d[T ]\d{1,2}:\d{2}", value))


def publication_dates(page: Mapping[str, Any]) -> tuple[str, str]:
    """(published, modified) as ISO 8601; '' where unknown. Metadata first, then
    ``htmldate`` on the page's HTML and URL (dates in scripts, URLs and text)."""
    og = page.get("og") or {}
    meta = page.get("meta") or {}
    jsonld = page.get("jsonld") or []
    candidates = [obj.get("datePublished") for obj in jsonld]
    candidates += [og.get("article:published_time")]
    candidates += [meta.get(key) for key in _PUBLISHED_KEYS]
    candidates += list(page.get("time_datetimes") or [])
    published = ""
    for value in candidates:
        value = first_value([value])
        if value and (parsed := parse_date(value)):
            published = _iso(parsed, date_only=not _has_time(value))
            break
    if not published:
        published = _htmldate(page)
    modified = ""
    for value in [obj.get("dateModified") for obj in jsonld] + [
        og.get("article:modified_time"),
        og.get("og:updated_time"),
    ]:
        value = first_value([value])
        if value and (parsed := parse_date(value)):
            modified = _iso(parsed, date_only=not _has_time(value))
            break
    if modified and published and modified[:10] < published[:10]:
        modified = ""  # a modification before publication is a broken field
    return published, modified


_EMPTY_DOCUMENT = "<html></html>"


# The dates htmldate found in the last page's HTML, by URL: the decision asks a page's
# date where its markup looks new, and its metadata asks again.
_last_dates = LastAnswer()


def _htmldate(page: Mapping[str, Any]) -> str:
    rendered = page.get("rendered_html") or ""
    url = str(page.get("url") or "")
    found: dict[str, str] = _last_dates(rendered, lambda _: {})
    if url not in found:
        found[url] = _htmldate_of(rendered, url)
    return found[url]


def _htmldate_of(rendered: str, url: str) -> str:
    import htmldate

    html = without_attribute_floods(rendered)  # it parses with libxml2
    if not html and not url:
        return ""
    # htmldate takes a date in the URL before anything in the page; asked with the URL and
    # an empty document first, it need not parse the page for a third of the datasets' pages
    # (the same dates on all 1,036).
    documents = [_EMPTY_DOCUMENT, html] if url and html else [html or _EMPTY_DOCUMENT]
    for document in documents:
        try:
            found = htmldate.find_date(
                document,
                url=url or None,
                original_date=True,
                extensive_search=False,  # guesses from free text are too often wrong
                outputformat="%Y-%m-%d",
            )
        except Exception:  # htmldate on broken markup: no date rather than no article
            return ""
        if found:
            return found
    return ""


def clean_authors(values: Iterable[Any], names: set[str]) -> list[str]:
    """People's names from author fields, without "By", URLs, site names or navigation."""
    authors: list[str] = []
    seen: set[str] = set()
    for value in values:
        for raw in value if isinstance(value, list) else [value]:
            if not isinstance(raw, str):
                continue
            parts = _AUTHOR_SPLIT.split(_BYLINE_PREFIX.sub("", " ".join(raw.split())))
            if _looks_like_navigation(parts):
                continue
            for part in parts:
                part = _BYLINE_PREFIX.sub("", part.strip(" .-"))
                key = title_key(part)
                if (
                    not key
                    or key in seen
                    or key in names
                    or "://" in part
                    or "@" in part
                    or "=" in part  # a query string ("authorname=Dolores+Chang")
                    or any(ch.isdigit() for ch in part)
                    or len(part.split()) > _MAX_AUTHOR_WORDS
                    or len(part) > 60
                ):
                    continue
                seen.add(key)
                authors.append(part)
    return authors


def _looks_like_navigation(parts: Sequence[str]) -> bool:
    """A field of many one-word items ("Home | News | Sport | Contact") is a menu."""
    parts = [p for p in parts if p.strip()]
    one_word = sum(1 for p in parts if len(p.split()) == 1)
    return len(parts) >= 3 and one_word >= len(parts) / 2


def page_authors(page: Mapping[str, Any]) -> list[str]:
    """The article's authors: its structured data's where it names people, else the
    ``<meta>`` author fields and ``article:author``. Where JSON-LD names the authors, a
    ``<meta name=author>`` mostly names the publisher ("Condé Nast") or a wire service
    beside them, and merging the two gave a wrong list."""
    og = page.get("og") or {}
    meta = page.get("meta") or {}
    names = site_names(page)
    jsonld = [obj.get("author") or [] for obj in page.get("jsonld") or []]
    structured = clean_authors(jsonld, names)
    if structured:
        return structured
    article_author = og.get("article:author")  # often a profile URL, dropped by the cleaning
    return clean_authors([*(meta.get(k) for k in _AUTHOR_KEYS), article_author], names)


def article_metadata(
    page: Mapping[str, Any],
    text: str = "",
    known_names: Iterable[str] = (),
    confirmed_language: str = "",
) -> ArticleMetadata:
    """Everything about an article except its text; ``text`` checks the language (unless
    the page declares the site's ``confirmed_language``), ``known_names`` are the site's
    names learned from its titles (:class:`SiteTitles`)."""
    url = str(page.get("url") or "")
    og = page.get("og") or {}
    published, modified = publication_dates(page)
    canonical = first_value([page.get("canonical_url")])
    image = first_value([og.get("og:image"), og.get("og:image:url")])
    titles = metadata_titles(page, known_names)
    return ArticleMetadata(
        titles=titles,
        authors=page_authors(page),
        published=published,
        modified=modified,
        lang=language(declared_language(page), text, confirmed_language),
        image=urljoin(url, image) if image else "",
        canonical_url=urljoin(url, canonical) if canonical else url,
    )


def best_title(metadata_titles: Sequence[str], headlines: Sequence[str]) -> str:
    """The visible headline that the metadata titles name, else the first metadata title,
    else the most title-like block.

    Metadata titles are often shortened, rewritten for sharing, or carry a section and
    the site's name; the headline on the page is what readers (and corpora) call the
    title. A headline block matches a metadata title when they are nearly equal, or when the
    block's text is a good part of it ("Storm hits coast" in "News : Storm hits coast").
    """
    for title in metadata_titles:
        for text in headlines:
            if names_title(text, title):
                return text
    if metadata_titles:
        return metadata_titles[0]
    return headlines[0] if headlines else ""
