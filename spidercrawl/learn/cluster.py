"""Group the blocks of a site by look and place: DBSCAN with parameters read off the data.

Blocks with the same template role (article paragraphs, menu items, comment bodies) share
their CSS and selector path across pages, so they fall into one dense cluster; one-off
blocks are noise (label -1). Identical feature rows are clustered once, weighted by their
count, which keeps DBSCAN cheap on thousands of blocks.

Defaults (both overridable, see ``LEARN_DBSCAN_EPS`` / ``LEARN_DBSCAN_MIN_PAGES``):

* ``eps``: the knee of the sorted distances of each distinct row to its nearest other row
  (the k-distance curve with k = 1): below it rows are variants of one style, above it
  they are different styles.
* ``min_samples``: a cluster must hold at least as many blocks as ``min_page_share`` of the
  site's pages (at least 2): a role of the template shows up on many pages.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import DBSCAN
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import normalize


def knee_eps(distances: np.ndarray, floor: float = 1e-3) -> float:
    """The distance at the knee of the sorted curve: farthest point below its chord."""
    values = np.sort(distances[np.isfinite(distances)])
    if values.size < 3 or values[-1] - values[0] < 1e-12:
        return max(float(values[-1]) if values.size else floor, floor)
    x = np.linspace(0.0, 1.0, values.size)
    y = (values - values[0]) / (values[-1] - values[0])
    return max(float(values[int(np.argmax(x - y))]), floor)


class BlockClusterer(ClusterMixin, BaseEstimator):
    """DBSCAN over block feature rows; ``labels_`` per block, -1 for noise."""

    def __init__(
        self,
        eps: float | None = None,
        min_page_share: float = 0.3,
        pages: int = 1,
    ) -> None:
        self.eps = eps
        self.min_page_share = min_page_share
        self.pages = pages

    def fit(self, X: sp.spmatrix | np.ndarray, y: object = None) -> BlockClusterer:  # noqa: N803
        rows = normalize(sp.csr_matrix(X))  # unit length: distances do not grow with groups
        dense = rows.toarray() if rows.shape[1] <= 4000 else None
        if dense is None:
            keys = [tuple(r.indices) + tuple(np.round(r.data, 6)) for r in rows]
        else:
            keys = [row.round(6).tobytes() for row in dense]
        unique_id: dict[object, int] = {}
        inverse = np.array([unique_id.setdefault(key, len(unique_id)) for key in keys])
        _, order = np.unique(inverse, return_index=True)  # first block of each distinct row
        unique_rows = rows[order]
        weights = np.bincount(inverse, minlength=len(order)).astype(float)
        self.eps_ = self.eps if self.eps is not None else self._default_eps(unique_rows)
        self.min_samples_ = max(2, round(self.min_page_share * self.pages))
        if len(order) == 1:
            unique_labels = np.array([0 if weights[0] >= self.min_samples_ else -1])
        else:
            dbscan = DBSCAN(eps=self.eps_, min_samples=self.min_samples_, metric="euclidean")
            unique_labels = dbscan.fit(unique_rows, sample_weight=weights).labels_
        self.labels_ = unique_labels[inverse]
        return self

    @staticmethod
    def _default_eps(unique_rows: sp.csr_matrix) -> float:
        if unique_rows.shape[0] < 3:
            return 0.5
        neighbours = NearestNeighbors(n_neighbors=2).fit(unique_rows)
        distances, _ = neighbours.kneighbors(unique_rows)
        return knee_eps(distances[:, 1])
