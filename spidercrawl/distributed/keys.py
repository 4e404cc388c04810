"""The Redis keys spidercrawl keeps under its prefix, and a check of what a Redis holds there.

One Redis may serve other programs. A key under our prefix that another program wrote with
the same name as one of ours but another type (a string where we keep a list) would make
every command on it fail with ``WRONGTYPE`` in the middle of a crawl; a worker checks
before it starts and stops with one line naming the keys. Keys under the prefix whose names
are not ours are left alone (and counted in the log).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from spidercrawl.distributed import as_text

# The name after ``PREFIX:`` ("*": a site or worker name) -> the Redis type we keep there.
KEY_TYPES: dict[str, str] = {
    "requests": "zset",  # scrapy-redis's priority queue
    "dupefilter": "set",  # scrapy-redis's request fingerprints
    "sites:queue": "list",
    "sites:starting:*": "list",  # sites a worker took, until their start requests are queued
    "sites": "hash",
    "learned": "hash",
    "tdm": "hash",  # each site's tdmrep.json, shared by the worker that read it (tdm.py)
    "delivered": "stream",
    "workers": "set",
    "claimed:render:*": "set",
    "claimed:visit:*": "set",
    "learn:*": "list",
    "learn-urls:*": "set",
    "learning:*": "string",
    "model:*": "hash",
    "articles:*": "hash",
    "hashes:*": "hash",
    "counts:*": "hash",
    "validators:*": "hash",
    "inflight:*": "hash",
    "worker:*": "string",
    "near:sig": "hash",  # the near-duplicate index (distributed/near_duplicates.py)
    "near:article": "hash",
    "near:band:*": "set",
    "near:lock": "string",
}


def expected_type(name: str) -> str | None:
    """The type we keep under ``name`` (the key without the prefix), None if not ours."""
    if name in KEY_TYPES:
        return KEY_TYPES[name]
    for pattern, kind in KEY_TYPES.items():
        if "*" in pattern and fnmatchcase(name, pattern):
            return kind
    return None


@dataclass
class KeyCheck:
    """What a Redis holds under our prefix."""

    wrong: list[str] = field(default_factory=list)  # "KEY is a string, not a list"
    foreign: list[str] = field(default_factory=list)  # names that are not ours

    def error(self, prefix: str) -> str:
        """One line for a worker that cannot start ("" when nothing is wrong)."""
        if not self.wrong:
            return ""
        shown = "; ".join(self.wrong[:3]) + (f"; and {len(self.wrong) - 3} more" if
                                              len(self.wrong) > 3 else "")  # fmt: skip
        return (
            f"Redis holds keys under {prefix}: that spidercrawl did not write ({shown}): "
            f"another program uses this prefix; set REDIS_PREFIX to another one, or delete "
            f"those keys"
        )


def check_keys(redis: Any, prefix: str, batch: int = 1000) -> KeyCheck:
    """Compare every key under ``prefix:`` with :data:`KEY_TYPES` (SCAN, so a big Redis is
    read in batches without blocking it)."""
    check = KeyCheck()
    keys = [as_text(k) for k in redis.scan_iter(match=f"{_escape(prefix)}:*", count=batch)]
    for start in range(0, len(keys), batch):
        chunk = keys[start : start + batch]
        pipe = redis.pipeline(transaction=False)
        for key in chunk:
            pipe.type(key)
        for key, kind in zip(chunk, pipe.execute(), strict=True):
            kind = as_text(kind)
            wanted = expected_type(key[len(prefix) + 1 :])
            if wanted is None:
                check.foreign.append(key)
            elif kind != wanted and kind != "none":  # "none": gone since the SCAN
                check.wrong.append(f"{key} is a {kind}, not a {wanted}")
    return check


def _escape(prefix: str) -> str:
    """The prefix as a literal in a SCAN pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in prefix)
