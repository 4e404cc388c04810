"""Fast path against rendering on one local site: pages/s of each, and their ratio.

    python benchmarks/fast_path_speed.py                   # 300 pages, AutoThrottle on
    python benchmarks/fast_path_speed.py --pages 600 --no-throttle

The demo site's pages are repeated to reach ``--pages`` (see ``render_speed.py``) and served
on 127.0.0.1. A first crawl of 10 pages learns the site's model. Then the same pages are
crawled twice with that model, as ``scrapy crawl news`` would on a schedule: once with
``FAST_PATH_ENABLED=False`` (every page rendered in Chromium, the classifier extracts)
and once with the fast path (plain HTTP and the extraction rules, rendering only where the
rules' check fails). pages/s is articles over Scrapy's ``elapsed_time_seconds``, so
discovery (robots.txt, sitemap) counts in both; peak memory is the PSS of the whole
process tree.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from render_speed import HOST, process_tree, pss_mib, repeated_demo  # noqa: E402

from spidercrawl.runner import PROJECT_ROOT, crawl_command, read_jsonl  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402


def crawl(base_url: str, out: Path, models: Path, pages: int, **settings: object) -> dict:
    command = crawl_command(
        HOST,
        base_url,
        out,
        spider_args={"max_pages": pages},
        settings={
            "LOG_LEVEL": "INFO",
            "MODELS_DIR": str(models),
            # The repeated pages are copies: the incremental pipeline would drop them.
            "INCREMENTAL_ENABLED": 0,
            "JSONFEED_PATH": str(models.parent / "feeds" / "%(site)s.json"),
            **settings,
        },
    )
    started = time.monotonic()
    log_path = out.with_suffix(".log")
    peak = 0.0
    with log_path.open("w") as log:
        proc = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            peak = max(peak, pss_mib(process_tree(proc.pid)))
            time.sleep(0.25)
    log_text = log_path.read_text()
    elapsed = re.search(r"'elapsed_time_seconds': ([\d.]+)", log_text)
    items = read_jsonl(out) if out.exists() else []
    return {
        "articles": len(items),
        "seconds": float(elapsed.group(1)) if elapsed else time.monotonic() - started,
        "peak_mib": peak,
        "methods": collections.Counter(item["method"] for item in items),
        "returncode": proc.returncode,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--no-throttle", action="store_true", help="turn AutoThrottle off")
    args = parser.parse_args()
    throttle = {"AUTOTHROTTLE_ENABLED": 0} if args.no_throttle else {}

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        site = repeated_demo(root, args.pages)
        models = root / "models"
        with serving(site) as server:
            learn = crawl(server.base_url, root / "learn.jsonl", models, 10, **throttle)
            if learn["returncode"] or not (models / HOST / "model.json").exists():
                print(f"learning crawl failed: see {root / 'learn.log'}")
                return 1
            runs = {
                "render": crawl(
                    server.base_url, root / "render.jsonl", models, args.pages,
                    FAST_PATH_ENABLED=0, **throttle,
                ),
                "fast path": crawl(
                    server.base_url, root / "fast.jsonl", models, args.pages, **throttle
                ),
            }  # fmt: skip
    print(
        f"{args.pages} pages of the demo site, model learned from 10; "
        f"AutoThrottle {'off' if args.no_throttle else 'on'}"
    )
    print(f"{'path':>10} {'articles':>9} {'crawl s':>8} {'pages/s':>8} {'peak MiB':>9}  methods")
    for name, run in runs.items():
        methods = ", ".join(f"{m} {n}" for m, n in run["methods"].most_common())
        print(
            f"{name:>10} {run['articles']:>9} {run['seconds']:>8.1f} "
            f"{run['articles'] / run['seconds']:>8.1f} {run['peak_mib']:>9.0f}  {methods}"
        )
    render, fast = runs["render"], runs["fast path"]
    ratio = (fast["articles"] / fast["seconds"]) / (render["articles"] / render["seconds"])
    print(f"fast path / render: {ratio:.1f}x pages/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
