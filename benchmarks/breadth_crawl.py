"""Breadth mode against the default on a corpus crawl of many single-page sites.

    python benchmarks/breadth_crawl.py [../shared/datasets] [--out /tmp/breadth] [--models JSON]

Every site of the dev datasets becomes a site of one page (its first page with gold; a
host met twice is taken once), all served on 127.0.0.1, each on a port of its own. One
``scrapy crawl news -a sites=FILE`` per dataset and mode, as a corpus crawl runs:
``RENDER=always`` (every article rendered; never-seen sites by the rendered consensus)
and ``RENDER=learning`` (breadth mode: pages read from their raw HTML by consensus). No
site models (a fresh ``MODELS_DIR``). Prints per dataset and mode: sites, articles, F1
against the gold over all pages (a page without an article scores 0), pages rendered,
seconds (Scrapy's ``elapsed_time_seconds`` and the whole process) and articles/s.

``--models`` maps each dataset to a cross-site model folder that did not see it (the
evaluation's leave-one-dataset-out models: ``OUT/unseen-models/fold-N``); without it
the shipped cross-site model reads every dataset, which saw them all when it was trained:
the rendered mode's F1 is then too kind.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.evaluate.metrics import score_text  # noqa: E402
from spidercrawl.runner import PROJECT_ROOT, read_jsonl  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs, route_path  # noqa: E402

MODES = ("always", "learning")


def one_page_sites(root: Path, out: Path) -> dict[str, list[Path]]:
    """Per dataset, its sites cut to their first page with gold (copies under ``out``)."""
    seen: set[str] = set()
    found: dict[str, list[Path]] = {}
    for dataset in sorted(p for p in root.iterdir() if p.is_dir()):
        for site_dir in find_site_dirs(dataset):
            if site_dir.name in seen:
                continue
            snapshot = SiteSnapshot(site_dir)
            page_id = next(
                (i for i in snapshot.page_ids if (site_dir / "gold" / f"{i}.txt").exists()), None
            )
            if page_id is None:
                continue
            seen.add(site_dir.name)
            copy = out / "sites" / dataset.name / site_dir.name
            (copy / "pages").mkdir(parents=True, exist_ok=True)
            (copy / "gold").mkdir(exist_ok=True)
            shutil.copy(site_dir / "pages" / f"{page_id}.html", copy / "pages" / f"{page_id}.html")
            shutil.copy(site_dir / "gold" / f"{page_id}.txt", copy / "gold" / f"{page_id}.txt")
            line = next(
                row
                for row in (site_dir / "index.tsv").read_text("utf-8").splitlines()
                if row.split("\t")[0] == page_id
            )
            (copy / "index.tsv").write_text(line + "\n", "utf-8")
            found.setdefault(dataset.name, []).append(copy)
    return found


def crawl(sites: list[Path], mode: str, out: Path, cross_site: str | None) -> dict:
    """One multi-site crawl of ``sites`` in ``mode``: its F1 per page, counts and times."""
    work = out / mode
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with ExitStack() as stack:
        lines, snapshots = [], {}
        for site in sites:
            server = stack.enter_context(serving(site))
            lines.append(f"{site.name} {server.base_url}")
            snapshots[site.name] = SiteSnapshot(site)
        (work / "sites.txt").write_text("\n".join(lines) + "\n", "utf-8")
        command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(work / "a.jsonl")]
        command += ["-a", f"sites={work / 'sites.txt'}"]
        settings = {
            "RENDER": mode,
            "MODELS_DIR": work / "models",
            "STATE_DIR": work / "state",
            "JSONFEED_PATH": work / "feeds" / "%(site)s.json",
            "AUTOTHROTTLE_ENABLED": "False",
            "LOG_LEVEL": "INFO",
        }
        if cross_site:
            settings["CROSS_SITE_MODEL_DIR"] = cross_site
        for name, value in settings.items():
            command += ["-s", f"{name}={value}"]
        started = time.monotonic()
        proc = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
        seconds = time.monotonic() - started
    items = read_jsonl(work / "a.jsonl") if (work / "a.jsonl").exists() else []
    by_page: dict[tuple[str, str], str] = {}
    for item in items:
        snapshot = snapshots.get(item.get("site") or "")
        if snapshot is None:
            continue
        parts = urlsplit(item.get("url") or "")
        path = route_path(parts.path) + (f"?{parts.query}" if parts.query else "")
        page_id = snapshot.routes.get(path)
        if page_id:
            by_page[(snapshot.host, page_id)] = item["text"]
    scores = []
    for host, snapshot in snapshots.items():
        for page_id in snapshot.page_ids:
            gold = (snapshot.root / "gold" / f"{page_id}.txt").read_text("utf-8")
            text = by_page.get((host, page_id), "")
            scores.append(score_text(text, gold).f1 if text else 0.0)
    elapsed = re.search(r"'elapsed_time_seconds': ([\d.]+)", proc.stderr)
    rendered = re.search(r"'spidercrawl/pages/rendered': (\d+)", proc.stderr)
    return {
        "returncode": proc.returncode,
        "sites": len(sites),
        "articles": len(by_page),
        "f1": statistics.mean(scores) if scores else 0.0,
        "rendered": int(rendered.group(1)) if rendered else 0,
        "elapsed": float(elapsed.group(1)) if elapsed else seconds,
        "process": seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=Path("/tmp/breadth"))
    parser.add_argument("--models", type=json.loads, default={}, help="dataset -> model dir")
    args = parser.parse_args()
    shutil.rmtree(args.out / "sites", ignore_errors=True)
    datasets = one_page_sites(args.root, args.out)
    print("| dataset | mode | sites | articles | F1 | rendered | s (Scrapy) | s (process) "
          "| articles/s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    totals: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for dataset, sites in datasets.items():
        for mode in MODES:
            row = crawl(sites, mode, args.out / dataset, args.models.get(dataset))
            totals[mode].append(row)
            print(
                f"| {dataset} | {mode} | {row['sites']} | {row['articles']} | {row['f1']:.3f} "
                f"| {row['rendered']} | {row['elapsed']:.0f} | {row['process']:.0f} "
                f"| {row['articles'] / row['elapsed']:.2f} |",
                flush=True,
            )
    for mode, rows in totals.items():
        sites = sum(r["sites"] for r in rows)
        f1 = sum(r["f1"] * r["sites"] for r in rows) / max(sites, 1)
        elapsed = sum(r["elapsed"] for r in rows)
        articles = sum(r["articles"] for r in rows)
        print(
            f"| all | {mode} | {sites} | {articles} | {f1:.3f} | "
            f"{sum(r['rendered'] for r in rows)} | {elapsed:.0f} | "
            f"{sum(r['process'] for r in rows):.0f} | {articles / elapsed:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
