"""Soak of the distributed crawl: two workers on one Redis, a worker killed with ``kill -9``
and Redis killed and restarted along the way. Is every page delivered once, at a flat pace
and flat memory?

    python benchmarks/soak_distributed.py                       # 200 sites x 50 pages
    python benchmarks/soak_distributed.py --sites 10 --pages 20 --every 50   # a trial

``--sites`` local sites (default 200) of ``--pages`` pages each (default 50: 10,000 pages),
each served on its own 127.0.0.1 port: the demo's pages as editions
(``benchmarks/distributed.py``), every article's text made its own by a word naming its
site and page after every fourth word of the story, so that no page is a duplicate or a
near-duplicate of another. Models are learned in the crawl, as a first crawl of new sites
does (each site's first pages rendered, its model learned once on Redis and shared, its
other pages taken by the fast path; about a third of the pages are rendered): slower
than models learned beforehand, and the real case. The full run should take 30-40 minutes
on 2 free cores (trials of 200 pages: about 0.2 CPU-s a page, 5 worker starts and the
faults about 2 minutes); with other work on the cores (trials at 2-3 pages/s), 60-80.

A fresh ``redis-server`` with its append-only file (every write synced), the sites queued
with ``python -m spidercrawl.enqueue``, two workers (``scrapy crawl news`` with the
project's settings, REDIS_URL aside) on two "machines" A and B (each its own
``MODELS_DIR`` and ``STATE_DIR``) started together. Then:

- at 30% of the pages delivered: ``kill -9`` of A's worker and its browser (its process
  group), and a new worker on A at once;
- at 60%: Redis killed (SIGKILL) and started again from its append-only file once both
  workers have stopped by themselves (they stop on Redis loss: they are not killed), and
  a worker started again on each machine.

The workers stop by themselves once nothing is queued for ``REDIS_IDLE_CLOSE`` seconds.
Requests still in Redis then (in flight for a stopped worker whose heartbeat has not yet
expired) are said, and one more worker started once the heartbeats are gone.
``python -m spidercrawl.collect`` then writes the delivered articles to files, which are
counted. Every ``--every`` pages delivered (1,000) it prints the pace over those pages and
the PSS of each worker's process tree (crawl process + Chromium + Playwright's driver:
the mean of samples every 5 s over those pages) and of Redis (which holds every article
until the collector's run at the end). At the end: pages expected,
delivered (unique URLs), lost, delivered twice, near-duplicate marks; what each fault cost
(how long delivery stopped, time lost against the pace before it, requests put back,
pages fetched again); and the growth of each worker tree's PSS after its first 2,000 pages
of the crawl (flat: 10% at most). Every wait has a bound and says what it waits for.
Exit status 1 if a page was lost or delivered twice, a worker did not stop by itself
within 2 minutes of Redis going away (it is killed and the soak goes on), or a wait ran
out.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from distributed import EditionsServer, editions, free_port, redis_process, scrapy  # noqa: E402
from render_speed import pss_mib  # noqa: E402
from soak_crawl import memory  # noqa: E402

from spidercrawl.runner import PROJECT_ROOT, read_jsonl  # noqa: E402

STREAM = "spidercrawl:delivered"
KILL_AT, REDIS_AT = 0.3, 0.6  # shares of the pages delivered at which the faults come
PSS_EVERY = 5.0  # seconds between memory samples
FLAT = 0.10  # the growth of memory that still counts as flat
STOP_WAIT = 120  # seconds the workers may take to stop after Redis went away
_STORY = re.compile(rb"<p>(.*?)</p>", re.S)  # the story's paragraphs (no class)
_TAG = re.compile(rb"(<[^>]+>)")
_PUT_BACK = re.compile(  # scheduler.recover_dead_workers's line; a worker is HOST-PID-HEX
    r"Worker \S+-(\d+)-[0-9a-f]+ stopped answering \(no heartbeat for \d+ s\): its (\d+) unfin"
)


class SoakError(Exception):
    """A wait that ran out, or a worker that did not do what it should."""


class DistinctEditions(EditionsServer):
    """The demo's editions, each article's text its own (a word after every fourth word of
    the story: no 5-word shingle shared); each article fetch recorded (time, path)."""

    def __init__(self, pages: int, site_number: int) -> None:
        super().__init__(pages)
        self.numbers = {path: n for n, path in enumerate(self.paths)}
        self.site_number = site_number
        self.fetches: list[tuple[float, str]] = []

    def page(self, path: str) -> bytes:
        self.fetches.append((time.time(), path))
        word = f" s{self.site_number}p{self.numbers[path]} ".encode()
        spaces = itertools.count(1)

        def marked(match: re.Match[bytes]) -> bytes:
            parts = _TAG.split(match.group(1))
            parts[::2] = [
                re.sub(rb" ", lambda _: word if next(spaces) % 4 == 0 else b" ", text)
                for text in parts[::2]
            ]  # the text between tags
            return b"<p>" + b"".join(parts) + b"</p>"

        return _STORY.sub(marked, super().page(path))

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # not a killed worker's
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class Redis:
    """A ``redis-server`` keeping an append-only file, every write synced (as in
    tests/test_redis_faults.py), that can be killed and started again from it."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.client = redis.Redis(port=self.port, socket_timeout=10)
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float) -> None:
        self.process = redis_process(
            self.folder, self.port, "--save", "", "--appendonly", "yes",
            "--appendfsync", "always", timeout=timeout,
        )  # fmt: skip

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def pss(self) -> float:
        return pss_mib([self.process.pid]) if self.process and self.process.poll() is None else 0


@dataclass
class Worker:
    name: str
    machine: str
    process: subprocess.Popen
    log: Path
    samples: list[tuple[float, float, float]] = field(default_factory=list)  # this interval
    rows: list[tuple[int, float]] = field(default_factory=list)  # (pages, PSS MiB) per row
    started_at_pages: int = 0

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill_hard(self) -> None:
        """``kill -9`` of the crawl and its browser (its process group): no clean-up runs."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def text(self) -> str:
        return self.log.read_text("utf-8", errors="replace")


@dataclass
class Fault:
    what: str
    at: float  # time.time()
    pages: int  # delivered before it
    stopped: list[int]  # the process ids of the workers it stopped
    put_back: int = 0  # their in-flight requests put back in the queue (the workers' logs)


class Soak:
    def __init__(self, args: argparse.Namespace, work: Path, redis: Redis) -> None:
        self.args, self.work, self.redis = args, work, redis
        self.expected = args.sites * args.pages
        self.delivered = 0
        self.workers: dict[str, Worker] = {}  # the current worker of each machine
        self.every_worker: list[Worker] = []
        self.faults: list[Fault] = []
        self.started = time.monotonic()
        self.started_wall = time.time()
        self.deadline = self.started + args.timeout
        self.next_row = args.every
        self.last_row = (self.started, 0)
        self.last_sample = 0.0
        self.last_delivery = self.started
        self.left: dict[str, int] = {}  # what was left in Redis when the workers stopped
        self.problems: list[str] = []  # workers that did not do what they should
        self.redis_samples: list[float] = []

    # --- workers ---------------------------------------------------------------------------

    def start_worker(self, machine: str) -> Worker:
        folder = self.work / machine
        settings = {"REDIS_URL": self.redis.url, "MODELS_DIR": folder / "models",
                    "STATE_DIR": folder / "state"}  # fmt: skip
        name = f"w{len(self.every_worker) + 1}"
        log = self.work / f"{name}-{machine}.log"
        with log.open("w") as handle:  # its own process group: a kill takes its browser too
            process = subprocess.Popen(
                scrapy(settings=settings), cwd=PROJECT_ROOT, stdout=handle,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        worker = Worker(name, machine, process, log, started_at_pages=self.delivered)
        self.workers[machine] = worker
        self.every_worker.append(worker)
        print(f"  {name} started on machine {machine} at {self.delivered} pages", flush=True)
        return worker

    def live(self) -> list[Worker]:
        return [w for w in self.workers.values() if w.alive()]

    # --- watching --------------------------------------------------------------------------

    def poll(self) -> None:
        """Pages delivered so far (the stream's length: nothing collects during the run),
        memory samples, and a row of the table every ``--every`` pages."""
        now = time.monotonic()
        with contextlib.suppress(redis.RedisError):  # Redis down: the count stays
            delivered = int(self.redis.client.xlen(STREAM))
            if delivered != self.delivered:
                self.delivered, self.last_delivery = delivered, now
        if now - self.last_sample >= PSS_EVERY:
            self.last_sample = now
            for worker in self.live():
                worker.samples.append(memory(worker.process.pid))
            self.redis_samples.append(self.redis.pss())
        if self.delivered >= self.next_row:
            self.row(now)

    def row(self, now: float) -> None:
        then, pages_then = self.last_row
        pace = (self.delivered - pages_then) / max(now - then, 1e-9)
        cells = []
        for machine in sorted(self.workers):
            worker = self.workers[machine]
            samples = worker.samples or ([memory(worker.process.pid)] if worker.alive() else [])
            if not samples:
                cells.append(f"{worker.name} gone")
                continue
            crawl, chromium, driver = (sum(s[i] for s in samples) / len(samples) for i in range(3))
            total = crawl + chromium + driver
            worker.rows.append((self.delivered, total))
            cells.append(f"{worker.name} {crawl:.0f}+{chromium:.0f}+{driver:.0f}={total:.0f}")
            worker.samples = []
        redis_mib = sum(self.redis_samples) / len(self.redis_samples) if self.redis_samples else 0
        self.redis_samples = []
        print(f"| {self.delivered} | {now - self.started:.0f} | {pace:.2f} | "
              + " | ".join(cells) + f" | {redis_mib:.0f} |", flush=True)  # fmt: skip
        self.last_row = (now, self.delivered)
        self.next_row = (self.delivered // self.args.every + 1) * self.args.every

    def last_row_now(self) -> None:
        """The row of the pages since the last one, its pace up to the last delivery."""
        if self.delivered > self.last_row[1]:
            self.row(self.last_delivery)

    def wait(self, condition: Callable[[], bool], timeout: float, what: str) -> float:
        """Watch until ``condition`` holds; at most ``timeout`` seconds (and never past the
        run's ``--timeout``). Returns the seconds waited."""
        started = time.monotonic()
        deadline = min(started + timeout, self.deadline)
        while True:
            self.poll()
            if condition():
                return time.monotonic() - started
            if time.monotonic() >= deadline:
                raise SoakError(f"waited {time.monotonic() - started:.0f} s for {what}: in vain")
            time.sleep(1)

    def until_share(self, share: float, what: str) -> None:
        target = int(self.expected * share)

        def reached() -> bool:
            if not self.live():
                raise SoakError(f"every worker stopped at {self.delivered} pages, before {what}")
            return self.delivered >= target

        self.wait(reached, self.args.timeout, f"{target} pages delivered ({what})")

    # --- the faults ------------------------------------------------------------------------

    def kill_a_worker(self) -> None:
        worker = self.workers["A"]
        fault = Fault("kill -9 of a worker", time.time(), self.delivered, [worker.process.pid])
        self.faults.append(fault)
        print(f"  kill -9 of {worker.name} (machine A) at {self.delivered} pages", flush=True)
        worker.kill_hard()
        self.start_worker("A")

    def restart_redis(self) -> None:
        stopping = self.live()
        pids = [w.process.pid for w in stopping]
        self.faults.append(Fault("Redis killed and restarted", time.time(), self.delivered, pids))
        print(f"  Redis killed at {self.delivered} pages", flush=True)
        self.redis.kill()
        what = "the workers to stop by themselves after Redis went away"
        try:
            waited = self.wait(lambda: not self.live(), STOP_WAIT, what)
            print(f"  the workers stopped {waited:.0f} s after Redis went away", flush=True)
        except SoakError as error:
            print(f"  {error}", flush=True)
        for worker in stopping:
            if worker.alive():  # as an operator would: the crawl goes on without it
                worker.kill_hard()
                self.problem(f"{worker.name} had not stopped {STOP_WAIT} s after Redis went "
                             f"away: killed with kill -9 (its log: {worker.log})")  # fmt: skip
            elif "Redis stopped answering" not in worker.text():
                self.problem(f"{worker.name} stopped without its line on Redis loss (its log: "
                             f"{worker.log})")  # fmt: skip
        self.redis.start(timeout=300)  # a large append-only file takes a while to load
        print(f"  Redis answers again (from its append-only file) at {self.delivered} pages",
              flush=True)  # fmt: skip
        for machine in sorted(self.workers):
            self.start_worker(machine)

    def problem(self, what: str) -> None:
        self.problems.append(what)
        print(f"  problem: {what}", flush=True)

    def left_in_redis(self) -> dict[str, int]:
        """Requests queued, in flight (workers that stopped), sites not started."""
        client = self.redis.client
        in_flight = sum(client.hlen(k) for k in client.scan_iter("spidercrawl:inflight:*"))
        return {
            "requests queued": int(client.zcard("spidercrawl:requests")),
            "requests in flight": in_flight,
            "sites queued": int(client.llen("spidercrawl:sites:queue")),
        }


def collected(work: Path, url: str) -> list[dict]:
    """Every delivered article, by ``python -m spidercrawl.collect`` (one run)."""
    out = work / "articles"
    subprocess.run(
        [sys.executable, "-m", "spidercrawl.collect", "--redis", url,
         "-s", f"ARTICLES_FILE={out / '%(site)s.jsonl'}", "-s", "JSONFEED_PATH="],
        cwd=PROJECT_ROOT, check=True, capture_output=True, timeout=1800,
    )  # fmt: skip
    return [a for path in sorted(out.glob("*.jsonl")) for a in read_jsonl(path)]


def fault_costs(soak: Soak, articles: list[dict], servers: list[DistinctEditions]) -> None:
    """For each fault: how long delivery stopped (to the next page delivered); the time
    lost: how long the next ``--every`` pages took (fewer if the next fault came first)
    less the time they take at the pace before it (since the previous fault or the start,
    its last 2 x ``--every`` pages at most); the requests of the workers it stopped put
    back in the queue; the pages fetched before it and again after it (until the next)."""
    times = sorted(int(a["delivery_id"].split("-")[0]) / 1000 for a in articles)
    fetches = [(t, n, path) for n, s in enumerate(servers) for t, path in s.fetches]
    every = soak.args.every
    for number, fault in enumerate(soak.faults):
        previous = soak.faults[number - 1].at if number else soak.started_wall
        following = soak.faults[number + 1] if number + 1 < len(soak.faults) else None
        before = [t for t in times if previous <= t < fault.at][-2 * every :]
        after = [t for t in times if t >= fault.at]
        count = min(every, len(after), following.pages - fault.pages if following else every)
        line = f"- {fault.what} at {fault.pages} pages:"
        if after:
            line += f" delivery went on {after[0] - fault.at:.0f} s later;"
        if len(before) > 1 and count > 0:
            pace = len(before) / (fault.at - before[0])
            took, expected = after[count - 1] - fault.at, count / pace
            line += (f" the next {count} pages took {took:.0f} s, {expected:.0f} s at the pace "
                     f"before it ({pace:.2f} pages/s): {took - expected:.0f} s lost;")  # fmt: skip
        end = following.at if following else float("inf")
        fetched_before = {(n, p) for t, n, p in fetches if t < fault.at}
        again = {(n, p) for t, n, p in fetches if fault.at <= t < end} & fetched_before
        print(f"{line} requests put back in the queue: {fault.put_back}; pages fetched "
              f"before it and again after it: {len(again)}")  # fmt: skip


def memory_growth(soak: Soak) -> float | None:
    """The largest growth of a worker tree's PSS over its rows after its first
    ``--flat-after`` pages of the crawl, against its first such row; printed per worker.
    None if no worker had two such rows."""
    worst = None
    for worker in soak.every_worker:
        rows = [mib for pages, mib in worker.rows
                if pages - worker.started_at_pages >= soak.args.flat_after]  # fmt: skip
        if len(rows) < 2:
            print(f"  {worker.name}: fewer than 2 rows after its first "
                  f"{soak.args.flat_after} pages")  # fmt: skip
            continue
        growth = (max(rows[1:]) - rows[0]) / rows[0]
        worst = growth if worst is None else max(worst, growth)
        print(f"  {worker.name} ({worker.machine}): {', '.join(f'{m:.0f}' for m in rows)} MiB: "
              f"{growth:+.0%}")  # fmt: skip
    return worst


def run(args: argparse.Namespace, work: Path) -> int:
    with ExitStack() as stack:
        servers = [
            stack.enter_context(editions(args.pages, server=DistinctEditions(args.pages, n)))
            for n in range(args.sites)
        ]
        sites = {f"soak-{n:03d}.example": s.base_url for n, s in enumerate(servers)}
        (work / "redis").mkdir()
        redis = Redis(work / "redis")
        redis.start(timeout=30)
        stack.callback(redis.kill)
        soak = Soak(args, work, redis)
        stack.callback(lambda: [w.kill_hard() for w in soak.every_worker])
        (work / "sites.txt").write_text("".join(f"{s} {b}\n" for s, b in sites.items()))
        subprocess.run([sys.executable, "-m", "spidercrawl.enqueue", "--redis", redis.url,
                        str(work / "sites.txt")], cwd=PROJECT_ROOT, check=True,
                       capture_output=True, timeout=300)  # fmt: skip
        print(f"{args.sites} sites x {args.pages} pages = {soak.expected} pages, models learned "
              f"in the crawl, 2 workers; logs in {work}")  # fmt: skip
        print("| pages | s | pages/s | A: PSS MiB crawl+Chromium+driver | B | Redis MiB |")
        print("|---|---|---|---|---|---|")
        soak.start_worker("A")
        soak.start_worker("B")
        soak.until_share(KILL_AT, "the kill -9 of a worker")
        soak.kill_a_worker()
        soak.until_share(REDIS_AT, "Redis killed")
        soak.restart_redis()
        soak.wait(
            lambda: not soak.live(),
            args.timeout,
            "the workers to finish and stop (nothing queued for REDIS_IDLE_CLOSE s)",
        )
        soak.last_row_now()
        soak.left = soak.left_in_redis()
        if any(soak.left.values()):
            print(
                f"  left in Redis when the last worker stopped: {soak.left}; waiting for "
                "the stopped workers' heartbeats to expire, then one more worker",
                flush=True,
            )
            soak.wait(lambda: not list(redis.client.scan_iter("spidercrawl:worker:*")), 90,
                      "the heartbeats of the stopped workers to expire")  # fmt: skip
            soak.start_worker("A")
            soak.wait(lambda: not soak.live(), args.timeout, "the last worker to stop")
            soak.last_row_now()
        seconds = soak.last_delivery - soak.started
        unchanged = sum(int(redis.client.hget(k, "unchanged") or 0)
                        for k in redis.client.scan_iter("spidercrawl:counts:*"))  # fmt: skip
        articles = collected(work, redis.url)
    logs = {w.name: w.text() for w in soak.every_worker}
    for pid, count in (m for text in logs.values() for m in _PUT_BACK.findall(text)):
        for fault in soak.faults:
            fault.put_back += int(count) if int(pid) in fault.stopped else 0
    urls = Counter(a["url"] for a in articles)
    expected = {s.base_url + p.lstrip("/") for s in servers for p in s.paths}
    lost = expected - set(urls)
    twice = sum(n - 1 for n in urls.values() if n > 1)
    print(f"\nLast page delivered after {seconds:.0f} s ({len(urls) / seconds:.2f} pages/s). "
          f"Pages expected "
          f"{len(expected)}, delivered {len(set(urls) & expected)}, lost {len(lost)}, delivered "
          f"twice {twice}; other URLs {len(set(urls) - expected)}; marked near-duplicates "
          f"{sum(1 for a in articles if a.get('duplicate_of'))}")  # fmt: skip
    print(f"Pages judged again and found unchanged (not delivered again): {unchanged}")
    if any(soak.left.values()):
        print(f"Left in Redis when the last worker stopped (one more worker delivered them): "
              f"{soak.left}")  # fmt: skip
    for url in sorted(lost)[:5]:
        print(f"  lost: {url}")
    for url, n in urls.most_common(5):
        if n > 1:
            print(f"  {n} times: {url}")
    print(
        f"Tracebacks in the workers' logs: {sum(t.count('Traceback') for t in logs.values())}"
        f"; workers' exit status: "
        f"{', '.join(f'{w.name} {w.process.returncode}' for w in soak.every_worker)}"
    )
    print("What each fault cost:")
    fault_costs(soak, articles, servers)
    print(f"Memory after each worker's first {args.flat_after} pages of the crawl (PSS of its "
          "tree per row):")  # fmt: skip
    growth = memory_growth(soak)
    if growth is None:
        print("Memory flat: not measured (no worker had two rows after its first pages)")
    else:
        print(f"Memory flat (growth at most {FLAT:.0%}): {growth <= FLAT} (largest {growth:+.0%})")
    for problem in soak.problems:
        print(f"Problem: {problem}")
    return 1 if lost or twice or soak.problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--pages", type=int, default=50, help="pages per site")
    parser.add_argument("--every", type=int, default=1000, help="pages delivered per row")
    parser.add_argument("--flat-after", type=int, default=0,
                        help="pages before memory must be flat (default: 2 rows)")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=10800, help="seconds for the whole run")
    parser.add_argument("--keep", action="store_true", help="keep the logs and files")
    args = parser.parse_args()
    args.flat_after = args.flat_after or 2 * args.every
    if shutil.which("redis-server") is None:
        sys.exit("redis-server not found: apt-get install -y redis-server")
    work = Path(tempfile.mkdtemp(prefix="soak-distributed-"))
    try:
        status = run(args, work)
    except (SoakError, RuntimeError, subprocess.SubprocessError) as error:
        print(f"soak failed: {error} (logs in {work})", file=sys.stderr)
        return 1
    if status == 0 and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
