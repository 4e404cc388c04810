"""Extraction from raw HTML, page by page: ours (``extract_html`` without a model: text
density), trafilatura, readability-lxml (both as the crawl's consensus runs them), their
medoid and the best of the three (an oracle), scored against people's gold.

    python benchmarks/raw_candidates.py [../shared/datasets] [--worst 15]

Prints, per dataset, the mean LCS F1 of each, and the pages where the medoid falls
furthest under trafilatura, with each candidate's F1 and length and the three's
agreement: where to look when the never-seen path loses on a dataset. ``--json FILE``
keeps every page's texts and scores for further study.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.document.html import decode_html  # noqa: E402
from spidercrawl.evaluate.metrics import score_text  # noqa: E402
from spidercrawl.extract.api import extract_html  # noqa: E402
from spidercrawl.extract.decision import medoid  # noqa: E402
from spidercrawl.extract.readers import PEER_FACTORIES  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs  # noqa: E402
from spidercrawl.text import tokenize  # noqa: E402

NAMES = ("ours", "trafilatura", "readability")


def peer_text(peer, html: str) -> str:
    """A peer's text of ``html``, empty where it fails (one voice less)."""
    try:
        return peer(html)
    except Exception:
        return ""


def pages(root: Path) -> list[dict]:
    peers = {name: factory() for name, factory in PEER_FACTORIES.items()}
    rows = []
    for dataset in sorted(p for p in root.iterdir() if p.is_dir()):
        for site_dir in find_site_dirs(dataset):
            snapshot = SiteSnapshot(site_dir)
            for page_id in snapshot.page_ids:
                gold_path = site_dir / "gold" / f"{page_id}.txt"
                if not gold_path.exists():
                    continue
                raw = snapshot.page_bytes(page_id)
                url = f"https://{site_dir.name}{snapshot.path_of[page_id]}"
                text = decode_html(raw)[0]
                gold, ours = gold_path.read_text("utf-8"), extract_html(raw, url)["text"]
                row = {"dataset": dataset.name, "site": site_dir.name, "url": url}
                row.update(gold=gold, ours=ours)
                row.update({name: peer_text(peer, text) for name, peer in peers.items()})
                for name in NAMES:
                    row[f"f1_{name}"] = score_text(row[name], row["gold"]).f1 if row[name] else 0.0
                words = {name: tokenize(row[name]) for name in NAMES}
                chosen, row["agreement"] = medoid(words, {})
                row["medoid"] = chosen or "ours"
                row["f1_medoid"] = row[f"f1_{row['medoid']}"]
                rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--worst", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = pages(args.root)
    if args.json:
        args.json.write_text(json.dumps(rows))
    columns = [*NAMES, "medoid"]
    print(f"{'dataset':18}{'pages':>6}" + "".join(f"{c:>13}" for c in columns) + f"{'oracle':>9}")
    for dataset in [*sorted({r["dataset"] for r in rows}), "all"]:
        chosen = [r for r in rows if dataset in ("all", r["dataset"])]
        means = [statistics.mean(r[f"f1_{c}"] for r in chosen) for c in columns]
        oracle = statistics.mean(max(r[f"f1_{n}"] for n in NAMES) for r in chosen)
        print(f"{dataset:18}{len(chosen):>6}" + "".join(f"{m:>13.3f}" for m in means)
              + f"{oracle:>9.3f}")  # fmt: skip
    print(f"\nthe {args.worst} pages where the medoid is furthest under trafilatura:")
    for r in sorted(rows, key=lambda r: r["f1_medoid"] - r["f1_trafilatura"])[: args.worst]:
        sizes = " ".join(f"{n} {r[f'f1_{n}']:.2f}/{len(tokenize(r[n]))}w" for n in NAMES)
        print(f"  {r['url'][:60]:60} medoid {r['medoid']} (agreement {r['agreement']:.2f}): "
              f"{sizes}; gold {len(tokenize(r['gold']))}w")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
