"""The folder of dev sets the rendered never-seen path is measured on: the five site sets
and ``wcxb-s``, a draw of wcxb-dev's hosts that is the same for every run and session.

    python benchmarks/never_seen_sets.py ../shared/datasets WCXB_DEV OUT [--hosts 150]

``WCXB_DEV`` is the unpacked ``wcxb-dev`` folder (``HOST/pages``, ``HOST/gold``). ``OUT``
gets a link to each site set of ``../shared/datasets`` (``trafilatura-eval-dev`` aside: its
gold is snippets) and ``OUT/wcxb-s``, links to ``random.Random(7).sample`` of wcxb-dev's
sorted hosts, so that a figure on ``wcxb-s`` compares with every other one measured on it.
Then, for instance:

    python -m spidercrawl.evaluate OUT --methods unseen,trafilatura \\
        --models models/_cross_site --crawl-cache CACHE --jobs 2
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

SEED = 7
SNIPPET_SETS = frozenset({"trafilatura-eval-dev"})


def wcxb_hosts(wcxb_dev: Path, count: int) -> list[str]:
    """The drawn hosts: ``count`` of wcxb-dev's host folders (those with pages), by the
    fixed seed over their sorted names."""
    hosts = sorted(p.name for p in wcxb_dev.iterdir() if (p / "pages").is_dir())
    if count >= len(hosts):
        return hosts
    return sorted(random.Random(SEED).sample(hosts, count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path)
    parser.add_argument("wcxb_dev", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--hosts", type=int, default=150)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for dataset in sorted(args.datasets.iterdir()):
        link = args.out / dataset.name
        if dataset.is_dir() and dataset.name not in SNIPPET_SETS and not link.exists():
            link.symlink_to(dataset.resolve())
    sample = args.out / "wcxb-s"
    sample.mkdir(exist_ok=True)
    hosts = wcxb_hosts(args.wcxb_dev, args.hosts)
    for host in hosts:
        link = sample / host
        if not link.exists():
            link.symlink_to((args.wcxb_dev / host).resolve())
    print(f"{len(hosts)} wcxb-dev hosts in {sample}; site sets linked in {args.out}")


if __name__ == "__main__":
    main()
