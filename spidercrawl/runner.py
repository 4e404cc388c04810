"""Running ``scrapy crawl news`` as a user would: one place that builds the command line.

The demo runner, the benchmarks, the tests and the evaluation all crawl through the real
CLI in a subprocess (a fresh reactor and browser each time), so they build it here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEMO_SITE = PROJECT_ROOT / "demo" / "harbourtimes.example"  # the bundled demo snapshot


def crawl_command(
    site: str,
    base_url: str,
    out: Path | str,
    spider_args: dict[str, object] | None = None,
    settings: dict[str, object] | None = None,
    pages: bool = False,
) -> list[str]:
    """The argv of ``scrapy crawl news`` writing its items to ``out`` (JSON Lines).

    The items are articles; with ``pages=True`` they are the page items (blocks) instead.
    Run it with ``cwd=PROJECT_ROOT`` so Scrapy finds ``scrapy.cfg``.
    """
    command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(out)]
    if pages:
        command += ["-s", "LEARN_ENABLED=False"]
    arguments = {"site": site, "base_url": base_url, **(spider_args or {})}
    for name, value in arguments.items():
        command += ["-a", f"{name}={value}"]
    for name, value in (settings or {}).items():
        command += ["-s", f"{name}={value}"]
    return command


def read_jsonl(path: Path | str) -> list[dict]:
    """The items of a JSON Lines file, as ``-O file.jsonl`` writes them.

    Split on newlines only: ``str.splitlines`` would also split on U+2028 and other
    separators that occur, unescaped, inside the text of real pages.
    """
    text = Path(path).read_text("utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]
