"""The shared tokenizer: its quick path for Latin-1 text must find the very tokens its
general pattern finds."""

from __future__ import annotations

import random
import unicodedata

from spidercrawl.text import _TOKEN, composed, tokenize, without_invisible


def _general(text: str) -> list[str]:
    return _TOKEN.findall(composed(text.casefold()))


def test_the_quick_path_finds_the_general_patterns_tokens() -> None:
    common = [chr(c) for c in (*range(0x00, 0x100), *range(0x2000, 0x2070))]
    rng = random.Random(7)
    samples = [
        "Don\u2019t stop \u2014 \u201cquoted\u201d text\u2026 café, naïve, Straße",
        "3.5% (ÆØÅ) ½ ¿qué? ¡sí!",
        "".join(common),
        *("".join(rng.choices(common + list("abc  "), k=200)) for _ in range(200)),
    ]
    for text in samples:
        assert tokenize(text) == _general(text)
    quoted = "Don\u2019t stop \u2014 \u201cquoted\u201d Straße"
    assert tokenize(quoted) == ["don", "t", "stop", "quoted", "strasse"]


def test_text_beyond_latin1_takes_the_general_pattern() -> None:
    # µ casefolds to Greek mu, outside the quick path's characters.
    for text in ("µ-meter", "Ελληνικά και English", "日本語のテキスト and text", "مرحبا بالعالم"):
        assert tokenize(text) == _general(text)
    assert tokenize("北京 news") == ["北", "京", "news"]


def test_a_word_broken_by_soft_hyphens_or_zero_width_spaces_is_one_word() -> None:
    """``be&shy;lieb&shy;te`` is "beliebte" to every reader, whether it keeps the soft
    hyphens (our blocks) or drops them (trafilatura); the zero-width non-joiner that shapes
    a Persian word stays in it."""
    assert tokenize("Der be\u00adlieb\u00adte Tarif\u200b") == ["der", "beliebte", "tarif"]
    assert tokenize("\ufeffSema\u2060glutid") == ["semaglutid"]
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # with a non-joiner
    assert without_invisible(persian) == persian


def test_a_letter_spelt_as_a_base_and_a_mark_is_its_composed_letter() -> None:
    """A page may spell ä as a and a combining diaeresis, or Bengali's য় as য and a nukta:
    the same words to every reader, and to the gold."""
    assert tokenize("A\u0308pfel") == tokenize("\u00c4pfel") == ["\u00e4pfel"]
    assert tokenize("\u09af\u09bc\u09be") == tokenize("\u09df\u09be")
    assert composed("Ka\u0308se\u200b") == "K\u00e4se"


def test_an_article_is_delivered_in_composed_form() -> None:
    """Text, clean HTML and title in Unicode's composed form (NFC), whichever form the
    page spells its letters in: the same word is the same string in every article."""
    from spidercrawl import extract_html

    sentence = "Der Ka\u0308se aus dem Allga\u0308u schmeckt wu\u0308rzig und kra\u0308ftig."
    story = "".join(f"<p>{sentence} {n} {sentence}</p>" for n in range(8))
    page = (
        "<html><head><title>Ka\u0308se im Allga\u0308u</title></head><body><article>"
        f"<h1>Ka\u0308se im Allga\u0308u</h1>{story}</article></body></html>"
    )
    item = extract_html(page.encode("utf-8"), url="https://example.org/kaese")
    assert "K\u00e4se aus dem Allg\u00e4u" in item["text"]
    for field in ("text", "html", "markdown", "title"):
        assert item[field] and unicodedata.is_normalized("NFC", item[field]), field
