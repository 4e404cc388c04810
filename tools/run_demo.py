"""Run the main job on the bundled demo site: serve it locally, crawl it, write articles.

    python tools/run_demo.py [--out output/demo-articles.jsonl] [--max-pages N]

This is what the README's set-up command ends with. It serves ``demo/harbourtimes.example``
on a free port of 127.0.0.1, runs ``scrapy crawl news`` against it exactly as a user would
crawl a live site (rendering, learning the site's template, extracting), and prints where
the articles went, how they were extracted, and the start of one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT, crawl_command, read_jsonl  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "output" / "demo-articles.jsonl")
    parser.add_argument("--max-pages", type=int, default=0)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)

    with serving(DEMO_SITE) as server:
        print(f"Serving the demo site at {server.base_url}", flush=True)
        command = crawl_command(
            "harbourtimes.example",
            server.base_url,
            args.out,
            spider_args={"max_pages": args.max_pages},
        )
        started = time.monotonic()
        code = subprocess.call(command, cwd=PROJECT_ROOT)
        elapsed = time.monotonic() - started
    if code != 0:
        print(f"scrapy crawl failed with exit code {code}", file=sys.stderr)
        return code
    items = read_jsonl(args.out)
    methods = Counter(item["method"] for item in items)
    print(f"\n{len(items)} articles written to {args.out} in {elapsed:.1f} s ({dict(methods)})")
    print(f"JSON Feed: {PROJECT_ROOT / 'output' / 'harbourtimes.example' / 'feed.json'}")
    if items:
        sample = max(items, key=lambda item: item["word_count"])
        print(f"\nSample ({sample['url']}):\n{sample['text'][:400]}...")
    else:
        print(
            "No new or changed articles since the last run (incremental crawl; the memory is "
            "in state/harbourtimes.example.json). Add -s INCREMENTAL_ENABLED=False to the "
            "crawl, or delete that file, to get every article again."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
