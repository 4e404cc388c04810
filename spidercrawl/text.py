"""Words and scripts: the one tokenizer that learning, extraction and evaluation share.

It lives below all of them so that no layer reaches up into another for it. Chinese,
Japanese, Thai, Lao, Khmer and Myanmar put no spaces between words, so each of their
characters is a token: ``str.split`` would count a whole Chinese paragraph as one word.
"""

from __future__ import annotations

import regex

# Scripts written without spaces between words: each character is a token there.
_UNSPACED_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_TOKEN = regex.compile(
    rf"[{_UNSPACED_SCRIPTS}]|[^\s\p{{P}}\p{{S}}{_UNSPACED_SCRIPTS}]+", regex.VERSION1
)
_UNSPACED_CHAR = regex.compile(rf"[{_UNSPACED_SCRIPTS}]")


def tokenize(text: str) -> list[str]:
    """Case-folded words: runs of letters, marks and digits; one token per Han/kana/Thai char.

    Punctuation and symbols are dropped, so "U.S." gives ``["u", "s"]`` on both sides.
    Combining marks stay inside their word, so Bengali and Hindi words are not split.
    """
    return _TOKEN.findall(text.casefold())


def word_count(text: str) -> int:
    """Words as :func:`tokenize` counts them (a Chinese character is one)."""
    return len(_TOKEN.findall(text))


def cjk_share(text: str) -> float:
    """The share of ``text``'s non-space characters in a script written without spaces."""
    visible = len(text) - text.count(" ")
    if visible <= 0:
        return 0.0
    return len(_UNSPACED_CHAR.findall(text)) / visible
