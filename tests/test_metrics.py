"""Word-level scores on texts whose values are known by hand."""

from __future__ import annotations

import pytest

from spidercrawl.evaluate.metrics import score_text, tokenize


def test_tokenize_is_unicode_aware() -> None:
    assert tokenize("Hello, U.S. World!") == ["hello", "u", "s", "world"]
    assert tokenize("北京欢迎你") == ["北", "京", "欢", "迎", "你"]
    # Bengali vowel signs are combining marks: the words must not split at them.
    assert tokenize("আমার সোনার বাংলা") == ["আমার", "সোনার", "বাংলা"]


def test_perfect_and_half() -> None:
    perfect = score_text("a b c d", "a b c d")
    assert (perfect.precision, perfect.recall, perfect.f1, perfect.cleaneval) == (1, 1, 1, 1)
    half = score_text("a b c d", "a b")
    assert half.precision == 0.5
    assert half.recall == 1.0
    assert half.f1 == pytest.approx(2 / 3)
    assert half.cleaneval == pytest.approx(0.5)  # two deletions over four words


def test_order_matters_for_lcs() -> None:
    score = score_text("d c b a", "a b c d")
    assert score.precision == 0.25  # a longest common subsequence has one word


def test_special_cases() -> None:
    assert score_text("", "a b").special_case == "retrieved_empty"
    assert score_text("a b", "").special_case == "gold_empty"
    assert score_text("", "").special_case == "both_empty"
    assert score_text("x y", "a b").special_case == "no_overlap"
    assert score_text("a b", "a b").special_case == ""


def test_difflib_variant_can_find_fewer_matches_than_lcs() -> None:
    score = score_text("a b c x a b c", "a b c a b c x")
    assert score.precision == pytest.approx(6 / 7)
    assert score.precision_difflib <= score.precision


def test_long_pages_are_cheap() -> None:
    words = " ".join(f"w{i % 700}" for i in range(10_000))
    score = score_text(words, words)
    assert score.f1 == 1.0
