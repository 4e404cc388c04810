"""Milliseconds a page of the wall recogniser (``document/walls.py``) on the HTML records
of WARC files, as the archive readers give them (a 200 without headers: the case of
nearly every page, where only the challenge marks are searched).

    python benchmarks/walls_speed.py WARC...

Prints the pages, ms a page (best of 3) and the walls found.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from spidercrawl.archive import ReadCounts, ReadError, read_pages  # noqa: E402
from spidercrawl.document.html import decode_html  # noqa: E402
from spidercrawl.document.walls import recognise_wall  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warcs", nargs="+", type=Path)
    args = parser.parse_args()
    pages = [
        decode_html(page.body, page.content_type or None)[0]
        for warc in args.warcs
        for page in read_pages(warc, ReadCounts())
        if not isinstance(page, ReadError)
    ]
    best, walls = float("inf"), 0
    for _ in range(3):
        started = time.perf_counter()
        walls = sum(recognise_wall(200, {}, html) is not None for html in pages)
        best = min(best, time.perf_counter() - started)
    print(f"{len(pages)} pages, {1000 * best / len(pages):.2f} ms a page, {walls} walls")


if __name__ == "__main__":
    main()
