"""Three workers on one real Redis crawl three sites: every article delivered once, each
site learned once, and the next scheduled run fetches nothing anew.

Apart from :mod:`tests.test_scale_out` (whose helpers it uses) so that xdist can run this
long test in another worker.
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

from spidercrawl.runner import read_jsonl
from tests.conftest import SITES, wait_for
from tests.test_scale_out import (
    DEMO_ARTICLES,
    assert_each_article_once,
    collect,
    crawl,
    module,
    read_pages,
    redis_settings,
    start,
)


def test_three_workers_deliver_every_article_once_and_learn_each_site_once(
    demo_copies, redis_url, tmp_path, chromium_path
) -> None:
    import redis

    sites = tmp_path / "sites.txt"
    sites.write_text("\n".join(demo_copies) + "\n", "utf-8")
    settings = redis_settings(tmp_path, redis_url)
    # The sites are queued once all three workers are on Redis (each waiting for work up
    # to REDIS_IDLE_CLOSE): queued before, one worker up early could take every site
    # before the others had started, as a loaded machine showed.
    waiting = {**settings, "REDIS_IDLE_CLOSE": 12}
    paths = [tmp_path / f"worker{n}.log" for n in range(3)]
    workers = [start(crawl(settings=waiting), path) for path in paths]
    wait_for(
        lambda: all("Worker " in path.read_text("utf-8") for path in paths),
        180, "three workers on Redis",
    )  # fmt: skip
    queued = module("spidercrawl.enqueue", "--redis", redis_url, str(sites))
    assert queued.returncode == 0 and "3 sites queued" in queued.stdout, queued.stderr
    for worker in workers:
        assert worker.wait(timeout=400) == 0
    logs = [path.read_text("utf-8") for path in paths]
    assert all("Worker " in log and "on Redis" in log for log in logs)
    assert not any("ScrapyDeprecationWarning" in log for log in logs)  # scrapy-redis's stats
    assert sum(read_pages(log) for log in logs) >= 2, logs  # the work shared out
    collected = collect(redis_url, tmp_path)
    assert collected.returncode == 0, collected.stderr[-2000:]
    assert f"{3 * DEMO_ARTICLES} articles written" in collected.stdout
    assert_each_article_once(tmp_path / "articles", SITES)
    # The same 30 stories on three sites, delivered by three workers at once: the workers
    # share one near-duplicate index, so each story's first delivery stands and the other
    # two are marked duplicate_of it.
    firsts = Counter(
        urlsplit(a["url"]).path
        for site in SITES
        for a in read_jsonl(tmp_path / "articles" / f"{site}.jsonl")
        if not a.get("duplicate_of")
    )
    assert len(firsts) == DEMO_ARTICLES and set(firsts.values()) == {1}, firsts
    client = redis.Redis.from_url(redis_url)
    assert {k.decode(): int(v) for k, v in client.hgetall("spidercrawl:learned").items()} == {
        site: 1 for site in SITES
    }  # each site learned by one worker; the others took its model
    assert sum(log.count("learned a model from") for log in logs) == 3
    assert (tmp_path / "feeds" / f"{SITES[0]}.json").exists()
    # The collector again: nothing new, nothing written twice.
    assert "0 articles written" in collect(redis_url, tmp_path).stdout
    # The next scheduled run: the sites queued again, one worker. Every known page is asked
    # for conditionally (If-None-Match) and answered 304: nothing rendered or delivered.
    assert module("spidercrawl.enqueue", "--redis", redis_url, str(sites)).returncode == 0
    rerun = start(crawl(settings=settings), tmp_path / "rerun.log")
    assert rerun.wait(timeout=400) == 0
    log = (tmp_path / "rerun.log").read_text("utf-8")
    for site in SITES:
        assert f"{site}: 0 pages rendered, 0 by the fast path" in log, log[-3000:]
        assert f"0 new, 0 changed, 0 unchanged, 0 duplicates, {DEMO_ARTICLES} not modified" in log
    assert "0 articles written" in collect(redis_url, tmp_path).stdout
    assert_each_article_once(tmp_path / "articles", SITES)
