"""Site snapshots: a folder holding one site's saved pages (and, optionally, gold text).

Format (the one of ``../shared/datasets``)::

    HOST/pages/ID.html   the page, raw bytes as published
    HOST/gold/ID.txt     optional: the page's main text written by people (UTF-8)
    HOST/index.tsv       optional: ID <TAB> original URL
    HOST/responses/ID.json  optional: the page's HTTP status and the headers that judge
                         it, as archived ({"status": 403, "headers": [["X-Robots-Tag",
                         "noai"]]}); the server answers with them (else a 200)
    HOST/files/...       optional: other files served at their relative path
                         (files/static/style.css -> /static/style.css, files/robots.txt)

The local server and the evaluation both route pages through :meth:`SiteSnapshot.routes`,
so a crawled URL always maps back to its page ID.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from spidercrawl.document.response import ResponseHead

# Paths the server generates itself; a page never takes them.
RESERVED_PATHS = {"/", "/robots.txt", "/sitemap.xml", "/feed.xml"}
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)


def route_path(path: str) -> str:
    """A local path as the server matches it: one leading slash. Python's HTTP server turns
    "//section/story" into "/section/story" (against open redirects), and some original
    URLs have the double slash ("http://www.newstatesman.com//politics/...")."""
    return "/" + path.lstrip("/") if path.startswith("/") else path


def is_site_dir(path: Path) -> bool:
    return (path / "pages").is_dir()


def find_site_dirs(root: Path) -> list[Path]:
    """The site folders in ``root``: itself, its children, or its grandchildren."""
    root = Path(root)
    if is_site_dir(root):
        return [root]
    children = sorted(p for p in root.iterdir() if p.is_dir())
    sites = [p for p in children if is_site_dir(p)]
    if sites:
        return sites
    return [g for c in children for g in sorted(c.iterdir()) if g.is_dir() and is_site_dir(g)]


@dataclass
class SiteSnapshot:
    """One site folder: its pages, their original URLs and their local paths."""

    root: Path
    host: str = field(init=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        if not is_site_dir(self.root):
            raise FileNotFoundError(f"{self.root} is not a site snapshot (no pages/ folder)")
        self.host = self.root.name

    @cached_property
    def page_ids(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "pages").glob("*.html"))

    @cached_property
    def original_urls(self) -> dict[str, str]:
        index = self.root / "index.tsv"
        urls: dict[str, str] = {}
        if index.exists():
            for line in index.read_text("utf-8", errors="replace").splitlines():
                page_id, _, url = line.partition("\t")
                if page_id.strip():
                    urls[page_id.strip()] = url.strip()
        return urls

    @cached_property
    def routes(self) -> dict[str, str]:
        """Local path (with query) -> page ID: the original URL's path when it is unique."""
        wanted: dict[str, list[str]] = {}
        for page_id in self.page_ids:
            parts = urlsplit(self.original_urls.get(page_id, ""))
            path = route_path(parts.path or "")
            if parts.query:
                path += "?" + parts.query
            wanted.setdefault(path, []).append(page_id)
        routes: dict[str, str] = {}
        for path, ids in wanted.items():
            usable = path.startswith("/") and path not in RESERVED_PATHS and len(ids) == 1
            for page_id in ids:
                routes[path if usable else f"/pages/{page_id}.html"] = page_id
        return routes

    @cached_property
    def path_of(self) -> dict[str, str]:
        """Page ID -> local path."""
        return {page_id: path for path, page_id in self.routes.items()}

    def page_bytes(self, page_id: str) -> bytes:
        return (self.root / "pages" / f"{page_id}.html").read_bytes()

    def response_head(self, page_id: str) -> ResponseHead:
        """The page's archived HTTP status and headers (``responses/ID.json``); a 200
        without headers where there is none or it cannot be read."""
        path = self.root / "responses" / f"{page_id}.json"
        try:
            data = json.loads(path.read_text("utf-8")) if path.is_file() else {}
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict):
            return ResponseHead()
        pairs = [p for p in data.get("headers") or [] if isinstance(p, list) and len(p) == 2]
        return ResponseHead.of(data.get("status", 200), pairs)

    def gold_path(self, page_id: str) -> Path:
        return self.root / "gold" / f"{page_id}.txt"

    def page_title(self, page_id: str) -> str:
        """The page's <title> as plain text (entities decoded: the listings escape it once
        more), for the generated listings; the ID if it has none."""
        match = _TITLE.search(self.page_bytes(page_id)[:200_000])
        if not match:
            return page_id
        title = html.unescape(match.group(1).decode("utf-8", errors="replace"))
        return " ".join(title.split())[:200] or page_id

    def extra_file(self, path: str) -> Path | None:
        """A file under ``files/`` served at ``path``, if there is one (no escaping)."""
        base = (self.root / "files").resolve()
        candidate = (base / path.lstrip("/")).resolve()
        if base in candidate.parents and candidate.is_file():
            return candidate
        return None
