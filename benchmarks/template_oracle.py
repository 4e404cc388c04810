"""How far a site template can go against the datasets' gold: the headroom of site learning.

    python benchmarks/template_oracle.py [--datasets ../shared/datasets]
        [--crawl-cache /tmp/cc] [--pages OUT/pages.csv]

A site model takes the same parts of every page of a layout: the paragraphs of the story
element, not the byline above it, whatever a person kept on one page and left out on the
next. This asks how far such a choice goes against the gold *when it is made by looking
at the gold*: per site, the set of template parts that, taken on every page of the site,
gives the highest mean word F1 (parts added greedily while the mean rises; only parts
whose words are at least ``MIN_GOLD_SHARE`` gold words are tried), the better of two
definitions of a part: a block's selector path without ids and digits (as auto-labeling
splits a cluster), and the same with classes kept on the block's element and its parent
only (as layouts are told apart: a post's category classes on an ancestor make every
page's path its own). It measures how consistently the gold follows the template; it is
not a bound for every method (a classifier also splits a part by its text, and the peers'
check reads pages differently). Beside it, the render's ceiling: every gold word the
rendered blocks hold and nothing else (precision 1), the bound of any extractor of them.

Pages come from the evaluation's crawl cache (``python -m spidercrawl.evaluate ...
--crawl-cache C`` fills it); a page the crawl did not render scores 0 in both. With
``--pages``, an evaluation's ``pages.csv``, each of its methods is printed beside them on
the same pages.
"""

from __future__ import annotations

import argparse
import collections
import csv
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz.distance import LCSseq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spidercrawl.document.blocks import Block, page_blocks, template_path, template_step
from spidercrawl.evaluate.crawl import crawl_snapshot
from spidercrawl.evaluate.runner import EvaluationSite, find_sites, read_gold
from spidercrawl.extract.readers import word_f1
from spidercrawl.learn.layouts import CLASS_STEPS
from spidercrawl.runner import PROJECT_ROOT
from spidercrawl.text import tokenize

DATASETS = PROJECT_ROOT.parent / "shared" / "datasets"
MIN_GOLD_SHARE = 0.3  # a role is tried when this share of its words are gold words
MIN_GAIN = 1e-4  # the greedy search stops when adding a role raises the mean less


def near_path(block: Block) -> str:
    """The template path with classes on the block's element and its parent only."""
    top = len(block.selector) - CLASS_STEPS
    steps = [
        template_step(step) if depth >= top else template_step(step).split(".")[0]
        for depth, step in enumerate(block.selector)
    ]
    return " > ".join(steps)


ROLES = {"full path": lambda block: template_path(block.selector), "near classes": near_path}


@dataclass
class OraclePage:
    page_id: str
    gold: list[str]
    blocks: list[tuple[str, list[str]]]  # (template role, words) in page order

    def text_of(self, roles: set[str]) -> list[str]:
        return [word for role, words in self.blocks if role in roles for word in words]

    def ceiling(self) -> float:
        """F1 of every gold word the render holds, in order, and nothing else (the recall
        of taking every block, as ``benchmarks/chaos_blocks.py``'s ceiling)."""
        every = [word for _, words in self.blocks for word in words]
        recall = LCSseq.similarity(every, self.gold) / len(self.gold) if self.gold else 0.0
        return 2 * recall / (1 + recall) if recall else 0.0


def site_pages(site: EvaluationSite, cache: Path) -> dict[str, list[OraclePage]]:
    """The site's pages with gold, once per definition of a role (``ROLES``): each block
    named by its role. The crawl is read and the blocks made once for all."""
    crawled = crawl_snapshot(site.snapshot, cache / site.dataset / f"{site.snapshot.host}.jsonl")
    pages: dict[str, list[OraclePage]] = {role: [] for role in ROLES}
    for page_id in site.snapshot.page_ids:
        gold = read_gold(site.snapshot.root / "gold" / f"{page_id}.txt")
        if gold is None:
            continue
        item = crawled.get(page_id)
        blocks = page_blocks(item, densities=False) if item else []
        words = [tokenize(b.text) for b in blocks]
        gold_words = tokenize(gold)
        for role, role_of in ROLES.items():
            named = [(role_of(b), w) for b, w in zip(blocks, words, strict=True)]
            pages[role].append(OraclePage(page_id, gold_words, named))
    return pages


def best_roles(pages: Sequence[OraclePage]) -> set[str]:
    """The roles whose text on every page scores best against the gold (greedy)."""
    words, gold_words = collections.Counter(), collections.Counter()
    for page in pages:
        gold = collections.Counter(page.gold)
        for role, role_words in page.blocks:
            words[role] += len(role_words)
            counts = collections.Counter(role_words)
            gold_words[role] += sum(min(n, gold[w]) for w, n in counts.items())
    candidates = sorted(r for r in words if words[r] and gold_words[r] / words[r] >= MIN_GOLD_SHARE)

    def mean_f1(roles: set[str]) -> float:
        return statistics.mean(word_f1(page.text_of(roles), page.gold) for page in pages)

    chosen: set[str] = set()
    best = mean_f1(chosen)
    while True:
        trials = [(mean_f1(chosen | {role}), role) for role in candidates if role not in chosen]
        if not trials:
            return chosen
        score, role = max(trials)
        if score <= best + MIN_GAIN:
            return chosen
        best, chosen = score, chosen | {role}


def method_scores(path: Path | None) -> dict[str, dict[tuple[str, str, str], float]]:
    """method -> (dataset, site, page ID) -> F1, from an evaluation's pages.csv."""
    scores: dict[str, dict[tuple[str, str, str], float]] = collections.defaultdict(dict)
    if path is None:
        return scores
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            key = (row["dataset"], row["site"], row["page_id"])
            scores[row["method"]][key] = float(row["f1"])
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--crawl-cache", type=Path, default=Path("/tmp/cc"))
    parser.add_argument("--pages", type=Path, default=None, help="an evaluation's pages.csv")
    parser.add_argument("--sites", nargs="*", default=[], help="only these hosts")
    parser.add_argument(
        "--gaps", default="learned", help="list the sites where this method of --pages trails "
        "the template oracle most",
    )  # fmt: skip
    args = parser.parse_args()
    others = method_scores(args.pages)
    columns = ["template oracle", "render ceiling", *sorted(others)]
    table: dict[str, dict[str, list[float]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    sites: dict[str, dict[str, list[float]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for site in find_sites(args.datasets, args.sites):
        choices = []
        for role, pages in site_pages(site, args.crawl_cache).items():
            roles = best_roles(pages)
            score = (
                statistics.mean(word_f1(p.text_of(roles), p.gold) for p in pages) if pages else 0
            )
            choices.append((score, role, pages, roles))
        _, role, pages, roles = max(choices, key=lambda choice: choice[0])
        if not pages:
            continue
        for page in pages:
            key = (site.dataset, site.snapshot.host, page.page_id)
            if others and not all(key in scores for scores in others.values()):
                continue  # every column on the same pages
            for row in (table[site.dataset], sites[site.key]):
                row["template oracle"].append(word_f1(page.text_of(roles), page.gold))
                row["render ceiling"].append(page.ceiling())
                for method, scores in others.items():
                    row[method].append(scores[key])
        print(f"{site.key}: {len(pages)} pages, {len(roles)} roles ({role})", file=sys.stderr)
    print("| dataset | pages | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    everything: dict[str, list[float]] = collections.defaultdict(list)
    for dataset, row in sorted(table.items()):
        cells = [f"{statistics.mean(row[c]):.3f}" for c in columns]
        print(f"| {dataset} | {len(row['template oracle'])} | " + " | ".join(cells) + " |")
        for column in columns:
            everything[column].extend(row[column])
    if len(table) > 1:
        per_dataset = [
            f"{statistics.mean(everything[c]):.3f} / "
            f"{statistics.mean(statistics.mean(r[c]) for r in table.values()):.3f}"
            for c in columns
        ]
        pages = len(everything["template oracle"])
        print(f"| all pages / mean of datasets | {pages} | " + " | ".join(per_dataset) + " |")
    if args.gaps in others:
        print_gaps(sites, args.gaps)
    return 0


def print_gaps(sites: dict[str, dict[str, list[float]]], method: str, most: int = 12) -> None:
    """The sites where ``method`` trails the template oracle most (F1 summed over pages)."""
    gaps = sorted(
        ((sum(row["template oracle"]) - sum(row[method]), key) for key, row in sites.items()),
        reverse=True,
    )
    print(f"\n| site | pages | template oracle | {method} | pages' F1 lost |")
    print("|---|---|---|---|---|")
    for lost, key in gaps[:most]:
        row = sites[key]
        oracle, other = statistics.mean(row["template oracle"]), statistics.mean(row[method])
        print(f"| {key} | {len(row[method])} | {oracle:.3f} | {other:.3f} | {lost:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
