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
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

from spidercrawl import settings as crawl_settings
from spidercrawl.capture.static import static_capture
from spidercrawl.document.html import decode_html
from spidercrawl.evaluate import report
from spidercrawl.evaluate.conventions import HeadlineConvention, headline_convention
from spidercrawl.evaluate.crawl import crawl_snapshot, crawl_snapshots
from spidercrawl.evaluate.methods import (
    HEADLINE_METHODS,
    SITE_METHODS,
    MethodUnavailableError,
    check_page_method,
    check_site_method,
    page_method_names,
)
from spidercrawl.evaluate.runner import (
    EvaluationSite,
    PageRecord,
    Progress,
    configure_logging,
    find_sites,
    read_gold,
    run_page_method,
    worker_pool,
)
from spidercrawl.evaluate.site_methods import (
    TRAIN_TEST_METHODS,
    UNSEEN_BLOCKS,
    NeverSeenSetting,
    SiteJob,
    choose_unseen_bonus,
    consensus_constants,
    cross_site_fold_models,
    merge_curves,
    run_site_job,
    unseen_grid,
)
from spidercrawl.evaluate.snippets import (
    read_snippet_pages,
    run_snippet_method,
    snippet_datasets,
    snippet_table,
)
from spidercrawl.evaluate.unseen_constants import CROSS_SITE_C_GRID, choose_for_jobs
from spidercrawl.evaluate.unseen_constants import summary as constants_summary
from spidercrawl.files import write_atomically
from spidercrawl.learn.consensus_labels import LABEL_SOURCES
from spidercrawl.learn.cross_site import CROSS_SITE_C

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
    parser.add_argument(
        "--labels",
        choices=LABEL_SOURCES,
        default=crawl_settings.LEARN_LABELS,
        help="learned/rules: the site models' training labels (relevance to each page's "
        "description; the never-seen consensus's article, block by block or by cluster); "
        "by default the crawl's LEARN_LABELS",
    )
    parser.add_argument(
        "--crawl-order",
        action="store_true",
        help="with --train-pages: learn from the first N pages in ID order (as a crawl "
        "meets them), not from N pages drawn at random",
    )
    parser.add_argument("--folds", type=int, default=None, help="learned: K-fold instead")
    parser.add_argument(
        "--no-layouts", action="store_true", help="learned/rules: one model per site (no layouts)"
    )
    parser.add_argument("--sites", type=_csv, default=[], help="only these hosts")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)"
    )
    parser.add_argument(
        "--crawl-cache",
        type=Path,
        default=None,
        help="where crawled page items are kept between runs (default: OUT_DIR/crawl)",
    )
    parser.add_argument(
        "--models",
        type=Path,
        default=None,
        help="unseen: one cross-site model folder for every site (default: a model per fold "
        "of sites, trained on the other folds' sites)",
    )
    parser.add_argument(
        "--headline",
        choices=("auto", "in", "out"),
        default="auto",
        help="our article items' text with the headline (in), without it as a crawl with -s "
        "ARTICLE_HEADLINE_IN_TEXT=False writes it (out), or per dataset as its gold texts "
        "have it (auto, the default: most open with the page's headline -> in); the peers "
        "never include it",
    )
    parser.add_argument(
        "--no-headline",
        action="store_const",
        const="out",
        dest="headline",
        help="the same as --headline out",
    )
    args = parser.parse_args(argv)
    if not args.dataset_dir.is_dir():
        parser.error(f"{args.dataset_dir} is not a folder")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.crawl_order and not args.train_pages:
        parser.error("--crawl-order needs --train-pages N")
    return args


# Per dataset, its pages' (gold text, metadata titles): what a headline convention is read from.
GoldAndTitles = dict[str, list[tuple[str | None, list[str]]]]


def headline_conventions(rows: GoldAndTitles, choice: str) -> dict[str, HeadlineConvention]:
    """Per dataset, whether our article text is scored with the headline: as most of its
    gold texts have it (``choice`` "auto"), or as ``--headline`` says
    (:mod:`spidercrawl.evaluate.conventions`)."""
    forced = {"in": True, "out": False}.get(choice)
    conventions = {dataset: headline_convention(pages, forced) for dataset, pages in rows.items()}
    for dataset, convention in sorted(conventions.items()):
        logger.info(
            "%s: our text scored %s the headline (%s; %d of %d gold texts open with it)",
            dataset, "with" if convention.headline_in_text else "without",
            "--headline" if convention.chosen_by == "--headline" else "as the gold has it",
            convention.with_headline, convention.pages,
        )  # fmt: skip
    return conventions


def crawled_titles(jobs: list[SiteJob]) -> GoldAndTitles:
    """Each dataset's pages' (gold text, titles as the crawl captured them)."""
    rows: GoldAndTitles = {job.dataset: [] for job in jobs}
    for job in jobs:
        gold = Path(job.site_root) / "gold"
        for page_id, page in job.pages.items():
            rows[job.dataset].append((read_gold(gold / f"{page_id}.txt"), page.get("titles") or []))
    return rows


def snapshot_titles(sites: list[EvaluationSite]) -> GoldAndTitles:
    """Each dataset's pages' (gold text, titles read from the snapshot's HTML): for a run of
    page methods alone, which crawls nothing."""
    rows: GoldAndTitles = {site.dataset: [] for site in sites}
    for site in sites:
        for page_id in site.snapshot.page_ids:
            gold = read_gold(site.snapshot.gold_path(page_id))
            if gold is None:
                continue
            html = (site.snapshot.root / "pages" / f"{page_id}.html").read_bytes()
            rows[site.dataset].append((gold, static_capture(decode_html(html)[0], "")["titles"]))
    return rows


def run_site_method(
    method: str,
    sites: list[EvaluationSite],
    args: argparse.Namespace,
    fold_models: dict[str, str | None],
    conventions: dict[str, HeadlineConvention],
    never_seen: Mapping[str, NeverSeenSetting] | None = None,
) -> dict[str, object]:
    """Crawl the sites (cached), then evaluate ``method`` on them, sites in parallel.
    ``fold_models`` and ``conventions`` (the headline choice per dataset) are filled by the
    first site method of the run and shared by the others. ``never_seen`` (site key ->
    unseen's held-out setting) is how learned and rules extract what they extract as a
    site never seen."""
    cache = args.crawl_cache or args.out / "crawl"
    crawl_snapshots(
        [(site.snapshot, cache / site.dataset / f"{site.snapshot.host}.jsonl") for site in sites]
    )
    jobs = []
    for number, site in enumerate(sites, 1):
        logger.info("Crawling %s (%d/%d)", site.key, number, len(sites))
        try:
            pages = crawl_snapshot(
                site.snapshot, cache / site.dataset / f"{site.snapshot.host}.jsonl"
            )
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
            logger.error("Crawl of %s failed: %s", site.key, error)
            pages = {}
        jobs.append(
            SiteJob(
                method,
                site.dataset,
                site.snapshot.host,
                str(site.snapshot.root),
                pages,
                site.snapshot.page_ids,
                folds=args.folds,
                train_pages=args.train_pages,
                crawl_order=args.crawl_order,
                layouts=not args.no_layouts,
                model_dir=str(args.models) if args.models else None,
                labels=args.labels,
            )
        )
    if not conventions:
        conventions.update(headline_conventions(crawled_titles(jobs), args.headline))
    for job in jobs:
        job.headline_in_text = conventions[job.dataset].headline_in_text
    block_constants: dict[str, dict] = {}  # unseen: per dataset, chosen on the others
    progress = Progress(method, len(jobs), every_s=10, unit="sites")
    outcomes = []
    with worker_pool(args.jobs) as pool:
        if args.models is None:  # cross-site models that did not see the site, made once
            # unseen over several datasets also chooses the blocks' extractor's own
            # constants without the scored dataset: fold models for every C of its grid
            protocol = method == "unseen" and len({job.dataset for job in jobs}) >= 2
            trained: dict[float, dict[str, str]] = {}
            if not fold_models or protocol:
                logger.info("Cross-site models per fold of held-out sites")
                cs = CROSS_SITE_C_GRID if protocol else (CROSS_SITE_C,)
                trained = cross_site_fold_models(jobs, args.out / "unseen-models", pool, cs=cs)
            if not fold_models:
                shipped_c = trained.get(CROSS_SITE_C, {})
                fold_models.update({job.site_key: shipped_c.get(job.site_key) for job in jobs})
            for job in jobs:
                job.model_dir = fold_models.get(job.site_key)
            if protocol:
                block_constants = choose_for_jobs(jobs, trained, pool)
    for job in jobs:
        if never_seen and job.site_key in never_seen:
            job.extract_never_seen_as(never_seen[job.site_key])
    # The timed extraction in fresh workers: those that trained and scored above hold
    # every model and setting they loaded.
    with worker_pool(args.jobs) as pool:
        for outcome in pool.map(run_site_job, jobs):
            progress.step()
            outcomes.append(outcome)
    result: dict[str, object] = {"records": [r for o in outcomes for r in o.records]}
    result["headline"] = {dataset: c.summary() for dataset, c in sorted(conventions.items())}
    if method == "unseen":
        result["block_constants"] = constants_summary(block_constants)
        result["settings"] = {
            job.site_key: (job.dataset, job.model_dir, job.block_constants) for job in jobs
        }
        result["peer_timings"] = [t for o in outcomes for t in o.peer_timings]
    if method == "learned":
        result["learning_curve"] = merge_curves(outcomes)
        result["learning"] = [point for o in outcomes for point in o.learning]
    return result


def same_pages_as_learned(records: list[PageRecord]) -> list[PageRecord]:
    """With ``--train-pages``, ``learned`` and ``rules`` score only the pages they did not
    learn from; every other method is kept to those pages too, so that the tables compare
    methods on the same pages (a peer's mean over the training pages as well is another
    figure: on the multi-era sites, trafilatura 0.941 over all pages, 0.927 over the
    pages the site models were scored on)."""
    held_out = {(r.dataset, r.site, r.page_id) for r in records if r.method in TRAIN_TEST_METHODS}
    if not held_out:
        return records
    kept = [
        r
        for r in records
        if r.method in TRAIN_TEST_METHODS or (r.dataset, r.site, r.page_id) in held_out
    ]
    if len(kept) < len(records):
        logger.info(
            "Every method scored on the %d pages the site models did not learn from "
            "(%d scores of training pages left out)",
            len(held_out),
            len(records) - len(kept),
        )
    return kept


def _model_note(args: argparse.Namespace) -> str:
    """Which cross-site models ``unseen`` used: one given, or per held-out dataset/fold."""
    if args.models:
        return f"one model for every site: {args.models}"
    return "a cross-site model per held-out dataset (one dataset: per fold of sites)"


def _unseen_first(methods: list[str]) -> list[str]:
    """The methods in the order given, but ``unseen`` first: its held-out choice is how
    ``learned`` and ``rules`` then extract what they extract as a site never seen."""
    return sorted(methods, key=lambda method: method != "unseen")


def _never_seen_settings(
    settings: Mapping[str, tuple[str, str | None, tuple[float, float, float] | None]],
    choice: Mapping[str, Mapping[str, object]],
) -> dict[str, NeverSeenSetting]:
    """Per site, unseen's held-out model and constants (blocks' and consensus's)."""
    found = {}
    for site_key, (dataset, model_dir, block_constants) in settings.items():
        chosen = choice.get(dataset)
        if chosen is None:
            continue
        consensus = consensus_constants(chosen)
        found[site_key] = NeverSeenSetting(model_dir, block_constants, consensus)
    return found


def _log_never_seen_setting(method: str, never_seen: Mapping[str, NeverSeenSetting]) -> None:
    if never_seen:
        logger.info(
            "%s: pages without a site model extracted as unseen extracted them (with the "
            "model and constants it had for their dataset)", method,
        )  # fmt: skip
    else:
        logger.info(
            "%s: pages without a site model extracted with the shipped never-seen constants "
            "(add unseen to --methods, over two datasets or more, for held-out ones)", method,
        )  # fmt: skip


def _log_unseen_protocol(grid: dict, choice: dict) -> None:
    """Every setting of the consensus tried, and the one each dataset got from the others."""
    for setting, by_dataset in grid.items():
        scores = "; ".join(
            f"{d} F1 {v['f1']:.3f}, {v['pages_per_s']:.1f} pages/s" for d, v in by_dataset.items()
        )
        logger.info("unseen with %s (own_bonus~density_agreement^modern_lead): %s", setting, scores)
    for dataset, chosen in choice.items():
        logger.info(
            "unseen on %s: own_bonus %s, density_agreement %s, modern_lead %s (chosen on %s)",
            dataset, chosen["own_bonus"], chosen["density_agreement"], chosen.get("modern_lead"),
            ", ".join(chosen["chosen_on"]) or "-",
        )  # fmt: skip


def _snippet_scores(
    args: argparse.Namespace, folders: list[Path], skipped: dict[str, str]
) -> dict[str, dict[str, dict[str, object]]]:
    """Each snippet dataset's scores by page method (site methods need site snapshots)."""
    rows: dict[str, dict[str, dict[str, object]]] = {}
    methods = []
    for method in args.methods:
        if method in SITE_METHODS or method == UNSEEN_BLOCKS:
            logger.info("%s is a site method: not run on the snippet datasets", method)
            continue
        try:
            check_page_method(method)
        except MethodUnavailableError as error:
            skipped.setdefault(method, str(error))
            continue
        methods.append(method)
    for folder in folders:
        pages = read_snippet_pages(folder)
        logger.info("%s: %d pages with snippets", folder.name, len(pages))
        for method in methods:
            counts = run_snippet_method(method, pages, args.jobs)
            rows.setdefault(folder.name, {})[method] = counts.as_dict()
    return rows


def main(argv: list[str] | None = None) -> int:
    configure_logging()  # the workers' too (runner.worker_pool)
    args = parse_args(argv)
    sites = find_sites(args.dataset_dir, args.sites)
    snippet_sets = [] if args.sites else snippet_datasets(args.dataset_dir)
    if not sites and not snippet_sets:
        logger.error(
            "No site snapshots (HOST/pages/*.html) nor snippet datasets (evaldata.json) "
            "under %s", args.dataset_dir,
        )  # fmt: skip
        return 2
    pages = sum(len(site.snapshot.page_ids) for site in sites)
    logger.info("%d sites, %d pages under %s", len(sites), pages, args.dataset_dir)

    skipped: dict[str, str] = {}
    fold_models: dict[str, str | None] = {}  # site -> its held-out cross-site model
    conventions: dict[str, HeadlineConvention] = {}  # dataset -> with or without headline
    records: list[PageRecord] = []
    extra: dict[str, object] = {}
    started = time.monotonic()
    never_seen: dict[str, NeverSeenSetting] = {}  # site key -> unseen's held-out setting
    for method in _unseen_first(args.methods) if sites else []:
        if method in SITE_METHODS:
            try:
                check_site_method(method, args.models)
            except MethodUnavailableError as error:
                skipped[method] = str(error)
                logger.warning("Skipping %s: %s", method, error)
                continue
            method_started = time.monotonic()
            if method in TRAIN_TEST_METHODS:
                _log_never_seen_setting(method, never_seen)
            outcome = run_site_method(
                method, sites, args, fold_models, conventions, never_seen=never_seen
            )
            method_records = outcome.pop("records")
            if method == "unseen":  # the consensus's constant, chosen without the dataset
                grid = unseen_grid(method_records)
                method_records, choice = choose_unseen_bonus(method_records)
                extra["protocol"] = {
                    "unseen": {
                        "block_constants": outcome.pop("block_constants"),
                        "own_bonus": choice,
                        "models": _model_note(args),
                        "grid": grid,
                    }
                }
                _log_unseen_protocol(grid, choice)
                never_seen.update(_never_seen_settings(outcome.pop("settings"), choice))
                extra["unseen_beside_peers"] = report.paired_speed(
                    method_records, outcome.pop("peer_timings")
                )
            records.extend(method_records)
            extra.update(outcome)
            logger.info("%s done in %.1f s", method, time.monotonic() - method_started)
            continue
        if method == UNSEEN_BLOCKS:  # scored on the way by unseen, never alone
            if "unseen" not in args.methods:
                skipped[method] = "scored by unseen: add unseen to --methods"
                logger.warning("Skipping %s: %s", method, skipped[method])
            continue
        try:
            check_page_method(method)
        except MethodUnavailableError as error:
            skipped[method] = str(error)
            logger.warning("Skipping %s: %s", method, error)
            continue
        method_started = time.monotonic()
        if method in HEADLINE_METHODS and not conventions:
            conventions.update(headline_conventions(snapshot_titles(sites), args.headline))
        headline = {dataset: c.headline_in_text for dataset, c in conventions.items()}
        records.extend(run_page_method(method, sites, args.jobs, headline))
        logger.info("%s done in %.1f s", method, time.monotonic() - method_started)

    if args.train_pages:
        records = same_pages_as_learned(records)
    snippet_rows = _snippet_scores(args, snippet_sets, skipped)

    run = {
        "dataset_dir": str(args.dataset_dir),
        "methods": args.methods,
        "jobs": args.jobs,
        "sites": len(sites),
        "pages": pages,
        "headline": args.headline,
        "seconds": round(time.monotonic() - started, 1),
    }
    summary = report.summarize(records, skipped, run)
    summary.update(extra)
    if "learning_curve" in extra:
        summary["learning_curve"] = [asdict(row) for row in extra["learning_curve"]]
    if snippet_rows:
        summary["snippet_datasets"] = snippet_rows
    split = report.rules_split(records)
    if split:
        summary["rules_by_way"] = split
        summary["rules_fast_path_share"] = report.fast_path_shares(records)
    learned_ways = report.learned_split(records)
    if learned_ways:
        summary["learned_by_way"] = learned_ways
    collapsed = report.collapses(records)
    if collapsed:
        summary["collapses"] = collapsed
    args.out.mkdir(parents=True, exist_ok=True)
    report.write_summary(args.out / "summary.json", summary)
    report.write_pages_csv(args.out / "pages.csv", records)
    tables = (
        [report.dataset_table(summary, "f1"), report.dataset_table(summary, "cleaneval")]
        if records
        else []
    )
    for dataset, rows in summary["datasets"].items():
        tables.append(report.method_table(dataset, rows))
    if split:
        tables.append(report.rules_split_table(split))
        tables.append(report.fast_path_shares_lines(summary["rules_fast_path_share"]))
    if learned_ways:
        tables.append(report.learned_split_table(learned_ways))
    if extra.get("unseen_beside_peers"):
        tables.append(report.paired_speed_table(extra["unseen_beside_peers"]))
    if collapsed:
        tables.append(report.collapse_table(collapsed))
    for dataset, rows in snippet_rows.items():
        tables.append(snippet_table(dataset, rows))
    for name, reason in skipped.items():
        tables.append(f"Skipped {name}: {reason}\n")
    text = "\n".join(tables)
    write_atomically(args.out / "report.md", text)
    if records:
        report.plot_f1_distribution(args.out / "f1_distribution.png", records)
    if "learning_curve" in extra:
        report.plot_learning_curve(args.out / "learning_curve.png", extra["learning_curve"])
        tables.append(report.curve_table(extra["learning_curve"]))
        text = "\n".join(tables)
        write_atomically(args.out / "report.md", text)
    sys.stdout.write(text)
    logger.info("Results in %s (%.1f s)", args.out, time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
