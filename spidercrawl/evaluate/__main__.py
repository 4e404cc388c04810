"""``python -m spidercrawl.evaluate DATASET_DIR --methods cetd,trafilatura --out OUT_DIR``.

Scores extractors against people's gold text on site snapshots
(``DATASET/HOST/pages/ID.html``, ``DATASET/HOST/gold/ID.txt``, ``DATASET/HOST/index.tsv``).
DATASET_DIR is one dataset folder (holding host folders) or a folder of datasets.
Writes ``OUT_DIR/summary.json``, ``OUT_DIR/pages.csv``, ``OUT_DIR/report.md`` and
``OUT_DIR/f1_distribution.png``, and prints the tables.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from spidercrawl.evaluate import report
from spidercrawl.evaluate.methods import (
    SITE_METHODS,
    MethodUnavailableError,
    check_page_method,
    page_method_names,
)
from spidercrawl.evaluate.runner import PageRecord, find_sites, run_page_method

logger = logging.getLogger("spidercrawl.evaluate")

DEFAULT_METHODS = "cetd,trafilatura"


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m spidercrawl.evaluate",
        description="Score extractors against human gold text on site snapshots.",
        epilog=f"Page methods: {', '.join(page_method_names())}. "
        f"Site methods: {', '.join(SITE_METHODS)}.",
    )
    parser.add_argument("dataset_dir", type=Path, help="a dataset folder or a folder of them")
    parser.add_argument("--methods", type=_csv, default=_csv(DEFAULT_METHODS))
    parser.add_argument("--out", type=Path, required=True, help="folder for the results")
    parser.add_argument(
        "--train-pages", type=int, default=None, help="learned: training pages per site"
    )
    parser.add_argument("--folds", type=int, default=None, help="learned: K-fold instead")
    parser.add_argument("--sites", type=_csv, default=[], help="only these hosts")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)"
    )
    args = parser.parse_args(argv)
    if not args.dataset_dir.is_dir():
        parser.error(f"{args.dataset_dir} is not a folder")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    # Our progress at INFO; peers' own chatter (per-page parser warnings) only when it is an error.
    logging.basicConfig(level=logging.ERROR, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("spidercrawl").setLevel(logging.INFO)
    args = parse_args(argv)
    sites = find_sites(args.dataset_dir, args.sites)
    if not sites:
        logger.error("No site snapshots (HOST/pages/*.html) under %s", args.dataset_dir)
        return 2
    pages = sum(len(site.snapshot.page_ids) for site in sites)
    logger.info("%d sites, %d pages under %s", len(sites), pages, args.dataset_dir)

    skipped: dict[str, str] = {}
    records: list[PageRecord] = []
    started = time.monotonic()
    for method in args.methods:
        if method in SITE_METHODS:
            skipped[method] = "site methods are not available in this version yet"
            logger.warning("Skipping %s: %s", method, skipped[method])
            continue
        try:
            check_page_method(method)
        except MethodUnavailableError as error:
            skipped[method] = str(error)
            logger.warning("Skipping %s: %s", method, error)
            continue
        method_started = time.monotonic()
        records.extend(run_page_method(method, sites, args.jobs))
        logger.info("%s done in %.1f s", method, time.monotonic() - method_started)

    run = {
        "dataset_dir": str(args.dataset_dir),
        "methods": args.methods,
        "jobs": args.jobs,
        "sites": len(sites),
        "pages": pages,
        "seconds": round(time.monotonic() - started, 1),
    }
    summary = report.summarize(records, skipped, run)
    args.out.mkdir(parents=True, exist_ok=True)
    report.write_summary(args.out / "summary.json", summary)
    report.write_pages_csv(args.out / "pages.csv", records)
    tables = [report.dataset_table(summary, "f1"), report.dataset_table(summary, "cleaneval")]
    for dataset, rows in summary["datasets"].items():
        tables.append(report.method_table(dataset, rows))
    for name, reason in skipped.items():
        tables.append(f"Skipped {name}: {reason}\n")
    text = "\n".join(tables)
    report.write_atomically(args.out / "report.md", text)
    if records:
        report.plot_f1_distribution(args.out / "f1_distribution.png", records)
    sys.stdout.write(text)
    logger.info("Results in %s (%.1f s)", args.out, time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
