"""Requests in the shared Redis queue as JSON: they come back as they went, and a queued
entry someone else wrote (a pickle, a request class to import, a callback that is no
spider method) is refused before anything of it runs."""

from __future__ import annotations

import os
import pickle

import pytest
from scrapy import Request, Spider
from scrapy.utils.request import request_from_dict

from spidercrawl.distributed import request_codec
from spidercrawl.distributed.request_codec import BadQueuedRequestError


class NewsLike(Spider):
    name = "news"

    def parse_page(self, response):  # pragma: no cover - named, not called
        return None

    def on_error(self, failure):  # pragma: no cover - named, not called
        return None


class Payload:
    def __reduce__(self):
        return (os.system, ("true",))


def test_a_request_comes_back_as_it_went() -> None:
    spider = NewsLike()
    request = Request(
        "http://127.0.0.1:8000/story?id=3",
        callback=spider.parse_page,
        errback=spider.on_error,
        method="POST",
        body=b"\xff\x00 raw",
        headers={"If-None-Match": '"abc"', "Accept": "text/html"},
        meta={"site": "harbour.example", "raw_html": b"<p>\xe9</p>", "hops": 2,
              "validators": {"etag": '"abc"'}, "$odd": 1, "page_method": Payload()},
        priority=5,
        dont_filter=True,
    )  # fmt: skip
    back = request_from_dict(
        request_codec.loads(request_codec.dumps(request.to_dict(spider=spider))), spider=spider
    )
    assert back.url == request.url and back.method == "POST" and back.body == request.body
    assert back.callback == spider.parse_page and back.errback == spider.on_error
    assert back.headers.getlist("Accept") == [b"text/html"]
    assert back.headers.get("If-None-Match") == b'"abc"'
    assert back.priority == 5 and back.dont_filter
    assert back.meta["raw_html"] == b"<p>\xe9</p>" and back.meta["$odd"] == 1
    assert back.meta["validators"] == {"etag": '"abc"'} and back.meta["hops"] == 2
    assert "page_method" not in back.meta  # not plain data: left out, set again downstream


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (pickle.dumps(Payload()), "not JSON"),
        (b'{"url": "http://x/", "_class": "os.system", "command": "true"}', "request class"),
        (b'{"url": "http://x/", "callback": "__init__"}', "not a spider method"),
        (b'{"url": "http://x/", "callback": ["parse"]}', "not a spider method"),
        (b'{"url": 5}', "no url"),
        (b"[1, 2]", "no url"),
        (b'{"url": "http://x/", "body": {"$bytes": "***"}}', "damaged"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),
    ],
)
def test_entries_someone_else_wrote_are_refused(entry: bytes, reason: str) -> None:
    with pytest.raises(BadQueuedRequestError, match=reason):
        request_codec.loads(entry)
