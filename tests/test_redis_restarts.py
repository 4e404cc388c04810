"""Redis killed, as in a crash, right after one step of a worker's, and started again from
its append-only file: nothing lost, nothing delivered twice.

Apart from :mod:`tests.test_redis_faults` so that xdist can run these long crawls in another
worker. The helpers are those of :mod:`tests.test_scale_out`.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import _answers, free_port, wait_for
from tests.test_scale_out import (
    assert_each_article_once,
    collect,
    crawl,
    kill_hard,
    module,
    redis_settings,
    start,
)

PAGES = 14  # pages crawled of the site (its first 10 learn its model)


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
