"""Redis killed while a worker holds a site's first pages to learn from: the worker stops,
and the next one learns the site and delivers every page once.

Apart from :mod:`tests.test_redis_restarts` (whose restartable Redis it uses) so that xdist
can run this long crawl in another worker.
"""

from __future__ import annotations

import subprocess

import pytest

from spidercrawl.runner import read_jsonl
from tests.conftest import wait_for
from tests.test_redis_restarts import PAGES, AofRedis
from tests.test_scale_out import (
    assert_each_article_once,
    collect,
    crawl,
    kill_hard,
    module,
    redis_settings,
    start,
)

STOP_WITHIN = 60  # seconds a worker may take to stop once Redis is gone


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
