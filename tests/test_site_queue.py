"""An idle worker on Redis: it waits, bounded, for requests still in flight (a worker at
work, or one stopped whose requests go back to the queue when its heartbeat expires),
then for ``REDIS_IDLE_CLOSE``, then stops. Closing before a stopped worker's requests
were put back left them to no worker (seen in the distributed soak)."""

from __future__ import annotations

import time

from spidercrawl.distributed import redis_client
from spidercrawl.distributed.sites import RedisSiteQueue


def test_an_idle_worker_waits_for_requests_in_flight_then_stops(redis_url) -> None:
    redis = redis_client(redis_url)
    redis.hset("t:inflight:stopped-worker", "entry-1", "a request")
    queue = RedisSiteQueue(redis, "t", idle_close=0.5, wait_forever=False, flight_wait=30)
    assert queue.keep_waiting()
    time.sleep(1.0)  # past REDIS_IDLE_CLOSE: the request in flight holds the worker
    assert queue.keep_waiting()
    redis.delete("t:inflight:stopped-worker")  # put back and done
    assert queue.keep_waiting()  # the idle wait begins now
    time.sleep(1.0)
    assert not queue.keep_waiting()


def test_the_wait_for_requests_in_flight_is_bounded(redis_url) -> None:
    """An entry that never leaves (a worker at work for long, a leaked entry) holds an
    idle worker ``flight_wait`` seconds, then the idle wait, no longer."""
    redis = redis_client(redis_url)
    redis.hset("t:inflight:busy-worker", "entry-1", "a request")
    queue = RedisSiteQueue(redis, "t", idle_close=0.5, wait_forever=False, flight_wait=0.5)
    assert queue.keep_waiting()
    time.sleep(1.0)
    assert queue.keep_waiting()  # the flight wait is over: the idle wait begins
    time.sleep(1.0)
    assert not queue.keep_waiting()
    redis.zadd("t:requests", {"queued": 0})
    assert queue.keep_waiting()  # queued work always holds a worker
