"""Near-duplicates in the dev datasets, and planted ones: what the index finds and its cost.

    python benchmarks/near_duplicates.py [../shared/datasets] [--threshold 0.8]

Every page of every dataset is extracted as the extract command does without a model
(``extract_html``), in dataset, site and page order, and goes through the near-duplicate
index as a crawl's delivery does: checked against the articles before it, then added if
it is the first of its story. Prints the pairs found (within a site, across sites, across
datasets) with their similarity and the start of both texts, so that a person can judge
them. Then every article long enough to compare is planted twice more, as a crawl of a
mirror would deliver it (the same text under a second host) and as the same page with a
tracking query and a changed dateline: the share of plants flagged, and the time per
article (signature, query, insert).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.extract.api import extract_html  # noqa: E402
from spidercrawl.near_duplicates import (  # noqa: E402
    DeliveredArticle,
    NearDuplicateIndex,
    signature,
)
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs  # noqa: E402


def articles(root: Path) -> list[tuple[str, str, str, str]]:
    """(dataset, site, url, text) of every page, in order."""
    found = []
    for dataset in sorted(p for p in root.iterdir() if p.is_dir()):
        for site_dir in find_site_dirs(dataset):
            snapshot = SiteSnapshot(site_dir)
            for page_id in snapshot.page_ids:
                url = f"https://{site_dir.name}{snapshot.path_of[page_id]}"
                text = extract_html(snapshot.page_bytes(page_id), url)["text"]
                found.append((dataset.name, site_dir.name, url, text))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--threshold", type=float, default=0.8)
    args = parser.parse_args()

    started = time.perf_counter()
    pages = articles(args.root)
    print(f"{len(pages)} pages extracted in {time.perf_counter() - started:.0f} s")
    index = NearDuplicateIndex(None, args.threshold)
    by_url = {url: (dataset, site, text) for dataset, site, url, text in pages}
    pairs = []
    seconds = 0.0
    for _, site, url, text in pages:
        started = time.perf_counter()
        original = index.duplicate_of(url, text)
        if original is None:
            index.add(url, DeliveredArticle(url, site), text)
        seconds += time.perf_counter() - started
        if original is not None:
            pairs.append((url, original.url))
    compared = sum(signature(text) is not None for *_, text in pages)
    print(
        f"{compared} of them long enough to compare; {seconds / len(pages) * 1000:.2f} ms "
        f"per article (signature, query, insert)"
    )
    kinds = {"same site": 0, "across sites": 0, "across datasets": 0}
    print(f"\n{len(pairs)} near-duplicate pairs at threshold {args.threshold}:")
    for copy, original in pairs:
        (d1, s1, t1), (d2, s2, t2) = by_url[copy], by_url[original]
        kind = "same site" if s1 == s2 else "across sites" if d1 == d2 else "across datasets"
        kinds[kind] += 1
        similarity = signature(t1).jaccard(signature(t2))
        print(f"  {kind}, {similarity:.2f}: {copy}\n      of {original}")
        print(f"      {' '.join(t1.split())[:110]}\n      {' '.join(t2.split())[:110]}")
    print("  " + ", ".join(f"{count} {kind}" for kind, count in kinds.items()))

    planted = flagged = 0
    seconds = 0.0
    for _, site, url, text in pages:
        if signature(text) is None:
            continue
        mirror = url.replace(f"https://{site}", "https://mirror.example", 1)
        words = text.split()
        redated = " ".join(["November", "27,", "2026", *words[3:]])
        for copy, copy_text in ((mirror, text), (f"{url}?utm_source=feed", redated)):
            started = time.perf_counter()
            found = index.duplicate_of(copy, copy_text)
            seconds += time.perf_counter() - started
            planted += 1
            flagged += found is not None
    print(
        f"\nplanted: {flagged} of {planted} flagged ({flagged / planted:.1%}); "
        f"{seconds / planted * 1000:.2f} ms per check"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
