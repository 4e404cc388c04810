"""A real Redis that fails: foreign or hostile keys, Redis down at the start. Nothing lost,
nothing run, one clear line. Redis killed in the middle of a crawl: tests/test_redis_restarts.py
and tests/test_redis_dies_while_learning.py.

The helpers (a real ``redis-server`` on a free loopback port, the demo under three site
names, ``scrapy crawl`` processes) are those of :mod:`tests.test_scale_out`.
"""

from __future__ import annotations

import json
import os
import subprocess

from spidercrawl.runner import PROJECT_ROOT
from tests.conftest import SITES, free_port
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
