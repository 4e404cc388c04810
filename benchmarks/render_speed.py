"""Render speed and memory of a real crawl: pages/s, peak memory, blocks per page.

    python benchmarks/render_speed.py                       # 30 demo pages, 1 and 2 pages at once
    python benchmarks/render_speed.py --pages 510 --concurrency 2
    python benchmarks/render_speed.py --pages 2000 --concurrency 2 --no-throttle \
        --pages-per-context 0 200                           # the browser's memory over a crawl

The demo site's pages are repeated (under /copyK/...) to reach ``--pages``, served on
127.0.0.1, and crawled with ``scrapy crawl news`` with the project's default settings
(``--no-throttle`` turns AutoThrottle off). Memory is the proportional set size (PSS, so
pages shared between Chromium's processes count once) of Scrapy plus every process it
started, sampled every 0.25 s, and of Playwright's driver (the ``node`` process) alone.
``--pages-per-context`` compares browser contexts made anew every N pages (0: one context
for the whole crawl); the memory is printed at every tenth of the crawl.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT, crawl_command, read_jsonl  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot  # noqa: E402

HOST = "harbourtimes.example"


def repeated_demo(root: Path, pages: int) -> Path:
    """A snapshot holding the demo pages repeated until there are ``pages`` of them."""
    demo = SiteSnapshot(DEMO_SITE)
    site = root / HOST
    (site / "pages").mkdir(parents=True)
    shutil.copytree(DEMO_SITE / "files", site / "files")
    index = []
    for n in range(pages):
        copy, page_id = divmod(n, len(demo.page_ids))
        source = demo.page_ids[page_id]
        new_id = f"{copy:03d}-{source}"
        shutil.copy(DEMO_SITE / "pages" / f"{source}.html", site / "pages" / f"{new_id}.html")
        index.append(f"{new_id}\thttps://{HOST}/copy{copy}{demo.path_of[source]}")
    (site / "index.tsv").write_text("\n".join(index) + "\n")
    return site


def process_tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def pss_mib(pids: list[int]) -> float:
    total_kib = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        match = re.search(r"^Pss:\s+(\d+) kB", text, re.MULTILINE)
        total_kib += int(match.group(1)) if match else 0
    return total_kib / 1024


def driver_pids(pids: list[int]) -> list[int]:
    """Playwright's driver among ``pids``: the node process (its thread is named
    ``node-MainThread``)."""
    found = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/comm").read_text().startswith("node"):
                found.append(pid)
        except OSError:
            continue
    return found


def crawl(
    base_url: str, pages: int, concurrency: int, throttle: bool, out: Path, per_context: int = 200
) -> dict:
    command = crawl_command(
        HOST,
        base_url,
        out,
        spider_args={"max_pages": pages},
        pages=True,
        settings={
            "RENDER_CONCURRENCY": concurrency,
            "LOG_LEVEL": "INFO",
            "AUTOTHROTTLE_ENABLED": int(throttle),
            "RENDER_PAGES_PER_CONTEXT": per_context,
        },
    )
    started = time.monotonic()
    log_path = out.with_suffix(".log")
    with log_path.open("w") as log:
        proc = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT)
        samples = []
        while proc.poll() is None:
            tree = process_tree(proc.pid)
            driver = pss_mib(driver_pids(tree))
            samples.append((time.monotonic() - started, pss_mib(tree), driver))
            time.sleep(0.25)
    wall = time.monotonic() - started
    log_text = log_path.read_text()
    elapsed = re.search(r"'elapsed_time_seconds': ([\d.]+)", log_text)
    items = read_jsonl(out)
    blocks = [len(item["texts"]) for item in items]
    stamps = sorted(item["crawled_at"] for item in items)
    return {
        "pages": len(items),
        "wall_s": wall,
        "crawl_s": float(elapsed.group(1)) if elapsed else wall,
        "first_to_last_item_s": _seconds_between(stamps[0], stamps[-1]) if stamps else 0.0,
        "peak_pss_mib": max((m for _, m, _ in samples), default=0.0),
        "pss_timeline": samples,
        "median_blocks": statistics.median(blocks) if blocks else 0,
        "returncode": proc.returncode,
    }


def _seconds_between(first: str, last: str) -> float:
    from datetime import datetime

    return (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-throttle", action="store_true", help="turn AutoThrottle off")
    parser.add_argument("--pages-per-context", type=int, nargs="+", default=[200])
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        site = repeated_demo(Path(tmp), args.pages)
        throttle = "off" if args.no_throttle else "on"
        print(f"{args.pages} pages of the demo site; AutoThrottle {throttle}")
        header = (
            f"{'pages at once':>13} {'pages':>6} {'crawl s':>8} {'pages/s':>8} "
            f"{'steady p/s':>10} {'peak MiB':>9} {'median blocks':>14}"
        )
        print(header)
        runs = [(c, p) for c in args.concurrency for p in args.pages_per_context]
        for concurrency, per_context in runs:
            print(f"  pages per browser context: {per_context or 'all'}")
            with serving(site) as server:
                result = crawl(
                    server.base_url, args.pages, concurrency, not args.no_throttle,
                    Path(tmp) / f"c{concurrency}-{per_context}.jsonl", per_context,
                )  # fmt: skip
            steady = (
                result["pages"] / result["first_to_last_item_s"]
                if result["first_to_last_item_s"]
                else 0
            )
            print(
                f"{concurrency:>13} {result['pages']:>6} {result['crawl_s']:>8.1f} "
                f"{result['pages'] / result['crawl_s']:>8.2f} {steady:>10.2f} "
                f"{result['peak_pss_mib']:>9.0f} {result['median_blocks']:>14}"
            )
            timeline = result["pss_timeline"]
            if len(timeline) > 20:
                tenths = [timeline[len(timeline) * q // 10 - 1] for q in range(1, 11)]
                print("    every tenth of the crawl: all processes / the driver (PSS MiB)")
                print("    " + ", ".join(f"{m:.0f}/{d:.0f} @ {t:.0f}s" for t, m, d in tenths))
            if result["returncode"] != 0 or result["pages"] < args.pages:
                print(f"    warning: exit {result['returncode']}, {result['pages']} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
