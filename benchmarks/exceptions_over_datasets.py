"""Exceptions raised over every page of the dev datasets, by ``extract_html`` and by the
crawl's plain-fetch metadata reader (``static_capture``), with their counts and the
pages they came from.

    python benchmarks/exceptions_over_datasets.py [--datasets ../shared/datasets]

An exception from either is a page a user loses (the API) or a page the crawl reads
with less than it could; the target is 0.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from spidercrawl import extract_html  # noqa: E402
from spidercrawl.capture.static import static_capture  # noqa: E402
from spidercrawl.document.html import decode_html  # noqa: E402
from spidercrawl.snapshot import find_site_dirs  # noqa: E402

DEFAULT_DATASETS = REPO.parent / "shared" / "datasets"


def dataset_pages(root: Path) -> Iterator[tuple[str, str, bytes]]:
    """(dataset, page name, raw bytes) of every site snapshot page and every page of a
    snippet dataset (``evaldata.json`` with ``html/FILE.gz``)."""
    for dataset in sorted(p for p in root.iterdir() if p.is_dir()):
        evaldata = dataset / "evaldata.json"
        if evaldata.exists():
            for url, entry in sorted(json.loads(evaldata.read_text("utf-8")).items()):
                path = dataset / "html" / str(entry.get("file", ""))
                if path.is_file():
                    yield dataset.name, url, gzip.decompress(path.read_bytes())
            continue
        for site in find_site_dirs(dataset):
            for page in sorted((site / "pages").glob("*.html")):
                yield dataset.name, f"{site.name}/{page.name}", page.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    args = parser.parse_args()
    pages: Counter[str] = Counter()
    errors: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], str] = {}
    started = time.perf_counter()
    for dataset, name, raw in dataset_pages(args.datasets):
        pages[dataset] += 1
        url = name if name.startswith("http") else f"https://{name}"
        for reader in ("extract_html", "static_capture"):
            try:
                if reader == "extract_html":
                    extract_html(raw, url=url)
                else:
                    static_capture(decode_html(raw)[0], url)
            except Exception as error:  # counted, with where it came from
                key = (reader, f"{type(error).__name__}: {str(error)[:80]}")
                errors[key] += 1
                examples.setdefault(key, f"{dataset} {name}\n{traceback.format_exc(limit=-3)}")
    seconds = time.perf_counter() - started
    total = sum(pages.values())
    print(f"{total} pages in {seconds:.0f} s: " + ", ".join(f"{d} {n}" for d, n in pages.items()))
    print(f"exceptions: {sum(errors.values())}")
    for (reader, error), count in errors.most_common():
        print(f"  {count:5d}  {reader}  {error}\n         first: {examples[(reader, error)]}")


if __name__ == "__main__":
    main()
