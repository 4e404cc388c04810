"""``python -m spidercrawl.enqueue``: queue sites for the workers of a distributed crawl.

Usage::

    python -m spidercrawl.enqueue --redis redis://127.0.0.1:6379/0 sites.txt
    python -m spidercrawl.enqueue --redis URL --site npr.org --site bbc.co.uk
    python -m spidercrawl.enqueue --redis URL --status
    python -m spidercrawl.enqueue --redis URL --reset   # forget queues and claimed pages

A sites file has one ``HOST`` or ``HOST BASE_URL`` per line (:mod:`spidercrawl.sites`).
Workers (``scrapy crawl news -s REDIS_URL=URL``) take the sites from the queue.
``--reset`` empties the request queue, the duplicate filter and the claimed pages (so the
next run fetches every page again), and keeps what was delivered (so only new or changed
articles are delivered again).
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from scrapy.utils.project import get_project_settings

from spidercrawl.distributed import (
    RedisUnavailableError,
    as_text,
    checked_redis_client,
    key_prefix,
)
from spidercrawl.distributed.sites import push_sites
from spidercrawl.sites import SiteSpec, read_sites_file


def status(redis: Any, prefix: str) -> list[str]:
    """One line per site: pages claimed and the verdicts so far; then the queues."""
    lines = []
    for raw in sorted(redis.hkeys(f"{prefix}:sites")):
        site = as_text(raw)
        values = redis.hgetall(f"{prefix}:counts:{site}")
        counts = {as_text(k): int(v) for k, v in values.items()}
        claimed = redis.scard(f"{prefix}:claimed:render:{site}")
        verdicts = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("new", "changed", "unchanged"))
        lines.append(f"{site}: {claimed} pages claimed; {verdicts}")
    lines.append(
        f"queued: {redis.llen(f'{prefix}:sites:queue')} sites, "
        f"{redis.zcard(f'{prefix}:requests')} requests; "
        f"{redis.xlen(f'{prefix}:delivered')} articles not yet collected"
    )
    return lines


def reset(redis: Any, prefix: str) -> None:
    keys = [f"{prefix}:requests", f"{prefix}:dupefilter", f"{prefix}:sites:queue"]
    for pattern in (f"{prefix}:claimed:*", f"{prefix}:inflight:*"):
        keys += list(redis.scan_iter(pattern))
    redis.delete(*keys)


def main(argv: list[str] | None = None) -> int:
    settings = get_project_settings()
    parser = argparse.ArgumentParser(prog="python -m spidercrawl.enqueue", description=__doc__)
    parser.add_argument("sites_file", nargs="?", help="one HOST or HOST BASE_URL per line")
    parser.add_argument("--redis", default=settings.get("REDIS_URL"), help="redis://HOST:PORT/DB")
    parser.add_argument("--site", action="append", default=[], help="a site (repeatable)")
    parser.add_argument("--status", action="store_true", help="print per-site progress")
    parser.add_argument("--reset", action="store_true", help="empty the queues (see above)")
    parser.add_argument("--prefix", help="REDIS_PREFIX (default: the project's setting)")
    args = parser.parse_args(argv)
    if not args.redis:
        parser.error("which Redis? --redis redis://HOST:PORT/DB (or SPIDERCRAWL_REDIS_URL)")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    prefix = args.prefix or key_prefix(settings)
    try:
        specs = read_sites_file(args.sites_file) if args.sites_file else []
        specs += [SiteSpec.parse(name) for name in args.site]
        redis = checked_redis_client(args.redis, prefix)
    except (RedisUnavailableError, ValueError) as error:
        print(f"python -m spidercrawl.enqueue: error: {error}", file=sys.stderr)
        return 1
    if args.reset:
        reset(redis, prefix)
        print("Queues, duplicate filter and claimed pages emptied; delivered articles kept")
    if specs:
        print(f"{push_sites(redis, prefix, specs)} sites queued")
    if args.status or not (specs or args.reset):
        print("\n".join(status(redis, prefix)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
