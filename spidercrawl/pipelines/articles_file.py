"""The default articles file: ``output/<site>/articles.jsonl``, one JSON line per article.

When the command names no feed (no ``-o``/``-O``, no ``FEEDS``), every article is appended
to ``ARTICLES_FILE`` (``%(site)s`` is the article's site, so a run over several sites
writes one file per site). Each line goes out in one ``write`` before the crawl's memory
records it (:mod:`spidercrawl.memory`), so a killed crawl neither loses an
article nor, run again, delivers one twice. When the user names a feed, the items go there
(Scrapy's exporters) and this file is left alone.

Setting: ``ARTICLES_FILE`` (default ``output/%(site)s/articles.jsonl``; ``""`` writes no
default file).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scrapy.settings import BaseSettings

from spidercrawl.files import safe_name

logger = logging.getLogger(__name__)


def articles_file_template(settings: BaseSettings) -> str:
    """``ARTICLES_FILE``, or '' when the user named feeds of their own (or turned it off)."""
    if settings.getdict("FEEDS"):
        return ""
    return str(settings.get("ARTICLES_FILE") or "")


def articles_file_path(template: str, site: str) -> Path | None:
    return Path(template % {"site": safe_name(site)}) if template else None


class ArticlesFile:
    """Appends articles to one JSON Lines file, a whole line per ``write``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_last_line(path)
        self.handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, article: dict[str, Any]) -> int:
        """Write the article; returns the file's size after it (what the journal records)."""
        line = json.dumps(article, ensure_ascii=False, default=str) + "\n"
        os.write(self.handle, line.encode("utf-8"))
        return os.lseek(self.handle, 0, os.SEEK_CUR)

    def close(self) -> None:
        os.close(self.handle)


def repair_last_line(path: Path) -> None:
    """Cut a last line left half-written by a killed process, so the next one starts clean."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with path.open("rb") as file:
        file.seek(max(0, size - 1))
        if file.read(1) == b"\n":
            return
        step, end = 65536, size
        while end > 0:  # the last newline, read backwards
            start = max(0, end - step)
            file.seek(start)
            chunk = file.read(end - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                break
            end = start
        cut = start + newline + 1 if end > 0 else 0
    os.truncate(path, cut)
    logger.warning("%s ended in half a line (a killed process): removed %d bytes", path, size - cut)


def last_lines(path: Path, count: int) -> Iterator[dict[str, Any]]:
    """The last ``count`` JSON lines of ``path``, oldest first, read from its end (the file
    of a site crawled for years is large; its feed needs the newest articles only)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    lines: list[bytes] = []
    with path.open("rb") as file:
        end, rest = size, b""
        while end > 0 and len(lines) <= count:
            start = max(0, end - (1 << 20))
            file.seek(start)
            chunk = file.read(end - start) + rest
            parts = chunk.split(b"\n")
            rest = parts[0] if start > 0 else b""
            lines[:0] = [p for p in (parts[1:] if start > 0 else parts) if p.strip()]
            end = start
    for line in lines[-count:]:
        try:
            article = json.loads(line)
        except ValueError:
            continue
        if isinstance(article, dict):
            yield article
