"""Re-crawls bring only what is new: per-site memory of the articles already delivered.

Below the capture layer and the pipelines, which both read it: the delivery pipeline
judges and records articles (:mod:`spidercrawl.pipelines.delivery`), the conditional fetch
(:mod:`spidercrawl.capture.conditional`) reads each delivered page's HTTP validators (its
ETag and Last-Modified) to ask the server whether it changed at all.

For each site the memory holds every article delivered so far: its URL key
(:func:`spidercrawl.urls.article_key`: one key for www/non-www, tracking parameters, AMP
versions...), a hash of its title and text, a hash of the HTML it came from, and when it
was first and last seen. An article whose key is known with the same text or from the
same HTML is unchanged, one whose text changed on a changed page is an update, and one
whose text is already known under another key is a duplicate (:meth:`SiteMemory.judge`).

On one machine the memory survives a killed process (``kill -9``) at any moment:

- ``STATE_DIR/<site>.journal`` gets one line per delivered article, written with a single
  ``write`` of a complete line right after the article's own line went to the articles
  file (:mod:`spidercrawl.pipelines.articles_file`), and tagged with that file's size;
- ``STATE_DIR/<site>.json`` is a snapshot of the whole memory, written atomically at the
  end of a crawl (and every ``INCREMENTAL_SAVE_EVERY`` articles), after which the journal
  starts afresh;
- loading replays the journal over the snapshot, then the articles file beyond the size the
  journal last recorded: an article written there by a process killed before its journal
  line is known as delivered, and a line cut in half by the kill is removed (it was never
  delivered whole; the page is crawled again).

With Redis (``REDIS_URL``) the memory lives there instead (:mod:`spidercrawl.distributed`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from spidercrawl.files import safe_name, write_json_atomically
from spidercrawl.urls import article_key

logger = logging.getLogger(__name__)

STATE_FORMAT = 2
Verdict = Literal["new", "changed", "unchanged", "duplicate"]
PageValidators = tuple[str, dict[str, str]] | None  # (page key, {"etag":..., ...})


def content_hash(title: str, text: str) -> str:
    """A hash of what a reader sees: title and text, whitespace and case folded."""
    folded = " ".join(f"{title}\n{text}".split()).lower()
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()[:32]


def page_digest(html: str) -> str:
    """A hash of a page's HTML as the server sent it: the same page fetched again unchanged
    gives the same digest, whichever way it was then extracted."""
    return hashlib.sha256(html.encode("utf-8", "replace")).hexdigest()[:32]


@dataclass(frozen=True)
class ArticleIdentity:
    """What the memory knows an article by."""

    key: str  # its URL key (posts of one page: plus a hash of their title)
    url: str
    digest: str  # content_hash of its title and text
    has_text: bool
    page_digest: str = ""  # page_digest of the HTML it came from ("" when unknown)


def article_identity(article: dict[str, Any]) -> ArticleIdentity:
    """The identity of an article item (or of an article read back from a file)."""
    url = str(article.get("canonical_url") or article.get("url") or "")
    key = article_key(url) or url
    if article.get("post_of"):  # posts of one page share its URL; their titles differ
        key = f"{key}#{content_hash(str(article.get('title') or ''), '')[:12]}"
    title, text = str(article.get("title") or ""), str(article.get("text") or "")
    page = str(article.get("page_digest") or "")
    return ArticleIdentity(key, url, content_hash(title, text), bool(text), page)


@dataclass
class SiteMemory:
    """What one site's earlier crawls delivered, kept on local disk (see module doc)."""

    path: Path  # the snapshot; the journal is beside it
    articles: dict[str, dict[str, str]] = field(default_factory=dict)  # key -> record
    by_hash: dict[str, str] = field(default_factory=dict)  # content hash -> key
    last_crawl: str = ""
    articles_file: Path | None = None  # the file whose size the journal records
    articles_offset: int = 0  # how much of it the memory already covers
    validators: dict[str, dict[str, str]] = field(default_factory=dict)  # page key -> ETag...
    dirty: int = 0
    recovered: int = 0  # articles found in the articles file but not in the journal
    counts: dict[str, int] = field(default_factory=dict)  # verdicts of this crawl

    @property
    def journal_path(self) -> Path:
        return self.path.with_suffix(".journal")

    @classmethod
    def load(cls, path: Path, articles_file: Path | None = None) -> SiteMemory:
        memory = cls(path, articles_file=articles_file)
        memory._read_snapshot()
        memory._replay_journal()
        memory._recover_from_articles_file()
        memory.by_hash = {record["hash"]: key for key, record in memory.articles.items()}
        return memory

    def _read_snapshot(self) -> None:
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text("utf-8"))
            articles = data.get("articles") or {}
            records = articles.items() if isinstance(articles, dict) else ()
            self.articles = {str(k): r for k, v in records if (r := _record(v)) is not None}
            if len(self.articles) != len(articles):
                logger.warning(
                    "%s: %d damaged article records skipped (their pages count as new)",
                    self.path, len(articles) - len(self.articles),
                )  # fmt: skip
            self.last_crawl = str(data.get("last_crawl") or "")
            self.validators = _validators(data.get("validators"))
            if self.articles_file is not None and data.get("articles_file") == str(
                self.articles_file
            ):
                self.articles_offset = int(data.get("articles_offset") or 0)
        except (OSError, ValueError, AttributeError, TypeError) as error:
            logger.warning("Unreadable crawl state %s (%s): starting afresh", self.path, error)
            self.articles, self.last_crawl, self.articles_offset = {}, "", 0
            self.validators = {}

    def _replay_journal(self) -> None:
        try:
            data = self.journal_path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as error:
            logger.warning("Unreadable crawl journal %s (%s)", self.journal_path, error)
            return
        if data and not data.endswith(b"\n"):  # cut by a kill: the next line must not join it
            data = data[: data.rfind(b"\n") + 1]
            os.truncate(self.journal_path, len(data))
        for number, line in enumerate(data.splitlines(), 1):
            try:
                entry = json.loads(line)
                key = str(entry.pop("key"))
                offset = entry.pop("offset", None)
                page, validators = entry.pop("page", ""), entry.pop("validators", None)
                record = _record(entry)
                if record is None or not (offset is None or isinstance(offset, int)):
                    raise ValueError("a field is missing or of the wrong type")
            except (ValueError, KeyError, TypeError, AttributeError):
                logger.warning("%s line %d is damaged: skipped", self.journal_path, number)
                continue
            self.articles[key] = record
            if page and (known := _validators({page: validators})):
                self.validators.update(known)
            if offset is not None:
                self.articles_offset = offset

    def _recover_from_articles_file(self) -> None:
        """Articles written by a process killed before it journaled them were delivered."""
        path = self.articles_file
        if path is None or not path.exists():
            return
        size = path.stat().st_size
        if size < self.articles_offset:
            logger.info("%s is shorter than the state recorded (rotated?): not rechecked", path)
            self.articles_offset = size
            return
        if size == self.articles_offset:
            return
        with path.open("rb") as file:
            file.seek(self.articles_offset)
            tail = file.read()
        complete, _, partial = tail.rpartition(b"\n")
        if partial:
            cut = self.articles_offset + len(complete) + (1 if complete else 0)
            os.truncate(path, cut)
            logger.warning(
                "%s ended in half a line (%d bytes, a killed process): removed; its page "
                "will be crawled again",
                path,
                len(partial),
            )
        for line in complete.splitlines():
            try:
                article = json.loads(line)
            except ValueError:
                continue
            identity = article_identity(article)
            self.articles[identity.key] = {
                "url": identity.url,
                "hash": identity.digest,
                "first_seen": str(article.get("crawled_at") or ""),
                "last_seen": str(article.get("crawled_at") or ""),
            }
            self.recovered += 1
        self.articles_offset = path.stat().st_size
        if self.recovered:
            logger.warning(
                "%s: %d articles were written to %s by a crawl killed before it recorded "
                "them: now known as delivered",
                self.path.stem,
                self.recovered,
                path,
            )

    def judge(self, identity: ArticleIdentity) -> tuple[Verdict, str]:
        """Whether the article is new, changed, unchanged or a duplicate, and of what."""
        known = self.articles.get(identity.key)
        if known is not None and _unchanged(known, identity):
            return "unchanged", known.get("first_seen", "")
        same_text = self.by_hash.get(identity.digest)
        if same_text is not None and same_text != identity.key and identity.has_text:
            return "duplicate", same_text
        return ("changed" if known is not None else "new"), ""

    def touch(self, identity: ArticleIdentity, now: str, page: PageValidators = None) -> None:
        """An unchanged article was seen again (saved with the next snapshot)."""
        self.articles[identity.key]["last_seen"] = now
        if page is not None:
            self.validators[page[0]] = page[1]

    def record(
        self,
        identity: ArticleIdentity,
        now: str,
        offset: int | None,
        page: PageValidators = None,
    ) -> None:
        """The article was delivered: remember it, in the journal first. ``page``: the
        fetched page's key and its HTTP validators, for a conditional fetch next time."""
        known = self.articles.get(identity.key)
        if known is not None:
            self.by_hash.pop(known["hash"], None)
        record = {
            "url": identity.url,
            "hash": identity.digest,
            "first_seen": known["first_seen"] if known else now,
            "last_seen": now,
        }
        if identity.page_digest:
            record["page_hash"] = identity.page_digest
        line: dict[str, Any] = {"key": identity.key, **record}
        if offset is not None:
            line["offset"] = offset
            self.articles_offset = offset
        if page is not None:
            line["page"], line["validators"] = page
            self.validators[page[0]] = page[1]
        append_line(self.journal_path, json.dumps(line, ensure_ascii=False))
        self.articles[identity.key] = record
        self.by_hash[identity.digest] = identity.key
        self.dirty += 1

    def save(self, last_crawl: str) -> None:
        """A snapshot of the whole memory; the journal it covers is then emptied."""
        self.last_crawl = last_crawl or self.last_crawl
        data: dict[str, Any] = {
            "format": STATE_FORMAT,
            "last_crawl": self.last_crawl,
            "articles_file": str(self.articles_file) if self.articles_file else None,
            "articles_offset": self.articles_offset,
            "articles": self.articles,
            "validators": self.validators,
        }
        write_json_atomically(self.path, data)
        # Killed here, the journal is replayed over a snapshot that holds it already: the
        # same records again, no harm.
        self.journal_path.unlink(missing_ok=True)
        self.dirty = 0


RECORD_FIELDS = ("url", "hash", "first_seen", "last_seen")  # page_hash besides, if known


def _record(value: Any) -> dict[str, str] | None:
    """An article record read from the state or the journal (files from outside the
    process: a hand edit, a disk fault), or None where it lacks a field or holds other
    than text: such a record would stop every later article of the site."""
    if not isinstance(value, dict) or not all(isinstance(value.get(f), str) for f in RECORD_FIELDS):
        return None
    if not isinstance(value.get("page_hash", ""), str):
        return None
    return {k: v for k, v in value.items() if k in (*RECORD_FIELDS, "page_hash")}


def _validators(value: Any) -> dict[str, dict[str, str]]:
    """The HTTP validators by page key that are text, the others left out."""
    if not isinstance(value, dict):
        return {}
    return {
        str(page): known
        for page, known in value.items()
        if isinstance(known, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in known.items())
    }


def _unchanged(known: dict[str, str], identity: ArticleIdentity) -> bool:
    """The same text, or the same page: a page the server sends unchanged is no update,
    even where it was extracted another way this time (the fast path's rules instead of
    the classifier, a relearned model, a page fetched twice around a killed worker)."""
    if known["hash"] == identity.digest:
        return True
    return bool(identity.page_digest) and known.get("page_hash") == identity.page_digest


def append_line(path: Path, line: str) -> None:
    """Append one line with a single ``write``: a killed process leaves it whole or absent
    (only half of it if the write itself is cut, which loading repairs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(handle, (line + "\n").encode("utf-8"))
    finally:
        os.close(handle)


def page_key(url: str) -> str:
    """The key a fetched page's validators go by (its URL's article key)."""
    return article_key(url) or url


def read_validators(state_dir: Path, site: str) -> dict[str, dict[str, str]]:
    """The HTTP validators of a site's delivered pages (page key -> ETag, Last-Modified),
    read from its state without loading the rest."""
    path = state_dir / f"{safe_name(site)}.json"
    validators: dict[str, dict[str, str]] = {}
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no state: none known
        validators.update(_validators(json.loads(path.read_text("utf-8")).get("validators")))
    try:
        lines = path.with_suffix(".journal").read_bytes().splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("page"):
            validators.update(_validators({entry["page"]: entry.get("validators")}))
    return validators
