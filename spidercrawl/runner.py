"""Running ``scrapy crawl news`` as a user would: one place that builds the command line.

The demo runner, the benchmarks, the tests and the evaluation all crawl through the real
CLI in a subprocess (a fresh reactor and browser each time), so they build it here.
"""

from __future__ import annotations

import sys
from pathlib import Path

from spidercrawl.files import PROJECT_ROOT, read_jsonl

__all__ = ["DEMO_SITE", "PROJECT_ROOT", "crawl_command", "read_jsonl"]

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
