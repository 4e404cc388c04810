"""The fast path's whole cost per page on the multi-page dev sites, beside trafilatura's.

    python benchmarks/fast_path_sites.py DATASETS_DIR --crawl-cache CACHE [--profile OUT]

Sites: dragnet's of at least ``--min-pages`` pages (10), and those of two or more pages of
cleanportaleval, l3s-gn1 and fundus-dev, as the site models' targets count them. Each
site's model is learned from half of its rendered pages (the evaluation's crawl cache,
``python -m spidercrawl.evaluate ... --crawl-cache CACHE``). The other half's raw HTML then
goes the crawl's way after the download, in one process (``fast_path_items.ours``: parse,
page metadata, rules, check, the chain, the article item, the pipelines' hash and feed
entry), and through trafilatura's ``bare_extraction`` with metadata, page by page. Pages
whose rules fail their check are rendered in a crawl: counted, not timed. Prints per
dataset pages/s of both, their ratio, and ms per stage; ``--profile OUT`` writes
cProfile's statistics of our side (``python -m pstats OUT``; profiling slows our side:
take speeds from a run without it).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from fast_path_items import Stopwatch, ours, trafilatura_run  # noqa: E402

from spidercrawl.document.html import decode_html  # noqa: E402
from spidercrawl.evaluate.crawl import crawl_snapshot  # noqa: E402
from spidercrawl.learn.model import SiteModel  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot  # noqa: E402

MIN_PAGES = {"fundus-dev": 2, "cleanportaleval": 2, "l3s-gn1": 2}


def site_pages(dataset: Path, cache: Path, min_pages: int):
    """(host, training page items, test pages as (raw HTML, URL)) per site of ``dataset``
    with enough pages, the rendered items read from the crawl cache."""
    for root in sorted(p for p in dataset.iterdir() if (p / "pages").is_dir()):
        snapshot = SiteSnapshot(root)
        ids = sorted(snapshot.page_ids)
        if len(ids) < min_pages:
            continue
        cached = cache / dataset.name / f"{snapshot.host}.jsonl"
        if not cached.exists():
            continue
        items = crawl_snapshot(snapshot, cached)
        half = max(1, len(ids) // 2)
        train = [items[i] for i in ids[:half] if i in items]
        test = [
            (
                decode_html(snapshot.page_bytes(i))[0],
                f"https://{snapshot.host}{snapshot.path_of[i]}",
            )
            for i in ids[half:]
        ]
        yield snapshot.host, train, test


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path)
    parser.add_argument("--crawl-cache", type=Path, required=True)
    parser.add_argument("--min-pages", type=int, default=10)
    parser.add_argument("--labels", default="relevance", help="the site models' labels")
    parser.add_argument("--profile", type=Path, help="cProfile statistics of our side")
    args = parser.parse_args()
    profiler = cProfile.Profile() if args.profile else None
    totals: dict[str, dict[str, float]] = {}
    stages: dict[str, float] = defaultdict(float)
    warm = False
    for dataset in sorted(p for p in args.datasets.iterdir() if p.is_dir()):
        mine, theirs = Stopwatch(), Stopwatch()
        counts = {"sites": 0, "pages": 0, "accepted": 0}
        minimum = MIN_PAGES.get(dataset.name, args.min_pages)
        for host, train, test in site_pages(dataset, args.crawl_cache, minimum):
            try:
                model = SiteModel(random_state=0, labels=args.labels).fit(train)
            except ValueError as error:
                print(f"{dataset.name}/{host}: no model ({error})", file=sys.stderr)
                continue
            # The benchmark's data, not the extractors' garbage: kept from the cycle
            # collector's walks, as a crawl holds one page at a time (see the evaluation).
            gc.collect()
            gc.freeze()
            if not warm:  # imports and caches, untimed
                ours(test[:2], model, Stopwatch(), [])
                trafilatura_run(test[:2], Stopwatch())
                warm = True
            counts["sites"] += 1
            for page in test:
                counts["pages"] += 1
                watch = Stopwatch()
                if profiler:
                    profiler.enable()
                accepted = ours([page], model, watch, [])
                if profiler:
                    profiler.disable()
                if not accepted:  # rendered in a crawl: not the fast path's time
                    continue
                counts["accepted"] += 1
                for stage, seconds in watch.seconds.items():
                    mine.seconds[stage] += seconds
                trafilatura_run([page], theirs)
        if not counts["accepted"]:
            continue
        ours_s, theirs_s = sum(mine.seconds.values()), sum(theirs.seconds.values())
        totals[dataset.name] = {
            **counts,
            "ours_pages_s": counts["accepted"] / ours_s,
            "trafilatura_pages_s": counts["accepted"] / theirs_s,
        }
        for stage, seconds in mine.seconds.items():
            stages[stage] += seconds
        stages["pages"] += counts["accepted"]
    print("| dataset | sites | test pages | fast path | ours pages/s | trafilatura pages/s "
          "| ratio |\n|---|---|---|---|---|---|---|")  # fmt: skip
    for name, row in totals.items():
        print(
            f"| {name} | {row['sites']:.0f} | {row['pages']:.0f} | {row['accepted']:.0f} | "
            f"{row['ours_pages_s']:.1f} | {row['trafilatura_pages_s']:.1f} | "
            f"{row['ours_pages_s'] / row['trafilatura_pages_s']:.2f} |"
        )
    pages = stages.pop("pages", 0) or 1
    print("\n| stage (fast-path pages, all datasets) | ms per page |\n|---|---|")
    for stage, seconds in stages.items():
        print(f"| {stage} | {1000 * seconds / pages:.2f} |")
    if profiler:
        profiler.dump_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
