"""The arbiter of raw HTML chosen again, leaving one dataset out, through its own code.

    python benchmarks/arbiter_choice.py [--datasets ../shared/datasets] [--extra DIR ...]
        [--cache readers.jsonl] [--jobs 2]

Every reader (text density, readability-lxml, trafilatura and its recall reading, and
resiliparse, the witness between the peers) reads every dev page once (kept in
``--cache``: a second run only decides). Then each setting of a grid of
:class:`~spidercrawl.extract.decision.DecisionSettings` (the witnesses off or on among
them) is run through :func:`~spidercrawl.extract.decision.arbitrate` on every page and
scored: site datasets by
word-level LCS F1 over all pages (an empty article scores 0; the article body, without the
headline), snippet datasets as trafilatura's project scores its benchmark. For each dataset
held out, the setting with the best mean gain over trafilatura on the others is chosen and
scored on it; the last line is the choice on all of them (what ships). ``--extra`` adds
datasets outside ``--datasets`` (wcxb-dev, unpacked). The readings alone are decided on:
the check of agreeing readers against the description the page shows (it needs the
page's own text, and no constant of the grid touches it) is left out, and so is the page's
date (a page whose only marker is a viewport is read as today's here whatever its date).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import statistics
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.document.html import decode_html  # noqa: E402
from spidercrawl.evaluate.metrics import score_text  # noqa: E402
from spidercrawl.evaluate.runner import read_gold  # noqa: E402
from spidercrawl.evaluate.snippets import (  # noqa: E402
    SnippetCounts,
    is_snippet_dataset,
    read_snippet_pages,
    score_page,
)
from spidercrawl.extract import decision as decision_module  # noqa: E402
from spidercrawl.extract import readers as readers_module  # noqa: E402
from spidercrawl.extract.api import extract_html  # noqa: E402
from spidercrawl.extract.decision import (  # noqa: E402
    DecisionSettings,
    MarkupEvidence,
    arbitrate,
    markup_evidence,
)
from spidercrawl.extract.readers import (  # noqa: E402
    DENSITY,
    PEER_FACTORIES,
    PEER_VARIANTS,
    READABILITY,
    RESILIPARSE,
    TRAFILATURA,
    TRAFILATURA_RECALL,
    PageReadings,
    word_f1,
)
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs, is_site_dir  # noqa: E402
from spidercrawl.text import tokenize  # noqa: E402

READERS = (DENSITY, READABILITY, TRAFILATURA, TRAFILATURA_RECALL, RESILIPARSE)


@dataclass
class PageTask:
    dataset: str
    key: str
    html_path: str
    url: str
    gold: str | None = None
    with_snippets: tuple[str, ...] = ()
    without_snippets: tuple[str, ...] = ()


@dataclass
class Article:
    """A reader's article, as :class:`PageReadings` holds it."""

    text: str


def dataset_folders(root: Path) -> list[Path]:
    """``root`` where it is a dataset (snippets, or site folders), else its child folders."""
    children = sorted(p for p in root.iterdir() if p.is_dir())
    if is_snippet_dataset(root) or any(is_site_dir(child) for child in children):
        return [root]
    return children


def page_tasks(roots: list[Path]) -> Iterator[PageTask]:
    for root in roots:
        for folder in dataset_folders(root):
            if is_snippet_dataset(folder):
                for page in read_snippet_pages(folder):
                    yield PageTask(folder.name, page.url, page.html_path, page.url, None,
                                   page.with_snippets, page.without_snippets)  # fmt: skip
                continue
            for site_dir in find_site_dirs(folder):
                snapshot = SiteSnapshot(site_dir)
                for page_id in snapshot.page_ids:
                    gold = read_gold(site_dir / "gold" / f"{page_id}.txt")
                    if gold is None:
                        continue
                    html_path = str(site_dir / "pages" / f"{page_id}.html")
                    url = snapshot.original_urls.get(page_id, "")
                    key = f"{folder.name}/{site_dir.name}/{page_id}"
                    yield PageTask(folder.name, key, html_path, url, gold)


_readers: dict[str, object] = {}


def read_page(task: PageTask) -> dict:
    """Every reader's text of one page, and its markup's markers."""
    if not _readers:
        for name, factory in PEER_FACTORIES.items():
            _readers[name] = factory()
        for name, (_, factory) in PEER_VARIANTS.items():
            _readers[name] = factory()
    data = Path(task.html_path).read_bytes()
    if task.html_path.endswith(".gz"):
        data = gzip.decompress(data)
    html = decode_html(data)[0]
    texts = {
        DENSITY: extract_html(data, task.url, raw_consensus=False, headline_in_text=False)["text"]
    }
    for name in (READABILITY, TRAFILATURA, TRAFILATURA_RECALL, RESILIPARSE):
        try:
            texts[name] = _readers[name](html)
        except Exception:  # a reader that fails gives no article, as in the product
            texts[name] = ""
    return {"dataset": task.dataset, "key": task.key, "texts": texts,
            "markers": list(markup_evidence(html).markers)}  # fmt: skip


# The witnesses against trafilatura's reading on today's markup: off, or the agreement of
# readability's and resiliparse's readings that outvotes it.
WITNESSES = (None, 0.75, 0.85)


def grid() -> list[DecisionSettings]:
    markers = [("viewport", "json-ld", "lazy images"), ("viewport",), None]
    settings = []
    for marks, agreement, agreeing, lead, modern, witness in itertools.product(
        markers, (0.7, 0.8, 0.9, 1.01), (READABILITY, DENSITY), (0.0, 0.1, 0.3),
        (None, 0.1, 0.3, 0.5), WITNESSES,
    ):  # fmt: skip
        if marks is None and (modern is not None or witness is not None):
            continue
        if modern is not None and witness is not None:  # the witnesses act on None alone
            continue
        settings.append(
            DecisionSettings(
                older_agreement=agreement, older_agreeing_reader=agreeing,
                older_traf_lead=lead, modern_traf_lead=modern, markers=marks,
                witness_agreement=witness,
            )
        )  # fmt: skip
    return settings


_agreements: dict[tuple[int, int], tuple[float, list[str], list[str]]] = {}


def remembered_word_f1(first: list[str], second: list[str]) -> float:
    """:func:`word_f1` of two readers' words, computed once a pair over the whole grid (the
    words are made once a page and kept, so their identities name the pair)."""
    key = (id(first), id(second))
    if key not in _agreements:
        _agreements[key] = (word_f1(first, second), first, second)
    return _agreements[key][0]


# the grid asks each pair ~100 times
decision_module.word_f1 = readers_module.word_f1 = remembered_word_f1


def decide(page: dict, settings: DecisionSettings | None) -> str:
    """The text the arbiter delivers for ``page`` (None: trafilatura's, the reference)."""
    if settings is None:
        return page["texts"][TRAFILATURA] or ""
    found = {name: Article(text or "") for name, text in page["texts"].items()}
    if "words" not in page:
        page["words"] = {name: tokenize(article.text) for name, article in found.items()}
    readings = PageReadings({name: lambda: Article("") for name in READERS})
    readings.found, readings._words = found, dict(page["words"])
    verdict = arbitrate(readings, MarkupEvidence(tuple(page["markers"])), settings)
    return found[verdict.source].text if verdict.source else found[DENSITY].text


def dataset_score(pages: list[dict], tasks: dict[str, PageTask], settings) -> float:
    """Mean F1 over all pages, or snippet F1 over all snippets."""
    first = tasks[pages[0]["key"]]
    if first.gold is None:
        total = SnippetCounts()
        for page in pages:
            task = tasks[page["key"]]
            total.add(score_page(decide(page, settings), task))  # type: ignore[arg-type]
        return total.f1
    return statistics.fmean(
        score_text(decide(page, settings), tasks[page["key"]].gold or "", False).f1
        for page in pages
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=REPO.parent / "shared" / "datasets")
    parser.add_argument("--extra", type=Path, nargs="*", default=[])
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tasks = {task.key: task for task in page_tasks([args.datasets, *args.extra])}
    pages: list[dict] = []
    if args.cache and args.cache.exists():
        pages = [json.loads(line) for line in args.cache.open(encoding="utf-8")]
    if {page["key"] for page in pages} != set(tasks):
        with ProcessPoolExecutor(args.jobs) as pool:
            pages = list(pool.map(read_page, tasks.values(), chunksize=8))
        if args.cache:
            with args.cache.open("w", encoding="utf-8") as out:
                out.writelines(json.dumps(page) + "\n" for page in pages)
    by_dataset: dict[str, list[dict]] = {}
    for page in pages:
        by_dataset.setdefault(page["dataset"], []).append(page)
    datasets = sorted(by_dataset)
    settings = grid()
    reference = {d: dataset_score(by_dataset[d], tasks, None) for d in datasets}
    gain = {
        (d, s): dataset_score(by_dataset[d], tasks, s) - reference[d]
        for d in datasets
        for s in settings
    }
    print("| held out | pages | trafilatura | arbiter, chosen without it | gain | its choice |")
    print("|---|---|---|---|---|---|")
    for held in datasets:
        others = [d for d in datasets if d != held]
        chosen = max(settings, key=lambda s: statistics.fmean(gain[d, s] for d in others))
        score = reference[held] + gain[held, chosen]
        print(f"| {held} | {len(by_dataset[held])} | {reference[held]:.4f} | {score:.4f} | "
              f"{gain[held, chosen]:+.4f} | {chosen} |")  # fmt: skip
    chosen = max(settings, key=lambda s: statistics.fmean(gain[d, s] for d in datasets))
    gains = ", ".join(f"{d} {gain[d, chosen]:+.4f}" for d in datasets)
    print(f"\nChosen on all {len(datasets)} datasets: {chosen} ({gains})")


if __name__ == "__main__":
    main()
