"""``python -m spidercrawl.extract [--model DIR | --models DIR] [-o OUT.jsonl] FILE...``

Article items from HTML files and WARC archives, without a crawl: one JSON object a line,
to ``-o`` (written to a temporary file, then renamed) or to standard output. A progress bar
goes to standard error. With ``--model`` the site's extraction rules cut the pages (the
fast path of a crawl); with ``--models`` each record is cut by its own host's model (a
host and its ``www.`` form are one site, as a crawl names ``models/<site>/``) and read by
the arbiter where its host has none, with a report per host at the end (records, by
rules, by the arbiter, failed); without either, the arbiter reads every page. Corpus
filters: ``--hosts`` (a list or a file), ``--since``/``--until`` (the WARC-Date, or the
article's published date with ``--by-published``), ``--lang`` (the item's language).
A record is read as the crawl reads a live response, its HTTP status and headers
included: a bot wall (a 403 challenge, a 200 captcha) is no article, the
``X-Robots-Tag`` and ``tdm-reservation`` headers count in ``reserved`` (the agents of
``--robots-agents`` too), and each host that met walls, paywalls or reservations gets a
line at the end. Records that are not HTML, redirects and HTTP errors are skipped and
counted; unreadable records, truncated ones and gzip damage are logged one line each,
and the rest is extracted. The exit status is 0 when
at least one page was extracted or nothing went wrong, 1 when every input failed, 2 for a
usage error.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from itemadapter import ItemAdapter
from tqdm import tqdm

from spidercrawl import settings as crawl_settings
from spidercrawl.archive import ArchivedPage, ReadCounts, ReadError, read_pages
from spidercrawl.extract.api import BlockedPageError, extract_html, load_site_model
from spidercrawl.extract.formats import CONTENT_FORMATS, ArticleFormats
from spidercrawl.extract.hosts import (
    ArchiveFilter,
    HostModels,
    HostReport,
    host_table,
    parse_day,
    parse_hosts,
    pushback_lines,
)
from spidercrawl.learn.model import LearningError

logger = logging.getLogger("spidercrawl.extract")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m spidercrawl.extract",
        description="Article items (JSON Lines) from HTML files and WARC archives.",
    )
    parser.add_argument("files", nargs="+", type=Path, help="HTML files, .warc or .warc.gz")
    models = parser.add_mutually_exclusive_group()
    models.add_argument("--model", type=Path, help="one site's model folder (models/SITE)")
    models.add_argument(
        "--models", type=Path, help="a models folder: each record by its own host's model"
    )
    parser.add_argument("--hosts", help="only these hosts: a comma-separated list or a file")
    parser.add_argument("--since", help="records from this date (ISO 8601) on")
    parser.add_argument("--until", help="records up to this date (ISO 8601)")
    parser.add_argument(
        "--by-published", action="store_true",
        help="--since/--until on the article's published date, not the WARC-Date",
    )  # fmt: skip
    parser.add_argument("--lang", help="only articles in these languages (e.g. en,de)")
    parser.add_argument(
        "--robots-agents", default=",".join(crawl_settings.ROBOTS_AGENTS),
        help="robots directives for these agents count too, as ROBOTS_AGENTS (e.g. GPTBot,CCBot)",
    )  # fmt: skip
    parser.add_argument("-o", "--output", type=Path, help="JSON Lines file (default: stdout)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--density-only",
        action="store_true",
        help="text density alone where no rules apply, without the readability and "
        "trafilatura consensus (quicker, less accurate)",
    )
    parser.add_argument(
        "--formats",
        default=",".join(CONTENT_FORMATS),
        help="content forms in each item, comma-separated, of text, html, markdown "
        "(default: all three)",
    )
    args = parser.parse_args(argv)
    try:
        args.formats = ArticleFormats.parse(args.formats)
        args.filter = ArchiveFilter(
            hosts=parse_hosts(args.hosts) if args.hosts else frozenset(),
            since=parse_day(args.since) if args.since else None,
            until=parse_day(args.until) if args.until else None,
            by_published=args.by_published,
            lang=frozenset(
                code.strip().lower() for code in (args.lang or "").split(",") if code.strip()
            ),
        )
    except (ValueError, OSError) as error:
        parser.error(str(error))
    args.robots_agents = [a.strip() for a in args.robots_agents.split(",") if a.strip()]
    if args.models is not None and not args.models.is_dir():
        parser.error(f"--models: {args.models} is not a folder")
    return args


def pages(files: list[Path], counts: ReadCounts) -> Iterator[ArchivedPage]:
    for path in files:
        if not path.exists():
            counts.errors += 1
            logger.error("%s: no such file", path)
            continue
        for entry in read_pages(path, counts):
            if isinstance(entry, ReadError):
                logger.warning("%s: skipped (%s)", entry.source, entry.reason)
            else:
                yield entry


def write_items(
    out: IO[str],
    files: list[Path],
    model: object,
    counts: ReadCounts,
    progress: bool,
    raw_consensus: bool = True,
    formats: ArticleFormats | None = None,
    host_models: HostModels | None = None,
    keep: ArchiveFilter | None = None,
    reports: dict[str, HostReport] | None = None,
    robots_agents: list[str] | None = None,
) -> int:
    """Write the article of every page of ``files`` to ``out``: by ``model``, or by each
    host's model of ``host_models``; ``keep`` filters, ``reports`` gets each host's counts;
    ``robots_agents``: whose robots directives count besides every crawler's."""
    written = 0
    keep = keep or ArchiveFilter()
    reports = reports if reports is not None else {}
    bar = tqdm(unit=" pages", disable=not progress, file=sys.stderr)
    for page in pages(files, counts):
        if not keep.keeps_record(page):
            continue
        site = page.site
        report = reports.setdefault(site, HostReport())
        report.records += 1
        try:
            site_model = host_models.model_for(site) if host_models is not None else model
            report.has_model = site_model is not None
            item = extract_html(
                page.body,
                page.url,
                site_model,
                content_type=page.content_type,
                head=page.head,
                robots_agents=robots_agents,
                raw_consensus=raw_consensus,
            )
        except BlockedPageError as blocked:  # a wall in the article's place: as the crawl does
            report.blocked[blocked.wall.describe()] += 1
            logger.info("%s: %s: not an article", page.source, blocked)
            continue
        except Exception as error:  # one page's failure must not end the run
            counts.errors += 1
            report.failed += 1
            reason = f"{type(error).__name__}: {error}"
            logger.warning("%s: extraction failed (%s)", page.source, reason)
            continue
        if item.get("method") == "rules":
            report.by_rules += 1
        else:
            report.by_arbiter += 1
        report.count_item(item)
        article = (formats or ArticleFormats()).strip(ItemAdapter(item).asdict())
        if not keep.keeps_item(article):
            continue
        out.write(json.dumps(article, ensure_ascii=False) + "\n")
        written += 1
        bar.update()
    bar.close()
    return written


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    logging.captureWarnings(True)
    args = parse_args(argv)
    try:
        model = load_site_model(args.model)
    except (OSError, LearningError, ValueError) as error:
        sys.stderr.write(f"spidercrawl.extract: error: no model in {args.model}: {error}\n")
        return 2
    counts = ReadCounts()
    progress = not args.no_progress
    consensus = not args.density_only
    host_models = HostModels(args.models) if args.models is not None else None
    reports: dict[str, HostReport] = {}
    run = {
        "files": args.files, "model": model, "counts": counts, "progress": progress,
        "raw_consensus": consensus, "formats": args.formats, "host_models": host_models,
        "keep": args.filter, "reports": reports, "robots_agents": args.robots_agents,
    }  # fmt: skip
    if args.output is None:
        written = write_items(sys.stdout, **run)
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        partial = args.output.with_name(f".{args.output.name}.partial")
        with partial.open("w", encoding="utf-8") as out:
            written = write_items(out, **run)
        partial.replace(args.output)
    if host_models is not None:
        for line in host_table(reports):
            logger.info("%s", line)
    for line in pushback_lines(reports):
        logger.info("%s", line)
    if args.filter.left_out:
        why = ", ".join(f"{n} by {reason}" for reason, n in args.filter.left_out.items())
        logger.info("left out by the filters: %s", why)
    blocked = sum(report.blocked.total() for report in reports.values())
    logger.info(
        "%d articles extracted%s; %d records skipped (not HTML), %d errors; %d redirects "
        "or HTTP errors, %d walls (not articles)",
        written,
        f" to {args.output}" if args.output else "",
        counts.skipped,
        counts.errors,
        counts.not_pages,
        blocked,
    )
    return 1 if counts.errors and not written else 0


if __name__ == "__main__":
    sys.exit(main())
