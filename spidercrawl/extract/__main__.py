"""``python -m spidercrawl.extract [--model models/SITE] [-o OUT.jsonl] FILE...``

Article items from HTML files and WARC archives, without a crawl: one JSON object a line,
to ``-o`` (written to a temporary file, then renamed) or to standard output. A progress bar
goes to standard error. With ``--model`` the site's extraction rules cut the pages (the
fast path of a crawl); without, text density does. Records that are not HTML are skipped
and counted; unreadable records, truncated ones and gzip damage are logged one line each,
and the rest is extracted. The exit status is 0 when at least one page was extracted or
nothing went wrong, 1 when every input failed, 2 for a usage error.
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

from spidercrawl.archive import ArchivedPage, ReadCounts, ReadError, read_pages
from spidercrawl.extract.api import extract_html, load_site_model
from spidercrawl.extract.formats import CONTENT_FORMATS, ArticleFormats
from spidercrawl.learn.model import LearningError

logger = logging.getLogger("spidercrawl.extract")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m spidercrawl.extract",
        description="Article items (JSON Lines) from HTML files and WARC archives.",
    )
    parser.add_argument("files", nargs="+", type=Path, help="HTML files, .warc or .warc.gz")
    parser.add_argument("--model", type=Path, help="a site's model folder (models/SITE)")
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
    except ValueError as error:
        parser.error(f"--formats: {error}")
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
) -> int:
    written = 0
    bar = tqdm(unit=" pages", disable=not progress, file=sys.stderr)
    for page in pages(files, counts):
        try:
            item = extract_html(
                page.body,
                page.url,
                model,
                content_type=page.content_type,
                raw_consensus=raw_consensus,
            )
        except Exception as error:  # one page's failure must not end the run
            counts.errors += 1
            reason = f"{type(error).__name__}: {error}"
            logger.warning("%s: extraction failed (%s)", page.source, reason)
            continue
        article = (formats or ArticleFormats()).strip(ItemAdapter(item).asdict())
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
    if args.output is None:
        written = write_items(
            sys.stdout, args.files, model, counts, progress, consensus, args.formats
        )
    else:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        partial = args.output.with_name(f".{args.output.name}.partial")
        with partial.open("w", encoding="utf-8") as out:
            written = write_items(out, args.files, model, counts, progress, consensus, args.formats)
        partial.replace(args.output)
    logger.info(
        "%d articles extracted%s; %d records skipped (not HTML), %d errors",
        written,
        f" to {args.output}" if args.output else "",
        counts.skipped,
        counts.errors,
    )
    return 1 if counts.errors and not written else 0


if __name__ == "__main__":
    sys.exit(main())
