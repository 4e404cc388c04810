"""Many sites, killed crawls, many workers on a real Redis: nothing lost, nothing twice.

Every crawl here is a real ``scrapy crawl news`` process with Chromium; the Redis is a real
``redis-server`` on a free loopback port; sites are copies of the demo served locally
under different names.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from spidercrawl.runner import PROJECT_ROOT, read_jsonl
from tests.conftest import SITES, free_port, wait_for

DEMO_ARTICLES = 30


def crawl(*arguments: str, settings: dict[str, object]) -> list[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "news", *arguments]
    for name, value in {"LOG_LEVEL": "INFO", **settings}.items():
        command += ["-s", f"{name}={value}"]
    return command


def start(command: list[str], log: Path) -> subprocess.Popen:
    """A crawl in its own process group, so that a kill takes its browser with it."""
    handle = log.open("w")
    return subprocess.Popen(
        command, cwd=PROJECT_ROOT, stdout=handle, stderr=handle, start_new_session=True
    )


def kill_hard(process: subprocess.Popen) -> None:
    """``kill -9`` of the crawl and its Chromium: no clean-up code runs."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def local_settings(root: Path) -> dict[str, object]:
    return {
        "MODELS_DIR": root / "models",
        "STATE_DIR": root / "state",
        "ARTICLES_FILE": root / "articles" / "%(site)s.jsonl",
        "JSONFEED_PATH": root / "feeds" / "%(site)s.json",
    }


def assert_each_article_once(
    folder: Path, sites: tuple[str, ...], pages: int = DEMO_ARTICLES
) -> None:
    for site in sites:
        articles = read_jsonl(folder / f"{site}.jsonl")
        repeated = [u for u, n in Counter(a["url"] for a in articles).items() if n > 1]
        assert not repeated, f"{site}: delivered twice: {repeated}"
        assert len(articles) == pages, f"{site}: {len(articles)} articles"


# --- one machine ---------------------------------------------------------------------------


def test_one_run_crawls_the_sites_of_a_sites_file(demo_copies, tmp_path, chromium_path) -> None:
    first, second = (line.split() for line in demo_copies[:2])
    unreachable = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    sites = tmp_path / "sites.txt"
    sites.write_text(
        f"# two sites, and what people get wrong\n\n{first[0]} {first[1]}   # a comment\n"
        f"gone.example {unreachable}\nthis is not a site line\n{second[0]} {second[1]}\n"
        f"{first[0]} {first[1]}\nhttps://{first[0]}/news/page.html\n",
        "utf-8",
    )
    result = subprocess.run(
        crawl("-a", f"sites={sites}", "-a", "max_pages=8", settings=local_settings(tmp_path)),
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    for site in SITES[:2]:
        articles = read_jsonl(tmp_path / "articles" / f"{site}.jsonl")
        assert len(articles) == 8 and {a["site"] for a in articles} == {site}  # per-site limit
        summary = [
            line for line in result.stderr.splitlines() if f"{site}: 8 pages rendered" in line
        ]
        assert len(summary) == 1 and "articles: 8 new, 0 changed" in summary[0]
    assert result.stderr.count("Launching browser") == 1  # one browser serves every site
    # The same stories under two hosts: of each pair, the one delivered second is marked a
    # near-duplicate of the first, and left out of its site's feed; no other is marked.
    by_path = {
        site: {
            urlsplit(a["url"]).path: a for a in read_jsonl(tmp_path / "articles" / f"{site}.jsonl")
        }
        for site in SITES[:2]
    }
    common = set(by_path[SITES[0]]) & set(by_path[SITES[1]])
    assert common
    for path in common:
        pair = [by_path[site][path] for site in SITES[:2]]
        marked = [a for a in pair if a.get("duplicate_of")]
        assert len(marked) == 1, pair
        (first,) = [a for a in pair if not a.get("duplicate_of")]
        original = {"url": first["canonical_url"] or first["url"], "site": first["site"]}
        assert marked[0]["duplicate_of"] == original
    others = [a for site in SITES[:2] for path, a in by_path[site].items() if path not in common]
    assert not any(a.get("duplicate_of") for a in others)
    feeds = [
        json.loads((tmp_path / "feeds" / f"{site}.json").read_text("utf-8")) for site in SITES[:2]
    ]
    assert sum(len(feed["items"]) for feed in feeds) == 16 - len(common)
    # Each bad line logged once with its number; the unreachable site failed and said so.
    assert result.stderr.count("line 5 skipped: a site line is HOST or HOST BASE_URL") == 1
    assert result.stderr.count(f"line 7: {SITES[0]} is named again: crawled once") == 1
    assert f"line 8: {SITES[0]} is crawled from its home page (the path of" in result.stderr
    assert f"gone.example: its home page {unreachable} failed (" in result.stderr
    assert "gone.example: nothing crawled: its home page failed" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_crawl_killed_with_kill_9_resumes_without_loss_or_repeat(
    demo_copies, tmp_path, chromium_path
) -> None:
    site, base_url = demo_copies[0].split()
    command = crawl("-a", f"site={site}", "-a", f"base_url={base_url}",
                    settings=local_settings(tmp_path))  # fmt: skip
    articles = tmp_path / "articles" / f"{site}.jsonl"
    first = start(command, tmp_path / "first.log")
    wait_for(lambda: line_count(articles) >= 12, 240, "12 articles before the kill")
    kill_hard(first)
    delivered_before = line_count(articles)
    assert delivered_before < DEMO_ARTICLES, "the crawl ended before it could be killed"
    again = subprocess.run(
        command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert_each_article_once(tmp_path / "articles", (site,))
    summary = re.search(
        r"articles: (\d+) new, (\d+) changed, (\d+) unchanged, 0 duplicates, (\d+) not modified",
        again.stderr,
    )
    assert summary, again.stderr[-3000:]
    new, changed, unchanged, not_modified = map(int, summary.groups())
    assert (new, changed) == (DEMO_ARTICLES - delivered_before, 0)
    assert unchanged + not_modified == delivered_before  # known: judged, or HTTP 304
    feed = json.loads((tmp_path / "feeds" / f"{site}.json").read_text("utf-8"))
    assert len(feed["items"]) == DEMO_ARTICLES  # the killed run's articles reached it too


# --- many workers on Redis ----------------------------------------------------------------


def redis_settings(root: Path, url: str) -> dict[str, object]:
    return {
        **local_settings(root),
        "REDIS_URL": url,
        # Idle, a worker stops at the engine's first idle check past this; requests still
        # in flight hold it on their own bound (REDIS_WORKER_TIMEOUT).
        "REDIS_IDLE_CLOSE": 2,
        "REDIS_WORKER_TIMEOUT": 3,  # a killed worker's pages go back after 3 s
        "REDIS_LEARN_LOCK": 20,
    }


# A worker's summary of a site at its close: the pages it rendered and read plainly.
SITE_PAGES = re.compile(r": (\d+) pages rendered, (\d+) by the fast path")


def read_pages(log: str) -> bool:
    """Whether the worker of ``log`` read pages of any site: one worker can take every site
    off the site queue while the others read their pages from the shared request queue
    (its start requests are done in a moment; it is idle again first)."""
    return any(int(rendered) + int(plain) for rendered, plain in SITE_PAGES.findall(log))


def module(name: str, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", name, *arguments],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def collect(url: str, root: Path) -> subprocess.CompletedProcess:
    return module(
        "spidercrawl.collect", "--redis", url,
        "-s", f"ARTICLES_FILE={root / 'articles' / '%(site)s.jsonl'}",
        "-s", f"JSONFEED_PATH={root / 'feeds' / '%(site)s.json'}",
    )  # fmt: skip


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


def schedulers_by_hand(redis_url: str, count: int = 2) -> list:
    """``count`` workers' schedulers on one real Redis, opened without a reactor: their
    heartbeats are given by calling ``beat``."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from spidercrawl.distributed.scheduler import ReliableScheduler

    settings = {
        "REDIS_URL": redis_url,
        "SCHEDULER_QUEUE_KEY": "spidercrawl:requests",
        "SCHEDULER_DUPEFILTER_KEY": "spidercrawl:dupefilter",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,
        "REDIS_WORKER_TIMEOUT": 3,
    }
    schedulers = []
    for _ in range(count):
        crawler = get_crawler(Spider, settings)
        scheduler = ReliableScheduler.from_crawler(crawler)
        scheduler.open(Spider.from_crawler(crawler, name="news"))
        scheduler.heartbeat.stop()
        schedulers.append(scheduler)
    return schedulers


def test_a_request_stays_in_flight_until_its_page_and_those_it_replaced_are_done(
    redis_url,
) -> None:
    """Taking a request and recording it in flight is one step, as is filtering and queueing
    one: a Redis killed between two steps lost a request (1 article of 30, 1 run in 7)."""
    import redis
    from scrapy import Request

    client = redis.Redis.from_url(redis_url)
    first, second = schedulers_by_hand(redis_url)
    page = "http://127.0.0.1:1/story/"
    assert first.enqueue_request(Request(page)) and not first.enqueue_request(Request(page))
    assert client.zcard("spidercrawl:requests") == 1
    taken = first.next_request()
    assert taken is not None and taken.url == page
    assert client.zcard("spidercrawl:requests") == 0 and client.hlen(first.inflight_key) == 1
    # Its page is fetched plainly first, then rendered: a second request of the same URL.
    rendered = taken.replace(meta={**taken.meta, "render": True}, dont_filter=True)
    assert first.enqueue_request(rendered)
    again = first.next_request()
    assert again is not None and again.meta["render"]
    assert client.hlen(first.inflight_key) == 2
    first.done(again)
    assert client.hlen(first.inflight_key) == 0  # the render and the plain fetch it replaced
    # A worker that dies holding a request: another puts it back, and it is taken again.
    assert first.enqueue_request(Request(page + "2/"))
    held = first.next_request()
    assert held is not None and client.hlen(first.inflight_key) == 1
    client.delete(f"spidercrawl:worker:{first.worker}")  # its heartbeat expired
    assert second.recover_dead_workers() == 1
    retaken = second.next_request()
    assert retaken is not None and retaken.url == held.url
    second.done(retaken)
    assert client.hlen(second.inflight_key) == 0 and second.next_request() is None
    # Taken for a worker that never got it (the reply lost, the step retried): back at the end.
    assert second.enqueue_request(Request(page + "3/"))
    second.pop_script(
        keys=["spidercrawl:requests", second.inflight_key, "spidercrawl:workers"],
        args=[second.worker],
    )
    assert client.zcard("spidercrawl:requests") == 0
    second.close("finished")
    assert client.zcard("spidercrawl:requests") == 1 and not client.exists(second.inflight_key)


def test_a_worker_taken_for_dead_after_a_stall_loses_nothing_when_it_dies(redis_url) -> None:
    """A worker whose heartbeat lapsed in a stall (a blocked step, a paused machine) had its
    requests put back and was struck off the workers; it went on taking requests, and when
    it died those were never put back."""
    import redis
    from scrapy import Request

    client = redis.Redis.from_url(redis_url)
    stalled, other = schedulers_by_hand(redis_url)
    page = "http://127.0.0.1:1/story/"
    for number in range(3):
        assert stalled.enqueue_request(Request(f"{page}{number}/"))
    first = stalled.next_request()
    client.delete(f"spidercrawl:worker:{stalled.worker}")  # a stall: its heartbeat lapsed
    assert other.recover_dead_workers() == 1
    assert client.zcard("spidercrawl:requests") == 3  # its request is back in the queue
    stalled.beat()  # it wakes up, and goes on
    held = [stalled.next_request(), stalled.next_request()]
    assert first is not None and None not in held
    client.delete(f"spidercrawl:worker:{stalled.worker}")  # now it dies
    assert other.recover_dead_workers() == 2
    taken = [r.url for r in iter(other.next_request, None)]  # with the one never taken
    assert len(taken) == 3 and {r.url for r in held} <= set(taken)


def test_on_redis_the_same_page_extracted_another_way_is_no_update(redis_url) -> None:
    """A page fetched twice around a killed worker, once rendered and once by the fast
    path, was delivered twice ("changed"): the same HTML is the same article."""
    import redis
    from itemadapter import ItemAdapter

    from spidercrawl.distributed.delivery import RedisDelivery
    from spidercrawl.memory import article_identity, page_digest

    delivery = RedisDelivery(redis.Redis.from_url(redis_url), "spidercrawl", incremental=True)
    url, page = "http://127.0.0.1:1/story/", page_digest("<html>the story</html>")

    def deliver(text: str, digest: str) -> str:
        article = {"url": url, "title": "A story", "text": text, "page_digest": digest}
        return delivery.deliver("site", article_identity(article), ItemAdapter(article), "now")[0]

    assert deliver("The whole story, as the classifier cut it.", page) == "new"
    assert deliver("The story, as the rules cut it.", page) == "unchanged"
    assert deliver("The story, edited.", page_digest("<html>edited</html>")) == "changed"
    assert deliver("The story, edited.", "") == "unchanged"  # its text is known


def test_a_killed_worker_loses_nothing_when_started_again(
    demo_copies, redis_url, tmp_path, chromium_path
) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    sites = tmp_path / "sites.txt"
    sites.write_text("\n".join(demo_copies[:2]) + "\n", "utf-8")
    assert module("spidercrawl.enqueue", "--redis", redis_url, str(sites)).returncode == 0
    settings = redis_settings(tmp_path, redis_url)
    doomed = start(crawl(settings=settings), tmp_path / "doomed.log")
    survivor = start(crawl(settings=settings), tmp_path / "survivor.log")

    def delivered() -> int:
        return sum(int(client.hget(f"spidercrawl:counts:{s}", "new") or 0) for s in SITES[:2])

    wait_for(lambda: delivered() >= 12, 300, "12 articles before the kill")
    kill_hard(doomed)
    assert delivered() < 2 * DEMO_ARTICLES, "the crawl ended before it could be killed"
    restarted = start(crawl(settings=settings), tmp_path / "restarted.log")
    assert survivor.wait(timeout=400) == 0 and restarted.wait(timeout=400) == 0
    logs = (tmp_path / "survivor.log").read_text() + (tmp_path / "restarted.log").read_text()
    assert "stopped answering" in logs  # its unfinished requests went back to the queue
    assert "ScrapyDeprecationWarning" not in logs  # joining a running crawl: no "Resuming"
    assert collect(redis_url, tmp_path).returncode == 0
    assert_each_article_once(tmp_path / "articles", SITES[:2])
