"""Training labels from the never-seen consensus: the site model learns what the
consensus of our blocks and the peers chose on its training pages.

The seeds' labels (cluster relevance to each page's description or title, summed over the
site: :mod:`spidercrawl.learn.labeling`) miss what the consensus gets right: a boxed
feature or a standfirst styled unlike the body, a site whose descriptions say little. The
consensus's article of each training page (``page["consensus_article"]``, made by the
pipeline or the evaluation before learning: the consensus sits above this layer) marks
the blocks whose words it holds. Four ways to use the marks:

- ``consensus``: each block as marked (the later runs of a marked element with it);
- ``consensus-clusters``: the seeds' cluster-level labelling with the consensus in place
  of relevance, a DBSCAN cluster being content where most of its text is marked;
- ``voted``: the marks settled across the site by template role (a block's selector path
  without ids and digits): a role the page-level reading puts in the article on at least
  ``VOTE_SHARE`` of the pages that have it is article on every page, one it puts there on
  fewer is not. One page's reading keeps a related-articles box now and then; the site's
  pages together do not. Voted by structure, not by repeated text: teasers repeat other
  articles' leads;
- ``relevance-checked``: the seeds' labels, checked by the reading: where the reading holds
  at least ``CHECK_SHARE`` of the text they call content (on the pages it labels), they
  stand; where it holds less (relevance took the comments, or a newsletter box, for the
  article), the marks voted by role replace them. The reading teaches a worse classifier
  than the seeds' labels where both are right (its articles keep bylines, captions and
  credits), so it only overrules them where they are wrong.

A page whose consensus agreement is under ``MIN_AGREEMENT`` (the extractors disagreed:
their medoid is a guess) keeps the seeds' labels for its blocks; a site where that is
every page is labelled as before, and :func:`consensus_labels` says so.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spidercrawl.document.blocks import Block, template_path
from spidercrawl.text import tokenize

LABEL_SOURCES = ("relevance", "consensus", "consensus-clusters", "voted", "relevance-checked")
# A consensus chosen by extractors agreeing this little (mean word F1) does not label a page.
MIN_AGREEMENT = 0.5
# A block is marked where the consensus's article holds this share of its words.
WORDS_HELD = 0.8
CONSENSUS_FIELD = "consensus_article"
# voted: a template role is article where the reading marks it on this share of the pages
# that have it.
VOTE_SHARE = 0.5
# relevance-checked: the seeds' labels stand where the reading holds this share of the text
# they call content.
CHECK_SHARE = 0.5


@dataclass
class ConsensusArticle:
    """The never-seen consensus's article of a training page: its text, the agreement of
    the extractors that chose it (0-1), and each reader's own article of the page (the
    votes a layout's parser is induced from, :mod:`.parser`)."""

    text: str
    agreement: float
    readings: list[str] = field(default_factory=list)

    def as_field(self) -> dict[str, Any]:
        return {
            "text": self.text, "agreement": round(self.agreement, 3), "readings": self.readings
        }  # fmt: skip

    @classmethod
    def of_page(cls, page: Mapping[str, Any]) -> ConsensusArticle | None:
        """The page's consensus article, None where it has none (or a malformed one)."""
        value = page.get(CONSENSUS_FIELD)
        if not isinstance(value, Mapping) or not isinstance(value.get("text"), str):
            return None
        agreement = value.get("agreement")
        if not isinstance(agreement, int | float):
            return None
        readings = value.get("readings")
        if not isinstance(readings, list) or not all(isinstance(r, str) for r in readings):
            readings = []
        return cls(value["text"], float(agreement), readings)


@dataclass
class ConsensusLabels:
    """Labels of a site's blocks, and how many training pages the consensus labelled."""

    labels: np.ndarray
    pages_labelled: int
    pages: int
    how: str = ""  # relevance-checked: which labels stood, and why


def consensus_labels(
    blocks: Sequence[Block],
    pages: Sequence[Mapping[str, Any]],
    seed_labels: np.ndarray,
    clusters: np.ndarray,
    source: str,
) -> ConsensusLabels:
    """The blocks' labels by ``source`` (see the module doc): ``seed_labels`` on pages the
    consensus does not label (none, or under ``MIN_AGREEMENT``), and everywhere for
    ``relevance``."""
    seed_labels = np.asarray(seed_labels, dtype=bool)
    if source == "relevance":
        return ConsensusLabels(seed_labels, 0, len(pages))
    marked, labelled = reading_marks(blocks, pages)
    if source == "consensus-clusters":
        marked = _by_cluster(blocks, marked, labelled, np.asarray(clusters))
    pages_labelled = sum(_read(ConsensusArticle.of_page(page)) for page in pages)
    how = ""
    if source == "relevance-checked":
        held = _reading_holds(blocks, seed_labels & labelled, marked)
        if held >= CHECK_SHARE:
            how = f"the reading holds {held:.0%} of relevance's content: relevance stands"
            return ConsensusLabels(seed_labels, pages_labelled, len(pages), how)
        how = f"the reading holds {held:.0%} of relevance's content: voted by role instead"
    if source in ("voted", "relevance-checked"):
        marked, labelled = _by_role(blocks, marked, labelled)
    labels = np.where(labelled, marked, seed_labels)
    return ConsensusLabels(labels, pages_labelled, len(pages), how)


def reading_marks(
    blocks: Sequence[Block], pages: Sequence[Mapping[str, Any]]
) -> tuple[np.ndarray, np.ndarray]:
    """Which blocks the page-level reading keeps (``WORDS_HELD`` of their words in its
    article), and which blocks are on a page it read (a reading whose extractors agree at
    least ``MIN_AGREEMENT``)."""
    articles = [ConsensusArticle.of_page(page) for page in pages]
    bags = [Counter(tokenize(a.text)) if _read(a) else None for a in articles]
    labelled = np.array([bags[block.page] is not None for block in blocks], dtype=bool)
    marked = np.array(
        [
            bag is not None and words_held(block.text, bag)
            for block, bag in _with_bags(blocks, bags)
        ],
        dtype=bool,
    )
    return marked, labelled


def _read(article: ConsensusArticle | None) -> bool:
    """Whether a page's reading is one to label by (its extractors agreed enough)."""
    return article is not None and article.agreement >= MIN_AGREEMENT


def _reading_holds(blocks: Sequence[Block], content: np.ndarray, marked: np.ndarray) -> float:
    """The share of ``content``'s characters the reading marks (1 where nothing is
    content: seeds that found no content cluster are not overruled, and the site is read
    as one never seen, which did better there than a model taught by the reading alone:
    docs/measurements.md)."""
    chars = np.array([len(block.text) for block in blocks], dtype=float)
    total = float((chars * content).sum())
    return float((chars * (content & marked)).sum()) / total if total else 1.0


def _with_bags(
    blocks: Sequence[Block], bags: Sequence[Counter | None]
) -> list[tuple[Block, Counter | None]]:
    return [(block, bags[block.page]) for block in blocks]


def words_held(text: str, bag: Counter) -> bool:
    """Whether a reading whose words are ``bag`` holds ``WORDS_HELD`` of ``text``'s."""
    words = Counter(tokenize(text))
    total = sum(words.values())
    return total > 0 and sum((words & bag).values()) >= WORDS_HELD * total


def _by_role(
    blocks: Sequence[Block], marked: np.ndarray, labelled: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each template role content where the reading marks most of its text on at least
    ``VOTE_SHARE`` of the labelled pages that have it; the role's blocks on pages the
    reading did not label take the vote too. Returns the marks and which blocks they
    label."""
    roles = [template_path(block.selector) for block in blocks]
    chars: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])  # marked, all
    for role, block, is_marked, is_labelled in zip(roles, blocks, marked, labelled, strict=True):
        if is_labelled:
            counts = chars[(role, block.page)]
            counts[0] += len(block.text) if is_marked else 0
            counts[1] += len(block.text)
    votes: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # pages marking it, pages
    for (role, _page), (marked_chars, all_chars) in chars.items():
        votes[role][0] += marked_chars * 2 >= all_chars
        votes[role][1] += 1
    content = {role for role, (ayes, pages) in votes.items() if ayes >= VOTE_SHARE * pages}
    voted = np.array([role in votes for role in roles], dtype=bool)  # every labelled one too
    return np.array([role in content for role in roles], dtype=bool), voted


def _by_cluster(
    blocks: Sequence[Block], marked: np.ndarray, labelled: np.ndarray, clusters: np.ndarray
) -> np.ndarray:
    """Each DBSCAN cluster content where most of its text (on labelled pages) is marked;
    noise blocks as marked."""
    chars = np.array([len(block.text) for block in blocks], dtype=float)
    out = marked.copy()
    for cluster in set(clusters.tolist()) - {-1}:
        members = clusters == cluster
        counted = members & labelled
        if not counted.any():
            continue
        share = float((chars * (counted & marked)).sum() / max((chars * counted).sum(), 1.0))
        out[members] = share >= 0.5
    return out
