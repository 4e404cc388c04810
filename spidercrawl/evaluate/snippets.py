"""Snippet datasets, scored as trafilatura's project scores its own benchmark.

A snippet dataset is a folder with ``evaldata.json`` (page URL -> ``file``, up to six
snippets the main text must contain, ``with``, and up to six it must not, ``without``) and
``html/FILE.gz`` (the page's raw HTML, gzipped). A snippet counts when its
whitespace-normalised text is a substring of the whitespace-normalised extracted text:
a ``with`` snippet found is a true positive, missed a false negative; a ``without``
snippet found is a false positive, absent a true negative. Precision, recall, accuracy
and F1 are over all snippets of the dataset. A page whose extraction fails or is empty
finds none of its snippets.

Page methods run here, page by page in worker processes, timed as the site datasets' are
(CPU time of the extraction alone); site methods need site snapshots and do not.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from spidercrawl.evaluate.methods import PageExtractor, page_extractor
from spidercrawl.evaluate.runner import Progress, page_clock, worker_pool

logger = logging.getLogger(__name__)

EVALDATA = "evaldata.json"


@dataclass(frozen=True)
class SnippetPage:
    """One page of a snippet dataset."""

    dataset: str
    url: str
    html_path: str
    with_snippets: tuple[str, ...]
    without_snippets: tuple[str, ...]


@dataclass
class SnippetCounts:
    """Snippet outcomes over pages, with the extraction's CPU seconds."""

    true_positives: int = 0
    false_negatives: int = 0
    false_positives: int = 0
    true_negatives: int = 0
    pages: int = 0
    empty_pages: int = 0
    errors: int = 0
    seconds: float = 0.0
    missed: list[str] = field(default_factory=list)  # URLs of pages with a snippet missed

    def add(self, other: SnippetCounts) -> None:
        self.true_positives += other.true_positives
        self.false_negatives += other.false_negatives
        self.false_positives += other.false_positives
        self.true_negatives += other.true_negatives
        self.pages += other.pages
        self.empty_pages += other.empty_pages
        self.errors += other.errors
        self.seconds += other.seconds
        self.missed += other.missed

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 0.0

    @property
    def recall(self) -> float:
        wanted = self.true_positives + self.false_negatives
        return self.true_positives / wanted if wanted else 0.0

    @property
    def accuracy(self) -> float:
        every = (
            self.true_positives + self.false_negatives + self.false_positives + self.true_negatives
        )
        return (self.true_positives + self.true_negatives) / every if every else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "pages": self.pages,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "accuracy": round(self.accuracy, 4),
            "f1": round(self.f1, 4),
            "empty_pages": self.empty_pages,
            "errors": self.errors,
            "pages_per_s": round(self.pages / self.seconds, 1) if self.seconds else None,
            "ms_per_page": round(1000 * self.seconds / self.pages, 2) if self.pages else None,
        }


def _normalised(text: str) -> str:
    return " ".join(text.split())


def is_snippet_dataset(folder: Path) -> bool:
    return (folder / EVALDATA).is_file()


def snippet_datasets(root: Path) -> list[Path]:
    """The snippet datasets at ``root``: itself, or its child folders."""
    if is_snippet_dataset(root):
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and is_snippet_dataset(p))


def read_snippet_pages(folder: Path) -> list[SnippetPage]:
    """The pages of a snippet dataset whose HTML file is there (others are logged)."""
    entries = json.loads((folder / EVALDATA).read_text("utf-8"))
    pages = []
    for url, entry in sorted(entries.items()):
        if not isinstance(entry, dict):
            continue
        path = folder / "html" / str(entry.get("file") or "")
        if not path.is_file():
            logger.warning("%s: %s has no HTML file (%s)", folder.name, url, path.name)
            continue
        pages.append(
            SnippetPage(
                folder.name,
                url,
                str(path),
                tuple(str(s) for s in entry.get("with") or [] if str(s).strip()),
                tuple(str(s) for s in entry.get("without") or [] if str(s).strip()),
            )
        )
    return pages


def score_page(text: str, page: SnippetPage) -> SnippetCounts:
    """The snippet outcomes of one page's extracted text."""
    found = _normalised(text)
    counts = SnippetCounts(pages=1, empty_pages=int(not found))
    for snippet in page.with_snippets:
        if _normalised(snippet) in found:
            counts.true_positives += 1
        else:
            counts.false_negatives += 1
    for snippet in page.without_snippets:
        if _normalised(snippet) in found:
            counts.false_positives += 1
        else:
            counts.true_negatives += 1
    if counts.false_negatives:
        counts.missed.append(page.url)
    return counts


_extractors: dict[str, PageExtractor] = {}  # per worker process


def run_snippet_task(task: tuple[str, SnippetPage]) -> SnippetCounts:
    """Extract and score one page with one method; a failure finds no snippet."""
    method, page = task
    try:
        html = gzip.decompress(Path(page.html_path).read_bytes())
        extractor = _extractors.get(method)
        if extractor is None:
            extractor = _extractors[method] = page_extractor(method)
        started = page_clock()
        text = extractor(html)
        seconds = page_clock() - started
    except Exception as error:  # a method that raises is a result to report
        logger.info("%s on %s: %s: %s", method, page.url, type(error).__name__, error)
        counts = score_page("", page)
        counts.errors = 1
        return counts
    counts = score_page(text or "", page)
    counts.seconds = seconds
    return counts


def run_snippet_method(
    method: str, pages: list[SnippetPage], jobs: int | None = None
) -> SnippetCounts:
    """One page method over ``pages`` on ``jobs`` processes, its counts summed."""
    total = SnippetCounts()
    progress = Progress(f"{method} (snippets)", len(pages))
    tasks = [(method, page) for page in pages]
    jobs = jobs or os.cpu_count() or 1
    results: Iterable[SnippetCounts]
    if jobs == 1:
        results = map(run_snippet_task, tasks)
        for counts in results:
            total.add(counts)
            progress.step()
        return total
    with worker_pool(jobs) as pool:
        for counts in pool.map(run_snippet_task, tasks, chunksize=4):
            total.add(counts)
            progress.step()
    return total


def snippet_table(dataset: str, rows: dict[str, dict[str, object]]) -> str:
    """A dataset's snippet scores, a row a method, in Markdown."""
    lines = [
        f"## {dataset} (snippets, as trafilatura's benchmark is scored)\n",
        "| method | pages | precision | recall | accuracy | F1 | empty | errors | pages/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for method, row in rows.items():
        lines.append(
            f"| {method} | {row['pages']} | {row['precision']:.3f} | {row['recall']:.3f} | "
            f"{row['accuracy']:.3f} | {row['f1']:.3f} | {row['empty_pages']} | {row['errors']} | "
            f"{row['pages_per_s'] if row['pages_per_s'] is not None else '-'} |"
        )
    return "\n".join(lines) + "\n"


def evaluate_snippet_datasets(
    root: Path, methods: Iterable[str], jobs: int | None
) -> Iterator[tuple[str, str, SnippetCounts]]:
    """(dataset, method, counts) for every snippet dataset at ``root`` and page method."""
    for folder in snippet_datasets(root):
        pages = read_snippet_pages(folder)
        for method in methods:
            yield folder.name, method, run_snippet_method(method, pages, jobs)
