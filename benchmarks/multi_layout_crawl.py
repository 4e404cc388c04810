"""A site of four layouts, crawled as a schedule would: learned, crawled again, per layout.

    python benchmarks/multi_layout_crawl.py [--out /tmp/multi-layout] [--pages 60]
    python benchmarks/multi_layout_crawl.py --site SNAPSHOT --max-depth 0 --out OUT

Builds the demo of four layouts mixed in crawl order (``tools/build_layouts_site.py``:
the current template, an archive in the template before a redesign, live blogs and
galleries; 60 pages), serves it on 127.0.0.1 and runs ``scrapy crawl news`` four times:

1. ``learn``: no model yet; the site is learned from its first pages, and pages of no
   known layout are collected into new layouts (incremental delivery on).
2. ``again``: the same pages with the saved model (incremental delivery off, so that every
   page becomes an article): how many took the fast path, per layout, and F1 against the
   gold text.
3. ``rendered``: the same, with ``FAST_PATH_ENABLED=False`` (every page in Chromium).
4. ``unchanged``: incremental delivery on, against the state of crawl 1: an unchanged
   site must deliver no article.

With ``--site SNAPSHOT`` an existing site snapshot is crawled instead (rows per dataset
of origin for the multi-era sites of ``multi_era.py``). Prints per layout: pages, pages by
the fast path in crawl 2, F1 of crawls 1 and 2; then relearns (template drift), new
layouts, the model's layouts, articles/s of crawls 2 and 3 (articles over Scrapy's
``elapsed_time_seconds``) and what crawl 4 delivered.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from build_layouts_site import build  # noqa: E402

from spidercrawl.evaluate.metrics import score_text  # noqa: E402
from spidercrawl.runner import PROJECT_ROOT, crawl_command, read_jsonl  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot  # noqa: E402


def crawl(
    host: str, base_url: str, out: Path, work: Path, spider_args: dict, **settings: object
) -> dict:
    """One ``scrapy crawl news``; its items, log and Scrapy's elapsed time."""
    command = crawl_command(
        host,
        base_url,
        out,
        spider_args=spider_args,
        settings={
            "LOG_LEVEL": "INFO",
            "MODELS_DIR": str(work / "models"),
            "STATE_DIR": str(work / "state"),
            "JSONFEED_PATH": str(work / "feeds" / "%(site)s.json"),
            **settings,
        },
    )
    log_path = out.with_suffix(".log")
    with log_path.open("w") as log:
        done = subprocess.run(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT)
    log_text = log_path.read_text()
    elapsed = re.search(r"'elapsed_time_seconds': ([\d.]+)", log_text)
    return {
        "items": read_jsonl(out) if out.exists() else [],
        "log": log_text,
        "seconds": float(elapsed.group(1)) if elapsed else float("nan"),
        "returncode": done.returncode,
    }


def kinds(site: Path) -> dict[str, str]:
    """Page ID -> its layout (``layouts.json`` of the built demo), or the dataset it came
    from (``sources.tsv`` of a multi-era site), or one kind for all."""
    if (site / "layouts.json").exists():
        return json.loads((site / "layouts.json").read_text("utf-8"))
    ids = [line.split("\t")[0] for line in (site / "index.tsv").read_text().splitlines()]
    kind = dict.fromkeys(ids, "pages")
    if (site / "sources.tsv").exists():
        for line in (site / "sources.tsv").read_text("utf-8").splitlines():
            page_id, source = line.split("\t")[:2]
            kind[page_id] = source.split("/")[0]
    return kind


def page_ids(site: Path) -> dict[str, str]:
    """Local path (with query) -> page ID, as the server routes them: a page whose URL
    another page of the snapshot shares (one article in two datasets) is served at
    ``/pages/ID.html``, so both are crawled and scored."""
    return SiteSnapshot(site).routes


def page_of(url: str, ids: dict[str, str]) -> str | None:
    """The page ID of a crawled article's URL."""
    parts = urlsplit(url)
    return ids.get(parts.path + (f"?{parts.query}" if parts.query else ""))


def f1_by_page(items: list[dict], site: Path, ids: dict[str, str]) -> dict[str, float]:
    scores = {}
    for item in items:
        page_id = page_of(item["url"], ids)
        if page_id:
            gold = (site / "gold" / f"{page_id}.txt").read_text("utf-8")
            scores[page_id] = score_text(item.get("text") or "", gold, with_difflib=False).f1
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/multi-layout"))
    parser.add_argument("--pages", type=int, default=60, help="pages of the site (60)")
    parser.add_argument(
        "--site", type=Path, help="crawl this site snapshot (HOST/ with gold/) instead"
    )
    parser.add_argument(
        "--max-depth",
        type=int,
        help="the spider's max_depth; 0: the pages the snapshot's sitemap lists, no links "
        "followed (a dataset's pages link to hundreds of pages the snapshot lacks, whose "
        "404s, slowed by AutoThrottle, took 3 of a crawl's minutes)",
    )
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    site = args.site.resolve() if args.site else build(args.out / "site", args.pages)
    host = site.name
    layouts = kinds(site)
    ids = page_ids(site)
    runs = {}
    spider_args = {} if args.max_depth is None else {"max_depth": args.max_depth}
    with serving(site) as server:
        for name, settings in (
            ("learn", {}),
            ("again", {"INCREMENTAL_ENABLED": 0}),
            ("rendered", {"INCREMENTAL_ENABLED": 0, "FAST_PATH_ENABLED": False}),
            ("unchanged", {}),
        ):
            runs[name] = crawl(
                host, server.base_url, args.out / f"{name}.jsonl", args.out, spider_args,
                **settings,
            )  # fmt: skip
            run = runs[name]
            print(f"crawl {name}: {len(run['items'])} articles in {run['seconds']:.1f} s "
                  f"(exit {run['returncode']})", flush=True)  # fmt: skip

    f1 = {name: f1_by_page(runs[name]["items"], site, ids) for name in ("learn", "again")}
    fast = {
        page_of(item["url"], ids) for item in runs["again"]["items"] if item["method"] == "rules"
    }
    print("\n| layout | pages | crawl 2: fast path | F1 crawl 1 | F1 crawl 2 |")
    print("|---|---|---|---|---|")
    for layout in [*dict.fromkeys(layouts.values()), "all"]:
        pages = [p for p, kind in layouts.items() if layout in (kind, "all")]
        cells = [layout, str(len(pages)), f"{sum(p in fast for p in pages)} of {len(pages)}"]
        for name in ("learn", "again"):
            scores = [f1[name].get(p, 0.0) for p in pages]  # no article counts as 0
            cells.append(f"{statistics.fmean(scores):.3f}")
        print("| " + " | ".join(cells) + " |")

    logs = "".join(run["log"] for run in runs.values())
    model = json.loads((args.out / "models" / host / "model.json").read_text("utf-8"))
    model_layouts = model.get("layouts") or [model["training"]]
    print(f"\nrelearns (template drift): {logs.count('no longer fits the site')}")
    print(f"new layouts learned from pages no layout fitted: "
          f"{logs.count('learned a new layout')}")  # fmt: skip
    decisions = [layout.get("render") for layout in model.get("layouts") or [model["rules"]]]
    print(f"the model's layouts: {len(model_layouts)}, training pages "
          f"{[layout['pages'] for layout in model_layouts]}, "
          f"render decisions {decisions}")  # fmt: skip
    again, rendered = runs["again"], runs["rendered"]
    fast_rate = len(again["items"]) / again["seconds"]
    render_rate = len(rendered["items"]) / rendered["seconds"]
    print(f"articles/s: crawl 2 {fast_rate:.1f}, rendered {render_rate:.1f} "
          f"({fast_rate / render_rate:.1f} times)")  # fmt: skip
    verdicts = dict(
        re.findall(
            r"'spidercrawl/incremental/(new|changed|unchanged|duplicate)': (\d+)",
            runs["unchanged"]["log"],
        )
    )
    print(f"crawl 4 (unchanged site): {len(runs['unchanged']['items'])} articles delivered; "
          f"verdicts {verdicts}")  # fmt: skip
    return 0 if all(run["returncode"] == 0 for run in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
