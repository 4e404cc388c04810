"""A long multi-site rendered crawl: does it end by itself with every page, at a flat pace
and flat memory?

    python benchmarks/soak_crawl.py                              # dragnet + l3s-gn1, once
    python benchmarks/soak_crawl.py --datasets dragnet l3s-gn1 cleanportaleval \\
        gtrends2017-dev fundus-dev --copies 2                    # over 2,000 pages

Every site snapshot of the named datasets is served on 127.0.0.1 (``--copies N``: each
under N site names, so one crawl renders every page N times) and all of them are crawled
in ONE ``scrapy crawl news -a sites=FILE -a render=all -a max_depth=0`` run with the
default settings, as the evaluation crawls sites. Every 200 page items it prints the
pace of those 200 (pages/s) and the memory (PSS) of the crawl process, Chromium and
Playwright's driver; at the end, the pages expected and delivered, the failures and
raw-HTML fallbacks, and whether the crawl ended by itself.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from render_speed import driver_pids, process_tree, pss_mib  # noqa: E402

from spidercrawl.runner import PROJECT_ROOT  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs  # noqa: E402

DATASETS = REPO.parent / "shared" / "datasets"
EVERY = 200


def count_lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for _ in handle)
    except OSError:
        return 0


def memory(pid: int) -> tuple[float, float, float]:
    """PSS in MiB of the crawl process, Chromium (every chromium process) and the driver."""
    tree = process_tree(pid)
    driver = driver_pids(tree)
    chromium = []
    for p in tree:
        try:
            if "chrom" in Path(f"/proc/{p}/comm").read_text():
                chromium.append(p)
        except OSError:
            continue
    return pss_mib([pid]), pss_mib(chromium), pss_mib(driver)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["dragnet", "l3s-gn1"])
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=7200)
    parser.add_argument("settings", nargs="*", help="NAME=VALUE crawl settings")
    args = parser.parse_args()
    snapshots = [SiteSnapshot(p) for d in args.datasets for p in find_site_dirs(DATASETS / d)]
    with tempfile.TemporaryDirectory() as folder, ExitStack() as servers:
        lines, expected, hosts = [], 0, set()
        for copy in range(args.copies):
            for snapshot in snapshots:
                name = snapshot.host if copy == 0 else f"copy{copy}.{snapshot.host}"
                while name in hosts:  # the same site in two datasets: both, named apart
                    name = f"alt.{name}"
                hosts.add(name)
                server = servers.enter_context(serving(snapshot.root))
                lines.append(f"{name} {server.base_url}")
                expected += len(snapshot.page_ids)
        sites_file = Path(folder) / "sites.txt"
        sites_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = Path(folder) / "items.jsonl"
        log_path = Path(folder) / "crawl.log"
        command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(out),
                   "-a", f"sites={sites_file}", "-a", "render=all", "-a", "max_depth=0",
                   "-s", "LEARN_ENABLED=False", "-s", f"STATE_DIR={Path(folder) / 'state'}",
                   "-s", "LOG_LEVEL=INFO"]  # fmt: skip
        for setting in args.settings:
            command += ["-s", setting]
        print(f"{len(lines)} sites, {expected} pages, one crawl; settings: {args.settings}")
        print(f"{'items':>6} {'pages/s':>8} {'crawl MiB':>10} {'Chromium MiB':>13} "
              f"{'driver MiB':>11}")  # fmt: skip
        started = last_time = time.monotonic()
        last_items = 0
        with log_path.open("w") as log:
            proc = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=log)
            while proc.poll() is None and time.monotonic() - started < args.timeout:
                time.sleep(2)
                items = count_lines(out)
                if items >= last_items + EVERY:
                    now = time.monotonic()
                    crawl_mib, chromium_mib, driver_mib = memory(proc.pid)
                    print(f"{items:6d} {(items - last_items) / (now - last_time):8.2f} "
                          f"{crawl_mib:10.0f} {chromium_mib:13.0f} {driver_mib:11.0f}",
                          flush=True)  # fmt: skip
                    last_items, last_time = items, now
            ended_itself = proc.poll() is not None
            if not ended_itself:
                proc.kill()
                proc.wait()
        seconds = time.monotonic() - started
        text = log_path.read_text(errors="replace")
        items = count_lines(out)

        def stat(name: str) -> int:
            match = re.search(rf"'{re.escape(name)}': (\d+),", text)
            return int(match.group(1)) if match else 0

        print(
            f"ended by itself: {ended_itself}; {items} page items of {expected} pages in "
            f"{seconds:.0f} s ({items / seconds:.2f} pages/s); failed "
            f"{stat('spidercrawl/pages/failed')}, from raw HTML "
            f"{stat('spidercrawl/pages/raw_fallback')}, render timed out "
            f"{stat('spidercrawl/render/timed_out')}, browser contexts "
            f"{stat('playwright/context_count')}"
        )
        for line in re.findall(r".*(?:Still rendering|No render has ended|Traceback).*", text)[:10]:
            print("  " + line[:240])


if __name__ == "__main__":
    main()
