"""Blocks-only extraction of sites never seen, on the ziyan chaos pages (human gold).

    python benchmarks/chaos_blocks.py [--models models/_cross_site]

The 189 chaos pages were rendered with their styles in 2013 and exist only as text blocks
(no HTML), so the peers cannot run on them: this scores our cross-site extractor on blocks
alone (:class:`UnseenExtractor`) against taking every block, word-level LCS F1 against
people's gold, over all pages and over the pages whose render holds the article (taking
every block recalls at least half the gold: for some ids the 2013 render caught a paywall
or an error page). The shipped cross-site model never saw these sites.
The ceiling row bounds any extractor of these blocks from above: every gold word the
render holds and nothing else (precision 1, the recall of taking every block), in the
gold's order. Blocks come in page order, and a 2013 block may hold text from both sides of
a list (an element's text runs were merged), so no choice of blocks reaches it on some
pages: the oracle row is the best choice of blocks found *by looking at the gold* (every
block with at least a given share of gold words, the best of four shares, then blocks
added or dropped one at a time while the page's F1 rises). An extractor that chooses
without the gold scores at most about that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from rapidfuzz.distance import LCSseq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spidercrawl.document.captured import Page
from spidercrawl.evaluate.metrics import score_text
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.runner import PROJECT_ROOT
from spidercrawl.text import tokenize

CHAOS = PROJECT_ROOT.parent / "shared" / "ziyan-spider" / "chaos"
RENDER_HOLDS_ARTICLE = 0.5  # recall of all blocks against the gold
ORACLE_SHARES = (0.3, 0.5, 0.7, 0.9)  # a block's share of words found in the gold
ORACLE_PASSES = 2  # rounds of adding or dropping one block at a time


def _f1_of(chosen: list[int], tokens: list[list[str]], gold: list[str]) -> float:
    words = [word for i in chosen for word in tokens[i]]
    if not words or not gold:
        return 0.0
    return 2 * LCSseq.similarity(words, gold) / (len(words) + len(gold))


def oracle_f1(texts: list[str], gold_text: str) -> float:
    """The F1 of the best choice of blocks found by looking at the gold (see the module's
    docstring): an upper reference for extractors that do not see it."""
    gold = tokenize(gold_text)
    gold_words = set(gold)
    tokens = [tokenize(text) for text in texts]
    shares = [sum(w in gold_words for w in t) / max(1, len(t)) for t in tokens]
    best, chosen = 0.0, set()
    for share in ORACLE_SHARES:
        picked = {i for i, s in enumerate(shares) if s >= share}
        score = _f1_of(sorted(picked), tokens, gold)
        if score > best:
            best, chosen = score, picked
    candidates = [i for i, s in enumerate(shares) if s > 0]
    for _ in range(ORACLE_PASSES):
        improved = False
        for i in candidates:
            trial = chosen ^ {i}
            score = _f1_of(sorted(trial), tokens, gold)
            if score > best + 1e-9:
                best, chosen, improved = score, trial, True
        if not improved:
            break
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=None, help="cross-site model folder")
    parser.add_argument("--chaos", type=Path, default=CHAOS)
    args = parser.parse_args()
    extractor = UnseenExtractor.load(args.models)
    ours, every, renderable, ceiling, oracle = [], [], [], [], []
    for path in sorted(args.chaos.glob("*.json")):
        gold_path = path.with_suffix(".txt")
        if not gold_path.exists():
            continue
        gold = gold_path.read_text("utf-8-sig")
        page = Page(json.loads(path.read_text("utf-8")))
        blocks = page.blocks()
        score = score_text(extractor.extract(page).text, gold, with_difflib=False)
        everything = score_text("\n".join(b.text for b in blocks), gold, with_difflib=False)
        ours.append(score.f1)
        every.append(everything.f1)
        # A bound no extractor of these blocks passes: every gold word the render holds
        # and nothing else (precision 1, recall that of every block).
        ceiling.append(2 * everything.recall / (1 + everything.recall))
        oracle.append(oracle_f1([b.text for b in blocks], gold))
        renderable.append(everything.recall >= RENDER_HOLDS_ARTICLE)
    held = np.array(renderable)
    ours_a, every_a = np.array(ours), np.array(every)
    print(f"chaos pages: {len(ours)}; render holds the article: {int(held.sum())}")
    print("| extractor | F1, all pages | F1, pages whose render holds the article |")
    print("|---|---|---|")
    print(f"| ours, blocks only | {ours_a.mean():.3f} | {ours_a[held].mean():.3f} |")
    print(f"| every block | {every_a.mean():.3f} | {every_a[held].mean():.3f} |")
    oracle_a = np.array(oracle)
    print(
        f"| oracle (blocks chosen by looking at the gold) | {oracle_a.mean():.3f} | "
        f"{oracle_a[held].mean():.3f} |"
    )
    ceiling_a = np.array(ceiling)
    print(
        f"| ceiling (the render's gold words only) | {ceiling_a.mean():.3f} | "
        f"{ceiling_a[held].mean():.3f} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
