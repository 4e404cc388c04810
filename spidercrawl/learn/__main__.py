"""``python -m spidercrawl.learn show models/SITE`` and
``python -m spidercrawl.learn archive ARCHIVES... --models models/``

``show`` prints a learned site's parser as a person would write it (:mod:`.parser_view`):
per layout, the article's container, its paragraph, subheadline and list selectors, its
exclusions, and each template role with its record over the training pages. A folder that
holds no usable model is one error line and exit status 2.

``archive`` learns a model for every host of WARC archives with at least
``LEARN_MIN_PAGES`` pages, from its archived pages rendered in Chromium, as a crawl does
(:mod:`spidercrawl.archive_learning`): progress per host, a table at the end, and each
host that learned nothing named with why. Exit status 0 when any host has a model, 1
when none could be learned, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from spidercrawl.learn.model import LearningError, SiteModel
from spidercrawl.learn.parser_view import parser_lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spidercrawl.learn", description="Site models: look at what was learned."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print a site's learned parser")
    show.add_argument("folder", type=Path, help="a site's model folder (models/SITE)")
    archive = commands.add_parser("archive", help="learn every host of WARC archives")
    archive.add_argument("archives", nargs="+", type=Path, help=".warc or .warc.gz files")
    archive.add_argument("--models", type=Path, default=Path("models"), help="models folder")
    archive.add_argument("--hosts", help="only these hosts: a comma-separated list or a file")
    archive.add_argument("--relearn", action="store_true", help="learn modelled hosts again")
    archive.add_argument(
        "--min-pages", type=int, default=None,
        help="pages a host needs (default: the crawl's LEARN_MIN_PAGES)",
    )  # fmt: skip
    archive.add_argument("--pool", type=int, default=20, help="hosts rendered per crawl")
    archive.add_argument(
        "-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
        help="a crawl setting for the learning crawls",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.command == "archive":
        return _archive(parser, args)
    if not SiteModel.exists(args.folder):
        print(f"error: {args.folder} holds no site model (model.npz)", file=sys.stderr)
        return 2
    try:
        model = SiteModel.load(args.folder)
    except (LearningError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in parser_lines(model, args.folder.name):
        print(line)
    return 0


def _archive(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from spidercrawl import settings as crawl_settings
    from spidercrawl.archive_learning import learn_archive
    from spidercrawl.extract.hosts import parse_hosts

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    missing = [str(path) for path in args.archives if not path.is_file()]
    if missing:
        parser.error(f"no such archive: {', '.join(missing)}")
    if args.pool < 1 or (args.min_pages is not None and args.min_pages < 1):
        parser.error("--pool and --min-pages must be 1 or more")
    try:
        hosts = parse_hosts(args.hosts) if args.hosts else frozenset()
    except OSError as error:
        parser.error(f"--hosts: {error}")
    outcome = learn_archive(
        args.archives, args.models, hosts=hosts, relearn=args.relearn,
        min_pages=args.min_pages or crawl_settings.LEARN_MIN_PAGES, pool=args.pool,
        settings=args.settings,
    )  # fmt: skip
    print(f"{'host':<40} {'records':>8} {'articles':>8} {'model':>6}  why")
    for site, host in sorted(outcome.hosts.items(), key=lambda item: -item[1].records):
        model = "yes" if host.learned else "no"
        print(f"{site[:40]:<40} {host.records:>8} {host.articles:>8} {model:>6}  {host.why}")
    learned = sum(host.learned for host in outcome.hosts.values())
    print(
        f"{learned} of {len(outcome.hosts)} hosts have a model in {args.models}; "
        f"{outcome.counts.skipped} records not HTML, {outcome.counts.errors} unreadable; "
        f"the learning crawls' peak memory {outcome.peak_rss_mib:.0f} MiB"
    )
    return 0 if learned else 1


if __name__ == "__main__":
    sys.exit(main())
