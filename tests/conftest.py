"""Shared fixtures: paths, a real Chromium for capture tests, and `scrapy crawl` runs."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from scrapy.utils.reactor import install_reactor, is_reactor_installed

from spidercrawl.capture.browser import DEFAULT_BROWSER_PATH
from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT, crawl_command, read_jsonl
from spidercrawl.serve import serving
from spidercrawl.settings import TWISTED_REACTOR

# The crawl's reactor, installed before any test module imports Twisted's default one: the
# tests that drive a pipeline by hand need it, in whatever order a worker runs them.
if not is_reactor_installed():
    install_reactor(TWISTED_REACTOR)

SHARED = PROJECT_ROOT.parent / "shared"


CHROMIUM = os.environ.get("SPIDERCRAWL_CHROMIUM", DEFAULT_BROWSER_PATH)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser_page(chromium_path: str) -> Iterator[object]:
    """One real Chromium page, reused by a module's capture tests."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1600, "height": 4000})
        yield page
        browser.close()


@dataclass
class CrawlResult:
    returncode: int
    items: list[dict]
    log: str


# The demo site's name in the learning tests' crawls.
SITE = "harbourtimes.example"


def run_crawl(
    site: str, base_url: str, out: Path, *extra: str, timeout: int = 300, pages: bool = True
) -> CrawlResult:
    """Run ``scrapy crawl news`` as a user would, in a subprocess from the project root.

    Yields page items by default (the crawl's own tests); ``pages=False`` gives articles.
    The crawl's memory (``STATE_DIR``) and JSON Feeds go next to ``out`` unless ``extra``
    sets them (a later ``-s`` wins).
    """
    settings = {
        "LOG_LEVEL": "INFO",
        "STATE_DIR": out.parent / f"{out.stem}-state",
        "JSONFEED_PATH": out.parent / f"{out.stem}-feeds" / "%(site)s.json",
    }
    command = crawl_command(site, base_url, out, settings=settings, pages=pages)
    cmd = [*command, *extra]
    proc = subprocess.run(
        cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )
    items = []
    if out.exists():
        items = read_jsonl(out)
    return CrawlResult(proc.returncode, items, proc.stderr)


def crawl_articles(base_url: str, out: Path, models: Path, *settings: str, **args: object):
    """``scrapy crawl news`` of the demo at ``base_url`` writing articles, its site models in
    ``models``; ``settings`` as ``NAME=value``, ``args`` as spider arguments."""
    extra = ["-s", f"MODELS_DIR={models}"]
    for setting in settings:
        extra += ["-s", setting]
    for name, value in args.items():
        extra += ["-a", f"{name}={value}"]
    return run_crawl(SITE, base_url, out, *extra, pages=False)


@dataclass
class LearnedDemo:
    """The demo crawled once as it is, its model learned: the crawl's result, its site
    models, its state (``STATE_DIR``; the crawl ran with ``INCREMENTAL_ENABLED=False``) and
    its archive (``WARC_DIR``)."""

    result: CrawlResult
    models: Path
    state: Path
    warc: Path

    def copy_to(self, root: Path) -> tuple[Path, Path]:
        """A copy of the models and the state under ``root`` (a test's own, to change)."""
        models, state = root / "models", root / "state"
        shutil.copytree(self.models, models)
        shutil.copytree(self.state, state)
        return models, state


@pytest.fixture(scope="session")
def learned_demo(tmp_path_factory, chromium_path) -> LearnedDemo:
    """The learning crawl that several tests start from, run once per test run: the first
    worker to ask crawls (under a file lock), the others wait and read what it left."""
    base = tmp_path_factory.getbasetemp()
    run_folder = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    shared = run_folder / "learned-demo"
    with (run_folder / "learned-demo.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "done.json").exists():
            shared.mkdir(exist_ok=True)
            settings = (
                "INCREMENTAL_ENABLED=False",
                f"STATE_DIR={shared / 'state'}",
                f"WARC_DIR={shared / 'warc'}",
            )
            with serving(DEMO_SITE) as server:
                result = crawl_articles(
                    server.base_url, shared / "learned.jsonl", shared / "models", *settings
                )
            (shared / "state").mkdir(exist_ok=True)
            (shared / "log.txt").write_text(result.log, "utf-8")
            (shared / "done.json").write_text(json.dumps({"returncode": result.returncode}))
    returncode = json.loads((shared / "done.json").read_text())["returncode"]
    items = read_jsonl(shared / "learned.jsonl") if (shared / "learned.jsonl").exists() else []
    result = CrawlResult(returncode, items, (shared / "log.txt").read_text("utf-8"))
    return LearnedDemo(result, shared / "models", shared / "state", shared / "warc")


@contextlib.contextmanager
def loopback_server(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (a free port), serving from a thread; yields its
    base URL and stops it afterwards."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# --- real servers: free ports, Redis, the demo under several names ---------------------

SITES = ("harbour-a.example", "harbour-b.example", "harbour-c.example")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def demo_copies() -> Iterator[list[str]]:
    """The demo under three site names, one local server each: sites-file lines."""
    with ExitStack() as stack:
        servers = [stack.enter_context(serving(DEMO_SITE)) for _ in SITES]
        yield [f"{site} {server.base_url}" for site, server in zip(SITES, servers, strict=True)]


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture()
def redis_url(tmp_path) -> Iterator[str]:
    server_binary = shutil.which("redis-server")
    if server_binary is None:
        pytest.fail("redis-server not found: apt-get install -y redis-server")
    port = free_port()
    server = subprocess.Popen(
        [server_binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_for(lambda: _answers(port), 10, "redis-server to start")
    yield f"redis://127.0.0.1:{port}/0"
    server.terminate()
    server.wait(timeout=10)


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.3).close()
        return True
    except OSError:
        return False


# --- the order the workers take the test files in ----------------------------------------

# The files that take more than a few seconds, longest first (their times in a parallel
# run). pytest-xdist (``--dist loadfile``) hands out the files with the most tests first,
# so this order only breaks its ties; followed as it is (``--no-loadscope-reorder``), the
# longest crawls started together and a render missed its timeout (docs/measurements.md).
LONGEST_FIRST = (
    "test_redis_faults.py", "test_scale_out.py", "test_js_drawn.py", "test_user_paths.py",
    "test_crawl_e2e.py", "test_hostile_pages.py", "test_feeds.py", "test_archives.py",
    "test_layouts.py", "test_access_and_reservations.py", "test_consent.py", "test_walls.py",
    "test_bad_input_corpus.py", "test_never_empty.py", "test_evaluate.py",
    "test_learning_e2e.py", "test_template_drift.py", "test_markdown.py",
    "test_unseen_bad_input.py", "test_new_layouts.py", "test_tdm_on_redis.py",
    "test_breadth.py", "test_fast_path_bad_input.py", "test_misread_charset.py",
    "test_archived_responses.py", "test_posts.py", "test_extract_cli.py",
    "test_language_model.py", "test_tdm_policy_wait.py", "test_model_trust.py",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
