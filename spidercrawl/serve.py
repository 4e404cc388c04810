"""Serve a site snapshot on 127.0.0.1 so it can be crawled exactly like a live site.

    python -m spidercrawl.serve demo/harbourtimes.example --port 8000
    python -m spidercrawl.serve ../shared/datasets/dragnet --site mashable.com

Besides the saved pages (at their original paths, see :mod:`spidercrawl.snapshot`) it
generates what a news site has around them: a home page linking section pages and an
RSS feed, section pages linking every page, ``/sitemap.xml``, ``/feed.xml`` and
``/robots.txt`` (unless the snapshot brings its own under ``files/``). A page archived
with its HTTP status and headers (``responses/ID.json``: a wall's 403, an
``X-Robots-Tag``) is answered with them, as its site answered.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import logging
import mimetypes
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

from spidercrawl.archive import HTML_TYPES, media_type
from spidercrawl.document.response import RECOGNISED_HEADERS
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs, route_path

logger = logging.getLogger(__name__)

SECTION_SIZE = 20
FEED_SIZE = 50


class SnapshotServer(ThreadingHTTPServer):
    """An HTTP server for one snapshot; ``base_url`` is where it listens."""

    daemon_threads = True

    def __init__(
        self,
        snapshot: SiteSnapshot,
        port: int = 0,
        host: str = "127.0.0.1",
        handler_class: type[BaseHTTPRequestHandler] | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.titles = {page_id: snapshot.page_title(page_id) for page_id in snapshot.page_ids}
        self.hits: Counter[str] = Counter()  # path -> requests served (bounded by paths)
        self.not_modified = 0  # conditional requests answered 304
        super().__init__((host, port), handler_class or SnapshotRequestHandler)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


class SnapshotRequestHandler(BaseHTTPRequestHandler):
    server: SnapshotServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        logger.debug("%s " + format, self.address_string(), *args)

    def _respond(self, send_body: bool) -> None:
        snapshot = self.server.snapshot
        parts = urlsplit(self.path)
        path = route_path(parts.path + ("?" + parts.query if parts.query else ""))
        self.server.hits[path] += 1
        page_id = snapshot.routes.get(path)
        extra = snapshot.extra_file(parts.path)
        if page_id is not None:
            # Without an archived Content-Type, no charset: the browser reads the page's
            # own declaration, as on the web.
            head = snapshot.response_head(page_id)
            ctype = head.first("Content-Type")
            if media_type(ctype) not in HTML_TYPES:
                ctype = "text/html"
            judged = [(n, v) for n, v in head.headers if n.lower() in RECOGNISED_HEADERS]
            body = snapshot.page_bytes(page_id)
            self._send(head.status, body, ctype, send_body, judged)
        elif extra is not None:
            ctype = mimetypes.guess_type(extra.name)[0] or "application/octet-stream"
            self._send(200, extra.read_bytes(), ctype, send_body)
        elif parts.path == "/":
            self._send(200, self._home().encode(), "text/html; charset=utf-8", send_body)
        elif parts.path.startswith("/section/") and parts.path[9:].isdigit():
            body = self._section(int(parts.path[9:]))
            status = 200 if body else 404
            page = (body or "not found").encode()
            self._send(status, page, "text/html; charset=utf-8", send_body)
        elif parts.path == "/sitemap.xml":
            self._send(200, self._sitemap().encode(), "application/xml", send_body)
        elif parts.path == "/feed.xml":
            self._send(200, self._feed().encode(), "application/rss+xml", send_body)
        elif parts.path == "/robots.txt":
            robots = f"User-agent: *\nAllow: /\nSitemap: {self._url('/sitemap.xml')}\n"
            self._send(200, robots.encode(), "text/plain", send_body)
        else:
            self._send(404, b"not found", "text/plain", send_body)

    def _send(
        self,
        status: int,
        body: bytes,
        ctype: str,
        send_body: bool,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        # An ETag from the content, as web servers send, so a re-crawl can ask for the page
        # conditionally (If-None-Match) and get 304 Not Modified when it did not change.
        etag = f'"{hashlib.sha1(body).hexdigest()[:20]}"'
        if status == 200 and etag in self.headers.get("If-None-Match", ""):
            self.server.not_modified += 1
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", formatdate(usegmt=True))
        if status == 200:
            self.send_header("ETag", etag)
        for name, value in headers or ():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                logger.debug("client went away before %s was sent", self.path)

    def _url(self, path: str) -> str:
        return self.server.base_url.rstrip("/") + path

    def _section_count(self) -> int:
        pages = len(self.server.snapshot.page_ids)
        return max(1, -(-pages // SECTION_SIZE))

    def _link_list(self, page_ids: list[str]) -> str:
        snapshot = self.server.snapshot
        return "\n".join(
            f'<li><a href="{html.escape(snapshot.path_of[i])}">'
            f"{html.escape(self.server.titles[i])}</a></li>"
            for i in page_ids
        )

    def _page(self, title: str, content: str) -> str:
        return (
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title>"
            '<meta property="og:type" content="website">'
            '<link rel="alternate" type="application/rss+xml" href="/feed.xml" title="Latest">'
            f"</head><body><h1>{html.escape(title)}</h1>{content}</body></html>"
        )

    def _home(self) -> str:
        snapshot = self.server.snapshot
        sections = "".join(
            f'<li><a href="/section/{n}">Section {n}</a></li>'
            for n in range(1, self._section_count() + 1)
        )
        latest = self._link_list(snapshot.page_ids[:10])
        return self._page(snapshot.host, f"<ul>{sections}</ul><h2>Latest</h2><ul>{latest}</ul>")

    def _section(self, number: int) -> str | None:
        if not 1 <= number <= self._section_count():
            return None
        start = (number - 1) * SECTION_SIZE
        ids = self.server.snapshot.page_ids[start : start + SECTION_SIZE]
        return self._page(f"Section {number}", f"<ul>{self._link_list(ids)}</ul>")

    def _sitemap(self) -> str:
        snapshot = self.server.snapshot
        urls = "".join(
            f"<url><loc>{xml_escape(self._url(snapshot.path_of[i]))}</loc></url>"
            for i in snapshot.page_ids
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        )

    def _feed(self) -> str:
        snapshot = self.server.snapshot
        items = "".join(
            f"<item><title>{xml_escape(self.server.titles[i])}</title>"
            f"<link>{xml_escape(self._url(snapshot.path_of[i]))}</link></item>"
            for i in snapshot.page_ids[:FEED_SIZE]
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
            f"<title>{xml_escape(snapshot.host)}</title><link>{self._url('/')}</link>"
            f"{items}</channel></rss>"
        )


@contextmanager
def serving(
    snapshot_dir: Path | str,
    port: int = 0,
    handler_class: type[BaseHTTPRequestHandler] | None = None,
) -> Iterator[SnapshotServer]:
    """Serve a snapshot in a background thread for the duration of a ``with`` block."""
    server = SnapshotServer(
        SiteSnapshot(Path(snapshot_dir)), port=port, handler_class=handler_class
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spidercrawl.serve", description="Serve a site snapshot on 127.0.0.1."
    )
    parser.add_argument("snapshot", type=Path, help="a site folder, or a folder of sites")
    parser.add_argument("--site", help="the host to serve when the folder holds several")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    if not args.snapshot.is_dir():
        parser.error(f"{args.snapshot} is not a folder")
    sites = find_site_dirs(args.snapshot)
    if args.site:
        sites = [s for s in sites if s.name == args.site]
    if len(sites) != 1:
        names = ", ".join(s.name for s in sites[:20]) or "none"
        parser.error(f"need exactly one site, found {len(sites)} ({names}): use --site HOST")
    server = SnapshotServer(SiteSnapshot(sites[0]), port=args.port)
    print(
        f"Serving {server.snapshot.host} ({len(server.snapshot.page_ids)} pages) at "
        f"{server.base_url}  (Ctrl-C stops)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
