"""Blocks-only extraction of sites never seen, on the ziyan chaos pages (human gold).

    python benchmarks/chaos_blocks.py [--models models/_cross_site]

The 189 chaos pages were rendered with their styles in 2013 and exist only as text blocks
(no HTML), so the peers cannot run on them: this scores our cross-site extractor on blocks
alone (:class:`UnseenExtractor`) against taking every block, word-level LCS F1 against
people's gold, over all pages and over the pages whose render holds the article (taking
every block recalls at least half the gold: for some ids the 2013 render caught a paywall
or an error page). The shipped cross-site model never saw these sites.
The ceiling row is the best any extractor of these blocks could score: every gold word
the render holds and nothing else (precision 1, the recall of taking every block).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spidercrawl.evaluate.metrics import score_text
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.learn.blocks import page_blocks
from spidercrawl.runner import PROJECT_ROOT

CHAOS = PROJECT_ROOT.parent / "shared" / "ziyan-spider" / "chaos"
RENDER_HOLDS_ARTICLE = 0.5  # recall of all blocks against the gold


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=None, help="cross-site model folder")
    parser.add_argument("--chaos", type=Path, default=CHAOS)
    args = parser.parse_args()
    extractor = UnseenExtractor.load(args.models)
    ours, every, renderable, ceiling = [], [], [], []
    for path in sorted(args.chaos.glob("*.json")):
        gold_path = path.with_suffix(".txt")
        if not gold_path.exists():
            continue
        gold = gold_path.read_text("utf-8-sig")
        page = json.loads(path.read_text("utf-8"))
        blocks = page_blocks(page)
        score = score_text(extractor.extract(page, blocks).text, gold, with_difflib=False)
        everything = score_text("\n".join(b.text for b in blocks), gold, with_difflib=False)
        ours.append(score.f1)
        every.append(everything.f1)
        # The best any extractor of these blocks can do: every gold word the render
        # holds and nothing else (precision 1, recall that of every block).
        ceiling.append(2 * everything.recall / (1 + everything.recall))
        renderable.append(everything.recall >= RENDER_HOLDS_ARTICLE)
    held = np.array(renderable)
    ours_a, every_a = np.array(ours), np.array(every)
    print(f"chaos pages: {len(ours)}; render holds the article: {int(held.sum())}")
    print("| extractor | F1, all pages | F1, pages whose render holds the article |")
    print("|---|---|---|")
    print(f"| ours, blocks only | {ours_a.mean():.3f} | {ours_a[held].mean():.3f} |")
    print(f"| every block | {every_a.mean():.3f} | {every_a[held].mean():.3f} |")
    ceiling_a = np.array(ceiling)
    print(
        f"| ceiling (the render's gold words only) | {ceiling_a.mean():.3f} | "
        f"{ceiling_a[held].mean():.3f} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
