"""Distributed crawl throughput: 1, 2, 3 workers on one Redis, fast path after learning.

    .venv/bin/python benchmarks/distributed.py                 # 3 sites x 300 pages
    .venv/bin/python benchmarks/distributed.py --big 10000     # + 10,000 pages, 2 workers

Three local sites (the demo's 30 pages served as N editions each: every copy has its own
URL and a distinct first paragraph, so none is a duplicate of another), their models
learned beforehand by one short crawl each, then for 1, 2 and 3 workers: a fresh
``redis-server``, the sites queued with ``python -m spidercrawl.enqueue``, the workers
started together, and ``python -m spidercrawl.collect`` afterwards. Printed per run:
articles delivered, articles/s over the delivery window (first to last article in the
stream) and over the workers' wall time, duplicates and lost pages in the collected files.
``--big N``: one site of N pages crawled by 2 workers, each worker's memory every 1,000
pages (from its log).
"""

from __future__ import annotations

import argparse
import mimetypes
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT, read_jsonl  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot  # noqa: E402

DEMO = SiteSnapshot(DEMO_SITE)
_FIRST_PARAGRAPH = re.compile(rb"(<p>)")  # the article's first paragraph (no class)
_TITLE = re.compile(rb"(<title[^>]*>)")


class EditionsServer(ThreadingHTTPServer):
    """The demo's pages as ``pages`` pages: page j is edition j // 30 of demo page j % 30."""

    daemon_threads = True

    def __init__(self, pages: int) -> None:
        super().__init__(("127.0.0.1", 0), EditionsHandler)
        self.pages = pages
        self.base_url = f"http://127.0.0.1:{self.server_address[1]}/"
        ids = DEMO.page_ids
        self.paths: dict[str, tuple[str, int]] = {}
        for number in range(pages):
            page_id, edition = ids[number % len(ids)], number // len(ids)
            path = DEMO.path_of[page_id]
            if edition:
                path = f"{path.rstrip('/')}-e{edition}/"
            self.paths[path] = (page_id, edition)

    def page(self, path: str) -> bytes:
        """The HTML of the page at ``path`` (one of ``self.paths``)."""
        page_id, edition = self.paths[path]
        body = DEMO.page_bytes(page_id)
        if edition:  # its own URL (canonical, og:url) and its own text: not a duplicate
            original = DEMO.path_of[page_id]
            body = body.replace(original.encode(), path.encode())
            mark = f"Edition {edition}. ".encode()
            body = _FIRST_PARAGRAPH.sub(lambda m: m.group(1) + mark, body, count=1)
            body = _TITLE.sub(lambda m: m.group(1) + mark, body, count=1)
        return body


class EditionsHandler(BaseHTTPRequestHandler):
    server: EditionsServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        server = self.server
        if path in server.paths:
            self._send(200, server.page(path), "text/html")
        elif path == "/robots.txt":
            robots = f"User-agent: *\nDisallow: /private/\nSitemap: {server.base_url}sitemap.xml\n"
            self._send(200, robots.encode())  # as the demo's
        elif path == "/sitemap.xml":
            urls = "".join(
                f"<url><loc>{server.base_url}{p.lstrip('/')}</loc></url>" for p in server.paths
            )
            namespace = "http://www.sitemaps.org/schemas/sitemap/0.9"
            sitemap = f'<?xml version="1.0"?><urlset xmlns="{namespace}">{urls}</urlset>'
            self._send(200, sitemap.encode(), "application/xml")
        elif path == "/":
            self._send(200, b"<html><body><h1>Editions</h1></body></html>", "text/html")
        elif (extra := DEMO.extra_file(path)) is not None:
            kind = mimetypes.guess_type(extra.name)[0] or "application/octet-stream"
            self._send(200, extra.read_bytes(), kind)
        else:
            self._send(404, b"not found")

    def _send(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def editions(pages: int, server: EditionsServer | None = None):
    """``EditionsServer(pages)`` (or ``server``) serving in a thread."""
    server = server or EditionsServer(pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def redis_process(folder: Path, port: int, *options: str, timeout: float = 10) -> subprocess.Popen:
    """A ``redis-server`` on 127.0.0.1:``port`` keeping its files in ``folder``, returned
    once it answers PING (an append-only file loaded); ``timeout`` seconds at most."""
    import redis

    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
         *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = redis.Redis(port=port, socket_timeout=1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            client.ping()  # refused while starting; LOADING while it reads its files
            return process
        except redis.RedisError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"redis-server on port {port} did not answer within {timeout:.0f} s")


@contextmanager
def redis_server(folder: Path):
    port = free_port()
    process = redis_process(folder, port, "--save", "", "--appendonly", "no")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def scrapy(*arguments: str, settings: dict[str, object]) -> list[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "news", *arguments]
    for name, value in {"LOG_LEVEL": "INFO", **settings}.items():
        command += ["-s", f"{name}={value}"]
    return command


def learn_models(sites: dict[str, str], models: Path, work: Path) -> None:
    """One short local crawl per site: its model, saved where the workers read it."""
    for site, base_url in sites.items():
        subprocess.run(
            scrapy("-a", f"site={site}", "-a", f"base_url={base_url}", "-a", "max_pages=12",
                   settings={"MODELS_DIR": models, "STATE_DIR": work / "learn-state",
                             "ARTICLES_FILE": "", "JSONFEED_ENABLED": False}),
            cwd=PROJECT_ROOT, check=True, capture_output=True, timeout=600,
        )  # fmt: skip


def run_workers(
    sites: dict[str, str], count: int, models: Path, work: Path, label: str = "workers"
) -> dict[str, object]:
    """One distributed run on a fresh Redis; what it delivered and how fast."""
    import redis

    folder = work / f"{label}-{count}"
    folder.mkdir()
    with redis_server(folder) as url:
        lines = "\n".join(f"{site} {base}" for site, base in sites.items())
        (folder / "sites.txt").write_text(lines + "\n", "utf-8")
        subprocess.run([sys.executable, "-m", "spidercrawl.enqueue", "--redis", url,
                        str(folder / "sites.txt")], cwd=PROJECT_ROOT, check=True,
                       capture_output=True)  # fmt: skip
        settings = {"REDIS_URL": url, "REDIS_IDLE_CLOSE": 3, "MODELS_DIR": models,
                    "STATE_DIR": folder / "state"}  # fmt: skip
        started = time.monotonic()
        logs = [folder / f"worker{n}.log" for n in range(count)]
        workers = [
            subprocess.Popen(scrapy(settings=settings), cwd=PROJECT_ROOT,
                             stdout=log.open("w"), stderr=subprocess.STDOUT)
            for log in logs
        ]  # fmt: skip
        for worker in workers:
            worker.wait(timeout=3600)
        wall = time.monotonic() - started - 3  # the idle wait before they stop
        client = redis.Redis.from_url(url)
        entries = client.xrange("spidercrawl:delivered")
        window = (
            (int(entries[-1][0].split(b"-")[0]) - int(entries[0][0].split(b"-")[0])) / 1000
            if len(entries) > 1 else 0.0
        )  # fmt: skip
        subprocess.run([sys.executable, "-m", "spidercrawl.collect", "--redis", url,
                        "-s", f"ARTICLES_FILE={folder / 'out' / '%(site)s.jsonl'}",
                        "-s", "JSONFEED_PATH="], cwd=PROJECT_ROOT, check=True,
                       capture_output=True)  # fmt: skip
    urls: Counter[str] = Counter()
    for site in sites:
        path = folder / "out" / f"{site}.jsonl"
        urls.update(a["url"] for a in read_jsonl(path)) if path.exists() else None
    memory = [
        (log.name, [float(m) for m in re.findall(r"holds (\d+) MB", log.read_text())])
        for log in logs
    ]
    return {
        "workers": count,
        "delivered": sum(urls.values()),
        "duplicates": sum(n - 1 for n in urls.values() if n > 1),
        "window_s": window,
        "wall_s": wall,
        "memory": memory,
        "fast_path": sum(log.read_text().count("by the fast path") for log in logs),
    }


def compare_worker_counts(pages: int, counts: list[int], work: Path) -> None:
    """The table: 3 sites of ``pages`` pages, for each number of workers."""
    names = ("bench-a.example", "bench-b.example", "bench-c.example")
    with ExitStack() as stack:
        servers = [stack.enter_context(editions(pages)) for _ in names]
        sites = {n: s.base_url for n, s in zip(names, servers, strict=True)}
        models = work / "models"
        learn_models(sites, models, work)
        expected = pages * len(sites)
        print(f"{len(sites)} sites x {pages} pages, models learned beforehand; "
              f"{expected} articles expected per run")  # fmt: skip
        print("| workers | delivered | lost | duplicates | articles/s (delivery) | "
              "articles/s (wall) |")  # fmt: skip
        print("|---|---|---|---|---|---|")
        for count in counts:
            result = run_workers(sites, count, models, work)
            delivered = int(result["delivered"])
            window, wall = float(result["window_s"]), float(result["wall_s"])
            rate = delivered / window if window else 0.0
            print(
                f"| {count} | {delivered} | {expected - delivered} | {result['duplicates']} | "
                f"{rate:.1f} | {delivered / wall:.1f} |",
                flush=True,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=300, help="pages per site")
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--big", type=int, default=0, help="pages of the 2-worker memory run")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("redis-server not found: apt-get install -y redis-server")
    work = Path(tempfile.mkdtemp(prefix="distributed-"))
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    if counts:
        compare_worker_counts(args.pages, counts, work)
    if args.big:
        with editions(args.big) as server:
            sites = {"bench-big.example": server.base_url}
            learn_models(sites, work / "big-models", work)
            result = run_workers(sites, 2, work / "big-models", work, "big")
        delivered = int(result["delivered"])
        print(f"\n{args.big} pages, 2 workers: {delivered} delivered, "
              f"{args.big - delivered} lost, {result['duplicates']} duplicates, "
              f"{delivered / float(result['wall_s']):.1f} articles/s (wall)")  # fmt: skip
        for name, curve in result["memory"]:  # type: ignore[union-attr]
            print(f"  {name}: MB every 1,000 pages: {', '.join(f'{m:.0f}' for m in curve)}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
