"""The near-duplicate index shared by every worker on Redis.

Workers on several machines deliver articles of many sites at once; an article is a
near-duplicate of one any worker delivered before. Each article's MinHash signature
(:func:`spidercrawl.near_duplicates.signature`) is kept in ``PREFIX:near:sig`` and its URL
and site in ``PREFIX:near:article``; LSH bands (datasketch's parameters for the threshold)
are sets ``PREFIX:near:band:I:HASH`` of the keys whose signatures share that band. The
check and the insert are one step under a short lock (``PREFIX:near:lock``), so that two
workers delivering the same story at once do not both take it for the first. What is read
back is checked (a signature of the wrong length, an article that is not a URL and a site)
and skipped where it is not what this module wrote.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from typing import Any

import numpy as np
from datasketch import MinHashLSH

from spidercrawl.distributed import GUARD
from spidercrawl.near_duplicates import HASH_TYPE, NUM_PERM, DeliveredArticle, signature

logger = logging.getLogger(__name__)

LOCK_SECONDS = 10  # a worker killed holding the lock holds it no longer than this


class SharedNearDuplicates:
    """:class:`~spidercrawl.near_duplicates.NearDuplicateIndex`'s checks, on Redis."""

    def __init__(self, redis: Any, prefix: str, threshold: float = 0.8) -> None:
        self.redis = redis
        self.prefix = f"{prefix}:near"
        self.threshold = threshold
        lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)  # its band parameters
        self.bands = [(start, end) for start, end in lsh.hashranges]

    def check_and_add(
        self, key: str, article: DeliveredArticle, text: str
    ) -> DeliveredArticle | None:
        found = signature(text)
        if found is None:
            return None
        values = np.asarray(found.hashvalues, dtype=HASH_TYPE)
        bands = [self._band_key(i, values[start:end]) for i, (start, end) in enumerate(self.bands)]
        lock = self.redis.lock(f"{self.prefix}:lock", timeout=LOCK_SECONDS, blocking_timeout=30)
        locked = GUARD(lock.acquire)  # False after 30 s: checked unlocked, said once a page
        if not locked:
            logger.warning("The near-duplicate lock was held over 30 s: %s checked unlocked", key)
        try:
            original = self._best(key, values, bands)
            if original is None:
                pipe = self.redis.pipeline()
                pipe.hset(f"{self.prefix}:sig", key, values.tobytes())
                pipe.hset(f"{self.prefix}:article", key, json.dumps([article.url, article.site]))
                for band in bands:
                    pipe.sadd(band, key)
                GUARD(pipe.execute)
        finally:
            if locked:
                GUARD(_release, lock)
        return original

    def save(self) -> None:
        """Nothing to do: every step is in Redis already."""

    def _best(self, key: str, values: np.ndarray, bands: list[str]) -> DeliveredArticle | None:
        pipe = self.redis.pipeline()
        for band in bands:
            pipe.smembers(band)
        candidates = {
            m.decode() if isinstance(m, bytes) else str(m) for s in GUARD(pipe.execute) for m in s
        }
        candidates.discard(key)
        if not candidates:
            return None
        names = sorted(candidates)
        stored = GUARD(self.redis.hmget, f"{self.prefix}:sig", names)
        best, best_similarity = None, self.threshold
        for name, raw in zip(names, stored, strict=True):
            if not isinstance(raw, bytes) or len(raw) != NUM_PERM * HASH_TYPE.itemsize:
                continue  # not a signature this module wrote
            similarity = float(np.mean(np.frombuffer(raw, dtype=HASH_TYPE) == values))
            if similarity >= best_similarity:
                best, best_similarity = name, similarity
        if best is None:
            return None
        raw = GUARD(self.redis.hget, f"{self.prefix}:article", best)
        try:
            url, site = json.loads(raw)
            if not (isinstance(url, str) and isinstance(site, str)):
                raise ValueError("not a URL and a site")
        except (TypeError, ValueError) as error:
            logger.debug("Near-duplicate %s has a damaged record (%s): left out", best, error)
            return None
        return DeliveredArticle(url, site)

    def _band_key(self, index: int, band: np.ndarray) -> str:
        digest = hashlib.blake2b(band.tobytes(), digest_size=8).hexdigest()
        return f"{self.prefix}:band:{index}:{digest}"


def _release(lock: Any) -> None:
    """Release the lock unless it expired meanwhile (another worker may hold it now); a
    Redis that stopped answering is the guard's to report."""
    from redis.exceptions import LockNotOwnedError

    with contextlib.suppress(LockNotOwnedError):
        lock.release()
