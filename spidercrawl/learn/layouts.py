"""A site's layouts: groups of its pages that share a template.

Real sites have several templates at once (a redesign whose archive keeps the old one,
sections with their own layout). Auto-labeling takes one cluster of blocks as the site's
content, so on pages of two templates it learns one of them: the other template's content
is another cluster, never chosen. Measured on the demo with every other page in a
redesigned template: the model learned from 10 mixed pages had rules for one template
only, and drift fired every 10 pages ("5 of the last 10 pages failed"), learning the other
template and losing the first, four times in two crawls.

So the pages are grouped first. A page's *signature* is its text by selector path (the
path of each block, tags with ids and classes, weighted by the block's characters: the
article's paragraphs dominate, the shared header and footer weigh little). Two pages'
similarity is the weighted Jaccard of their signatures; pages are grouped by average
linkage until groups are less similar than ``LAYOUT_SIMILARITY``. Groups of fewer than
``min_pages`` pages join the group they are most similar to. With one group left that
holds at least half the pages, it alone is learned (the strays come again later, see
:mod:`spidercrawl.pipelines.learning`); with none, the site has one layout and everything
is learned as before. An archive's pages of a host are all it will have: there every
template of two pages or more is a layout of its own (``every_template``).

A crawl does not learn from first pages that mix templates with too few pages each to be
learned on its own (:func:`ready_to_learn`): it holds more pages first, so that each
template is learned on its own rather than all of them as one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from spidercrawl.document.blocks import block_text
from spidercrawl.learn.parser import stable

# Pages of one template share most of their text's paths (weighted Jaccard 0.6-1.0 on the
# demo; see tests/test_layouts.py); pages of two templates share the chrome only (under 0.2).
LAYOUT_SIMILARITY = 0.35
MIN_LAYOUT_PAGES = 3  # a layout learned on its own needs this many pages
MIN_TEMPLATE_PAGES = 2  # ... where the pages are all there will be (an archive)
# A crawl's first pages are ready to learn from when at least this share of them is in
# templates of MIN_LAYOUT_PAGES pages or more, and no other template has two pages yet:
# at half, ten pages of four templates (3, 3, 2, 2) were learned as two layouts, each
# taking in the pages of a template too rare to learn (see group_layouts).
MIN_LEARNABLE_SHARE = 0.8
CLASS_STEPS = 2  # the steps of a block's selector path whose classes its signature keeps


def page_signature(page: Mapping[str, Any]) -> Counter[str]:
    """The page's characters of text by selector path: tag names, and the classes of the
    block's element and its parent (``CLASS_STEPS``). Ids and classes with digits are left
    out: they name the article ("post-18422", "story_body_3"), not the template; with them,
    every page of ziyan's prothomalo was a layout of its own, 4 groups of 24 pages. So are
    the names a CSS-in-JS library hashes (:func:`~spidercrawl.learn.parser.stable`): each
    deploy renames them, and pages of one template from two deploys would be two layouts.

    Classes further up are left out too: there they name the article's section or tags
    as often as the template (``div.business`` around a BBC story, WordPress's
    ``article.category-travel.tag-caribbean``), and a class on an ancestor changes the
    path of every block below it. With them, BBC story pages of one year were each a
    layout of their own (median similarity 0.06; their paragraphs' paths differed by the
    section's class only), so a crawl of its pages of two eras learned them as one layout
    and relearned in the second crawl; see docs/measurements.md ("Sites of several eras")."""
    signature: Counter[str] = Counter()
    for raw in page.get("texts") or []:
        chars = len(block_text(raw.get("text")))
        selector = raw.get("selector") or []
        if chars and selector:
            top = len(selector) - CLASS_STEPS
            steps = (_step(step, depth >= top) for depth, step in enumerate(selector))
            signature[">".join(steps)] += chars
    return signature


def _step(step: Mapping[str, Any], with_classes: bool = True) -> str:
    name = str(step.get("name", "")).lower()
    if not with_classes:
        return name
    classes = sorted(str(c) for c in step.get("classes") or [] if stable(str(c)))
    return name + "".join(f".{c}" for c in classes)


def similarity(a: Counter[str], b: Counter[str]) -> float:
    """Weighted Jaccard: shared characters over all characters, path by path."""
    keys = a.keys() | b.keys()
    low = sum(min(a[k], b[k]) for k in keys)
    high = sum(max(a[k], b[k]) for k in keys)
    return low / high if high else 1.0


def similarity_matrix(pages: Sequence[Mapping[str, Any]]) -> np.ndarray:
    signatures = [page_signature(page) for page in pages]
    size = len(signatures)
    matrix = np.ones((size, size))
    for i in range(size):
        for j in range(i + 1, size):
            matrix[i, j] = matrix[j, i] = similarity(signatures[i], signatures[j])
    return matrix


def _clusters(
    pages: Sequence[Mapping[str, Any]], threshold: float
) -> tuple[list[list[int]], np.ndarray]:
    """The pages (by index) clustered by average linkage of their signatures' similarity,
    and the similarity matrix. (scikit-learn is imported here, where a site learns: a
    crawl that only asks whether it is ready to learn starts without it.)"""
    from sklearn.cluster import AgglomerativeClustering

    matrix = similarity_matrix(pages)
    labels = AgglomerativeClustering(
        n_clusters=None,
        metric="precomputed",
        linkage="average",
        distance_threshold=1.0 - threshold,
    ).fit_predict(1.0 - matrix)
    groups = [list(np.flatnonzero(labels == label)) for label in sorted(set(labels.tolist()))]
    return groups, matrix


def ready_to_learn(
    pages: Sequence[Mapping[str, Any]],
    min_pages: int = MIN_LAYOUT_PAGES,
    threshold: float = LAYOUT_SIMILARITY,
) -> tuple[bool, float]:
    """Whether a crawl's first ``pages`` show its templates well enough to learn them
    each on its own, and the share of the pages in templates of at least ``min_pages``
    (1.0 for pages of one template, or too few to tell). Not ready while under
    ``MIN_LEARNABLE_SHARE`` of them are, or while another template has two pages or more
    (one on its way to being learnable; a single odd page is no template). A crawl whose
    first pages cycle through four templates had four story pages of ten: learned then,
    all four templates became one layout, and live blogs routed to it scored F1 0.14."""
    if len(pages) < 2 * min_pages:
        return True, 1.0
    groups, _ = _clusters(pages, threshold)
    share = sum(len(g) for g in groups if len(g) >= min_pages) / len(pages)
    forming = any(1 < len(g) < min_pages for g in groups)
    return share >= MIN_LEARNABLE_SHARE and not forming, share


def group_layouts(
    pages: Sequence[Mapping[str, Any]],
    min_pages: int = MIN_LAYOUT_PAGES,
    threshold: float = LAYOUT_SIMILARITY,
    *,
    every_template: bool = False,
) -> list[list[int]]:
    """The site's pages (by index) grouped by layout, largest group first; one group when
    the site has one layout (or too few pages to tell), which can leave out pages of
    templates too rare to learn. With ``every_template`` (the pages are all the site
    will have: an archive) each template of ``MIN_TEMPLATE_PAGES`` or more is a layout of
    its own where one has ``min_pages``: its pages will not come again to be learned
    later, and joined to another layout they blur its labels. A single page is no
    template (one page cannot tell its template's text from its story): it joins its
    nearest layout where there are two or more, as in a crawl, and stays out beside one."""
    everything = [list(range(len(pages)))]
    if len(pages) < 2 * min_pages:
        return everything
    groups, matrix = _clusters(pages, threshold)
    big = [g for g in groups if len(g) >= min_pages]
    if every_template and big:  # the pages are all there will be: a template of two too
        big = [g for g in groups if len(g) >= MIN_TEMPLATE_PAGES]
        if len(big) == 1:
            return [sorted(int(i) for i in big[0])]
    elif len(big) == 1 and 2 * len(big[0]) >= len(pages) and len(big[0]) < len(pages):
        # One template and a few pages of others, each too few to learn: the template is
        # learned alone, and the strays are left to come again (LEARN_MIN_PAGES of pages
        # no layout fits make a new layout). Learned with them, the template's labels and
        # rules took in their blocks too (the demo of four layouts: its story pages lost
        # their sub-headings and quotes, F1 0.88).
        return [sorted(int(i) for i in big[0])]
    if len(big) < 2:
        return everything
    strays = [g for g in groups if all(g is not layout for layout in big)]
    for small in strays:  # joins its nearest layout
        nearest = max(big, key=lambda g: float(matrix[np.ix_(small, g)].mean()))
        nearest.extend(small)
    return [sorted(int(i) for i in g) for g in sorted(big, key=len, reverse=True)]
