"""A site's tdmrep.json on many workers: the worker that reads it shares it in Redis, and a
worker that did not read it marks the pages it reserves all the same (it delivered them
without ``tdm``: an opt-out leaked). A page read before the policy was shared waits for it;
a damaged or hostile value in Redis is no policy, said once; a Redis that does not answer
leaves the policy unknown, never a crash. Real ``scrapy crawl`` workers, a real
``redis-server``, a real HTTP server and Chromium; the spider and the item step driven by
hand against the real Redis where a crawl could not time it."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
import redis
from scrapy import Request
from scrapy.http import TextResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from spidercrawl.distributed import GUARD, RedisDownError
from spidercrawl.distributed.tdm import READ_AGAIN, SharedTdm
from spidercrawl.document.reservations import MAX_TDMREP_BYTES
from spidercrawl.pipelines.tdm_policy import TdmPolicyWait
from spidercrawl.runner import read_jsonl
from spidercrawl.serve import SnapshotRequestHandler, serving
from spidercrawl.spiders.news import TDMREP_PATH, NewsSpider
from tests.conftest import free_port, wait_for
from tests.test_access_and_reservations import story
from tests.test_scale_out import collect, crawl, kill_hard, module, redis_settings, start

SITE = "press.example"
RULES = [{"location": "/pages/tdm-listed*", "tdm-reservation": 1}]
PAGES = ("tdm-listed", "tdm-listed-too", "plain", "plain-too")


def build_site(root: Path) -> Path:
    """Four stories, two under a path the site's tdmrep.json reserves."""
    site = root / SITE
    (site / "pages").mkdir(parents=True)
    for name in PAGES:
        (site / "pages" / f"{name}.html").write_text(
            f"<html><head><title>The {name} story</title></head><body><article>"
            f"<h1>The {name} story</h1>{story(name)}</article></body></html>"
        )
    (site / "files" / ".well-known").mkdir(parents=True)
    (site / "files" / ".well-known" / "tdmrep.json").write_text(json.dumps(RULES))
    return site


class HoldingHandler(SnapshotRequestHandler):
    """The site, answering robots.txt and tdmrep.json at once and every other request only
    once ``release`` is set; the paths asked for in ``fetched``."""

    release: ClassVar[threading.Event] = threading.Event()
    fetched: ClassVar[list[str]] = []

    def _respond(self, send_body: bool) -> None:
        self.fetched.append(self.path)
        if self.path not in ("/robots.txt", TDMREP_PATH):
            self.release.wait(120)
        super()._respond(send_body)


def test_a_worker_that_did_not_read_tdmrep_marks_the_pages_it_reserves(
    tmp_path, redis_url, chromium_path
) -> None:
    """The first worker starts the site and reads its tdmrep.json, while the site holds
    every other answer; it is killed, and a second worker, which never fetches the file,
    renders and delivers every page."""
    release = HoldingHandler.release = threading.Event()
    fetched = HoldingHandler.fetched = []
    client = redis.Redis.from_url(redis_url)
    settings = redis_settings(tmp_path, redis_url)
    try:
        with serving(build_site(tmp_path), handler_class=HoldingHandler) as server:
            line = f"{SITE} {server.base_url}"
            queued = module("spidercrawl.enqueue", "--redis", redis_url, "--site", SITE)
            assert queued.returncode == 0, queued.stderr
            client.hset("spidercrawl:sites", SITE, line)  # where the local copy is
            client.lset("spidercrawl:sites:queue", -1, line)
            first = start(crawl(settings=settings), tmp_path / "first.log")

            def read_and_done() -> bool:  # fetched, and its request neither queued nor held
                held = [*client.zrange("spidercrawl:requests", 0, -1)]
                for key in client.scan_iter("spidercrawl:inflight:*"):
                    held += client.hvals(key)
                return TDMREP_PATH in fetched and not any(b"tdmrep" in entry for entry in held)

            wait_for(read_and_done, 120, "the first worker to read the site's tdmrep.json")
            kill_hard(first)
            release.set()
            second = start(crawl(settings=settings), tmp_path / "second.log")
            assert second.wait(timeout=300) == 0, (tmp_path / "second.log").read_text()[-3000:]
    finally:
        release.set()
    log = (tmp_path / "second.log").read_text("utf-8")
    assert fetched.count(TDMREP_PATH) == 1  # read by the first worker only
    assert "Traceback" not in log
    assert collect(redis_url, tmp_path).returncode == 0
    articles = read_jsonl(tmp_path / "articles" / f"{SITE}.jsonl")
    by_page = {a["url"].rsplit("/", 1)[-1].removesuffix(".html"): a for a in articles}
    assert sorted(by_page) == sorted(PAGES), log[-3000:]
    assert by_page["tdm-listed"].get("reserved") == ["tdm"]  # it went without, before
    assert by_page["tdm-listed-too"].get("reserved") == ["tdm"]
    assert "reserved" not in by_page["plain"] and "reserved" not in by_page["plain-too"]
    assert json.loads(client.hget("spidercrawl:tdm", SITE)) == RULES  # as the first one read it


# --- the spider and the item step, by hand, on a real Redis --------------------------------


def worker(redis_url: str, **settings: Any) -> tuple[NewsSpider, TdmPolicyWait]:
    """A spider as a worker on ``redis_url`` builds it, and its item step."""
    project = Settings()
    project.setmodule("spidercrawl.settings")
    project.setdict({"REDIS_URL": redis_url, **settings})
    crawler = get_crawler(NewsSpider, project.copy_to_dict())
    spider = NewsSpider.from_crawler(crawler)
    crawler.spider = spider
    return spider, TdmPolicyWait.from_crawler(crawler)


def page(name: str) -> dict[str, Any]:
    return {"site": SITE, "url": f"http://{SITE}/pages/{name}.html", "texts": [],
            "reservations": []}  # fmt: skip


def tdmrep_response(body: str | bytes) -> TextResponse:
    url = f"http://{SITE}{TDMREP_PATH}"
    return TextResponse(url, body=body, encoding="utf-8", request=Request(url, meta={"site": SITE}))


def test_a_page_read_before_the_policy_was_shared_waits_for_it(redis_url) -> None:
    reader, _ = worker(redis_url)
    other, step = worker(redis_url)
    pipelines = other.crawler.settings.getdict("ITEM_PIPELINES")
    assert pipelines.get("spidercrawl.pipelines.tdm_policy.TdmPolicyWait") == 250  # before learning
    assert other.tdm_policy(SITE) is None  # nobody read it yet

    async def wait_while_the_file_is_read() -> list[dict[str, Any]]:
        asyncio.get_running_loop().call_later(
            1.5, reader.parse_tdmrep, tdmrep_response(json.dumps(RULES))
        )  # the worker that reads the file, after the pages were read
        return list(await asyncio.gather(*(step.process_item(page(n)) for n in PAGES)))

    items = asyncio.run(wait_while_the_file_is_read())
    reservations = {item["url"].rsplit("/", 1)[-1]: item["reservations"] for item in items}
    assert reservations == {
        "tdm-listed.html": ["tdm"], "tdm-listed-too.html": ["tdm"],
        "plain.html": [], "plain-too.html": [],
    }  # fmt: skip
    assert other.tdm_policy(SITE).reserves("/pages/tdm-listed-1.html")
    # Queued again, the site's policy is read afresh: the old one is no longer shared.
    assert module("spidercrawl.enqueue", "--redis", redis_url, "--site", SITE).returncode == 0
    assert redis.Redis.from_url(redis_url).hget("spidercrawl:tdm", SITE) == READ_AGAIN.encode()
    assert other.tdm_policy(SITE) is None  # not known until it is read anew
    # A site with no tdmrep.json (a 404, a failed fetch): "" shared, nothing reserved.
    reader.on_tdmrep_error(_failure_of(Request(f"http://b.example{TDMREP_PATH}",
                                               meta={"site": "b.example"})))  # fmt: skip
    assert redis.Redis.from_url(redis_url).hget("spidercrawl:tdm", "b.example") == b""
    assert other.tdm_policy("b.example") is not None
    assert not other.tdm_policy("b.example").rules


def test_a_policy_that_does_not_come_holds_a_site_once(redis_url, caplog) -> None:
    _, step = worker(redis_url, DOWNLOAD_TIMEOUT=1, RETRY_TIMES=0)
    with caplog.at_level(logging.WARNING):
        first = asyncio.run(step.process_item(page("tdm-listed")))
        second = asyncio.run(asyncio.wait_for(step.process_item(page("tdm-listed-too")), 0.5))
    assert first["reservations"] == second["reservations"] == []
    assert caplog.text.count(f"{SITE}: its tdmrep.json was not known after 1 s") == 1


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (b"[" + b" " * MAX_TDMREP_BYTES + b"]", "over"),
        (b"\xff\xfe[{\x00", "not UTF-8 text"),
        (b"<html>not json</html>", "not a tdmrep.json with rules"),
        (json.dumps({"location": "/", "tdm-reservation": 1}).encode(), "not a tdmrep.json"),
    ],
)
def test_a_damaged_or_hostile_shared_policy_is_no_policy(redis_url, caplog, value, why) -> None:
    redis.Redis.from_url(redis_url).hset("spidercrawl:tdm", SITE, value)
    spider, _ = worker(redis_url)
    with caplog.at_level(logging.WARNING):
        policy = spider.tdm_policy(SITE)
        assert spider.tdm_policy(SITE) is policy  # asked once, then kept
    assert policy is not None and not policy.rules
    lines = [
        r.getMessage() for r in caplog.records if "tdmrep.json shared in Redis" in r.getMessage()
    ]
    assert len(lines) == 1 and why in lines[0], lines


def test_a_redis_that_does_not_answer_leaves_the_policy_unknown() -> None:
    """Asked of a Redis that is gone: unknown (asked again for the next page), no crash; a
    page waiting for it is not delivered (it stays in flight, crawled again)."""
    listeners, GUARD.listeners = GUARD.listeners, []
    try:
        gone = redis.Redis(port=free_port(), socket_connect_timeout=0.5)
        assert SharedTdm(gone, "spidercrawl").policy(SITE) is None
        assert GUARD.error is not None
        assert SharedTdm(gone, "spidercrawl").policy(SITE) is None  # at once, now
        SharedTdm(gone, "spidercrawl").share(SITE, "")  # not shared; no error
        crawler = get_crawler(settings_dict={"REDIS_URL": "redis://127.0.0.1:1/0"})

        class Unknown:  # a worker that has not read the site's policy, nor been told it
            def tdm_policy(self, site: str) -> None:
                return None

        crawler.spider = Unknown()
        with pytest.raises(RedisDownError):
            asyncio.run(TdmPolicyWait.from_crawler(crawler).process_item(page("plain")))
    finally:
        GUARD.error, GUARD.listeners = None, listeners


def _failure_of(request: Request) -> Any:
    from twisted.python.failure import Failure

    failure = Failure(ConnectionRefusedError("refused"))
    failure.request = request  # type: ignore[attr-defined]
    return failure


def test_a_worker_takes_the_policy_shared_after_the_site_was_read_again(redis_url) -> None:
    """A long-lived worker that had a site's policy (none) and the site queued again, its
    tdmrep.json read again by another worker, now reserving a path: the pages the first
    worker renders next carry it (it kept the old one)."""
    client = redis.Redis.from_url(redis_url)
    client.hset("spidercrawl:tdm", SITE, "")
    spider, _ = worker(redis_url)
    assert spider.tdm_policy(SITE) is not None
    assert not spider.tdm_policy(SITE).reserves("/pages/tdm-listed.html")
    client.hset("spidercrawl:tdm", SITE, json.dumps(RULES))  # read again, by another worker
    assert spider.tdm_policy(SITE).reserves("/pages/tdm-listed.html")


def test_a_worker_waits_for_the_policy_of_a_site_read_again_not_its_old_read(
    redis_url,
) -> None:
    """A long-lived worker that read a site's tdmrep.json itself (no reservation) and
    shared it; the site queued again, another worker reading the file anew, which now
    reserves a path: until that read is shared, the first worker's pages wait (their policy
    unknown), not go by its old read (an opt-out leaked for that while). A Redis that lost
    the shared policies (restarted empty) leaves each worker its own read."""
    reader, step = worker(redis_url)
    reader.parse_tdmrep(tdmrep_response("[]"))  # read for the site's first start: no rule
    assert reader.tdm_policy(SITE) is not None and not reader.tdm_policy(SITE).rules
    assert module("spidercrawl.enqueue", "--redis", redis_url, "--site", SITE).returncode == 0
    assert reader.tdm_policy(SITE) is None  # being read afresh elsewhere: unknown

    async def wait_while_the_file_is_read_again() -> dict[str, Any]:
        other, _ = worker(redis_url)
        asyncio.get_running_loop().call_later(
            1.0, other.parse_tdmrep, tdmrep_response(json.dumps(RULES))
        )
        return await step.process_item(page("tdm-listed"))

    assert asyncio.run(wait_while_the_file_is_read_again())["reservations"] == ["tdm"]
    assert reader.tdm_policy(SITE).reserves("/pages/tdm-listed.html")
    redis.Redis.from_url(redis_url).delete("spidercrawl:tdm")  # Redis restarted empty
    assert reader.tdm_policy(SITE) is reader.targets[SITE].tdm  # its own read
