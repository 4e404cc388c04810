"""A WARC archive of what a crawl fetched, so that extraction can be redone later.

With ``WARC_DIR`` set (off by default), every response the crawl receives is written, as
it came from the server (before Scrapy undoes its compression), to one gzipped WARC per
site per run (``WARC_DIR/<site>-<UTC time>.warc.gz``, warcio): a ``request`` record, a
``response`` record with the HTTP headers, and for a page rendered in the browser a
``conversion`` record of the DOM the capture read, referring to the response record of
the same URL. Each file opens with a ``warcinfo`` record naming this project's version
and the settings that shape what was fetched. A response record carries
``WARC-Identified-Payload-Type``, as Common Crawl's do: readers that look no further (such
as datatrove's) take an HTML page for one.

``python -m spidercrawl.extract --model models/<site> FILE.warc.gz`` reads the response
records again: a learned site's pages give the articles its fast path gave.
"""

from __future__ import annotations

import io
import json
import logging
import tomllib
import zlib
from datetime import UTC, datetime
from http import HTTPStatus
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.signals import spider_closed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from spidercrawl.archive import SNIFF_BYTES, identified_payload_type
from spidercrawl.files import PROJECT_ROOT, safe_name

logger = logging.getLogger(__name__)

# The settings that shape what a crawl fetched and how, recorded in each file's warcinfo.
RECORDED_SETTINGS = (
    "USER_AGENT", "ROBOTSTXT_OBEY", "RENDER_VIEWPORT", "RENDER_BLOCKED_RESOURCE_TYPES",
    "RENDER_LOAD_WAIT", "RENDER_TIMEOUT", "FAST_PATH_ENABLED", "DOWNLOAD_MAXSIZE",
)  # fmt: skip


class WarcArchiveMiddleware:
    """Writes every response (and the rendered DOM) to the site's WARC of this run."""

    def __init__(self, crawler: Crawler, folder: Path) -> None:
        self.crawler = crawler
        self.folder = folder
        self.started = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.files: dict[str, tuple[BinaryIO, WARCWriter]] = {}
        self.responses: dict[str, str] = {}  # URL -> its latest response record's ID

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcArchiveMiddleware:
        folder = crawler.settings.get("WARC_DIR")
        if not folder:
            raise NotConfigured("WARC_DIR is not set: no archive of the crawl")
        folder = Path(folder)
        problem = unwritable(folder)
        if problem:  # the crawl command says so before anything starts
            raise ValueError(problem)
        middleware = cls(crawler, folder)
        crawler.signals.connect(middleware.close, signal=spider_closed)
        return middleware

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        try:
            self._archive(request, response)
        except Exception:  # the archive must never cost the page
            logger.exception("Could not archive %s", response.url)
        return response

    def _archive(self, request: Request, response: Response) -> None:
        writer = self._writer(str(request.meta.get("site") or "unknown"))
        if request.meta.get("playwright"):  # the browser's DOM: a conversion of the response
            refers = self.responses.pop(response.url, None)  # its render comes once
            headers = {"WARC-Refers-To": refers} if refers else {}
            record = writer.create_warc_record(
                response.url, "conversion", payload=io.BytesIO(response.body),
                warc_content_type="text/html; charset=utf-8", warc_headers_dict=headers,
            )  # fmt: skip
            writer.write_record(record)
            return
        writer.write_record(_request_record(writer, request))
        status = f"{response.status} {_reason(response.status)}"
        http = StatusAndHeaders(status, _header_list(response.headers), protocol="HTTP/1.1")
        record = writer.create_warc_record(
            response.url, "response", payload=io.BytesIO(response.body), http_headers=http,
            warc_headers_dict={"WARC-Identified-Payload-Type": _payload_type(response)},
        )  # fmt: skip
        writer.write_record(record)
        self.responses[response.url] = record.rec_headers.get_header("WARC-Record-ID")

    def _writer(self, site: str) -> WARCWriter:
        if site not in self.files:
            path = self.folder / f"{safe_name(site)}-{self.started}.warc.gz"
            handle = path.open("ab")
            writer = WARCWriter(handle, gzip=True)
            writer.write_record(writer.create_warcinfo_record(path.name, self._info()))
            self.files[site] = (handle, writer)
            logger.info("%s: archiving what is fetched to %s", site, path)
        return self.files[site][1]

    def _info(self) -> dict[str, Any]:
        settings = self.crawler.settings
        recorded = {name: settings.get(name) for name in RECORDED_SETTINGS}
        return {
            "software": f"spidercrawl/{_version()}",
            "format": "WARC File Format 1.1",
            "settings": json.dumps(recorded, default=str, sort_keys=True),
        }

    def close(self, spider: Spider | None = None) -> None:
        for handle, _ in self.files.values():
            handle.close()
        self.files.clear()


def unwritable(folder: Path) -> str:
    """Why ``folder`` cannot take the archive ("" when it can), checked before the crawl."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".spidercrawl-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        return f"WARC_DIR {folder} is not a writable folder ({error.strerror or error})"
    return ""


def _request_record(writer: WARCWriter, request: Request) -> Any:
    path = request.url.split("/", 3)[3] if request.url.count("/") >= 3 else ""
    line = f"{request.method} /{path} HTTP/1.1"
    http = StatusAndHeaders(line, _header_list(request.headers), is_http_request=True)
    return writer.create_warc_record(
        request.url, "request", payload=io.BytesIO(request.body or b""), http_headers=http
    )


def _header_list(headers: Any) -> list[tuple[str, str]]:
    return [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, values in headers.items()
        for value in values
    ]


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _version() -> str:
    """This project's version: installed, its package's; run from a checkout, its
    pyproject.toml's."""
    try:
        return metadata.version("spidercrawl")
    except metadata.PackageNotFoundError:
        try:
            project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text("utf-8"))
            return str(project["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


def _payload_type(response: Response) -> str:
    """The response's identified payload type: ``text/html`` for an HTML page by its
    Content-Type or its markup (:func:`spidercrawl.archive.identified_payload_type`)."""
    content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
    encoding = (response.headers.get(b"Content-Encoding") or b"").decode("latin-1")
    return identified_payload_type(content_type, _opening(response.body, encoding))


def _opening(body: bytes, encoding: str) -> bytes:
    """The first bytes of a body as sent, a gzip or zlib compression undone (at most
    SNIFF_BYTES of it); a body of another compression gives none."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body[:SNIFF_BYTES]
    if encoding in ("gzip", "x-gzip", "deflate"):
        try:  # wbits 47: a gzip or a zlib header, whichever it has
            return zlib.decompressobj(wbits=47).decompress(body, SNIFF_BYTES)
        except zlib.error:
            return b""
    return b""
