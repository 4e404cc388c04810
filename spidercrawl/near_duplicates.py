"""Near-duplicate articles across sites and crawls: MinHash of word shingles, LSH to find
candidates (datasketch).

The same wire story published by several sites, or one site's story at several URLs (a
print view, AMP, a tracking query, a re-dated copy), is one story to a corpus. Each
delivered article's text becomes a MinHash signature of the word 5-shingles of its prose
(lines of ten words or more: a caption or a link line one site's parser keeps and
another's leaves out does not part two copies of a story); an article
whose estimated Jaccard similarity with one delivered before reaches the threshold is a
near-duplicate of it. Articles of fewer than ``MIN_WORDS`` words are never compared (two
words would match everything that shares them).

The index outlives the crawl in ``STATE_DIR``: ``near-duplicates.npz`` (the signatures as
an array, the articles' URLs and sites as JSON, read with ``allow_pickle=False``) plus
``near-duplicates.journal`` (a line per article since, so a killed crawl loses none). A
damaged snapshot is set aside with a log line and the index rebuilt from what is left.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import logging
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH

from spidercrawl.files import write_bytes_atomically
from spidercrawl.memory import append_line
from spidercrawl.text import tokenize

logger = logging.getLogger(__name__)

NUM_PERM = 128
SCHEME = "affine32"  # datasketch's hash scheme: 32-bit signatures, stored as such
HASH_TYPE = np.dtype("<u4")
SHINGLE_WORDS = 5
MIN_WORDS = 50  # shorter articles (a caption, a two-word stub) are neither checked nor kept
PROSE_LINE_WORDS = 10  # a line of the story's prose, not one of the lines around it
SNAPSHOT, JOURNAL = "near-duplicates.npz", "near-duplicates.journal"


@dataclass(frozen=True)
class DeliveredArticle:
    """What a near-duplicate points to: the article delivered first."""

    url: str
    site: str


def signature(text: str) -> LeanMinHash | None:
    """The MinHash of the word shingles of the text's prose (:func:`story_words`); None
    for a text too short to compare."""
    words = story_words(text)
    if len(words) < MIN_WORDS:
        return None
    shingles = {
        " ".join(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)
    }
    minhash = MinHash(
        num_perm=NUM_PERM, scheme=SCHEME, hashfunc=zlib.crc32, permutations=_permutations()
    )
    minhash.update_batch([shingle.encode("utf-8") for shingle in shingles])
    return LeanMinHash(minhash)


def story_words(text: str) -> list[str]:
    """The words of the text's prose lines (``PROSE_LINE_WORDS`` or more), or all its words
    where those are under ``MIN_WORDS``. Short lines (the headline, a caption's credit, a
    "Related: ..." link, a byline) are where two sites' parsers cut one story differently:
    the story is its prose."""
    lines = [tokenize(line) for line in text.splitlines()]
    prose = [word for line in lines if len(line) >= PROSE_LINE_WORDS for word in line]
    return prose if len(prose) >= MIN_WORDS else [word for line in lines for word in line]


@functools.cache
def _permutations() -> object:
    """The MinHash permutations (seed 1), made once: making them was a tenth of a
    signature's time. Shingles are hashed with CRC-32, stable from run to run and a third
    quicker than datasketch's SHA-1."""
    return MinHash(num_perm=NUM_PERM, scheme=SCHEME, hashfunc=zlib.crc32).permutations


class NearDuplicateIndex:
    """The articles delivered so far, by signature (see module doc)."""

    def __init__(self, folder: Path | None, threshold: float = 0.8) -> None:
        self.folder = folder
        self.threshold = threshold
        self.lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
        self.articles: dict[str, DeliveredArticle] = {}  # key -> article
        self.signatures: dict[str, LeanMinHash] = {}
        if folder is not None:
            self._load()

    # -- finding -----------------------------------------------------------------------
    def duplicate_of(self, key: str, text: str) -> DeliveredArticle | None:
        """The article delivered before that ``text`` is a near-duplicate of (another key
        than ``key``: a page crawled again is no duplicate of itself), or None."""
        found = signature(text)
        return None if found is None else self._nearest(key, found)

    def check_and_add(
        self, key: str, article: DeliveredArticle, text: str
    ) -> DeliveredArticle | None:
        """The article delivered before that ``text`` is a near-duplicate of; where there is
        none, this one is remembered as the first of its story (one step: see
        :class:`~spidercrawl.distributed.near_duplicates.SharedNearDuplicates`)."""
        found = signature(text)
        if found is None:
            return None
        original = self._nearest(key, found)
        if original is None:
            self._remember(key, article, found)
        return original

    def add(self, key: str, article: DeliveredArticle, text: str) -> None:
        """Remember a delivered article (replacing an earlier version of the same key)."""
        found = signature(text)
        if found is not None:
            self._remember(key, article, found)

    def _nearest(self, key: str, found: LeanMinHash) -> DeliveredArticle | None:
        best, best_similarity = None, self.threshold
        for other in self.lsh.query(found):
            if other == key:
                continue
            similarity = found.jaccard(self.signatures[other])
            if similarity >= best_similarity:
                best, best_similarity = other, similarity
        return self.articles[best] if best is not None else None

    def _remember(self, key: str, article: DeliveredArticle, found: LeanMinHash) -> None:
        known = self.signatures.get(key)
        if known is not None and np.array_equal(known.hashvalues, found.hashvalues):
            return  # the same text crawled again: nothing new to keep or journal
        self._insert(key, article, found)
        if self.folder is not None:
            packed = base64.b64encode(found.hashvalues.astype(HASH_TYPE).tobytes()).decode()
            line = {"key": key, "url": article.url, "site": article.site, "hash": packed}
            append_line(self.folder / JOURNAL, json.dumps(line))

    def _insert(self, key: str, article: DeliveredArticle, found: LeanMinHash) -> None:
        if key in self.signatures:
            self.lsh.remove(key)
        self.lsh.insert(key, found)
        self.articles[key] = article
        self.signatures[key] = found

    # -- keeping -----------------------------------------------------------------------
    def save(self) -> None:
        """A snapshot of the whole index; the journal it covers is then emptied."""
        if self.folder is None:
            return
        keys = list(self.signatures)
        hashes = np.array([self.signatures[k].hashvalues for k in keys], dtype=HASH_TYPE)
        meta = [[k, self.articles[k].url, self.articles[k].site] for k in keys]
        buffer = io.BytesIO()
        np.savez(
            buffer,
            hashes=hashes.reshape(len(keys), NUM_PERM),
            meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        )
        self.folder.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(self.folder / SNAPSHOT, buffer.getvalue())
        (self.folder / JOURNAL).unlink(missing_ok=True)

    def _load(self) -> None:
        assert self.folder is not None
        snapshot = self.folder / SNAPSHOT
        if snapshot.exists():
            try:
                with np.load(snapshot, allow_pickle=False) as stored:
                    hashes, meta = stored["hashes"], json.loads(stored["meta"].tobytes())
                if hashes.dtype != HASH_TYPE or hashes.shape != (len(meta), NUM_PERM):
                    raise ValueError("signatures and articles do not match")
                for row, (key, url, site) in zip(hashes, meta, strict=True):
                    self._insert(str(key), DeliveredArticle(str(url), str(site)), _lean(row))
            except Exception as error:  # damaged: set aside, never lost or fatal
                aside = snapshot.with_name(f"{SNAPSHOT}.damaged")
                os.replace(snapshot, aside)
                logger.warning(
                    "%s is damaged (%s): set aside as %s; the near-duplicate index starts "
                    "from its journal", snapshot, error, aside.name,
                )  # fmt: skip
                self.lsh = MinHashLSH(threshold=self.threshold, num_perm=NUM_PERM)
                self.articles, self.signatures = {}, {}
        self._replay(self.folder / JOURNAL)

    def _replay(self, journal: Path) -> None:
        try:
            lines = journal.read_bytes().splitlines()
        except FileNotFoundError:
            return
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
                row = np.frombuffer(base64.b64decode(entry["hash"], validate=True), HASH_TYPE)
                if row.shape != (NUM_PERM,):
                    raise ValueError("a signature of another length")
                article = DeliveredArticle(str(entry["url"]), str(entry["site"]))
                self._insert(str(entry["key"]), article, _lean(row))
            except (ValueError, KeyError, TypeError, AttributeError):
                logger.warning("%s line %d is damaged: skipped", journal, number)


def _lean(row: np.ndarray) -> LeanMinHash:
    return LeanMinHash(seed=1, hashvalues=row.astype(HASH_TYPE), scheme=SCHEME)
