"""Where text density's article stands without trafilatura: what the peers' articles would
have scored on those very pages.

    python benchmarks/density_gate.py [--datasets ../shared/datasets]

``extract_html`` lets density's article stand where readability-lxml agrees with it
(word F1 ``RAW_AGREEMENT``); trafilatura is then not asked. On the pages where that
happened (method ``density``, "agrees" in its note) this prints the snippet scores of
``trafilatura-eval-dev`` and the mean word F1 of ``fundus-dev`` (gold without the title,
so the article is taken without its headline) of density's article (delivered),
readability-lxml's and trafilatura's.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from spidercrawl import extract_html  # noqa: E402
from spidercrawl.document.html import decode_html  # noqa: E402
from spidercrawl.evaluate.metrics import score_text  # noqa: E402
from spidercrawl.evaluate.snippets import SnippetCounts, read_snippet_pages, score_page  # noqa: E402
from spidercrawl.extract.consensus import PEER_FACTORIES  # noqa: E402

PEERS = ("readability", "trafilatura")


def density_stood(article: dict) -> bool:
    return article["method"] == "density" and "agrees" in article["method_note"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    args = parser.parse_args()
    peers = {name: PEER_FACTORIES[name]() for name in PEERS}
    pages = read_snippet_pages(args.datasets / "trafilatura-eval-dev")
    counts = {name: SnippetCounts() for name in ("density", *PEERS)}
    for page in pages:
        raw = gzip.decompress(Path(page.html_path).read_bytes())
        article = extract_html(raw, url=page.url)
        if not density_stood(article):
            continue
        text = decode_html(raw)[0]
        counts["density"].add(score_page(article["text"], page))
        for name, peer in peers.items():
            counts[name].add(score_page(peer(text) or "", page))
    print(f"trafilatura-eval-dev: density stood on {counts['density'].pages} of {len(pages)}")
    for name, c in counts.items():
        print(f"  {name:12s} P {c.precision:.3f} R {c.recall:.3f} F1 {c.f1:.3f} "
              f"(with-snippets missed {c.false_negatives})")  # fmt: skip
    scores: dict[str, list[float]] = {name: [] for name in counts}
    fundus = args.datasets / "fundus-dev"
    gold_files = sorted(fundus.glob("*/gold/*.txt"))
    for gold_path in gold_files:
        raw = (gold_path.parents[1] / "pages" / f"{gold_path.stem}.html").read_bytes()
        url = f"https://{gold_path.parents[1].name}/{gold_path.stem}"
        article = extract_html(raw, url=url, headline_in_text=False)
        if not density_stood(article):
            continue
        gold, text = gold_path.read_text("utf-8"), decode_html(raw)[0]
        scores["density"].append(score_text(article["text"], gold).f1)
        for name, peer in peers.items():
            scores[name].append(score_text(peer(text) or "", gold).f1)
    print(f"fundus-dev: density stood on {len(scores['density'])} of {len(gold_files)}")
    for name, values in scores.items():
        print(f"  {name:12s} mean F1 {sum(values) / max(len(values), 1):.3f}")


if __name__ == "__main__":
    main()
