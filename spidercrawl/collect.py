"""``python -m spidercrawl.collect``: write a distributed crawl's articles to files.

Usage::

    python -m spidercrawl.collect --redis redis://127.0.0.1:6379/0 [--follow] [-s NAME=VALUE]

Reads the delivery stream of the Redis that the workers share and appends each article to
its site's articles file (``ARTICLES_FILE``, ``output/<site>/articles.jsonl``), then
rebuilds the sites' JSON Feeds. Run once after the workers, or with ``--follow`` beside
them. Killed and started again, it writes each article once
(:mod:`spidercrawl.collector`). Prints each site's verdicts so far.
"""

from __future__ import annotations

import argparse
import logging
import sys

from scrapy.utils.project import get_project_settings

from spidercrawl.collector import Collector, collect
from spidercrawl.distributed import RedisUnavailableError, checked_redis_client, key_prefix


def main(argv: list[str] | None = None) -> int:
    settings = get_project_settings()
    parser = argparse.ArgumentParser(prog="python -m spidercrawl.collect", description=__doc__)
    parser.add_argument("--redis", default=settings.get("REDIS_URL"), help="redis://HOST:PORT/DB")
    parser.add_argument("--follow", action="store_true", help="keep collecting until Ctrl-C")
    parser.add_argument(
        "-s", "--set", action="append", default=[], metavar="NAME=VALUE",
        help="a setting, as scrapy's -s (ARTICLES_FILE, JSONFEED_PATH, REDIS_PREFIX...)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if not args.redis:
        parser.error("which Redis? --redis redis://HOST:PORT/DB (or SPIDERCRAWL_REDIS_URL)")
    for assignment in args.set:
        name, equals, value = assignment.partition("=")
        if not equals:
            parser.error(f"-s takes NAME=VALUE, got {assignment!r}")
        settings.set(name.strip(), value, priority="cmdline")
    try:
        collector = Collector.from_settings(
            checked_redis_client(args.redis, key_prefix(settings)), settings
        )
    except (RedisUnavailableError, ValueError) as error:
        print(f"python -m spidercrawl.collect: error: {error}", file=sys.stderr)
        return 1
    total = collect(collector, args.follow)
    for site, counts in sorted(collector.progress().items()):
        summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("new", "changed", "unchanged"))
        print(f"{site}: {summary}; {collector.written.get(site, 0)} written now")
    print(f"{total} articles written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
