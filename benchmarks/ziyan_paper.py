"""The seed paper's own procedure for its chaos tables (Tables 3 and 4), as its final
report describes it, written afresh for ``benchmarks/ziyan_tables.py``.

Our product labels and learns differently (per-site eps, chance-corrected relevance, the
article's box); those choices are why its labels are empty on most chaos pages when the
189 pages of many sites are treated as one site. The paper's tables come from this simpler
pipeline, so a reproduction has to follow it:

1. Clustering features per block: its width (standardised), one indicator per computed CSS
   value that differs from the body's, and one per tag path. DBSCAN with eps 0.5 and
   5 samples over the standardised features.
2. Relevance of a block: the length of the longest common subsequence of its tokens with
   the tokens of its page's titles and descriptions (0 without either).
3. Labels: Algorithm 1 of the report sums relevance per cluster over the whole dataset and
   labels the best cluster's blocks content ("site"); the repository's code at the time
   took the best cluster of each page instead ("page"). Both are offered. Over the chaos
   pages as one dataset, Algorithm 1 picks a cluster found on a handful of pages (7 of
   189), so the chaos tables need the per-page choice; the news sites take Algorithm 1.
4. The classifier: text density (tokens per pixel of height), the same CSS and tag path
   indicators, standardised; a linear SVM with balanced class weights; 4-fold
   cross-validation over blocks, in order (blocks of one page, and the pages of a site,
   stay together: "previously unseen websites", Table 3) or shuffled ("random mixture of
   webpages", Table 4). Precision, recall and F1 of the content class over the pooled
   predictions of the four folds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from rapidfuzz.distance import LCSseq
from sklearn.cluster import DBSCAN
from sklearn.feature_extraction import DictVectorizer
from sklearn.metrics import precision_recall_fscore_support
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from spidercrawl.document.blocks import Block, page_blocks
from spidercrawl.text import tokenize

PAPER_EPS = 0.5
PAPER_MIN_SAMPLES = 5
PAPER_FOLDS = 4
# The report's Tables 3 and 4 (chaos): precision, recall, F1 in per cent.
PAPER_UNSEEN_SITES = (71.75, 20.65, 31.28)
PAPER_RANDOM_MIXTURE = (96.86, 89.64, 92.83)


def _indicators(blocks: Sequence[Block]) -> list[dict[str, str]]:
    """Each block's computed CSS values and tag path, as categorical features."""
    rows = []
    for block in blocks:
        row = {f"css:{name}": str(value) for name, value in block.computed.items()}
        row["path"] = " > ".join(block.path)
        rows.append(row)
    return rows


def _with_continuous(column: np.ndarray, indicators: sp.spmatrix) -> sp.csr_matrix:
    """One continuous column beside the indicators, all standardised (without centring,
    which leaves Euclidean distances and a linear SVM with an intercept unchanged and
    keeps the matrix sparse)."""
    matrix = sp.hstack([sp.csr_matrix(column.reshape(-1, 1)), indicators], format="csr")
    return StandardScaler(with_mean=False).fit_transform(matrix)


def blocks_of(pages: Sequence[Mapping[str, Any]]) -> list[Block]:
    """All text blocks of the pages, each numbered with its page's position."""
    return [b for n, page in enumerate(pages) for b in page_blocks(page, n)]


def paper_labels(
    pages: Sequence[Mapping[str, Any]],
    blocks: Sequence[Block],
    scope: str = "site",
    noise_competes: bool = False,
) -> np.ndarray:
    """Content labels of ``blocks`` (all blocks of ``pages``, numbered from 0) by the
    paper's clustering and relevance; ``scope`` "site" (Algorithm 1) or "page".

    DBSCAN's noise is not a cluster and is never chosen, unless ``noise_competes`` (the
    repository's code kept noise as one more label, -1, beside the clusters)."""
    if scope not in ("site", "page"):
        raise ValueError(f"scope must be 'site' or 'page', not {scope!r}")
    indicators = DictVectorizer().fit_transform(_indicators(blocks))
    widths = np.array([b.width for b in blocks], dtype=float)
    features = _with_continuous(widths, indicators)
    clusters = DBSCAN(eps=PAPER_EPS, min_samples=PAPER_MIN_SAMPLES).fit(features).labels_
    hints = [
        tokenize(" ".join([*(page.get("titles") or []), *(page.get("descriptions") or [])]))
        for page in pages
    ]
    relevance = np.array(
        [
            LCSseq.similarity(tokenize(b.text), hints[b.page]) if hints[b.page] else 0.0
            for b in blocks
        ]
    )
    if not noise_competes:
        relevance = np.where(clusters == -1, -1.0, relevance)
    labels = np.zeros(len(blocks), dtype=int)
    if scope == "site":
        totals: dict[int, float] = defaultdict(float)
        for cluster, score in zip(clusters.tolist(), relevance, strict=True):
            totals[cluster] += score
        best = max(totals, key=totals.__getitem__)
        labels[clusters == best] = 1
        return labels
    page_of = np.array([b.page for b in blocks])
    for page in np.unique(page_of):
        on_page = page_of == page
        totals = defaultdict(float)
        for cluster, score in zip(clusters[on_page].tolist(), relevance[on_page], strict=True):
            totals[cluster] += score
        best = max(totals, key=totals.__getitem__)
        labels[on_page & (clusters == best)] = 1
    return labels


def classifier_features(blocks: Sequence[Block]) -> sp.csr_matrix:
    """Text density, CSS values and tag path of each block, standardised."""
    density = np.array([len(tokenize(b.text)) / max(b.height, 1.0) for b in blocks])
    indicators = DictVectorizer().fit_transform(_indicators(blocks))
    return _with_continuous(density, indicators)


def _svm() -> LinearSVC:
    return LinearSVC(class_weight="balanced", random_state=0, max_iter=10000)


def cross_validated(
    features: sp.csr_matrix, labels: np.ndarray, shuffle: bool
) -> tuple[float, float, float]:
    """Precision, recall and F1 of the content class, 4-fold over blocks, pooled."""
    folds = KFold(PAPER_FOLDS, shuffle=shuffle, random_state=0 if shuffle else None)
    predicted = np.zeros_like(labels)
    for train, test in folds.split(features):
        if len(set(labels[train].tolist())) < 2:
            continue
        predicted[test] = _svm().fit(features[train], labels[train]).predict(features[test])
    p, r, f, _ = precision_recall_fscore_support(
        labels, predicted, average="binary", zero_division=0
    )
    return float(p), float(r), float(f)


def trained_elsewhere(
    train_features: sp.csr_matrix,
    train_labels: np.ndarray,
    test_features: sp.csr_matrix,
    test_labels: np.ndarray,
) -> tuple[float, float, float]:
    """Precision, recall and F1 on one set of blocks of a model trained on another (the
    features of both come from one vectorizer: pass them stacked and split)."""
    predicted = _svm().fit(train_features, train_labels).predict(test_features)
    p, r, f, _ = precision_recall_fscore_support(
        test_labels, predicted, average="binary", zero_division=0
    )
    return float(p), float(r), float(f)
