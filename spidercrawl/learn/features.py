"""Block features, in named groups so that an ablation is one argument.

Groups (``FEATURE_GROUPS``):

* ``text``: length (log of characters and words), punctuation and digit shares, sentence
  ends: what separates a paragraph from a menu item.
* ``tag_path``: the tag path below ``<body>`` and the block's tag, one-hot.
* ``selector``: the CSS selector path (tags, ids, classes per level) and its single
  id/class tokens, one-hot: the site's own template vocabulary.
* ``template``: the selector path without ids and digits: the role in the template, as
  clustering sees it.
* ``class_words``: the words of the block's and its ancestors' ids and classes
  (``div.entry-content`` -> entry, content) among a given vocabulary: for the cross-site
  model, which keeps the words that many sites use (comment, sidebar, entry, post...).
* ``css``: computed CSS values that differ from body's (``font-size=18px``...), one-hot.
* ``geometry``: position and size relative to the page width / height.
* ``density``: link density, links per word, tags per character, and CETD's text density
  and composite text density of the block's element (log scale; zero without rendered HTML).

Discrete values are one-hot over a vocabulary fitted on the site (``DictVectorizer``);
continuous ones are standardised (``StandardScaler``). ``CROSS_SITE_GROUPS`` are those whose
meaning carries from one site to another (no whole ids or class names, only common words).

A fitted vectorizer keeps only plain data (the vocabulary, the means and scales), and
scikit-learn and SciPy are imported where a model learns or a matrix is made: a crawl that
reads pages with a saved model never loads them (a costly import at every process's start).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from spidercrawl.document.blocks import DENSITY_FEATURES, Block, template_path

if TYPE_CHECKING:
    import scipy.sparse as sp

FEATURE_GROUPS = ("text", "tag_path", "selector", "css", "geometry", "density")
CLUSTER_GROUPS = ("css", "tag_path", "template")  # what DBSCAN groups a site's blocks by
CROSS_SITE_GROUPS = ("text", "geometry", "density", "tag_path", "css_generic", "class_words")
# CSS properties whose values mean the same on any site (no colours, no font names).
GENERIC_CSS = ("font-size", "font-weight", "font-style", "text-align", "display", "float")
# How many continuous values each group gives (:func:`_continuous`, in this order).
CONTINUOUS_WIDTHS = {"text": 5, "geometry": 5, "density": 3 + len(DENSITY_FEATURES)}
KNOWN_GROUPS = frozenset({*FEATURE_GROUPS, "css_generic", "template", "class_words"})
_PUNCTUATION = re.compile(r"[.,;:!?\u3002\uff0c\u3001\uff01\uff1f]")  # with CJK ones
_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f]['\"\u201d\u2019)]?$")
_DIGIT = re.compile(r"\d")
_NAME_TOKEN = re.compile(r"(?=[#.])")
_CAMEL = re.compile(r"([a-z])([A-Z])")
_NOT_LETTERS = re.compile(r"[^a-z]+")


@lru_cache(maxsize=65536)
def step_words(step: str) -> frozenset[str]:
    """The words (3+ letters) of one selector step's id and classes:
    ``div#post-12.entry-content`` -> {post, entry, content}; camelCase is split too."""
    words: set[str] = set()
    for token in _NAME_TOKEN.split(step):
        if token[:1] in ("#", "."):
            spaced = _CAMEL.sub(r"\1 \2", token[1:]).lower()
            words.update(w for w in _NOT_LETTERS.split(spaced) if len(w) > 2)
    return frozenset(words)


def _continuous(block: Block, groups: Sequence[str]) -> list[float]:
    values: list[float] = []
    chars = max(block.chars, 1)
    if "text" in groups:
        words = len(block.text.split())
        values += [
            math.log1p(block.chars),
            math.log1p(words),
            len(_PUNCTUATION.findall(block.text)) / chars,
            len(_DIGIT.findall(block.text)) / chars,
            1.0 if _SENTENCE_END.search(block.text) else 0.0,
        ]
    if "geometry" in groups:
        values += [
            block.left / block.page_width,
            block.width / block.page_width,
            (block.left + block.width / 2) / block.page_width,
            min(block.top / block.page_height, 1.0),
            math.log1p(max(block.height, 0.0)),
        ]
    if "density" in groups:
        values += [
            block.link_chars / chars,
            block.link_count / max(len(block.text.split()), 1),
            block.html_tags / chars,
            *(block.extra.get(name, 0.0) for name in DENSITY_FEATURES),
        ]
    return values


def _discrete(
    block: Block, groups: Sequence[str], class_words: frozenset[str] = frozenset()
) -> dict[str, float]:
    features: dict[str, float] = {}
    if "tag_path" in groups:
        features["path=" + "/".join(block.path)] = 1.0
        features["tag=" + block.element] = 1.0
        features["parent=" + (block.path[-2] if len(block.path) > 1 else "")] = 1.0
    if "selector" in groups:
        features["selector=" + " > ".join(block.selector)] = 1.0
        for depth, step in enumerate(reversed(block.selector[-4:])):
            for token in re.split(r"(?=[#.])", step):
                if token and token[0] in "#.":
                    features[f"sel{depth}{token}"] = 1.0
    if "template" in groups:
        features["template=" + template_path(block.selector)] = 1.0
    if "css" in groups:
        for name, value in block.computed.items():
            features[f"css:{name}={value}"] = 1.0
    if "css_generic" in groups:
        for name in GENERIC_CSS:
            if name in block.computed:
                features[f"css:{name}={block.computed[name]}"] = 1.0
    if "class_words" in groups and block.selector:
        for word in step_words(block.selector[-1]) & class_words:
            features["own:" + word] = 1.0
        for name in _inside_features(block.selector[:-1], class_words):
            features[name] = 1.0
    return features


@lru_cache(maxsize=4096)
def _inside_features(ancestors: tuple[str, ...], class_words: frozenset[str]) -> tuple[str, ...]:
    """The ``inside:`` feature names of a block below ``ancestors`` (selector steps): a
    page's blocks share a few ancestor paths, so each is read once."""
    names: dict[str, None] = {}
    for step in ancestors:
        for word in step_words(step) & class_words:
            names["inside:" + word] = None
    return tuple(names)


class BlockVectorizer:
    """Blocks -> feature matrix or a linear model's margins; the vocabulary and scaling are
    fitted on one site (scikit-learn's ``DictVectorizer`` and ``StandardScaler``, kept as
    their plain results: ``vocabulary_`` a column per feature name, ``mean_`` and
    ``scale_`` of the continuous features, None where the groups have none).

    ``class_words``: the id/class words the ``class_words`` group looks for.
    """

    def __init__(
        self, groups: Sequence[str] = FEATURE_GROUPS, class_words: frozenset[str] = frozenset()
    ) -> None:
        self.groups = groups
        self.class_words = class_words

    def _check_groups(self) -> None:
        groups = self.groups
        if isinstance(groups, str) or not isinstance(groups, (tuple, list)) or not groups:
            raise ValueError(f"feature groups must be a sequence of names: {groups!r}"[:200])
        if not all(isinstance(group, str) and group in KNOWN_GROUPS for group in groups):
            raise ValueError(f"feature groups must be among {sorted(KNOWN_GROUPS)}: {groups}")

    def check(self) -> None:
        """Raise ValueError where a fitted vectorizer's parts do not fit together (a model
        file is data from outside): known groups, a vocabulary of columns in range, and
        finite means and non-zero scales, one per continuous value of the groups."""
        self._check_groups()
        if not isinstance(self.class_words, frozenset) or not all(
            isinstance(word, str) for word in self.class_words
        ):
            raise ValueError("its class words are not a set of words")
        vocabulary = self.vocabulary_
        if not isinstance(vocabulary, dict):
            raise ValueError("no feature vocabulary")
        width = len(vocabulary)
        if not all(
            isinstance(k, str) and isinstance(v, int) and 0 <= v < width
            for k, v in vocabulary.items()
        ):
            raise ValueError("a vocabulary column out of range")
        continuous = sum(CONTINUOUS_WIDTHS.get(group, 0) for group in self.groups)
        mean, scale = self.mean_, self.scale_
        if not continuous:
            if mean is not None or scale is not None:
                raise ValueError("scales for groups of no continuous values")
            return
        for name, values in (("means", mean), ("scales", scale)):
            if not isinstance(values, np.ndarray) or values.shape != (continuous,):
                raise ValueError(f"{name} of another shape than its {continuous} values")
            if values.dtype.kind != "f" or not np.isfinite(values).all():
                raise ValueError(f"{name} that are not finite numbers")
        if not np.all(scale):
            raise ValueError("a scale of zero")

    def fit(self, blocks: Iterable[Block]) -> BlockVectorizer:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.preprocessing import StandardScaler

        self._check_groups()
        blocks = list(blocks)
        discrete = DictVectorizer(sparse=True).fit(
            [_discrete(b, self.groups, self.class_words) for b in blocks]
        )
        self.vocabulary_ = {name: int(column) for name, column in discrete.vocabulary_.items()}
        continuous = np.array([_continuous(b, self.groups) for b in blocks], dtype=float)
        self.mean_: np.ndarray | None = None
        self.scale_: np.ndarray | None = None
        if continuous.ndim == 2 and continuous.shape[1]:
            scaler = StandardScaler().fit(continuous)
            self.mean_, self.scale_ = scaler.mean_, scaler.scale_
        return self

    def fit_transform(self, blocks: Iterable[Block]) -> sp.csr_matrix:
        blocks = list(blocks)
        return self.fit(blocks).transform(blocks)

    def feature_names(self) -> list[str]:
        """The discrete features' names in column order."""
        return sorted(self.vocabulary_, key=self.vocabulary_.__getitem__)

    @property
    def width(self) -> int:
        """The number of features: the vocabulary's columns, then the continuous ones."""
        return len(self.vocabulary_) + (0 if self.mean_ is None else len(self.mean_))

    def transform(self, blocks: Iterable[Block]) -> sp.csr_matrix:
        import scipy.sparse as sp

        blocks = list(blocks)
        parts = [self._one_hot(blocks)]
        if self.mean_ is not None:
            parts.append(sp.csr_matrix(self._scaled(blocks)))
        return sp.hstack(parts, format="csr")

    def _scaled(self, blocks: Sequence[Block]) -> np.ndarray:
        """The blocks' continuous features, standardised as on the training blocks."""
        continuous = np.array([_continuous(b, self.groups) for b in blocks], dtype=float)
        return (continuous.reshape(len(blocks), len(self.mean_)) - self.mean_) / self.scale_

    def linear_decision(
        self, blocks: Sequence[Block], coef: np.ndarray, intercept: float
    ) -> np.ndarray:
        """``transform(blocks) @ coef + intercept`` (a linear model's margins), without the
        matrix: each block's one-hot weights summed straight from its feature names, and
        its scaled continuous values times theirs. The same margins up to rounding; the
        matrix and sklearn's checks were a fifth of a never-seen page's extraction."""
        columns, row_starts = self._columns(blocks)
        rows = np.repeat(np.arange(len(blocks)), np.diff(row_starts))
        discrete_weights = coef[: len(self.vocabulary_)]
        # float always: with no known feature name the weights are empty and bincount
        # would return integers, which the continuous part cannot be added to in place
        scores = np.bincount(rows, weights=discrete_weights[columns], minlength=len(blocks)).astype(
            float, copy=False
        )
        if self.mean_ is not None:
            scores += self._scaled(blocks) @ coef[len(discrete_weights) :]
        return scores + intercept

    def _one_hot(self, blocks: Sequence[Block]) -> sp.csr_matrix:
        """The discrete features over the fitted vocabulary (``DictVectorizer.transform``'s
        matrix, every value 1, unknown names left out), built straight as CSR: the
        vectorizer's general path was a quarter of a never-seen page's extraction time."""
        import scipy.sparse as sp

        columns, row_starts = self._columns(blocks)
        return sp.csr_matrix(
            (np.ones(len(columns)), columns, row_starts),
            shape=(len(blocks), len(self.vocabulary_)),
        )

    def _columns(self, blocks: Sequence[Block]) -> tuple[np.ndarray, np.ndarray]:
        """The vocabulary columns of each block's discrete features, in CSR layout: all
        columns in row order, and where each block's run of them starts (one more entry
        than blocks). Names the vocabulary does not know are left out."""
        vocabulary = self.vocabulary_
        columns: list[int] = []
        row_starts = [0]
        for block in blocks:
            for name in _discrete(block, self.groups, self.class_words):
                column = vocabulary.get(name)
                if column is not None:
                    columns.append(column)
            row_starts.append(len(columns))
        return np.array(columns, dtype=np.intp), np.array(row_starts, dtype=np.intp)
