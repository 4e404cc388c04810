"""How much a block's text says what its page's description (or title) says.

Two language-independent measures:

* ``lcs`` (the seed's): the longest common subsequence with the reference, as a share of
  the reference (over words; over characters in Chinese, Japanese, Thai).
* ``tfidf``: cosine similarity of TF-IDF vectors over character 2-4-grams fitted on the
  site's blocks; works for Chinese and Bengali as well as for spaced scripts.

Both are corrected for chance (:func:`site_relevance`): a block is scored against its own
page's reference *minus* its score against another page's reference. Template text (menus,
"Loading...", the site's name) matches every page's description about equally and scores
about 0; article text matches its own page's description better and scores above 0. Without
the correction, a cluster of hundreds of short menu items outweighs the article by chance:
a short string is nearly always a subsequence of a long description.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import LCSseq

from spidercrawl.text import tokenize

SIMILARITIES = ("lcs", "tfidf")

# A text that holds this share of its reference's tokens in order, and is at most this
# many times as long, restates the reference (set beforehand, not swept).
ECHO_MIN_SHARE = 0.8
ECHO_MAX_LENGTH = 1.5
# Other pages' references a text's chance score is the mean of (set beforehand, not swept).
MAX_CONTROLS = 4


def lcs_relevance(text: str, reference: str) -> float:
    """Share of the reference's tokens found, in order, in the text (LCS over tokens).

    Tokens are words, or single characters in scripts written without spaces (see
    :func:`spidercrawl.text.tokenize`), so Chinese works as well as English.
    """
    reference_tokens = tokenize(reference)
    if not reference_tokens:
        return 0.0
    return LCSseq.similarity(tokenize(text), reference_tokens) / len(reference_tokens)


def echoes_reference(text: str, reference: str | None) -> bool:
    """Whether ``text`` restates ``reference``: a standfirst or summary that repeats the
    page's description, nothing more. Such a block matches its description perfectly
    whatever it is, so its relevance says nothing about whether it is the article."""
    if not reference:
        return False
    reference_tokens = tokenize(reference)
    text_tokens = tokenize(text)
    if not reference_tokens or len(text_tokens) > ECHO_MAX_LENGTH * len(reference_tokens):
        return False
    found = LCSseq.similarity(text_tokens, reference_tokens)
    return found >= ECHO_MIN_SHARE * len(reference_tokens)


def relevance_scores(
    texts: Sequence[str], references: Sequence[str | None], similarity: str = "lcs"
) -> np.ndarray:
    """One score per text against its own reference (0 where the reference is missing)."""
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}, not {similarity!r}")
    scores = np.zeros(len(texts))
    if similarity == "lcs":
        for i, (text, reference) in enumerate(zip(texts, references, strict=True)):
            if reference:
                scores[i] = lcs_relevance(text, reference)
        return scores
    present = [i for i, reference in enumerate(references) if reference]
    if not present:
        return scores
    from sklearn.feature_extraction.text import TfidfVectorizer  # where a site learns only

    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True)
    vectorizer.fit([*texts, *{references[i] for i in present}])
    text_vectors = vectorizer.transform([texts[i] for i in present])
    reference_vectors = vectorizer.transform([references[i] for i in present])
    cosine = np.asarray(text_vectors.multiply(reference_vectors).sum(axis=1)).ravel()
    scores[present] = cosine
    return scores


def site_relevance(
    texts: Sequence[str], pages: Sequence[int], references: Sequence[str | None], similarity: str
) -> np.ndarray:
    """Chance-corrected relevance of each text (on page ``pages[i]``) to its page's reference.

    The chance a text matches a description is its mean score against the references of
    up to ``MAX_CONTROLS`` other pages (the next ones in site order with a different
    reference): one other page's description alone is a noisy measure of chance, and
    which page it was decided the content of a site whose comments look like its posts.
    With a single distinct reference, no correction is possible.
    """
    own = [references[p] for p in pages]
    distinct = [p for p, ref in enumerate(references) if ref]
    controls_of: dict[int, list[str]] = {}
    for position, p in enumerate(distinct):
        others = distinct[position + 1 :] + distinct[:position]
        controls = [ref for q in others if (ref := references[q]) and ref != references[p]]
        controls_of[p] = controls[:MAX_CONTROLS]
    scores = relevance_scores(texts, own, similarity)
    counts = np.array([len(controls_of.get(p, ())) for p in pages])
    chance = np.zeros(len(texts))
    for k in range(int(counts.max(initial=0))):
        control = [c[k] if k < len(c) else None for c in (controls_of.get(p, []) for p in pages)]
        chance += relevance_scores(texts, control, similarity)
    return np.where(counts > 0, scores - chance / np.maximum(counts, 1), scores)
