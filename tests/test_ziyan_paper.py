"""The seed paper's labeling procedure, as benchmarks/ziyan_tables.py reproduces it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from spidercrawl.learn.cross_site import load_site_pages
from spidercrawl.runner import PROJECT_ROOT

from .conftest import SHARED

sys.path.insert(0, str(PROJECT_ROOT / "benchmarks"))
import ziyan_paper

NPR = SHARED / "ziyan-spider" / "npr"


@pytest.mark.skipif(not NPR.is_dir(), reason="needs ../shared")
def test_site_labels_take_one_cluster_and_page_labels_one_per_page() -> None:
    pages = load_site_pages(NPR)
    blocks = ziyan_paper.blocks_of(pages)
    site = ziyan_paper.paper_labels(pages, blocks, "site")
    by_page = ziyan_paper.paper_labels(pages, blocks, "page")
    # Algorithm 1: one cluster for the whole site, holding the story paragraphs.
    chosen = [b.text for b, label in zip(blocks, site, strict=True) if label]
    assert 0 < len(chosen) < len(blocks) / 2
    assert np.mean([len(text) for text in chosen]) > 100  # paragraphs, not menu items
    # Per page: every page gets the content of its own best cluster.
    assert {b.page for b, label in zip(blocks, by_page, strict=True) if label} == set(
        range(len(pages))
    )
    features = ziyan_paper.classifier_features(blocks)
    *_, f1 = ziyan_paper.cross_validated(features, site, shuffle=False)
    assert f1 > 0.9  # one site's template is learnable from its other pages


def test_unknown_label_scope_is_refused() -> None:
    with pytest.raises(ValueError, match="scope"):
        ziyan_paper.paper_labels([], [], "everything")
