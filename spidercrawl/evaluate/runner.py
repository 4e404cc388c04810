"""Run extraction methods over annotated site snapshots and score every page.

Page methods run in a pool of worker processes (``jobs``); each worker extracts and scores
its pages, so the parent only collects records. The time a method spends extracting a page
is measured inside the worker, which makes ``pages_per_s`` a single-process figure that
does not depend on the number of workers. It is the worker's CPU time (:data:`page_clock`),
not wall time, which also counted what other processes on the machine took meanwhile.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from spidercrawl.evaluate.methods import PageExtractor, page_extractor
from spidercrawl.evaluate.metrics import PageScore, score_text
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs

logger = logging.getLogger(__name__)

# The clock a page's extraction is timed by: the extracting thread's CPU time, so that what
# other processes take meanwhile (the parent collecting records, the other workers, on a
# machine of two cores) is not charged to the page.
page_clock = time.thread_time


@dataclass(frozen=True)
class PageTask:
    """One page of one site to extract with one method."""

    method: str
    dataset: str
    site: str
    page_id: str
    html_path: str
    gold_path: str
    headline_in_text: bool = True  # our article text's convention (the dataset's gold's)


@dataclass
class PageRecord:
    """The outcome for one page and one method: a row of ``pages.csv``."""

    dataset: str
    site: str
    page_id: str
    method: str
    retrieved_tokens: int = 0
    gold_tokens: int = 0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    cleaneval: float = 0.0
    precision_difflib: float = 0.0
    recall_difflib: float = 0.0
    f1_difflib: float = 0.0
    special_case: str = ""
    seconds: float = 0.0
    error: str = ""
    note: str = ""  # how the text was obtained when it matters (fallback, training pages)
    # How the crawl's extraction chain made the article (its method: learned, rules,
    # learned+unseen, unseen, density...; "" where no chain ran: a peer, a page the crawl
    # did not render), whether a site model was in use, whether the page came without a
    # render (plain HTTP), and whether the fast path took it (``rules``). The reports
    # decide by these, not by the note's words.
    way: str = ""
    has_model: bool = False
    plain: bool = False
    fast_path: bool = False
    # rules, fast-path pages: word F1 of the article delivered, and of the rules' own
    # article before the chain's independent check, with the rendered never-seen
    # consensus's article of the same page (a gold-free check of the fast path; -1: none)
    unseen_agreement: float = -1.0
    unchecked_agreement: float = -1.0

    @classmethod
    def columns(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def apply(self, score: PageScore) -> PageRecord:
        for name, value in score.as_dict().items():
            setattr(self, name, value)
        return self


def read_gold(path: Path) -> str | None:
    """The gold text (UTF-8, else windows-1252), or None when the page has none."""
    if not path.is_file():
        return None
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        logger.info("Gold file %s is not UTF-8; read as windows-1252", path)
        return data.decode("cp1252", errors="replace")


@dataclass(frozen=True)
class PeerTiming:
    """A peer library's CPU time on one page, its call alone, measured in an ``unseen`` job
    right after our extraction of the same page: the two compare at the same moment in the
    same process, which times in separate workers (the peers' own rows) do not."""

    dataset: str
    site: str
    page_id: str
    method: str  # the peer's evaluation method name: trafilatura, readability-lxml
    seconds: float


@dataclass(frozen=True)
class EvaluationSite:
    dataset: str
    snapshot: SiteSnapshot

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.snapshot.host}"


def find_sites(dataset_dir: Path, only: Iterable[str] = ()) -> list[EvaluationSite]:
    """The sites under DATASET_DIR (one dataset, or a folder of datasets), maybe filtered."""
    wanted = set(only)
    sites = []
    for site_dir in find_site_dirs(Path(dataset_dir)):
        if wanted and site_dir.name not in wanted:
            continue
        sites.append(EvaluationSite(site_dir.parent.name, SiteSnapshot(site_dir)))
    return sites


def page_tasks(
    method: str, sites: Iterable[EvaluationSite], headline: Mapping[str, bool] | None = None
) -> list[PageTask]:
    """One task a page; ``headline``: dataset -> whether our text opens with the headline."""
    headline = headline or {}
    return [
        PageTask(
            method,
            site.dataset,
            site.snapshot.host,
            page_id,
            str(site.snapshot.root / "pages" / f"{page_id}.html"),
            str(site.snapshot.gold_path(page_id)),
            headline.get(site.dataset, True),
        )
        for site in sites
        for page_id in site.snapshot.page_ids
    ]


_extractors: dict[tuple[str, bool], PageExtractor] = {}  # per worker process


def score_record(record: PageRecord, text: str | None, gold: str | None) -> PageRecord:
    """Fill a record with the scores of ``text`` against ``gold`` (None: no gold file)."""
    if gold is None:
        record.special_case = "no_gold"
        return record
    return record.apply(score_text(text or "", gold))


def run_page_task(task: PageTask) -> PageRecord:
    """Extract and score one page; every failure becomes a field of the record."""
    record = PageRecord(task.dataset, task.site, task.page_id, task.method)
    gold = read_gold(Path(task.gold_path))
    if gold is None:
        return score_record(record, None, None)
    try:
        html = Path(task.html_path).read_bytes()
        key = (task.method, task.headline_in_text)
        extractor = _extractors.get(key)
        if extractor is None:
            extractor = _extractors[key] = page_extractor(*key)
        started = page_clock()
        text = extractor(html)
        record.seconds = page_clock() - started
    except Exception as error:  # a method that raises is a result to report, not a crash
        record.error = f"{type(error).__name__}: {error}"[:300]
        record.special_case = "error"
        return record
    return score_record(record, text, gold)


class Progress:
    """A log line every few seconds: how far a method has got and how fast."""

    def __init__(self, label: str, total: int, every_s: float = 5.0, unit: str = "pages") -> None:
        self.label, self.total, self.every_s, self.unit = label, total, every_s, unit
        self.done = 0
        self.started = self.last = time.monotonic()

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if now - self.last >= self.every_s or self.done == self.total:
            self.last = now
            rate = self.done / max(now - self.started, 1e-9)
            logger.info("%s: %d/%d %s (%.1f/s)", self.label, self.done, self.total, self.unit, rate)


def configure_logging() -> None:
    """The evaluation's logging, in the main process and in every worker: our progress at
    INFO; libraries' per-page chatter only when it is an error, and their warnings (a date
    parser's, a peer's) to that log rather than to the terminal once per page."""
    logging.basicConfig(level=logging.ERROR, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("spidercrawl").setLevel(logging.INFO)
    logging.captureWarnings(True)


@contextmanager
def worker_pool(jobs: int | None) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``jobs`` worker processes started from a lean server process.

    Forked from the evaluation itself, workers inherited its heap (every crawled page it
    had loaded: tens of millions of objects). Full garbage collections walked it, 2.6 to
    2.9 s of CPU charged to whichever page was being timed, until it was frozen before the
    fork; even frozen, the inherited heap slowed our extraction (the
    never-seen path on the three datasets with the shipped model: 71 / 50 / 70 pages/s
    forked, 75-81 / 52-57 / 71-73 in three runs from the server), while the
    page methods' workers, forked after those pages were let go, did not carry it. Now
    every worker starts from the ``forkserver`` (a fresh interpreter), receives its jobs
    pickled, as before, and logs as the main process does."""
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=configure_logging
    ) as pool:
        yield pool


def run_page_method(
    method: str,
    sites: list[EvaluationSite],
    jobs: int | None = None,
    headline: Mapping[str, bool] | None = None,
) -> Iterator[PageRecord]:
    """Run one page method over all pages of ``sites`` on ``jobs`` processes; ``headline``
    as :func:`page_tasks` takes it."""
    tasks = page_tasks(method, sites, headline)
    progress = Progress(method, len(tasks))
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        results: Iterable[PageRecord] = map(run_page_task, tasks)
        for record in results:
            progress.step()
            yield record
        return
    with worker_pool(jobs) as pool:
        for record in pool.map(run_page_task, tasks, chunksize=4):
            progress.step()
            yield record
