"""The article container: the element a site's articles sit in, learned from its pages.

When the classifier finds (almost) nothing on a page, the page is usually a variant of the
template: a post in another wrapper (an announcement box, a gallery), paragraphs styled
differently. The element that holds the article on the training pages is mostly still
there, and its blocks are a better guess than text density over the whole page, which
takes the longest run of text: on a short post that is the comment thread.

On each training page, the container is the deepest element holding all the page's
content blocks (their common selector path; its parent when that is a content block
itself, as with a single block or one with others nested in it). The
most frequent shape of that path (its tags), on at least ``min_page_share`` of the pages,
is merged over those pages step by step as extraction rules are (ids kept where equal,
classes intersected). A container whose element has neither id nor class left (``... >
div > div``, ``table > tbody > tr > td``) would hold the navigation as well: no container
then (news.com.au: 0.80 with one, hindu.com 0.93).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from spidercrawl.document.blocks import Block
from spidercrawl.document.selectors import SelectorPath, merge_paths


def _common_prefix(paths: Sequence[SelectorPath]) -> SelectorPath:
    shortest = min(len(path) for path in paths)
    depth = 0
    while depth < shortest and all(path[depth] == paths[0][depth] for path in paths):
        depth += 1
    return paths[0][:depth]


def fit_container(
    blocks: Sequence[Block], is_content: np.ndarray, min_page_share: float = 0.5
) -> SelectorPath | None:
    """The site's article container from its blocks and their content mask; None when the
    pages do not agree on one or when it names no id or class."""
    content_paths: dict[int, list[SelectorPath]] = defaultdict(list)
    for block, content in zip(blocks, is_content, strict=True):
        if content:
            content_paths[block.page].append(block.steps)
    containers = []
    for paths in content_paths.values():
        prefix = _common_prefix(paths)
        containers.append(prefix[:-1] if prefix in paths else prefix)
    shapes = Counter(tuple(step.name for step in path) for path in containers if path)
    if not shapes:
        return None
    shape, pages = shapes.most_common(1)[0]
    if pages < min_page_share * len(content_paths):
        return None
    container = merge_paths([path for path in containers if tuple(s.name for s in path) == shape])
    if container is None or not (container[-1].id or container[-1].classes):
        return None
    return container


def inside_container(block: Block, container: SelectorPath) -> bool:
    """Whether the block is the container's element or lies below it."""
    return len(block.steps) >= len(container) and all(
        step.covers(own) for step, own in zip(container, block.steps, strict=False)
    )
