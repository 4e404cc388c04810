"""How many dev pages each recogniser of a site's push-back flags: bot walls, paywalls
(declared, and by a prompt on the page), consent dialogs removed, reservations (noai,
noindex, TDMRep meta). Every page of the dev datasets is a real article or page that was
served to a reader, so a wall flagged here is a false wall; paywall and reservation flags
are listed to be looked at.

    python benchmarks/pushback_flags.py [--datasets ../shared/datasets] [--extra WCXB_DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.exceptions_over_datasets import DEFAULT_DATASETS, dataset_pages  # noqa: E402
from spidercrawl.capture.static import static_capture  # noqa: E402
from spidercrawl.document.access import (  # noqa: E402
    PAYWALLED,
    article_access,
    declared_access,
    page_prompts,
)
from spidercrawl.document.consent import remove_consent_dialogs  # noqa: E402
from spidercrawl.document.html import UnusableDocumentError, decode_html, parse_raw_html  # noqa: E402
from spidercrawl.document.reservations import page_reservations  # noqa: E402
from spidercrawl.document.walls import recognise_wall  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument(
        "--extra", type=Path, action="append", default=[],
        help="another folder of datasets (the unpacked wcxb-dev's parent)",
    )  # fmt: skip
    parser.add_argument("--show", type=int, default=15, help="flagged pages listed per kind")
    args = parser.parse_args()
    pages: Counter[str] = Counter()
    flags: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, list[str]] = defaultdict(list)
    started = time.perf_counter()
    for root in [args.datasets, *args.extra]:
        for dataset, name, raw in dataset_pages(root):
            pages[dataset] += 1
            html = decode_html(raw)[0]
            found = []
            wall = recognise_wall(200, {}, html)
            if wall is not None:
                found.append(f"wall: {wall.kind}")
            capture = static_capture(html, f"https://{name}")
            declared = declared_access(capture["jsonld"])
            if declared:
                found.append(f"declared {declared}")
            prompts = page_prompts([], html)
            if article_access([], prompts) == PAYWALLED:  # a paywall's prompt, not a newsletter's
                found.append(f"paywall prompt: {prompts[0][:80]}")
            elif prompts:
                found.append(f"prompt only: {prompts[0][:80]}")
            reserved = page_reservations(capture["meta"], [], "", False)
            if reserved:
                found.append(f"reserved: {','.join(reserved)}")
            try:
                dialogs = remove_consent_dialogs(parse_raw_html(html))
            except UnusableDocumentError:
                dialogs = 0
            if dialogs:
                found.append("consent dialog")
            for flag in found:
                kind = flag.split(":")[0]
                flags[kind][dataset] += 1
                examples[kind].append(f"{dataset} {name}: {flag}")
    datasets = sorted(pages)
    print(f"{sum(pages.values())} pages in {time.perf_counter() - started:.0f} s")
    print("| flag | " + " | ".join(datasets) + " |")
    print("|---|" + "---|" * len(datasets))
    print("| pages | " + " | ".join(str(pages[d]) for d in datasets) + " |")
    for kind in sorted(flags):
        print(f"| {kind} | " + " | ".join(str(flags[kind][d]) for d in datasets) + " |")
    for kind in sorted(flags):
        print(f"\n{kind}:")
        for line in examples[kind][: args.show]:
            print("  " + line)


if __name__ == "__main__":
    main()
