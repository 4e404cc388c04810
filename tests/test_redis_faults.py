"""A real Redis that fails: foreign or hostile keys, Redis down at the start, a restart in
the middle of a crawl. Nothing lost, nothing run, one clear line.

The helpers (a real ``redis-server`` on a free loopback port, the demo under three site
names, ``scrapy crawl`` processes) are those of :mod:`tests.test_scale_out`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from spidercrawl.runner import PROJECT_ROOT
from tests.conftest import SITES, _answers, free_port, wait_for
from tests.test_scale_out import (
    assert_each_article_once,
    collect,
    crawl,
    local_settings,
    module,
    redis_settings,
    start,
)


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
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    result = subprocess.run(
        crawl(settings={**local_settings(tmp_path), "REDIS_URL": url}),
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"cannot reach Redis at {url}" in errors[0]
    queued = module("spidercrawl.enqueue", "--redis", url, "--site", "npr.org")
    assert queued.returncode == 1 and "cannot reach Redis at" in queued.stderr


def test_a_redis_restart_mid_crawl_stops_the_worker_and_loses_nothing(
    demo_copies, tmp_path, chromium_path
) -> None:
    import redis

    port = free_port()
    data = tmp_path / "redis-data"
    data.mkdir()
    server_command = [
        shutil.which("redis-server") or "redis-server", "--port", str(port),
        "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
        "--appendfsync", "always", "--dir", str(data),
    ]  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    server = subprocess.Popen(server_command, stdout=subprocess.DEVNULL)
    # Waits for events, with room for a loaded 2-core machine (the full suite's four workers).
    wait_for(lambda: _answers(port), 30, "redis-server to start")
    client = redis.Redis.from_url(url)
    site = demo_copies[0].split()[0]
    sites = tmp_path / "sites.txt"
    sites.write_text(demo_copies[0] + "\n", "utf-8")
    assert module("spidercrawl.enqueue", "--redis", url, str(sites)).returncode == 0
    settings = redis_settings(tmp_path, url)
    worker = start(crawl(settings=settings), tmp_path / "worker.log")
    try:
        wait_for(lambda: int(client.hget(f"spidercrawl:counts:{site}", "new") or 0) >= 8,
                 300, "8 articles before Redis goes down")  # fmt: skip
        server.kill()  # Redis gone, as in a crash; its append-only file keeps what it had
        server.wait(timeout=30)
        worker.wait(timeout=300)
        log = (tmp_path / "worker.log").read_text("utf-8")
        assert "Redis stopped answering" in log and "nothing is lost" in log
        assert "Traceback" not in log and "Spider closed (redis_unavailable)" in log
        server = subprocess.Popen(server_command, stdout=subprocess.DEVNULL)
        wait_for(lambda: _answers(port), 30, "redis-server to start again")
        # The stopped worker's heartbeat (kept by the append-only file) expires, and its
        # pages go back: waited for, not assumed after a fixed sleep.
        wait_for(lambda: not client.keys("spidercrawl:worker:*"), 60,
                 "the stopped worker's heartbeat to expire")  # fmt: skip
        again = start(crawl(settings=settings), tmp_path / "again.log")
        assert again.wait(timeout=400) == 0
    finally:
        for process in (worker, server):
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)  # gone, its port free: not answering the next check
    server = subprocess.Popen(server_command, stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: _answers(port), 30, "redis-server for the collector")
        assert collect(url, tmp_path).returncode == 0
    finally:
        server.kill()
    assert_each_article_once(tmp_path / "articles", (site,))
