"""Words and scripts: the one tokenizer that learning, extraction and evaluation share.

It lives below all of them so that no layer reaches up into another for it. Chinese,
Japanese, Thai, Lao, Khmer and Myanmar put no spaces between words, so each of their
characters is a token: ``str.split`` would count a whole Chinese paragraph as one word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import regex
from rapidfuzz.distance import LCSseq

# Scripts written without spaces between words: each character is a token there.
_UNSPACED_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
# Runs of anything but spaces, punctuation and symbols first (most tokens), then one
# character of an unspaced script: the same tokens as the other order, a third faster.
_TOKEN = regex.compile(
    rf"[^\s\p{{P}}\p{{S}}{_UNSPACED_SCRIPTS}]+|[{_UNSPACED_SCRIPTS}]", regex.VERSION0
)
_UNSPACED_CHAR = regex.compile(rf"[{_UNSPACED_SCRIPTS}]")
# Most text is in Latin-1 and the General Punctuation block (curly quotes, dashes). There
# the standard library's ``re`` finds the same tokens 3.5 times as fast: its pattern is
# the set of those characters that ``_TOKEN`` treats as parts of words, asked of ``_TOKEN``
# itself, so the two cannot disagree.
_COMMON_RANGES = (range(0x00, 0x100), range(0x2000, 0x2070))
_COMMON_ONLY = re.compile(
    "[{}]*".format(
        "".join(f"{re.escape(chr(r.start))}-{re.escape(chr(r.stop - 1))}" for r in _COMMON_RANGES)
    )
)
_COMMON_TOKEN = re.compile(
    "[{}]+".format(
        "".join(
            re.escape(chr(code))
            for codes in _COMMON_RANGES
            for code in codes
            if _TOKEN.fullmatch(chr(code))
        )
    )
)


def tokenize(text: str) -> list[str]:
    """Case-folded words: runs of letters, marks and digits; one token per Han/kana/Thai char.

    Punctuation and symbols are dropped, so "U.S." gives ``["u", "s"]`` on both sides.
    Combining marks stay inside their word, so Bengali and Hindi words are not split, and
    a word is read in its composed form (:func:`composed`), however the text spells it.
    """
    return list(_tokens(text))


def word_count(text: str) -> int:
    """Words as :func:`tokenize` counts them (a Chinese character is one)."""
    return len(_tokens(text))


# Characters shown as nothing inside a word: the soft hyphen (where a word may break,
# ``be&shy;lieb&shy;te``), the zero-width space, the word joiner and a stray byte-order
# mark. A corpus wants "beliebte", and a reader that drops them (trafilatura does) reads
# the same words as one that keeps them. The zero-width (non-)joiners shape Persian and
# Indic words, and stay.
INVISIBLE_CHARACTERS = "\u00ad\u200b\u2060\ufeff"
_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE_CHARACTERS))


def without_invisible(text: str) -> str:
    """``text`` without the characters a browser shows as nothing inside a word."""
    if any(character in text for character in INVISIBLE_CHARACTERS):
        return text.translate(_INVISIBLE)
    return text


def composed(text: str) -> str:
    """``text`` without invisible characters and in Unicode's normal composed form (NFC),
    as the web's character model asks text to be: a letter spelt two canonically equal
    ways (ä as one character or as a and a combining diaeresis; Bengali's য় as one
    character or as য and a nukta) is one spelling, so the same word is the same string
    in every article of a corpus, whichever reader took it."""
    text = without_invisible(text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


@lru_cache(maxsize=128)
def _tokens(text: str) -> tuple[str, ...]:
    """The tokens of the texts seen last: on the fast path, the rules' check and the
    article's word count read the same article text (tokenizing was a fifth of its time)."""
    folded = composed(text.casefold())
    if _COMMON_ONLY.fullmatch(folded):
        return tuple(_COMMON_TOKEN.findall(folded))
    return tuple(_TOKEN.findall(folded))


# An HTML tag in a fragment of markup (a block's or a paragraph's own HTML): what is left
# out to read its text. It ends at ``<`` as well as ``>``, so that markup of tags never
# closed is read once, not again from every ``<``.
MARKUP_TAG = re.compile(r"<[^<>]+>")


def folded(text: str) -> str:
    """``text`` with its whitespace runs as single spaces and its case folded: how two texts
    that read the same (a headline, a template's line) are compared."""
    return " ".join(text.split()).casefold()


def cjk_share(text: str) -> float:
    """The share of ``text``'s non-space characters in a script written without spaces."""
    visible = len(text) - text.count(" ")
    if visible <= 0:
        return 0.0
    return len(_UNSPACED_CHAR.findall(text)) / visible


def word_f1(first: Sequence[str], second: Sequence[str]) -> float:
    """Word-level LCS F1 of two token sequences (0 when either is empty): the measure the
    evaluation scores by, and the readers' agreement."""
    if not first or not second:
        return 0.0
    return 2 * LCSseq.similarity(first, second) / (len(first) + len(second))


def holds_run(words: Sequence[str], run: Sequence[str]) -> bool:
    """Whether ``run`` occurs in ``words`` as consecutive words."""
    run = list(run)
    if not run:
        return False
    first, length = run[0], len(run)
    return any(
        word == first and list(words[start : start + length]) == run
        for start, word in enumerate(words)
    )
