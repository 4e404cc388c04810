"""A real Redis that fails: foreign or hostile keys, Redis down at the start, a restart in
the middle of a crawl. Nothing lost, nothing run, one clear line.

The helpers (a real ``redis-server`` on a free loopback port, the demo under three site
names, ``scrapy crawl`` processes) are those of :mod:`tests.test_scale_out`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from spidercrawl.runner import PROJECT_ROOT, read_jsonl
from tests.conftest import SITES, _answers, free_port, wait_for
from tests.test_scale_out import (
    assert_each_article_once,
    collect,
    crawl,
    kill_hard,
    local_settings,
    module,
    redis_settings,
    start,
)

PAGES = 14  # pages crawled of the site (its first 10 learn its model)
STOP_WITHIN = 60  # seconds a worker may take to stop once Redis is gone


def test_foreign_keys_and_a_broken_published_model_stop_nothing(
    demo_copies, redis_url, tmp_path, chromium_path
) -> None:
    """Another program's keys under our prefix are left alone, bad lines in the site queue
    are skipped, a published model that does not load is learned again, and queued
    requests someone else wrote (a pickle that runs a command, a request class to import)
    are skipped without running anything."""
    import pickle

    import redis

    client = redis.Redis.from_url(redis_url)
    site = SITES[0]
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    client.zadd("spidercrawl:requests", {
        pickle.dumps(Payload()): 0,
        json.dumps({"url": "http://127.0.0.1:9/", "_class": "os.system",
                    "command": f"touch {marker}"}): 0,
    })  # fmt: skip
    client.set("spidercrawl:someone-elses-counter", 7)
    client.hset("spidercrawl:model:" + site, mapping={
        "version": "2099-01-01T00:00:00Z", "model.json": b"{not json", "model.npz": b"\0"
    })  # fmt: skip
    client.rpush("spidercrawl:sites:queue", "not a site line at all", b"\xff\xfe.example")
    assert module("spidercrawl.enqueue", "--redis", redis_url, "--site", site).returncode == 0
    client.hset("spidercrawl:sites", site, demo_copies[0])  # where the local copy is
    client.lset("spidercrawl:sites:queue", -1, demo_copies[0])
    worker = start(crawl(settings=redis_settings(tmp_path, redis_url)), tmp_path / "w.log")
    assert worker.wait(timeout=400) == 0
    log = (tmp_path / "w.log").read_text("utf-8")
    assert "1 keys under spidercrawl: are not spidercrawl's (spidercrawl:someone-elses" in log
    assert log.count("Skipped a bad site line from Redis") == 2
    assert log.count(f"{site}: the published model is damaged") == 1  # asked once
    assert f"{site}: the model 2099-01-01T00:00:00Z published in Redis does not load" in log
    assert log.count("learned a model from") == 1 and "Traceback" not in log
    # Alone, it waits on no request of its own that ended without an item (its missing
    # tdmrep.json): what it was handed has ended when it is idle.
    assert "requests in flight" not in log
    assert log.count("Skipped a queued request from Redis that is not one of ours") == 2
    assert not marker.exists()
    assert client.get("spidercrawl:someone-elses-counter") == b"7"
    assert collect(redis_url, tmp_path).returncode == 0
    assert_each_article_once(tmp_path / "articles", (site,))
    # A key of ours that another program wrote with another type: one line, before anything.
    client.delete("spidercrawl:sites:queue")
    client.set("spidercrawl:sites:queue", "a string, not a list")
    result = subprocess.run(
        crawl(settings=redis_settings(tmp_path, redis_url)),
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        "error: Redis holds keys under spidercrawl: that spidercrawl did not write "
        "(spidercrawl:sites:queue is a string, not a list)" in result.stderr
    )
    queued = module("spidercrawl.enqueue", "--redis", redis_url, "--site", site)
    assert queued.returncode == 1 and "set REDIS_PREFIX to another one" in queued.stderr


def test_redis_down_at_start_is_one_clear_error(tmp_path) -> None:
    """The crawl and the enqueue each wait out the client's retries before they give up:
    they run side by side."""
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    worker = subprocess.Popen(
        crawl(settings={**local_settings(tmp_path), "REDIS_URL": url}),
        cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        queued = module("spidercrawl.enqueue", "--redis", url, "--site", "npr.org")
        _, stderr = worker.communicate(timeout=120)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(timeout=30)
    assert worker.returncode == 1
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"cannot reach Redis at {url}" in errors[0]
    assert queued.returncode == 1 and "cannot reach Redis at" in queued.stderr


class AofRedis:
    """A ``redis-server`` on a fixed loopback port keeping an append-only file (every write
    synced), killed as in a crash and started again from that file."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        folder.mkdir()
        self.command = [
            shutil.which("redis-server") or "redis-server", "--port", str(self.port),
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
            "--appendfsync", "always", "--dir", str(folder),
        ]  # fmt: skip
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL)
        # Waits for events, with room for a loaded 2-core machine (the suite's four workers).
        wait_for(lambda: _answers(self.port), 30, "redis-server to start")

    def kill(self) -> None:
        """SIGKILL, and gone: its port is free, not answered by the dying one."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


class KillingProxy:
    """A TCP relay on loopback between workers and a Redis that kills the Redis between
    two commands: once ``commands`` commands matching ``trigger`` were relayed (and
    answered, the client sending nothing before its reply), the next command any client
    sends is not relayed; Redis is killed instead, as if it died at that moment."""

    def __init__(self, redis: AofRedis, trigger: Callable[[bytes], bool], commands: int) -> None:
        self.redis, self.trigger, self.left = redis, trigger, commands
        self.killed = threading.Event()
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.redis.port), timeout=5)
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._to_redis, args=(client, server), daemon=True).start()
            threading.Thread(target=self._relay, args=(server, client), daemon=True).start()

    def _to_redis(self, client: socket.socket, server: socket.socket) -> None:
        try:
            while chunk := client.recv(1 << 16):
                with self.lock:
                    if self.left == 0 and not self.killed.is_set():
                        self.redis.kill()
                        self.killed.set()
                    if self.killed.is_set():
                        break
                    if self.trigger(chunk):
                        self.left -= 1
                    server.sendall(chunk)
        except OSError:
            pass
        for end in (client, server):
            end.close()

    @staticmethod
    def _relay(source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(1 << 16):
                target.sendall(chunk)
        for end in (source, target):
            end.close()

    def close(self) -> None:
        self.listener.close()


def _claims_a_render(site: str) -> Callable[[bytes], bool]:
    """A command that claims a page of ``site`` for the browser (it names the site's
    set of pages claimed for rendering, and not the one of pages fetched plainly)."""
    render, visit = (f"spidercrawl:claimed:{k}:{site}".encode() for k in ("render", "visit"))
    return lambda chunk: render in chunk and visit not in chunk


def _takes_a_site(chunk: bytes) -> bool:
    """A command that takes a site from the site queue (not the check of its type)."""
    taking = any(f"\r\n{command}\r\n".encode() in chunk for command in ("LPOP", "LMOVE"))
    return taking and b"spidercrawl:sites:queue" in chunk


@pytest.mark.parametrize(
    ("step", "pages"), [("a page's claim", PAGES), ("a site's taking", 4)]
)  # fmt: skip
def test_redis_killed_right_after_a_step_loses_nothing(
    step, pages, demo_copies, tmp_path, chromium_path
) -> None:
    """Redis killed right after a page's claim, or right after a site was taken from the
    site queue (a real Redis, killed by a relay that watches the commands, before the
    worker's next command): after the restart every page is delivered once. A claim and
    its request's push in two commands lost the page (read again, the sitemap skipped
    it); a site popped before its start requests were queued was lost whole."""
    import redis

    server = AofRedis(tmp_path / "redis-data")
    server.start()
    site = demo_copies[0].split()[0]
    if step == "a page's claim":
        proxy = KillingProxy(server, _claims_a_render(site), commands=4)
    else:
        proxy = KillingProxy(server, _takes_a_site, commands=1)
    sites = tmp_path / "sites.txt"
    sites.write_text(demo_copies[0] + "\n", "utf-8")
    assert module("spidercrawl.enqueue", "--redis", server.url, str(sites)).returncode == 0
    arguments = ("-a", f"max_pages={pages}")
    worker = start(crawl(*arguments, settings=redis_settings(tmp_path, proxy.url)),
                   tmp_path / "worker.log")  # fmt: skip
    try:
        assert proxy.killed.wait(timeout=300), f"no {step} came"
        assert worker.wait(timeout=120) == 0  # it stops by itself
        log = (tmp_path / "worker.log").read_text("utf-8")
        assert "Redis stopped answering" in log and "Traceback" not in log
        server.start()
        client = redis.Redis.from_url(server.url)
        wait_for(lambda: not client.keys("spidercrawl:worker:*"), 60,
                 "the stopped worker's heartbeat to expire")  # fmt: skip
        again = start(crawl(*arguments, settings=redis_settings(tmp_path, server.url)),
                      tmp_path / "again.log")  # fmt: skip
        assert again.wait(timeout=400) == 0
        assert collect(server.url, tmp_path).returncode == 0
    finally:
        proxy.close()
        if worker.poll() is None:
            kill_hard(worker)
        server.kill()
    assert_each_article_once(tmp_path / "articles", (site,), pages)


def test_a_worker_holding_pages_of_a_site_not_yet_learned_stops_when_redis_dies(
    demo_copies, tmp_path, chromium_path
) -> None:
    """Redis killed while the worker holds a site's first pages (waiting for the pages
    every worker shares, to learn the site's model): the worker stops within a bounded
    time, says that Redis went away (not that the browser failed), and after the restart
    the next worker learns the site and delivers every page once. Held pages kept the
    engine from closing, and the worker ran on forever."""
    import redis

    server = AofRedis(tmp_path / "redis-data")
    server.start()
    client = redis.Redis.from_url(server.url)
    site = demo_copies[0].split()[0]
    sites = tmp_path / "sites.txt"
    sites.write_text(demo_copies[0] + "\n", "utf-8")
    assert module("spidercrawl.enqueue", "--redis", server.url, str(sites)).returncode == 0
    arguments = ("-a", f"max_pages={PAGES}")
    settings = redis_settings(tmp_path, server.url)
    worker = start(crawl(*arguments, settings=settings), tmp_path / "worker.log")
    try:
        wait_for(lambda: client.llen(f"spidercrawl:learn:{site}") >= 3, 300,
                 "3 pages held for learning")  # fmt: skip
        assert not client.exists(f"spidercrawl:model:{site}")  # held, not learned
        server.kill()
        try:
            worker.wait(timeout=STOP_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the worker did not stop within {STOP_WITHIN} s of Redis dying")
        log = (tmp_path / "worker.log").read_text("utf-8")
        assert "Redis stopped answering" in log and "nothing is lost" in log
        assert "Spider closed (redis_unavailable)" in log and "Traceback" not in log
        assert "could be rendered" not in log  # not the browser's fault
        server.start()
        wait_for(lambda: not client.keys("spidercrawl:worker:*"), 60,
                 "the stopped worker's heartbeat to expire")  # fmt: skip
        again = start(crawl(*arguments, settings=settings), tmp_path / "again.log")
        assert again.wait(timeout=400) == 0
        assert collect(server.url, tmp_path).returncode == 0
        assert int(client.hget("spidercrawl:learned", site) or 0) == 1  # learned, once
    finally:
        if worker.poll() is None:
            kill_hard(worker)
        server.kill()
    articles = read_jsonl(tmp_path / "articles" / f"{site}.jsonl")
    assert {a["method"] for a in articles} <= {"learned", "rules", "learned+consensus"}
    assert_each_article_once(tmp_path / "articles", (site,), PAGES)


def test_the_near_duplicate_index_keys_are_ours(redis_url) -> None:
    """The shared near-duplicate index's keys are among ours: a worker starting on a Redis
    that holds them warned of keys "not spidercrawl's" at every start."""
    import redis

    from spidercrawl.distributed.keys import check_keys
    from spidercrawl.distributed.near_duplicates import SharedNearDuplicates
    from spidercrawl.near_duplicates import DeliveredArticle

    client = redis.Redis.from_url(redis_url)
    index = SharedNearDuplicates(client, "spidercrawl")
    story = " ".join(f"the harbour council voted on plan {n} near the quay" for n in range(30))
    first = DeliveredArticle("https://a.example/1", "a.example")
    assert index.check_and_add("a.example/1", first, story) is None
    second = DeliveredArticle("https://b.example/1", "b.example")
    assert index.check_and_add("b.example/1", second, story) == first
    client.set("spidercrawl:near:lock", "held by a worker")  # as while a check runs
    check = check_keys(client, "spidercrawl")
    assert check.foreign == [] and check.wrong == []
    assert client.keys("spidercrawl:near:band:*")


def test_a_page_shared_twice_to_learn_from_counts_once(redis_url) -> None:
    """A page crawled again (its worker stopped before delivering it) is shared to learn
    from once: counted twice, a site reached LEARN_MIN_PAGES with fewer pages."""
    from spidercrawl.distributed import redis_client
    from spidercrawl.distributed.learning import SharedLearning

    shared = SharedLearning(redis_client(redis_url), "spidercrawl", 30, 60)
    page = {"url": "https://a.example/1", "site": "a.example", "texts": [["a story"]]}
    assert shared.add_page("a.example", page) == 1
    assert shared.add_page("a.example", {**page, "crawled_at": "later"}) == 1
    assert shared.add_page("a.example", {**page, "url": "https://a.example/2"}) == 2
    assert [p["url"] for p in shared.pages("a.example")] == [
        "https://a.example/1",
        "https://a.example/2",
    ]
    shared.publish("a.example", "20261206T000000Z", {"model.json": b"{}"})
    assert shared.count("a.example") == 0
    assert shared.add_page("a.example", page) == 1  # a relearning starts afresh
