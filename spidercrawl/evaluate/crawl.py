"""Page items of a site snapshot, obtained the way a user gets them: ``scrapy crawl news``.

The snapshot is served on 127.0.0.1 and crawled through the real CLI (rendered in
Chromium). Items are mapped back to page IDs by URL path and cached in
``OUT_DIR/crawl/DATASET/HOST.jsonl``, so a second evaluation run does not render again.

Many sites are crawled as a corpus crawl would crawl them (:func:`crawl_snapshots`): each
snapshot served on a port of its own, all of them in one ``scrapy crawl news -a
sites=FILE`` run with one browser, the items split by site. A site of one page costs its
pages' render, not a Scrapy process and a Chromium of its own.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from spidercrawl.runner import PROJECT_ROOT, crawl_command, read_jsonl
from spidercrawl.serve import serving
from spidercrawl.snapshot import SiteSnapshot, route_path

logger = logging.getLogger(__name__)

CRAWL_TIMEOUT_S = 1800
SITES_PER_CRAWL = 50  # a multi-site crawl's sites (servers and threads held at once)


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
            proc = _run(command)
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


def crawl_snapshots(targets: list[tuple[SiteSnapshot, Path]]) -> None:
    """Crawl the snapshots of ``targets`` (snapshot, cache file) not cached yet, in
    multi-site runs of ``SITES_PER_CRAWL`` sites, writing each site's page items to its
    cache file. A site the run got no item of is left uncached (and logged):
    :func:`crawl_snapshot` crawls it alone, with the error where it fails again."""
    todo = [(snapshot, out) for snapshot, out in targets if not out.exists()]
    for batch in _batches(todo):
        if len(batch) < 2:  # one site: crawled alone, as before
            continue
        started = time.monotonic()
        with tempfile.TemporaryDirectory() as folder, ExitStack() as servers:
            lines = []
            for snapshot, _ in batch:
                server = servers.enter_context(serving(snapshot.root))
                lines.append(f"{snapshot.host} {server.base_url}")
            sites_file = Path(folder) / "sites.txt"
            sites_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
            items_file = Path(folder) / "items.jsonl"
            proc = _run(_multi_site_command(sites_file, items_file))
            if proc.returncode != 0 or not items_file.exists():
                logger.warning(
                    "A crawl of %d sites failed (%d): %s; crawling them one by one",
                    len(batch), proc.returncode, proc.stderr[-300:],
                )  # fmt: skip
                continue
            by_site: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for item in read_jsonl(items_file):
                by_site[str(item.get("site") or "")].append(item)
        for snapshot, out in batch:
            items = by_site.get(snapshot.host, [])
            if not items:
                logger.info("%s: no page in the multi-site crawl; crawled alone", snapshot.host)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            partial = out.with_suffix(".partial.jsonl")
            with partial.open("w", encoding="utf-8") as handle:
                for item in items:
                    handle.write(json.dumps(item, ensure_ascii=False) + "\n")
            partial.replace(out)
        logger.info("Crawled %d sites in one run in %.0f s", len(batch), time.monotonic() - started)


def _batches(
    todo: list[tuple[SiteSnapshot, Path]],
) -> list[list[tuple[SiteSnapshot, Path]]]:
    """``todo`` in runs of at most ``SITES_PER_CRAWL`` sites, no host twice in a run (two
    datasets may hold one site years apart: a crawl knows a site by its host)."""
    batches: list[list[tuple[SiteSnapshot, Path]]] = [[]]
    for target in todo:
        hosts = {snapshot.host for snapshot, _ in batches[-1]}
        if len(batches[-1]) >= SITES_PER_CRAWL or target[0].host in hosts:
            batches.append([])
        batches[-1].append(target)
    return [batch for batch in batches if batch]


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """One ``scrapy crawl`` from the project root, its output kept, within CRAWL_TIMEOUT_S."""
    return subprocess.run(
        command,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=CRAWL_TIMEOUT_S,
        check=False,
    )


def _multi_site_command(sites_file: Path, out: Path) -> list[str]:
    """``scrapy crawl news -a sites=FILE`` rendering every page, writing page items."""
    command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(out)]
    command += ["-a", f"sites={sites_file}", "-a", "render=all", "-a", "max_depth=0"]
    command += ["-s", "LEARN_ENABLED=False"]
    command += ["-s", "LOG_LEVEL=WARNING", "-s", "AUTOTHROTTLE_ENABLED=False"]
    return command
