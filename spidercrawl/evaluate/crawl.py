"""Page items of a site snapshot, obtained the way a user gets them: ``scrapy crawl news``.

The snapshot is served on 127.0.0.1 and crawled through the real CLI (rendered in
Chromium). Items are mapped back to page IDs by URL path and cached in
``OUT_DIR/crawl/DATASET/HOST.jsonl``, so a second evaluation run does not render again.
"""

from __future__ import annotations

import logging
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from spidercrawl.runner import PROJECT_ROOT, crawl_command, read_jsonl
from spidercrawl.serve import serving
from spidercrawl.snapshot import SiteSnapshot, route_path

logger = logging.getLogger(__name__)

CRAWL_TIMEOUT_S = 1800


def _local_path(url: str) -> str:
    parts = urlsplit(url)
    return route_path(parts.path) + (f"?{parts.query}" if parts.query else "")


def crawl_snapshot(snapshot: SiteSnapshot, out: Path) -> dict[str, dict[str, Any]]:
    """Page ID -> page item for every page of ``snapshot`` the crawler rendered."""
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".partial.jsonl")
        started = time.monotonic()
        with serving(snapshot.root) as server:
            command = crawl_command(
                snapshot.host,
                server.base_url,
                partial,
                spider_args={"render": "all"},
                settings={"LOG_LEVEL": "WARNING", "AUTOTHROTTLE_ENABLED": "False"},
                pages=True,
            )
            proc = subprocess.run(
                command,
                cwd=PROJECT_ROOT,
                capture_output=True,
                text=True,
                timeout=CRAWL_TIMEOUT_S,
                check=False,
            )
        if proc.returncode != 0 or not partial.exists():
            raise RuntimeError(
                f"scrapy crawl of {snapshot.host} failed ({proc.returncode}): {proc.stderr[-500:]}"
            )
        partial.replace(out)
        logger.info("Crawled %s in %.0f s", snapshot.host, time.monotonic() - started)
    routes = snapshot.routes
    pages: dict[str, dict[str, Any]] = {}
    for item in read_jsonl(out):
        for url in (item.get("requested_url"), item.get("url")):
            page_id = routes.get(_local_path(url or ""))
            if page_id:
                pages[page_id] = item
                break
    return pages
