"""Text density's cost against page size: is it linear in the number of DOM nodes?

    python benchmarks/density_speed.py [--data ../shared/datasets]

Times ``DensityExtractor.product().extract`` (parse included) on every page, single
process, and prints milliseconds per 1,000 elements by page-size bucket. A flat column
means the cost grows linearly with the nodes.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.document.density import DensityExtractor  # noqa: E402
from spidercrawl.document.html import UnusableDocumentError, parse_html  # noqa: E402

BUCKETS = (0, 500, 1000, 2000, 4000, 8000, 10**9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "datasets")
    args = parser.parse_args()
    extractor = DensityExtractor.product()
    rows: list[tuple[int, float, int]] = []
    for path in sorted(args.data.glob("*/*/pages/*.html")):
        html = path.read_bytes()
        try:
            nodes = sum(1 for _ in parse_html(html).iter())
        except UnusableDocumentError:
            continue
        started = time.perf_counter()
        extractor.extract(html)
        rows.append((nodes, time.perf_counter() - started, len(html)))
    print(f"{len(rows)} pages, {sum(s for _, s, _ in rows):.1f} s in all")
    print("| elements | pages | median ms | ms per 1000 elements | median KB |")
    print("|---|---|---|---|---|")
    for low, high in itertools.pairwise(BUCKETS):
        bucket = [r for r in rows if low <= r[0] < high]
        if not bucket:
            continue
        per_node = statistics.median(1000 * 1000 * s / n for n, s, _ in bucket)
        label = f"{low}-{high}" if high < 10**9 else f"{low}+"
        print(
            f"| {label} | {len(bucket)} | {1000 * statistics.median(s for _, s, _ in bucket):.1f}"
            f" | {per_node:.2f} | {statistics.median(b for _, _, b in bucket) / 1024:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
