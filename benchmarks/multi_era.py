"""Sites of several eras: hosts found in two datasets, merged, learned in crawl order.

    python benchmarks/multi_era.py --out /tmp/multi-era [--train-pages 10]

Four hosts occur in two of ``../shared/datasets`` years apart (bbc.co.uk 2012 and 2013,
guardian.co.uk 2008 and 2012, nytimes.com 2007-8 and 2012, washingtonpost.com 2012 and
2013): the same site in two templates, as a real crawl meets an archive beside new pages.
Each becomes one site snapshot whose page IDs interleave the datasets (``000`` from one,
``001`` from the other...), so that the first N pages by ID, the pages a crawl learns from,
mix both eras. Then the evaluation command learns each site from its first
``--train-pages`` pages (``--crawl-order``) and scores the rest with ``learned``, ``rules``,
the cross-site ``unseen`` and the peers, on the same pages. The cross-site model (for
``unseen`` and for the site model's fallback) must not have seen these hosts: the
evaluation trains it on the other datasets of its run, so the sites of ``--unseen-from``
(L3S-GN1 less the merged hosts) go in beside the merged ones, as a dataset of their own
that the report leaves out.

Prints per site: F1 of each method, and for ``learned`` how the pages were extracted (by
the site model itself, replaced by the peers' check, or by a fallback for an unfamiliar
layout) and for ``rules`` how many took the fast path.
"""

from __future__ import annotations

import argparse
import collections
import csv
import itertools
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATASETS = REPO.parent / "shared" / "datasets"
METHODS = ("learned", "rules", "unseen", "trafilatura", "readability-lxml")


def hosts_in_several(datasets: Path) -> dict[str, list[Path]]:
    """Host -> its snapshot folders, for hosts in two datasets or more (oldest data first
    is not known from the folders, so datasets go in name order)."""
    folders: dict[str, list[Path]] = collections.defaultdict(list)
    for dataset in sorted(p for p in datasets.iterdir() if p.is_dir()):
        for site in sorted(p for p in dataset.iterdir() if (p / "pages").is_dir()):
            folders[site.name].append(site)
    return {host: sites for host, sites in folders.items() if len(sites) > 1}


def merge(host: str, sites: list[Path], out: Path) -> int:
    """One snapshot of ``host`` whose IDs interleave ``sites``; returns its page count.

    ``sources.tsv`` says which dataset and page each ID came from."""
    root = out / host
    shutil.rmtree(root, ignore_errors=True)
    (root / "pages").mkdir(parents=True)
    (root / "gold").mkdir()
    originals = []
    for site in sites:
        index = dict(
            line.split("\t", 1)
            for line in (site / "index.tsv").read_text("utf-8").splitlines()
            if "\t" in line
        )
        ids = sorted(p.stem for p in (site / "pages").glob("*.html"))
        originals.append([(site, page_id, index.get(page_id, "")) for page_id in ids])
    index_lines, source_lines = [], []
    interleaved = itertools.chain.from_iterable(itertools.zip_longest(*originals))
    for number, entry in enumerate(e for e in interleaved if e is not None):
        site, page_id, url = entry
        new_id = f"{number:03d}"
        shutil.copyfile(site / "pages" / f"{page_id}.html", root / "pages" / f"{new_id}.html")
        shutil.copyfile(site / "gold" / f"{page_id}.txt", root / "gold" / f"{new_id}.txt")
        index_lines.append(f"{new_id}\t{url.strip()}")
        source_lines.append(f"{new_id}\t{site.parent.name}/{site.name}/{page_id}")
    (root / "index.tsv").write_text("\n".join(index_lines) + "\n", "utf-8")
    (root / "sources.tsv").write_text("\n".join(source_lines) + "\n", "utf-8")
    return len(index_lines)


def learned_way(note: str) -> str:
    """How ``learned`` extracted a page, from its note in pages.csv."""
    if note.startswith("learned+unseen") or note.startswith("learned+density"):
        return "fallback"
    if note.startswith("learned+consensus"):
        return "peers"
    if note in ("no model", "not rendered by the crawl"):
        return note
    return "own"  # the site model (or its article container)


def report(pages_csv: Path) -> None:
    every = [
        row
        for row in csv.DictReader(pages_csv.open(encoding="utf-8"))
        if row["dataset"] == "multi-era"
    ]
    # The same pages for every method: the peers also run on the training pages, which
    # ``learned`` never scores.
    scored = {(r["site"], r["page_id"]) for r in every if r["method"] == "learned"}
    rows = [r for r in every if (r["site"], r["page_id"]) in scored]
    by_site: dict[str, list[dict]] = collections.defaultdict(list)
    for row in rows:
        by_site[row["site"]].append(row)
    header = ["site", "pages", *METHODS, "learned: own / peers / fallback", "rules: fast path"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    totals: dict[str, list[float]] = collections.defaultdict(list)
    ways_all: collections.Counter[str] = collections.Counter()
    fast_all = rules_all = 0
    for site, site_rows in sorted(by_site.items()):
        cells = [site]
        method_rows = {m: [r for r in site_rows if r["method"] == m] for m in METHODS}
        cells.append(str(len(method_rows["learned"])))
        for method in METHODS:
            f1 = [float(r["f1"]) for r in method_rows[method]]
            totals[method] += f1
            cells.append(f"{statistics.fmean(f1):.3f}" if f1 else "-")
        ways = collections.Counter(learned_way(r["note"]) for r in method_rows["learned"])
        ways_all.update(ways)
        cells.append(f"{ways['own']} / {ways['peers']} / {ways['fallback']}")
        fast = sum(r["note"] == "fast path" for r in method_rows["rules"])
        fast_all, rules_all = fast_all + fast, rules_all + len(method_rows["rules"])
        cells.append(f"{fast} of {len(method_rows['rules'])}")
        print("| " + " | ".join(cells) + " |")
    means = [f"{statistics.fmean(totals[m]):.3f}" if totals[m] else "-" for m in METHODS]
    own = f"{ways_all['own']} / {ways_all['peers']} / {ways_all['fallback']}"
    pages = str(sum(1 for r in rows if r["method"] == "learned"))
    print("| all pages | " + " | ".join([pages, *means, own, f"{fast_all} of {rules_all}"]) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for snapshots and results")
    parser.add_argument("--train-pages", type=int, default=10)
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument(
        "--unseen-from", default="l3s-gn1", help="the dataset the cross-site model learns from"
    )
    parser.add_argument(
        "--crawl-cache", type=Path, help="crawled pages of an earlier run, to crawl only once"
    )
    parser.add_argument(
        "--report-only", action="store_true", help="print the table from an earlier run's results"
    )
    args = parser.parse_args()
    if args.report_only:
        report(args.out / "evaluation" / "pages.csv")
        return 0
    if not args.datasets.is_dir():
        parser.error(f"no datasets at {args.datasets} (--datasets FOLDER)")
    data = args.out / "data"
    merged_hosts = hosts_in_several(args.datasets)
    for host, sites in sorted(merged_hosts.items()):
        count = merge(host, sites, data / "multi-era")
        eras = " + ".join(f"{s.parent.name} {len(list(s.glob('pages/*.html')))}" for s in sites)
        print(f"{host}: {count} pages ({eras})")
    helper = data / f"{args.unseen_from}-others"
    shutil.rmtree(helper, ignore_errors=True)
    helper.mkdir(parents=True)
    for site in sorted((args.datasets / args.unseen_from).iterdir()):
        if (site / "pages").is_dir() and site.name not in merged_hosts:
            (helper / site.name).symlink_to(site.resolve(), target_is_directory=True)
    command = [
        sys.executable, "-m", "spidercrawl.evaluate", str(data),
        "--methods", ",".join(METHODS), "--train-pages", str(args.train_pages),
        "--crawl-order", "--out", str(args.out / "evaluation"),
    ]  # fmt: skip
    if args.crawl_cache:
        command += ["--crawl-cache", str(args.crawl_cache)]
    print("$ " + " ".join(command[1:]))
    done = subprocess.run(command, cwd=REPO)
    if done.returncode:
        return done.returncode
    print(f"\nlearned from the first {args.train_pages} pages by ID; F1 on the others:")
    report(args.out / "evaluation" / "pages.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
