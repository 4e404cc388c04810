"""Pages from files people already hold: HTML files and WARC archives.

``read_pages(path)`` yields one :class:`ArchivedPage` per HTML document: the file itself,
or each HTML ``response`` (or ``resource``) record of a WARC (``.warc``, ``.warc.gz``),
read with warcio. What cannot be read is yielded as a :class:`ReadError` with where and
why, and reading goes on:

- records that are not HTML (images, scripts, DNS, ``request`` and ``metadata`` records)
  are skipped and counted, not reported one by one;
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

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

HTML_TYPES = ("text/html", "application/xhtml+xml")
WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN_CHUNK = 1 << 20
_READ_ERRORS = (
    ArchiveLoadFailed, zlib.error, EOFError, OSError, ValueError, KeyError, AttributeError
)  # fmt: skip
MAX_PAGE_BYTES = 32 * 2**20  # as the crawl's DOWNLOAD_MAXSIZE


@dataclass(frozen=True)
class ArchivedPage:
    """One HTML document and where it came from."""

    url: str
    body: bytes
    content_type: str  # the HTTP header, with its charset if it had one
    source: str  # "FILE" or "FILE@OFFSET" for a WARC record
    date: str = ""  # the record's WARC-Date (ISO 8601), "" for a plain HTML file

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
    yield from _warc_pages(path, counts, max_bytes)


def _warc_pages(
    path: Path, counts: ReadCounts, max_bytes: int
) -> Iterator[ArchivedPage | ReadError]:
    gzipped = path.name.lower().endswith(".gz")
    start = 0
    with path.open("rb") as file:
        while True:
            file.seek(start)
            records = ArchiveIterator(file)
            read = 0
            try:
                for record in records:
                    read += 1
                    page = _html_page(record, f"{path}@{records.offset}", max_bytes)
                    if page is None:
                        counts.skipped += 1
                    elif isinstance(page, ReadError):
                        counts.errors += 1
                        yield page
                    else:
                        yield page
                if not read and start == 0 and path.stat().st_size:
                    counts.errors += 1
                    yield ReadError(str(path), "no WARC record could be read (cut short?)")
                return
            except _READ_ERRORS as error:
                # warcio's offset: the start of the record it failed on (absolute)
                offset = max(start, getattr(records, "offset", start))
                counts.errors += 1
                yield ReadError(f"{path}@{offset}", _printable(f"{type(error).__name__}: {error}"))
                if not gzipped:
                    return  # a plain WARC has no marks to resume at
                start = _next_gzip_member(file, offset + 1)
                if start < 0:
                    return


def _printable(message: str, limit: int = 160) -> str:
    """An error message fit for one log line (warcio quotes the damaged bytes)."""
    return "".join(c if c.isprintable() else "?" for c in message[:limit])


def _html_page(record: object, source: str, max_bytes: int) -> ArchivedPage | ReadError | None:
    """The record as a page, None when it is not an HTML response, or why it cannot be
    one (too large, cut short)."""
    if record.rec_type not in ("response", "resource"):  # type: ignore[attr-defined]
        return None
    headers = record.http_headers  # type: ignore[attr-defined]
    if headers is not None:
        content_type = headers.get_header("Content-Type") or ""
    else:
        content_type = record.rec_headers.get_header("Content-Type") or ""  # type: ignore[attr-defined]
    if content_type.split(";")[0].strip().lower() not in HTML_TYPES:
        return None
    url = record.rec_headers.get_header("WARC-Target-URI") or ""  # type: ignore[attr-defined]
    body = record.content_stream().read(max_bytes + 1)  # type: ignore[attr-defined]
    if len(body) > max_bytes:
        return ReadError(source, f"its page is more than {max_bytes} bytes (a bomb?): skipped")
    missing = getattr(record.raw_stream, "limit", 0)  # type: ignore[attr-defined]
    if missing:
        return ReadError(source, f"the record is cut short ({missing} bytes missing): skipped")
    date = record.rec_headers.get_header("WARC-Date") or ""  # type: ignore[attr-defined]
    return ArchivedPage(url, body, content_type, source, date)


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
