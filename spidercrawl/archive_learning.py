"""Learning site models from a web archive: every host of a WARC collection with enough
pages learns its model as a crawl does, from its archived pages rendered in Chromium.

A month of CC-NEWS holds hundreds of articles of each large publisher: exactly what a
site model learns from. The archive's HTML records are grouped by host (a host and its
``www.`` form are one site) and written to disk as site snapshots as they are read (memory
stays bounded whatever the archive's size). The hosts are then served on 127.0.0.1 and
crawled by ``scrapy crawl news``, ``pool`` hosts to a run with one browser: the crawl
renders each archived page (resources the archive lacks are not fetched: a local copy's
crawl allows no other host), keeps walls, listings and non-articles out, and learns the
model from all of a host's article pages (held until the crawl has them all), every
template of two pages or more among them a layout of its own (``LEARN_EVERY_TEMPLATE``):
a live crawl learns from its first pages because it cannot wait for the rest and leaves a
rare template to come again, an archive has them all at hand. Each page is
served with its record's HTTP status and the headers the crawl judges it by (a 403
challenge is a wall, never a page to learn from, as it was on the live site). The model is
saved to ``models/<site>/`` (the older one kept under ``versions/``), where a later crawl
of the site finds it, and ``python -m spidercrawl.extract --models`` too.
"""

from __future__ import annotations

import json
import logging
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from spidercrawl.archive import ReadCounts, ReadError, read_pages
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.store import ModelStore
from spidercrawl.runner import PROJECT_ROOT, read_jsonl
from spidercrawl.serve import serving
from spidercrawl.snapshot import route_path

logger = logging.getLogger(__name__)

CRAWL_TIMEOUT_S = 3600  # one run of ``pool`` hosts
MAX_PAGES_PER_HOST = 200  # records of a host kept to learn from (the rest are not needed)
# The responses of the held pages a batch's crawl may keep before it learns from them at
# once (Scrapy's scraper slot): room for ``pool`` hosts' pages of a few hundred KB each.
HELD_BYTES = 1024 * 2**20


@dataclass
class HostLearning:
    """What became of one host of the archive."""

    site: str
    records: int = 0
    articles: int = 0  # pages the crawl took for articles
    learned: bool = False
    why: str = ""  # why no model, or how it was learned
    seconds: float = 0.0


@dataclass
class ArchiveLearning:
    """The hosts of an archive and what became of each; where their snapshots are."""

    hosts: dict[str, HostLearning] = field(default_factory=dict)
    counts: ReadCounts = field(default_factory=ReadCounts)
    peak_rss_mib: float = 0.0  # the crawls' (the largest child process's) peak memory


def learn_archive(
    archives: Iterable[Path],
    models_dir: Path,
    *,
    hosts: frozenset[str] = frozenset(),
    relearn: bool = False,
    min_pages: int = 10,
    pool: int = 20,
    settings: Iterable[str] = (),
) -> ArchiveLearning:
    """Learn a model for every host of ``archives`` with at least ``min_pages`` pages
    (only ``hosts`` where given; hosts with a model in ``models_dir`` kept unless
    ``relearn``), ``pool`` hosts per crawl; ``settings``: more ``NAME=VALUE`` for it."""
    outcome = ArchiveLearning()
    store = ModelStore(models_dir)
    with tempfile.TemporaryDirectory(prefix="spidercrawl-archive-") as folder:
        root = Path(folder)
        _write_snapshots(archives, root / "sites", hosts, outcome)
        todo = []
        for site, host in sorted(outcome.hosts.items()):
            if host.records < min_pages:
                host.why = f"{host.records} pages, fewer than LEARN_MIN_PAGES ({min_pages})"
            elif not relearn and SiteModel.exists(store.folder(site)):
                host.why, host.learned = "has a model already (--relearn learns it again)", True
            else:
                todo.append(site)
        logger.info(
            "%d hosts in the archive; %d to learn, %d at a time",
            len(outcome.hosts), len(todo), pool,
        )  # fmt: skip
        for start in range(0, len(todo), max(1, pool)):
            batch = todo[start : start + max(1, pool)]
            _learn_batch(batch, root, store, min_pages, list(settings), outcome)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    outcome.peak_rss_mib = round(children, 1)
    return outcome


def _write_snapshots(
    archives: Iterable[Path], root: Path, hosts: frozenset[str], outcome: ArchiveLearning
) -> None:
    """Each HTML record into its host's snapshot folder (``SITE/pages/ID.html`` and
    ``SITE/index.tsv``), one URL path once, at most ``MAX_PAGES_PER_HOST`` a host."""
    seen: dict[str, set[str]] = {}
    for archive in archives:
        for page in read_pages(Path(archive), outcome.counts):
            if isinstance(page, ReadError):
                logger.warning("%s: skipped (%s)", page.source, page.reason)
                continue
            site = page.site
            if not site or (hosts and site not in hosts):
                continue
            paths = seen.setdefault(site, set())
            path = route_path(urlsplit(page.url).path or "/")
            if path in paths or len(paths) >= MAX_PAGES_PER_HOST or path == "/":
                continue
            paths.add(path)
            host = outcome.hosts.setdefault(site, HostLearning(site))
            page_id = f"{host.records:05d}"
            folder = root / site
            (folder / "pages").mkdir(parents=True, exist_ok=True)
            (folder / "pages" / f"{page_id}.html").write_bytes(page.body)
            kept = page.head.kept()  # served as archived: its status and judged headers
            (folder / "responses").mkdir(exist_ok=True)
            (folder / "responses" / f"{page_id}.json").write_text(
                json.dumps({"status": kept.status, "headers": [list(h) for h in kept.headers]})
            )
            with (folder / "index.tsv").open("a", encoding="utf-8") as index:
                index.write(f"{page_id}\t{page.url}\n")
            host.records += 1


def _learn_batch(
    batch: list[str],
    root: Path,
    store: ModelStore,
    min_pages: int,
    settings: list[str],
    outcome: ArchiveLearning,
) -> None:
    """One crawl of the ``batch`` hosts' snapshots, learning into a models folder of its
    own; each model then saved into ``store`` (which keeps an older one as a version)."""
    started = time.monotonic()
    run = root / f"run-{batch[0]}"
    learned_dir = run / "models"
    with ExitStack() as servers:
        lines = []
        for site in batch:
            server = servers.enter_context(serving(root / "sites" / site))
            lines.append(f"{site} {server.base_url}")
        run.mkdir(parents=True)
        (run / "sites.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        held = max([min_pages, *(outcome.hosts[site].records for site in batch)])
        command = _crawl_command(run, learned_dir, held, settings)
        try:
            proc = subprocess.run(
                command, cwd=PROJECT_ROOT, capture_output=True, text=True,
                timeout=CRAWL_TIMEOUT_S, check=False,
            )  # fmt: skip
            log = proc.stderr
        except subprocess.TimeoutExpired as error:
            log = f"the crawl ran over {CRAWL_TIMEOUT_S} s: {error}"
    articles = Counter(str(item.get("site") or "") for item in _items(run / "articles.jsonl"))
    seconds = (time.monotonic() - started) / len(batch)
    for site in batch:
        host = outcome.hosts[site]
        host.articles, host.seconds = articles[site], round(seconds, 1)
        model = ModelStore(learned_dir).load(site)
        if model is not None:
            store.save(site, model)
            host.learned = True
            host.why = f"learned from {model.training_.get('pages')} of {host.articles} articles"
            host.why += "".join(f"; {line}" for line in model.read_by_arbiter())
        else:
            host.why = _why_not(site, host, log, min_pages)
        said = [line for line in learning_said(site, log) if line not in host.why]
        host.why += "".join(f"; {line}" for line in said)
        logger.info("%s: %s (%d records)", site, host.why, host.records)


def _crawl_command(run: Path, models: Path, held: int, settings: list[str]) -> list[str]:
    """The crawl of a batch's snapshots, each site's pages held (up to ``held``, its
    largest host's records) until the crawl has them all, then learned from at once."""
    command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(run / "articles.jsonl")]
    command += ["-a", f"sites={run / 'sites.txt'}", "-a", "render=all", "-a", "max_depth=0"]
    for setting in (
        f"MODELS_DIR={models}", f"STATE_DIR={run / 'state'}", "INCREMENTAL_ENABLED=False",
        f"LEARN_MIN_PAGES={held}", f"LEARN_MAX_WAIT_PAGES={held}", "LEARN_EVERY_TEMPLATE=True",
        f"SCRAPER_SLOT_MAX_ACTIVE_SIZE={HELD_BYTES}",
        "ARTICLES_FILE=", "JSONFEED_ENABLED=False",
        "LOG_LEVEL=INFO", "AUTOTHROTTLE_ENABLED=False",
        "WALL_RETRIES=0",  # an archived 429 or 503 says the same when asked again
        *settings,
    ):  # fmt: skip
        command += ["-s", setting]
    return command


def _items(path: Path) -> Iterator[dict]:
    if path.exists():
        yield from read_jsonl(path)


# The loggers whose lines about a site say how it was learned and will be read: the
# learner (layouts, what its parser leaves to the arbiter, failures) and the fast path (the
# render decision).
_LEARNING_LOGGERS = ("[spidercrawl.learn.", "[spidercrawl.extract.fast_path]")
_PAGE_LINES = (" instead (", " declares ", "holding pages until", "using the saved model")
_SAVED_TO = re.compile(r"; saved to \S+$")


def learning_said(site: str, log: str) -> list[str]:
    """What the crawl's learning said of ``site``, each line once, in order: how its model
    was learned (pages, layouts), what it reads by the arbiter, the render decision; not
    the lines about single pages, nor where the model was saved (a temporary folder)."""
    said: dict[str, None] = {}
    for line in log.splitlines():
        logger_at = line.find("[")
        if logger_at < 0 or not line.startswith(_LEARNING_LOGGERS, logger_at):
            continue
        message = line.split(": ", 1)[-1]
        if not message.startswith(f"{site}: "):
            continue
        text = _SAVED_TO.sub("", message[len(site) + 2 :])
        if not any(part in text for part in _PAGE_LINES):
            said.setdefault(text)
    return list(said)


def _why_not(site: str, host: HostLearning, log: str, min_pages: int) -> str:
    """Why a host learned nothing, from what its crawl said."""
    said = [line.split("] ", 1)[-1] for line in log.splitlines() if f"{site}: " in line]
    blocked = next((line for line in said if "pages blocked" in line), "")
    failed = next((line for line in said if "could not learn" in line or "learning" in line), "")
    if host.articles < min_pages:
        why = f"no model: {host.articles} of {host.records} pages were articles"
        return f"{why} ({blocked.split(': ', 1)[-1]})" if blocked else f"{why} (walls, listings)"
    return f"no model: {failed.split(': ', 1)[-1]}" if failed else "no model (see the log)"
