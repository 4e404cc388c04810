"""Fast path against rendering on one local site: pages/s of each, and their ratio.

    python benchmarks/fast_path_speed.py                   # 300 pages, AutoThrottle on
    python benchmarks/fast_path_speed.py --pages 600 --no-throttle
    python benchmarks/fast_path_speed.py --profile fast.txt    # where the fast crawl's CPU goes
    python benchmarks/fast_path_speed.py --pages 10000 --fast-only   # memory every 1,000 pages

The demo site's pages are repeated to reach ``--pages`` (see ``render_speed.py``) and served
on 127.0.0.1. A first crawl of 10 pages learns the site's model. Then the same pages are
crawled twice with that model, as ``scrapy crawl news`` would on a schedule: once with
``FAST_PATH_ENABLED=False`` (every page rendered in Chromium, the classifier extracts)
and once with the fast path (plain HTTP and the extraction rules, rendering only where the
rules' check fails). pages/s is articles over Scrapy's ``elapsed_time_seconds``, so
discovery (robots.txt, sitemap) counts in both; "process s" is the whole ``scrapy crawl``
process, start-up (imports, Chromium) and shutdown included; peak memory is the PSS of the
whole process tree. ``--profile FILE`` samples the fast-path crawl with py-spy
(requirements-bench.txt; raw stacks kept in FILE) and prints its CPU time by part: our
middlewares and pipelines by function, Scrapy's engine, middlewares, HTTP client, scheduler
and feed export, and the event loop.
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

PROFILE_RATE = 250  # py-spy samples per second


def crawl(
    base_url: str,
    out: Path,
    models: Path,
    pages: int,
    profile: Path | None = None,
    **settings: object,
) -> dict:
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
    if profile is not None:
        # py-spy sits beside the interpreter in a virtualenv that is not activated.
        beside = Path(sys.executable).with_name("py-spy")
        py_spy = str(beside) if beside.exists() else "py-spy"
        record = ["record", "--rate", str(PROFILE_RATE), "--format", "raw", "--output"]
        command = [py_spy, *record, str(profile), "--", *command]
    started = time.monotonic()
    log_path = out.with_suffix(".log")
    peak = 0.0
    with log_path.open("w") as log:
        proc = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            peak = max(peak, pss_mib(process_tree(proc.pid)))
            time.sleep(0.25)
    process_seconds = time.monotonic() - started
    log_text = log_path.read_text()
    memory = re.findall(r"(\d+) pages in all; this process holds (\d+) MB", log_text)
    elapsed = re.search(r"'elapsed_time_seconds': ([\d.]+)", log_text)
    items = read_jsonl(out) if out.exists() else []
    return {
        "articles": len(items),
        "seconds": float(elapsed.group(1)) if elapsed else process_seconds,
        "process_seconds": process_seconds,
        "peak_mib": peak,
        "methods": collections.Counter(item["method"] for item in items),
        "returncode": proc.returncode,
        "memory": [(int(pages), int(mb)) for pages, mb in memory],
    }


# Where a sample of the crawl's reactor loop goes, first match wins: the file paths of its
# stack (innermost last) against these patterns. Our own frames are named by function.
SCRAPY_PARTS = (
    ("scrapy: feed export", ("scrapy/extensions/feedexport", "scrapy/exporters")),
    ("scrapy: scheduler", ("scrapy/core/scheduler", "scrapy/pqueues", "queuelib/")),
    ("scrapy+twisted: HTTP client", ("handlers/http11", "twisted/web/", "twisted/internet/tcp")),
    ("scrapy: built-in middlewares", ("downloadermiddlewares/", "spidermiddlewares/")),
    ("scrapy: engine, scraper, downloader", ("scrapy/core/",)),
    ("scrapy-playwright", ("scrapy_playwright/",)),
)
STARTUP = "start-up: imports and components, before the first request"
FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^:]*):\d+\)$")


def crawl_component(stack: list[str]) -> str:
    """The part of the crawl a py-spy sample belongs to (its stack, outermost first).

    Ours are named by our outermost function, except that the spider's callbacks, which
    run inside our spider middleware's generator, are named themselves.
    """
    frames = [match for frame in stack if (match := FRAME.match(frame))]
    if any(
        frame["function"] == "<module>" or "from_crawler" in frame["function"] for frame in frames
    ):
        return STARTUP
    ours = [frame for frame in frames if frame["file"].startswith("spidercrawl/")]
    spider = [frame for frame in ours if frame["file"].startswith("spidercrawl/spiders/")]
    if ours:
        frame = (spider or ours)[0]
        return f"ours: {frame['function']} ({frame['file'].removeprefix('spidercrawl/')})"
    files = ";".join(frame["file"] for frame in frames)
    for name, patterns in SCRAPY_PARTS:
        if any(pattern in files for pattern in patterns):
            return name
    return "event loop (asyncio, Twisted)"


def print_profile(path: Path, pages: int, top: int = 14) -> None:
    """CPU time of the crawl process by part, from py-spy's raw (collapsed) samples."""
    parts: collections.Counter[str] = collections.Counter()
    before_loop = 0
    for line in path.read_text().splitlines():
        stack_text, _, count = line.rpartition(" ")
        stack = stack_text.split(";")
        loop = [i for i, frame in enumerate(stack) if ".run_forever (" in frame]
        if not loop:
            before_loop += int(count)
            continue
        # Frames outside the loop (our crawl command wraps everything) say nothing.
        parts[crawl_component(stack[loop[-1] :])] += int(count)
    seconds = {name: count / PROFILE_RATE for name, count in parts.items()}
    print(
        f"fast-path crawl, CPU by py-spy ({PROFILE_RATE} samples/s): "
        f"{before_loop / PROFILE_RATE:.2f} s before the reactor, "
        f"{sum(seconds.values()):.2f} s in it"
    )
    print(f"{'s':>7} {'ms/page':>8}  part")
    for name, value in sorted(seconds.items(), key=lambda item: -item[1])[:top]:
        per_page = "" if name == STARTUP else f"{1000 * value / pages:.2f}"
        print(f"{value:7.2f} {per_page:>8}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--no-throttle", action="store_true", help="turn AutoThrottle off")
    parser.add_argument(
        "--profile", type=Path, metavar="FILE", help="profile the fast-path crawl into FILE"
    )
    parser.add_argument(
        "--fast-only",
        action="store_true",
        help="crawl by the fast path only (no rendered crawl) and print its memory log",
    )
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
            runs = {}
            if not args.fast_only:
                runs["render"] = crawl(
                    server.base_url, root / "render.jsonl", models, args.pages,
                    FAST_PATH_ENABLED=0, **throttle,
                )  # fmt: skip
            runs["fast path"] = crawl(
                server.base_url, root / "fast.jsonl", models, args.pages,
                profile=args.profile.resolve() if args.profile else None, **throttle,
            )  # fmt: skip
            if args.profile:
                print_profile(args.profile, args.pages)
    print(
        f"{args.pages} pages of the demo site, model learned from 10; "
        f"AutoThrottle {'off' if args.no_throttle else 'on'}"
    )
    print(
        f"{'path':>10} {'articles':>9} {'crawl s':>8} {'pages/s':>8} "
        f"{'process s':>10} {'peak MiB':>9}  methods"
    )
    for name, run in runs.items():
        methods = ", ".join(f"{m} {n}" for m, n in run["methods"].most_common())
        print(
            f"{name:>10} {run['articles']:>9} {run['seconds']:>8.1f} "
            f"{run['articles'] / run['seconds']:>8.1f} {run['process_seconds']:>10.1f} "
            f"{run['peak_mib']:>9.0f}  {methods}"
        )
    fast = runs["fast path"]
    if fast["memory"]:
        curve = ", ".join(f"{pages}: {mb}" for pages, mb in fast["memory"])
        print(f"fast path memory, MB by pages crawled (browser apart): {curve}")
    if "render" not in runs:
        return 0
    render = runs["render"]
    ratio = (fast["articles"] / fast["seconds"]) / (render["articles"] / render["seconds"])
    print(f"fast path / render: {ratio:.1f}x pages/s")
    whole = render["process_seconds"] / fast["process_seconds"]
    print(f"fast path / render, whole processes (start-up and shutdown included): {whole:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
