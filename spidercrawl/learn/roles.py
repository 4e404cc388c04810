"""Each layout's parser decided role by role with all of the site's evidence.

A hand-written parser for a news site is a few selectors (``div.article-body > p``) and a
few exclusions (``:not(.newsletter)``), each chosen with the whole site in mind. The site
model's classifier decides block by block, page by page, from the seeds' labels; the
page-level reading (trafilatura's on today's markup, the consensus on older markup)
decides page by page. Both err, and on different things: the classifier keeps an
in-article box styled like the paragraphs on every page; the reading misses a publisher's
second paragraph markup less often than the seeds do, but takes an inline box now and
then.

So after the classifier, each *role* of the template (a block's selector path without ids
and digits, with the classes of its element and its parent only:
:func:`~spidercrawl.learn.blocks.role_of`) gets a record over the
training pages: on how many it appears, on how many the model's article keeps it, on how
many the reading keeps it, how much of its text repeats word for word in that role from
page to page (teasers repeat other articles' leads; an article's paragraphs do not). From
the record, one decision per role:

- ``excluded``: the model keeps it, the reading leaves it out on most pages where it
  appears, and its text repeats (a "Get our app" box, a newsletter sign-up between
  paragraphs): left out of every page's article, the fast path's included;
- ``included``: a paragraph role inside the article's container (the element holding the
  roles the model keeps) that the reading keeps on most pages, whose text does not repeat
  and is not links, and that the model misses (a second paragraph markup): taken into
  every page's article (comments, which a reading keeps now and then, sit outside);
- ``doubted``: the model keeps it and the reading leaves it out on most pages, but its
  text does not repeat (a caption, an author's note): on the fast path, each page's own
  reading decides (:meth:`~spidercrawl.learn.rules.ExtractionRules.extract`);
- ``offered``: a paragraph role inside the container that the model misses and the reading
  keeps on most pages, but not on enough of them, or with repeated text: each page's
  reading decides too;
- ``model``: the model's block-by-block verdict stands (also for ``doubted`` and
  ``offered`` on a rendered page, which has no reading of its own).

The records are data stored in the model (:class:`RoleRecord`); loading checks them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from spidercrawl.learn.blocks import Block, role_of
from spidercrawl.learn.consensus_labels import reading_marks
from spidercrawl.learn.selectors import SelectorPath
from spidercrawl.text import folded

DECISIONS = ("model", "excluded", "included", "doubted", "offered")
# The decisions a page's own reading settles on the fast path (:meth:`RoleDecisions.disputed`).
PER_PAGE = ("doubted", "offered")
# A role is decided on at least this many training pages with a reading (and this share).
MIN_ROLE_PAGES = 2
MIN_ROLE_PAGE_SHARE = 0.2
# "Most pages": the reading keeps (or leaves out) a role on more than this share of the
# pages with a reading where the role appears.
MOST = 0.5
# excluded: at least this share of the role's characters repeat on another training page.
REPEATED_TO_EXCLUDE = 0.5
# included: at most this share repeats, and the reading keeps it on at least INCLUDE_SHARE.
REPEATED_TO_INCLUDE = 0.2
INCLUDE_SHARE = 2 / 3
# included: a paragraph role: ``p`` elements, or blocks of this many characters on average.
PARAGRAPH_ROLE_CHARS = 80
MAX_ROLES = 5000  # a stored model's records beyond this are a damaged file


@dataclass
class RoleRecord:
    """What the training pages say of one template role (counts of pages, shares 0-1)."""

    role: str  # the selector path without ids and digits
    pages: int  # training pages where the role has text
    read_pages: int  # ... of them with a page-level reading
    model_pages: int  # ... where the model's article keeps most of its text
    reading_pages: int  # ... with a reading that keeps most of its text
    chars: int  # the role's characters on all training pages
    repeated: float  # share of those characters in texts found on two pages or more
    link_share: float  # share of those characters inside links
    decision: str = "model"
    why: str = ""

    @property
    def element(self) -> str:
        """The tag of the role's own element."""
        return self.role.rsplit(" > ", 1)[-1].split(".", 1)[0]

    def check(self) -> None:
        """Raise ``ValueError`` where a loaded record is not one fitting makes."""
        counts = (self.pages, self.read_pages, self.model_pages, self.reading_pages, self.chars)
        if not isinstance(self.role, str) or not self.role or len(self.role) > 10_000:
            raise ValueError("a role record without a role")
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
            raise ValueError(f"role {self.role[:80]!r}: counts that are not whole numbers")
        if not (self.read_pages <= self.pages and self.model_pages <= self.pages
                and self.reading_pages <= self.read_pages):  # fmt: skip
            raise ValueError(f"role {self.role[:80]!r}: counts that do not add up")
        for share in (self.repeated, self.link_share):
            if not isinstance(share, int | float) or not 0.0 <= share <= 1.0:
                raise ValueError(f"role {self.role[:80]!r}: a share outside 0-1")
        if self.decision not in DECISIONS or not isinstance(self.why, str):
            raise ValueError(f"role {self.role[:80]!r}: an unknown decision")


class RoleDecisions:
    """A layout's role records and the decisions made from them (:func:`decide_roles`)."""

    def __init__(self, records: list[RoleRecord]) -> None:
        self.records = records

    def of(self, decision: str) -> list[RoleRecord]:
        return [record for record in self.records if record.decision == decision]

    def _decided(self) -> dict[str, str]:
        return {r.role: r.decision for r in self.records if r.decision != "model"}

    def apply(
        self, blocks: Sequence[Block], mask: np.ndarray, template: frozenset[str]
    ) -> np.ndarray:
        """``mask`` (the model's article of one page, or of the training pages) with the
        excluded roles left out and the included ones taken (less the site's template
        texts and blocks that are mostly links)."""
        decided = self._decided()
        if not decided:
            return mask
        out = np.asarray(mask, dtype=bool).copy()
        for number, block in enumerate(blocks):
            decision = decided.get(role_of(block.selector))
            if decision == "excluded":
                out[number] = False
            elif decision == "included" and not block.mostly_links:  # not "offered"
                out[number] = folded(block.text) not in template
        return out

    def disputed(self) -> dict[str, str]:
        """The roles each page's reading settles (role -> ``doubted`` or ``offered``)."""
        return {r.role: r.decision for r in self.records if r.decision in PER_PAGE}

    def excluded_paths(self, blocks: Sequence[Block]) -> Counter[SelectorPath]:
        """The selector paths of the training blocks of the excluded roles, with their
        characters."""
        excluded = {record.role for record in self.of("excluded")}
        paths: Counter[SelectorPath] = Counter()
        for block in blocks:
            if block.steps and block.chars and role_of(block.selector) in excluded:
                paths[block.steps] += block.chars
        return paths

    def check(self) -> None:
        """Raise ``ValueError`` where loaded records are malformed."""
        records = getattr(self, "records", None)
        if not isinstance(records, list) or len(records) > MAX_ROLES:
            raise ValueError("role records that are not a list")
        for record in records:
            if not isinstance(record, RoleRecord) or set(vars(record)) != _RECORD_FIELDS:
                raise ValueError("a role record of another shape")
            record.check()


_RECORD_FIELDS = {f.name for f in fields(RoleRecord)}


def role_records(
    blocks: Sequence[Block], marks: tuple[np.ndarray, np.ndarray], model_mask: np.ndarray
) -> list[RoleRecord]:
    """One record per template role of the training ``blocks``, from the reading's
    ``marks`` (the blocks it keeps, the blocks of pages it read: :func:`reading_marks`) and
    the model's article (``model_mask``)."""
    marked, labelled = marks
    roles = [role_of(block.selector) for block in blocks]
    texts = [(role, folded(block.text)) for role, block in zip(roles, blocks, strict=True)]
    pages_of: dict[tuple[str, str], set[int]] = defaultdict(set)
    for text, block in zip(texts, blocks, strict=True):
        pages_of[text].add(block.page)
    # Per role and page: characters, kept by the model, kept by the reading, read at all.
    per_page: dict[str, dict[int, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0, 0, 0])
    )
    chars: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # all, repeated, links
    for number, (role, block) in enumerate(zip(roles, blocks, strict=True)):
        if not block.chars or not role:  # text right in <body> has no role of its own
            continue
        counts = per_page[role][block.page]
        counts[0] += block.chars
        counts[1] += block.chars if model_mask[number] else 0
        counts[2] += block.chars if marked[number] else 0
        counts[3] = counts[3] or int(labelled[number])
        totals = chars[role]
        totals[0] += block.chars
        totals[1] += block.chars if len(pages_of[texts[number]]) > 1 else 0
        totals[2] += min(block.link_chars, block.chars)
    records = []
    for role, by_page in per_page.items():
        all_chars, repeated, links = chars[role]
        read = [c for c in by_page.values() if c[3]]
        records.append(
            RoleRecord(
                role=role,
                pages=len(by_page),
                read_pages=len(read),
                model_pages=sum(2 * c[1] >= c[0] for c in by_page.values()),
                reading_pages=sum(2 * c[2] >= c[0] for c in read),
                chars=all_chars,
                repeated=round(repeated / all_chars, 4),
                link_share=round(links / all_chars, 4),
            )
        )
    return records


def decide_roles(records: Iterable[RoleRecord], pages: int) -> RoleDecisions:
    """Each record's decision (see the module doc) on a layout of ``pages`` training
    pages."""
    needed = max(MIN_ROLE_PAGES, math.ceil(MIN_ROLE_PAGE_SHARE * pages))
    decided = sorted(records, key=lambda r: -r.chars)
    for record in decided:
        record.decision, record.why = "model", ""
    decidable = [record for record in decided if record.read_pages >= needed]
    for record in decidable:  # first what the model keeps and the reading does not
        _doubt(record)
    container = article_container(decidable)
    for record in decidable:  # then what the reading keeps in the article's container
        if record.decision == "model":
            _offer(record, container)
    return RoleDecisions(decided)


def article_container(records: Sequence[RoleRecord]) -> str:
    """The template path of the element holding every role (of ``records``, those seen on
    enough pages to decide) the model keeps on most pages and the reading does not doubt:
    where a second paragraph markup can be. Where the
    reading doubts all the model keeps (relevance took the comments), the element holding
    the paragraph roles the reading keeps on most pages ("" where there are none)."""
    kept = [
        r.role.split(" > ")
        for r in records
        if r.model_pages > MOST * r.pages and r.decision not in ("excluded", "doubted")
    ]
    if not kept:
        kept = [
            r.role.split(" > ")
            for r in records
            if r.read_pages and r.reading_pages > MOST * r.read_pages and _paragraph(r)
        ]
    if not kept:
        return ""
    shared = 0
    while all(len(steps) > shared + 1 and steps[shared] == kept[0][shared] for steps in kept):
        shared += 1
    return " > ".join(kept[0][:shared])


def _inside(role: str, container: str) -> bool:
    """Whether ``role`` lies below ``container``, by tags (roles keep the classes of their
    last two steps only, so a container's classes are not a role's)."""
    return bool(container) and _tags(role).startswith(_tags(container) + " > ")


def _tags(role: str) -> str:
    return " > ".join(step.split(".", 1)[0] for step in role.split(" > "))


def _paragraph(record: RoleRecord) -> bool:
    return record.element == "p" or record.chars / record.pages >= PARAGRAPH_ROLE_CHARS


def _doubt(record: RoleRecord) -> None:
    """``excluded`` or ``doubted``: a role the model keeps and the reading leaves out."""
    read, kept_by_reading = record.read_pages, record.reading_pages
    if record.model_pages > MOST * record.pages and read - kept_by_reading > MOST * read:
        left_out = f"the reading leaves it out on {read - kept_by_reading} of {read} pages"
        if record.repeated >= REPEATED_TO_EXCLUDE:
            record.decision = "excluded"
            record.why = f"{left_out} and {record.repeated:.0%} of its text repeats"
        else:
            record.decision = "doubted"
            record.why = f"{left_out}; its text does not repeat: each page's reading decides"


def _offer(record: RoleRecord, container: str) -> None:
    """``included`` or ``offered``: a paragraph role in the container the model misses
    and the reading keeps."""
    read, kept_by_reading = record.read_pages, record.reading_pages
    if (
        record.model_pages > MOST * record.pages
        or not _paragraph(record)
        or not _inside(record.role, container)
        or record.link_share > MOST
        or kept_by_reading <= MOST * read
    ):
        return
    kept = f"the reading keeps it on {kept_by_reading} of {read} pages"
    if kept_by_reading >= INCLUDE_SHARE * read and record.repeated <= REPEATED_TO_INCLUDE:
        record.decision, record.why = "included", kept
    elif record.repeated < REPEATED_TO_EXCLUDE:
        record.decision, record.why = "offered", f"{kept}: each page's reading decides"


def fit_role_decisions(
    blocks: Sequence[Block], pages: Sequence[Mapping[str, Any]], model_mask: np.ndarray
) -> RoleDecisions | None:
    """A layout's decisions, None where no training page has a reading to decide with."""
    marks = reading_marks(blocks, pages)
    if not marks[1].any():
        return None
    return decide_roles(role_records(blocks, marks, model_mask), len(pages))
