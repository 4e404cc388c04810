"""How learning a site model grows with the number of pages: time and memory.

    python benchmarks/learning_cost.py [--data ../shared/ziyan-spider/sina] [--pages 5 10 25 50 100]

Time is measured on one fit, memory (peak Python allocations, tracemalloc, pages
excluded) on a second one. Pages are the site's own, drawn again at random when more are
asked for than the site has: the template and the blocks per page stay realistic.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.learn.cross_site import load_site_pages  # noqa: E402
from spidercrawl.learn.model import SiteModel  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=REPO.parent / "shared" / "ziyan-spider" / "sina"
    )
    parser.add_argument("--pages", type=int, nargs="+", default=[5, 10, 25, 50, 100])
    args = parser.parse_args()
    site_pages = load_site_pages(args.data)
    if not site_pages:
        print(f"No pages in {args.data}", file=sys.stderr)
        return 2
    print("| pages | blocks | fit s | peak MiB | s per 1000 blocks |")
    print("|---|---|---|---|---|")
    rng = random.Random(0)
    for count in args.pages:
        pages = [copy.deepcopy(rng.choice(site_pages)) for _ in range(count)]
        started = time.perf_counter()
        model = SiteModel().fit(pages)
        seconds = time.perf_counter() - started
        tracemalloc.start()  # a second fit for memory: tracemalloc slows allocation down
        SiteModel().fit(pages)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        blocks = model.training_["blocks"]
        print(
            f"| {count} | {blocks} | {seconds:.2f} | {peak:.0f} | {1000 * seconds / blocks:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
