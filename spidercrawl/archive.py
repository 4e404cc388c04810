"""Pages from files people already hold: HTML files and WARC archives.

``read_pages(path)`` yields one :class:`ArchivedPage` per HTML document: the file itself,
or each HTML ``response`` (or ``resource``) record of a WARC (``.warc``, ``.warc.gz``),
read with warcio, with the record's HTTP status and headers (its :class:`ResponseHead`:
the crawl's recognisers of walls and reservations read them as they read a live
response's). What cannot be read is yielded as a :class:`ReadError` with where and why,
and reading goes on:

- a record is HTML by its HTTP Content-Type, or by Common Crawl's
  ``WARC-Identified-Payload-Type``, or, where the Content-Type names no kind (missing,
  ``application/octet-stream``, ``text/plain``), by its markup (:func:`looks_like_html`);
  records that are not HTML (images, scripts, DNS, ``request`` and ``metadata``
  records) are skipped and counted, not reported one by one;
- a redirect or an error other than a wall's (a 301, a 404, a 500) is no page, as the
  crawl never reads one: counted; a 403, 429 or 503 is read, for the walls to be named;
- a truncated record or a damaged gzip member ends warcio's pass over the file; for a
  gzipped WARC, whose records are gzip members of their own, reading resumes at the next
  member (the next gzip header after the damage), so one bad record costs only itself;
- a record cut short (the file ends before its ``Content-Length``) is reported, not
  read as a page: its article would be a part of one;
- a page (an HTML file, or a record's payload once its HTTP compression is undone) of
  more than ``max_bytes`` (``MAX_PAGE_BYTES``, as the crawl's ``DOWNLOAD_MAXSIZE``) is
  reported and skipped after reading at most that much: a compression bomb costs
  bounded time and memory.
"""

from __future__ import annotations

import enum
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from spidercrawl.document.response import ResponseHead
from spidercrawl.document.walls import WALL_STATUSES

HTML_TYPES = ("text/html", "application/xhtml+xml")
# Content-Types that name no kind of body: the markup decides (as browsers sniff them).
UNNAMED_TYPES = frozenset({
    "", "application/octet-stream", "binary/octet-stream", "application/unknown",
    "unknown/unknown", "*/*", "text/plain", "application/x-unknown-content-type",
})  # fmt: skip
SNIFF_BYTES = 4096  # a body's head read for its markup
WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN_CHUNK = 1 << 20
_READ_ERRORS = (
    ArchiveLoadFailed, zlib.error, EOFError, OSError, ValueError, KeyError, AttributeError
)  # fmt: skip
MAX_PAGE_BYTES = 32 * 2**20  # as the crawl's DOWNLOAD_MAXSIZE
# What may stand before an HTML document's first tag: blank lines, an XML declaration,
# comments (IE's conditional comments among them) and IE's revealed conditionals.
_PROLOGUE = re.compile(rb"(?:\s+|<\?xml[^>]{0,500}>|<!--.*?-->|<!\[[^>]{0,100}>)*", re.DOTALL)
_HTML_START = re.compile(
    rb"<(?:!doctype\s+html|html|head|body|meta|title|link|script|style|base|noscript|div|p|"
    rb"h[1-6]|table|iframe|font|a|b|br|center|header|nav|main|article|section|form)[\s>/]",
    re.IGNORECASE,
)


class Skipped(enum.Enum):
    """Why a record is no page, without anything to report."""

    NOT_HTML = "not HTML"
    NOT_A_PAGE = "a redirect or an HTTP error"


@dataclass(frozen=True)
class ArchivedPage:
    """One HTML document and where it came from."""

    url: str
    body: bytes
    content_type: str  # the HTTP header, with its charset if it had one
    source: str  # "FILE" or "FILE@OFFSET" for a WARC record
    date: str = ""  # the record's WARC-Date (ISO 8601), "" for a plain HTML file
    head: ResponseHead = field(default_factory=ResponseHead)  # its HTTP status and headers
    record_id: str = ""  # its WARC-Record-ID

    @property
    def site(self) -> str:
        """The site the page belongs to, as a crawl names it: its host without ``www.``."""
        return site_of_url(self.url)


@dataclass(frozen=True)
class ReadError:
    """A record or file that could not be read, and why."""

    source: str
    reason: str


@dataclass
class ReadCounts:
    """What a pass over the inputs met besides pages."""

    skipped: int = 0  # records that are not HTML
    errors: int = 0
    not_pages: int = 0  # HTML records of a redirect or an HTTP error (not a wall's)


def media_type(content_type: str) -> str:
    """A Content-Type's media type, lower case, without parameters."""
    return content_type.split(";")[0].strip().lower()


def looks_like_html(body: bytes) -> bool:
    """Whether ``body`` opens as an HTML document: past a byte-order mark, blank lines,
    an XML declaration and comments (IE's conditional comments among them), a doctype of
    HTML or an HTML element. libmagic, which datatrove asks where a WARC names no payload
    type, calls such pages ``application/javascript`` when scripts come early."""
    head = body[:SNIFF_BYTES].removeprefix(b"\xef\xbb\xbf")
    prologue = _PROLOGUE.match(head)
    return _HTML_START.match(head, prologue.end() if prologue else 0) is not None


def is_html(content_type: str, identified_type: str, body: bytes) -> bool:
    """Whether a response is HTML: its Content-Type or identified payload type says so,
    or its Content-Type names no kind and its markup is HTML's."""
    media = media_type(content_type)
    if media in HTML_TYPES or media_type(identified_type) in HTML_TYPES:
        return True
    return media in UNNAMED_TYPES and looks_like_html(body)


def identified_payload_type(content_type: str, body: bytes) -> str:
    """A response's ``WARC-Identified-Payload-Type``, as Common Crawl's records carry it:
    ``text/html`` (or XHTML's) for an HTML page (:func:`is_html`), else its Content-Type's
    media type, ``application/octet-stream`` where it names none."""
    media = media_type(content_type)
    if is_html(content_type, "", body):
        return media if media in HTML_TYPES else "text/html"
    return media if media and media != "*/*" else "application/octet-stream"


def site_of_url(url: str) -> str:
    """A URL's site as a crawl names its model folder: the host, lower case, without
    ``www.`` ("" for a file or a URL without a host)."""
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def is_warc(path: Path) -> bool:
    return path.name.lower().endswith(WARC_SUFFIXES)


def read_pages(
    path: Path, counts: ReadCounts | None = None, max_bytes: int = MAX_PAGE_BYTES
) -> Iterator[ArchivedPage | ReadError]:
    """The HTML pages in ``path`` (an HTML file or a WARC archive)."""
    counts = counts if counts is not None else ReadCounts()
    if not is_warc(path):
        try:
            size = path.stat().st_size
            if size > max_bytes:
                counts.errors += 1
                yield ReadError(str(path), f"{size} bytes, more than a page may have ({max_bytes})")
                return
            body = path.read_bytes()
        except OSError as error:
            counts.errors += 1
            yield ReadError(str(path), f"unreadable: {error}")
            return
        yield ArchivedPage(path.resolve().as_uri(), body, "", str(path))
        return
    try:
        with path.open("rb") as file:
            yield from warc_pages(file, str(path), path.name.lower().endswith(".gz"), counts,
                                  max_bytes)  # fmt: skip
    except OSError as error:
        counts.errors += 1
        yield ReadError(str(path), f"unreadable: {error}")


def warc_pages(
    file: BinaryIO, name: str, gzipped: bool, counts: ReadCounts, max_bytes: int = MAX_PAGE_BYTES
) -> Iterator[ArchivedPage | ReadError]:
    """The HTML pages of a WARC open in ``file`` (seekable, for reading to resume after a
    damaged gzip member), named ``name`` in what is reported."""
    start = 0
    while True:
        if start:  # a stream (a decompressor's) is read from where it stands
            file.seek(start)
        records = ArchiveIterator(file)
        read = 0
        try:
            for record in records:
                read += 1
                page = _html_page(record, f"{name}@{records.offset}", max_bytes)
                if page is Skipped.NOT_HTML:
                    counts.skipped += 1
                elif page is Skipped.NOT_A_PAGE:
                    counts.not_pages += 1
                elif isinstance(page, ReadError):
                    counts.errors += 1
                    yield page
                else:
                    yield page
            if not read and start == 0 and _has_bytes(file):
                counts.errors += 1
                yield ReadError(name, "no WARC record could be read (cut short?)")
            return
        except _READ_ERRORS as error:
            # warcio's offset: the start of the record it failed on (absolute)
            offset = max(start, getattr(records, "offset", start))
            counts.errors += 1
            yield ReadError(f"{name}@{offset}", _printable(f"{type(error).__name__}: {error}"))
            if not gzipped:
                return  # a plain WARC has no marks to resume at
            start = _next_gzip_member(file, offset + 1)
            if start < 0:
                return


def _has_bytes(file: BinaryIO) -> bool:
    """Whether the file holds anything (a stream that cannot tell is taken to)."""
    try:
        file.seek(0)
        return bool(file.read(1))
    except (OSError, ValueError):
        return True


def _printable(message: str, limit: int = 160) -> str:
    """An error message fit for one log line (warcio quotes the damaged bytes)."""
    return "".join(c if c.isprintable() else "?" for c in message[:limit])


def _html_page(record: object, source: str, max_bytes: int) -> ArchivedPage | ReadError | Skipped:
    """The record as a page, why it is none (not HTML, a redirect or an HTTP error), or
    why it cannot be one (too large, cut short)."""
    if record.rec_type not in ("response", "resource"):  # type: ignore[attr-defined]
        return Skipped.NOT_HTML
    warc = record.rec_headers  # type: ignore[attr-defined]
    http = record.http_headers  # type: ignore[attr-defined]
    if http is not None:
        head = ResponseHead.of(http.get_statuscode(), http.headers)
        content_type = http.get_header("Content-Type") or ""
    else:
        content_type = warc.get_header("Content-Type") or ""
        head = ResponseHead(200, (("Content-Type", content_type),))
    identified = warc.get_header("WARC-Identified-Payload-Type") or ""
    said = media_type(content_type) in HTML_TYPES or media_type(identified) in HTML_TYPES
    if not said and media_type(content_type) not in UNNAMED_TYPES:
        return Skipped.NOT_HTML  # an image, a script: its body is not read
    if not (200 <= head.status < 300 or head.status in WALL_STATUSES):
        return Skipped.NOT_A_PAGE
    body = record.content_stream().read(max_bytes + 1)  # type: ignore[attr-defined]
    if len(body) > max_bytes:
        return ReadError(source, f"its page is more than {max_bytes} bytes (a bomb?): skipped")
    if not is_html(content_type, identified, body):
        return Skipped.NOT_HTML
    missing = getattr(record.raw_stream, "limit", 0)  # type: ignore[attr-defined]
    if missing:
        return ReadError(source, f"the record is cut short ({missing} bytes missing): skipped")
    url = warc.get_header("WARC-Target-URI") or ""
    date = warc.get_header("WARC-Date") or ""
    record_id = warc.get_header("WARC-Record-ID") or ""
    return ArchivedPage(url, body, content_type, source, date, head, record_id)


def _next_gzip_member(file: object, position: int) -> int:
    """Offset of the next gzip header at or after ``position``; -1 if there is none."""
    file.seek(position)  # type: ignore[attr-defined]
    carry = b""
    base = position
    while chunk := file.read(_SCAN_CHUNK):  # type: ignore[attr-defined]
        data = carry + chunk
        found = data.find(GZIP_MAGIC)
        if found >= 0:
            return base - len(carry) + found
        carry = data[-(len(GZIP_MAGIC) - 1) :]
        base += len(chunk)
    return -1
