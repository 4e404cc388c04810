"""Do a learned site's rules find on the raw HTML what they find on the browser's DOM?

    python benchmarks/rules_raw_html.py ../shared/datasets --crawl-cache CACHE

For every dataset site, 4 folds as ``python -m spidercrawl.evaluate --folds 4`` makes them:
a site model (with layouts) is learned from the training pages, and on each test page its
rules are applied three ways: to the rendered DOM (where they were learned), to the raw
HTML parsed as the fast path parses it (:func:`~spidercrawl.document.html.parse_raw_html`,
the tree a browser builds) and to the raw HTML parsed by libxml2 alone (the fast path
before raw HTML was parsed as a browser does). Prints, per dataset, how many test pages
pass the rules' check each way, and every page where the raw HTML and the DOM disagree.
``CACHE`` is the evaluation command's crawl cache (pages rendered once and kept).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.document.html import decode_html  # noqa: E402
from spidercrawl.document.page import first_description  # noqa: E402
from spidercrawl.evaluate.crawl import crawl_snapshot  # noqa: E402
from spidercrawl.evaluate.runner import find_sites  # noqa: E402
from spidercrawl.evaluate.site_methods import shuffled_ids  # noqa: E402
from spidercrawl.learn.model import SiteModel  # noqa: E402
from spidercrawl.learn.rules import raw_document  # noqa: E402

FOLDS = 4


def _verdict(rules, document, reference: str) -> str:
    """ "ok", or why the rules' article of ``document`` (HTML as a string, which the rules
    parse with libxml2 alone, or a parsed document) fails their check."""
    verdict = rules.check(rules.extract(document), reference)
    return "ok" if verdict.ok else verdict.reason


def site_rows(task: tuple) -> list[tuple[str, ...]]:
    """(dataset, site, page, DOM verdict, browser-like raw verdict, libxml2 raw verdict)."""
    site, cache = task
    snapshot = site.snapshot
    crawled = crawl_snapshot(snapshot, Path(cache) / site.dataset / f"{snapshot.host}.jsonl")
    pages = {
        page_id: {**page, "raw_html": page.get("raw_html") or read_raw(snapshot, page_id)}
        for page_id, page in crawled.items()
    }
    ids = shuffled_ids(list(pages))
    folds = max(2, min(FOLDS, len(ids)))
    rows = []
    for fold in range(folds):
        test = ids[fold::folds]
        try:
            model = SiteModel(random_state=0, layouts=True).fit(
                [pages[i] for i in ids if i not in test]
            )
        except ValueError:  # too few pages or blocks to learn from
            continue
        rules = getattr(model, "rules_", None)
        if rules is None or not rules.usable:
            continue
        for page_id in test:
            page = pages[page_id]
            reference = first_description(page)
            raw = page["raw_html"]
            rows.append(
                (
                    site.dataset,
                    snapshot.host,
                    page_id,
                    _verdict(rules, page["rendered_html"], reference),
                    _verdict(rules, raw_document(raw), reference),
                    _verdict(rules, raw, reference),  # libxml2 alone, the fast path before
                )
            )
    return rows


def read_raw(snapshot, page_id: str) -> str:
    return decode_html(snapshot.page_bytes(page_id))[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path)
    parser.add_argument("--crawl-cache", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    sites = list(find_sites(args.datasets, []))
    with Pool(args.jobs) as pool:
        rows = [
            row
            for rows in pool.imap_unordered(site_rows, [(s, args.crawl_cache) for s in sites])
            for row in rows
        ]
    rows.sort()
    print(
        "| dataset | test pages | the rules' check passes: on the DOM "
        "| on raw HTML as a browser parses it | on raw HTML, libxml2 alone |"
    )
    print("|---|---|---|---|---|")
    for dataset in sorted({row[0] for row in rows}):
        mine = [row for row in rows if row[0] == dataset]
        passed = Counter()
        for row in mine:
            for column, verdict in zip(("dom", "browser", "libxml2"), row[3:], strict=True):
                passed[column] += verdict == "ok"
        counts = " | ".join(str(passed[column]) for column in ("dom", "browser", "libxml2"))
        print(f"| {dataset} | {len(mine)} | {counts} |")
    print("\nPages where the raw HTML and the DOM disagree (DOM / browser-like / libxml2):")
    for row in rows:
        if len({verdict == "ok" for verdict in row[3:]}) > 1:
            print(" ".join(row[:3]), "|", " / ".join(row[3:]))


if __name__ == "__main__":
    main()
