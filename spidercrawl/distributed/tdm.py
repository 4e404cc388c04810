"""A site's TDMRep policy shared by every worker: ``PREFIX:tdm``, site -> its tdmrep.json.

One worker fetches a site's ``/.well-known/tdmrep.json`` (the one that takes its request
from the queue); every worker renders its pages. Without sharing, a worker that had not
read the file itself delivered the pages under a reserved path without ``tdm``: an
opt-out leaked. The worker that reads the file shares its text ("" where the site has
none, it could not be read, is over MAX_TDMREP_BYTES or holds no rule); every worker asks
Redis with each page (a site queued again is read again, and its file may have changed:
a worker that kept the policy it first had missed the new one), reading a value once.

A page read before any worker had shared the policy (its fetch still on its way) waits for
it at the item step (:mod:`spidercrawl.pipelines.tdm_policy`), up to the fetch's own bound,
and gets ``tdm`` where the policy reserves its path. What the hash holds is read as data: a
value that is not a tdmrep.json this module wrote (too long, not UTF-8, no rule) is no
policy, said once.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from spidercrawl.distributed import GUARD, NotDelivered
from spidercrawl.document.reservations import MAX_TDMREP_BYTES, TdmPolicy

logger = logging.getLogger(__name__)


# What the hash holds for a site queued again until the worker that starts it has read its
# tdmrep.json anew: its policy is not known, and a worker's read for an earlier start no
# longer holds (the file may have changed). No tdmrep.json is this text.
READ_AGAIN = "(queued again: its tdmrep.json is being read)"


def read_again(redis: Any, prefix: str, site: str) -> None:
    """Mark ``site``'s shared policy as being read anew (the site is queued again)."""
    redis.hset(f"{prefix}:tdm", site, READ_AGAIN)


class SharedTdm:
    """The ``PREFIX:tdm`` hash: sites' tdmrep.json as the worker that read each left it."""

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.key = f"{prefix}:tdm"
        self._read: dict[str, tuple[bytes | str, TdmPolicy]] = {}  # site -> value, policy

    def share(self, site: str, text: str) -> None:
        """The site's tdmrep.json for every worker ("" for no policy). Redis not answering
        leaves it unshared: another worker's pages then wait for it, then go unmarked."""
        with contextlib.suppress(NotDelivered):
            GUARD(self.redis.hset, self.key, site, text)

    def policy(self, site: str, own: TdmPolicy | None = None) -> TdmPolicy | None:
        """The site's policy as shared. Where none is shared (yet, or Redis lost it) or
        Redis does not answer (asked again for the next page): ``own``, what this worker
        read for the site's start (None: not known). A site queued again and not yet read
        anew: None, whatever this worker read before."""
        try:
            raw = GUARD(self.redis.hget, self.key, site)
        except NotDelivered:
            return own
        if raw is None:
            return own
        if raw in (READ_AGAIN, READ_AGAIN.encode()):
            return None
        known = self._read.get(site)
        if known is None or known[0] != raw:  # read (and a damaged value said) once a value
            known = self._read[site] = (raw, read_shared(site, raw))
        return known[1]


def read_shared(site: str, raw: bytes | str) -> TdmPolicy:
    """The policy of a value from the hash; an empty one, logged, for a value this module
    does not write (another program's, or damaged)."""
    if not raw:
        return TdmPolicy()
    if len(raw) > MAX_TDMREP_BYTES:
        why = f"{len(raw)} bytes, over {MAX_TDMREP_BYTES}"
    else:
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            why = "not UTF-8 text"
        else:
            policy = TdmPolicy.parse(text)
            if policy.rules:
                return policy
            why = "not a tdmrep.json with rules"
    logger.warning(
        "%s: the tdmrep.json shared in Redis is unreadable (%s): no reservation by the site",
        site, why,
    )  # fmt: skip
    return TdmPolicy()
