"""Label a site's blocks as content or not, without people: cluster relevance, site-wide.

1. Each block is scored against its own page's description (else its title), corrected
   for chance (:mod:`spidercrawl.learn.relevance`); a description many pages share is the
   site's, not the page's, and is skipped (:func:`site_references`).
2. Per page, each cluster's text is weighed by its relevance, its amount of unlinked text,
   the number of separate stretches it forms (an article is a few long ones, comments many
   short ones) and its distance below the page's anchor (the block that best matches the
   description); a piece that only restates the description weighs nothing. Summed over
   the *whole site*, the best cluster is the content: on one page it is sometimes the
   comments, over the site the article paragraphs win.
3. A training page where that cluster is missing or weak gets its own best cluster as
   content (one template styled two ways puts the same paragraphs into two clusters).
4. The content cluster is split by template role, and roles far under the best dropped (a
   newsletter box that looks like the article's paragraphs).
5. Clusters inside the content's box that are relevant, not mostly links and no larger
   than the content join it (quotes, sub-headings, lists, captions); so do paragraphs of
   the content's own classed style in another wrapper.

No description and no title anywhere: the cluster with the most unlinked text, as
``basis_`` says. The weights and what each step was worth: docs/site-models.md and
docs/measurements.md.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from spidercrawl.document.blocks import Block, lies_inside, template_path, template_step
from spidercrawl.learn.relevance import echoes_reference, site_relevance

logger = logging.getLogger(__name__)

# How fast a cluster's weight fades with its distance below the page's anchor (measured on
# dragnet: 500 px 0.824, 1000 px 0.826, 3000 px 0.822, none 0.794).
ANCHOR_DECAY_PX = 1000.0
# How much a group's weight shrinks with the number of stretches it forms on a page.
RUNS_EXPONENT = 0.25


def page_reference(page: Mapping[str, Any], shared: frozenset[str] = frozenset()) -> str | None:
    """What a page says it is about: its first description, else its first title,
    skipping values in ``shared`` (the site's template text, see :func:`site_references`)."""
    for field in ("descriptions", "titles"):
        for value in page.get(field) or []:
            text = str(value or "").strip()
            if text and text not in shared:
                return text
    return None


def site_references(pages: Sequence[Mapping[str, Any]], max_share: float = 0.3) -> list[str | None]:
    """Each page's reference, ignoring descriptions and titles that many pages share.

    A description the whole site shares ("Fascinating letters. Interesting
    correspondence.") says what the *site* is about: it matches the site's blurb in the
    sidebar better than any article. Such a value, found on two or more pages and on at
    least ``max_share`` of them, is skipped, and the page's title (or next value) is used.
    """
    counts: Counter[str] = Counter()
    for page in pages:
        values = {
            str(v or "").strip() for f in ("descriptions", "titles") for v in page.get(f) or []
        }
        counts.update(v for v in values if v)
    needed = max(2, max_share * len(pages))
    shared = frozenset(value for value, count in counts.items() if count >= needed)
    return [page_reference(page, shared) for page in pages]


class NoContentClusterError(ValueError):
    """No cluster of the site can be called content (only noise, or no text at all)."""


class AutoLabeler:
    """Content labels for the blocks of one site: ``fit(blocks, clusters, pages).labels_``."""

    def __init__(
        self,
        similarity: str = "lcs",
        inside_share: float = 0.8,
        join_relevance: float = 0.2,
        max_link_share: float = 0.5,
        max_join_share: float = 1.0,
        min_role_share: float = 0.2,
        missed_page_share: float = 0.5,
    ) -> None:
        self.similarity = similarity
        self.inside_share = inside_share
        self.join_relevance = join_relevance
        self.max_link_share = max_link_share
        self.max_join_share = max_join_share
        self.min_role_share = min_role_share
        self.missed_page_share = missed_page_share

    def fit(
        self, blocks: Sequence[Block], clusters: np.ndarray, pages: Sequence[Mapping[str, Any]]
    ) -> AutoLabeler:
        references = site_references(pages)
        clusters = np.asarray(clusters)
        self.basis_ = "relevance" if any(references) else "text density"
        # Per block (for joining), and per cluster and page (for choosing the content).
        self.scores_ = site_relevance(
            [b.text for b in blocks], [b.page for b in blocks], references, self.similarity
        )
        self.anchor_top_ = self._anchors(blocks)
        weights = self._piece_weights(blocks, [int(c) for c in clusters], references)
        totals = _site_totals(weights)
        if not totals:
            raise NoContentClusterError("DBSCAN found only noise: no block style repeats")
        if max(totals.values()) <= 0:
            raise NoContentClusterError("no cluster's text is relevant to its pages")
        self.content_cluster_ = max(totals, key=totals.__getitem__)
        self.cluster_totals_ = dict(totals)
        labels = clusters == self.content_cluster_
        labels = self._fill_missed_pages(blocks, clusters, labels, weights)
        labels = self._drop_unrelated_roles(blocks, labels, references)
        labels = self._join_inside(blocks, clusters, labels, self.scores_)
        self.labels_ = self._join_paragraph_style(blocks, clusters, labels, self.scores_)
        return self

    def _fill_missed_pages(
        self,
        blocks: Sequence[Block],
        clusters: np.ndarray,
        labels: np.ndarray,
        weights: Mapping[tuple[Hashable, int], float],
    ) -> np.ndarray:
        """On training pages where the content cluster is missing or weak (its piece under
        ``missed_page_share`` of its median piece), the page's best cluster is its content
        too, if that piece weighs at least half as much as that bar (a short article: on
        one bbc.co.uk page the paragraphs weighed 19.4 against a bar of 21.7).

        The same template's paragraphs can fall into two clusters when pages were styled
        differently: measured on bbc.co.uk pages of 2009 and 2013 learned together, the
        body paragraphs of each year formed a cluster of their own (site weights 173 and
        168); the first became the content and the other year's article paragraphs were
        taught as boilerplate, so the model extracted nothing on 6 of 10 later pages. A
        page where the content cluster holds only a caption is missed as much as one where
        it holds nothing.
        """
        self.filled_pages_: list[int] = []
        if self.missed_page_share <= 0:
            return labels
        content = self.content_cluster_
        pieces = [w for (c, _), w in weights.items() if c == content]
        if not pieces:
            return labels
        bar = self.missed_page_share * float(np.median(pieces))
        best: dict[int, tuple[float, Hashable]] = {}
        for (cluster, page), weight in weights.items():
            if weight > best.get(page, (0.0, None))[0]:
                best[page] = (weight, cluster)
        strong = {page for (c, page), w in weights.items() if c == content and w >= bar}
        filled = labels.copy()
        on_page = np.array([block.page for block in blocks])
        for page, (weight, cluster) in sorted(best.items()):
            weak = weights.get((content, page), 0.0) < bar
            # The content's stand-in, not its companion: where the content is strong, the
            # cluster is (nearly) absent. A sidebar or comments beside every article are not.
            beside = [weights.get((cluster, other), 0.0) for other in strong]
            alone = not beside or float(np.mean(beside)) < bar / 2
            if weak and cluster != content and weight >= bar / 2 and alone:
                filled[(clusters == cluster) & (on_page == page)] = True
                self.filled_pages_.append(page)
        return filled

    def _group_totals(
        self,
        blocks: Sequence[Block],
        groups: Sequence[Hashable],
        references: Sequence[str | None],
        echoes_count: bool = False,
    ) -> dict[Hashable, float]:
        """Site-wide weight of each group of blocks (a cluster, or a template role); blocks
        in group -1 (DBSCAN's noise) are left out (see :meth:`_piece_weights`)."""
        return _site_totals(self._piece_weights(blocks, groups, references, echoes_count))

    def _piece_weights(
        self,
        blocks: Sequence[Block],
        groups: Sequence[Hashable],
        references: Sequence[str | None],
        echoes_count: bool = False,
    ) -> dict[tuple[Hashable, int], float]:
        """The weight of each group's piece of each page; group -1 (noise) left out.

        Per page, a group's blocks are scored as one piece: relevance^(1/4) x
        sqrt(unlinked characters) x closeness to the anchor / runs^(1/4), where runs is the
        number of separate stretches the group's blocks form in page order. An article is
        one or a few long stretches; comments, each between its author line and its reply
        link, are many short ones.

        A piece that only restates its page's description (a standfirst, a live blog's
        summary: :func:`echoes_reference`) weighs nothing, unless ``echoes_count``: it
        matches the description whatever the article is, so it says nothing about where
        the article is. Role weights count it (a standfirst in the content cluster stays).
        """
        pieces: dict[tuple[Hashable, int], list[Block]] = defaultdict(list)
        runs: Counter[tuple[Hashable, int]] = Counter()
        previous: dict[int, Hashable] = {}
        for block, group in zip(blocks, groups, strict=True):
            if group != -1:
                pieces[(group, block.page)].append(block)
                if previous.get(block.page, -1) != group:
                    runs[(group, block.page)] += 1
            previous[block.page] = group
        if not pieces:
            return {}
        keys = list(pieces)
        amounts = np.array(
            [sum(max(b.chars - b.link_chars, 0) for b in pieces[key]) for key in keys], float
        )
        if self.basis_ == "relevance":
            texts = [" ".join(b.text for b in pieces[key]) for key in keys]
            on_pages = [page for _, page in keys]
            relevance = site_relevance(texts, on_pages, references, self.similarity)
            weights = np.clip(relevance, 0.0, None) ** 0.25 * np.sqrt(amounts)
            weights = weights * self._closeness_to_anchor(keys, pieces)
            weights = weights / np.array([runs[key] for key in keys], float) ** RUNS_EXPONENT
            if not echoes_count:
                echoes = [
                    echoes_reference(text, references[page])
                    for text, page in zip(texts, on_pages, strict=True)
                ]
                weights = np.where(echoes, 0.0, weights)
        else:
            weights = np.sqrt(amounts)
        return {key: float(weight) for key, weight in zip(keys, weights, strict=True)}

    def _drop_unrelated_roles(
        self, blocks: Sequence[Block], labels: np.ndarray, references: Sequence[str | None]
    ) -> np.ndarray:
        """Split the content cluster by template role (selector path without ids and
        digits) and drop the roles that weigh little next to the best one.

        DBSCAN's clusters are sometimes coarser than the template: a section's blurb or a
        newsletter box can share the article paragraphs' look. Its role differs, and so
        does its relevance, weighed the same way as clusters are.
        """
        self.dropped_roles_: list[str] = []
        members = np.flatnonzero(labels)
        roles = [template_path(blocks[i].selector) for i in members]
        if len(set(roles)) < 2:
            return labels
        # A standfirst the content cluster holds is kept: the article's own summary.
        members_blocks = [blocks[i] for i in members]
        totals = self._group_totals(members_blocks, roles, references, echoes_count=True)
        best = max(totals.values(), default=0.0)
        if best <= 0:
            return labels
        self.dropped_roles_ = sorted(r for r, t in totals.items() if t < self.min_role_share * best)
        kept = labels.copy()
        kept[[i for i, role in zip(members, roles, strict=True) if role in self.dropped_roles_]] = (
            False
        )
        return kept

    def _anchors(self, blocks: Sequence[Block]) -> dict[int, float]:
        """Page -> top of its *anchor*, the block that best matches the page's reference
        (the headline or standfirst): the article starts right below it."""
        anchor_top: dict[int, float] = {}
        best: dict[int, float] = {}
        for block, score in zip(blocks, self.scores_, strict=True):
            if score > best.get(block.page, 0.0):
                best[block.page] = score
                anchor_top[block.page] = block.top
        return anchor_top

    def _closeness_to_anchor(
        self, keys: list[tuple[Hashable, int]], pieces: Mapping[tuple[Hashable, int], list[Block]]
    ) -> np.ndarray:
        """exp(-gap / ANCHOR_DECAY_PX) per (group, page) piece: the article starts right
        below the anchor; comments and related stories start far below it."""
        closeness = []
        for key in keys:
            first = min(block.top for block in pieces[key])
            gap = max(0.0, first - self.anchor_top_.get(key[1], first))
            closeness.append(math.exp(-gap / ANCHOR_DECAY_PX))
        return np.array(closeness)

    def _join_inside(
        self, blocks: Sequence[Block], clusters: np.ndarray, labels: np.ndarray, weight: np.ndarray
    ) -> np.ndarray:
        boxes: dict[int, list[float]] = {}
        for block, is_content in zip(blocks, labels, strict=True):
            if is_content:
                box = boxes.setdefault(block.page, [np.inf, np.inf, -np.inf, -np.inf])
                box[:] = [
                    min(box[0], block.left),
                    min(box[1], block.top),
                    max(box[2], block.right),
                    max(box[3], block.bottom),
                ]

        def inside(block: Block) -> bool:
            box = boxes.get(block.page)
            return box is not None and lies_inside(block, box)

        def mostly_inside(members: list[int]) -> bool:
            share = sum(inside(blocks[i]) for i in members) / len(members)
            return share >= self.inside_share

        return self._join_groups(blocks, clusters, labels, weight, mostly_inside)

    def _join_paragraph_style(
        self, blocks: Sequence[Block], clusters: np.ndarray, labels: np.ndarray, weight: np.ndarray
    ) -> np.ndarray:
        """Join the clusters whose blocks are the content's own paragraphs in another
        wrapper: the same last selector step (tag and classes, ``p.story``) as most content
        blocks, relevant, not mostly links, no more text than the content.

        Old table layouts and modern inline wrappers put some of an article's paragraphs a
        few levels deeper (next to a photo, in a nested table): DBSCAN makes them a
        cluster of their own, outside the content's box, and the model learned them as
        boilerplate. Only a step with a class counts (a bare ``p`` is every sidebar's too);
        roles dropped as unrelated stay out.
        """
        steps = Counter(
            template_step(blocks[i].selector[-1])
            for i in np.flatnonzero(labels)
            if blocks[i].selector
        )
        if not steps:
            return labels
        step, count = steps.most_common(1)[0]
        if "." not in step or count < 0.5 * int(labels.sum()):
            return labels
        dropped = set(getattr(self, "dropped_roles_", []))

        def same_style(i: int) -> bool:
            block = blocks[i]
            return (
                bool(block.selector)
                and template_step(block.selector[-1]) == step
                and template_path(block.selector) not in dropped
            )

        return self._join_groups(blocks, clusters, labels, weight, lambda _: True, same_style)

    def _join_groups(
        self,
        blocks: Sequence[Block],
        clusters: np.ndarray,
        labels: np.ndarray,
        weight: np.ndarray,
        fits: Callable[[list[int]], bool],
        candidate: Callable[[int], bool] = lambda _: True,
    ) -> np.ndarray:
        """``labels`` with the groups that look like more of the content joined: whole
        clusters and each noise block on its own, of the non-content ``candidate`` blocks,
        holding no more text than the content (``max_join_share``), not mostly links,
        relevant (``join_relevance`` of the content's mean weight), and that ``fits``."""
        content_weight = weight[labels]
        floor = self.join_relevance * (float(content_weight.mean()) if content_weight.size else 0)
        groups: dict[object, list[int]] = defaultdict(list)
        for i, cluster in enumerate(clusters):
            if not labels[i] and candidate(i):
                groups[int(cluster) if cluster >= 0 else ("noise", i)].append(i)
        joined = labels.copy()
        content_chars = sum(
            b.chars for b, is_content in zip(blocks, labels, strict=True) if is_content
        )
        for members in groups.values():
            chars = sum(blocks[i].chars for i in members) or 1
            if (
                chars <= self.max_join_share * content_chars
                and sum(blocks[i].link_chars for i in members) / chars <= self.max_link_share
                and float(np.mean(weight[members])) >= floor
                and fits(members)
            ):
                joined[members] = True
        return joined


def _site_totals(weights: Mapping[tuple[Hashable, int], float]) -> dict[Hashable, float]:
    """Each group's weight summed over the site's pages, from its pieces' weights."""
    totals: dict[Hashable, float] = defaultdict(float)
    for (group, _), weight in weights.items():
        totals[group] += weight
    return dict(totals)
