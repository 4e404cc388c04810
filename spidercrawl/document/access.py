"""Paywalls: whether an article is free, and the subscription prompt that is no part of it.

A paywalled article reaches a crawler cut short, often ending in a prompt ("Subscribe to
continue reading"); delivered as it is, a corpus takes the first paragraphs for the whole
story and the prompt for its last line. Two signs, each enough:

- the publisher's own word, in the page's JSON-LD: ``isAccessibleForFree: false`` on the
  article (Google's structured data for paywalled content, with or without
  ``hasPart.cssSelector`` naming the locked part); ``true`` says the article is free;
- a subscription prompt on the page (among the article's paragraphs, or in a metered
  wall's box the reader left out): a short paragraph in the wording of the common
  metered and hard walls.

:func:`article_access` returns ``"paywalled"``, ``"free"`` or ``""`` (nothing says), and
:func:`without_prompts` takes the prompts out of the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from spidercrawl.document.html import DROP, LOOK_INSIDE, html_without_elements
from spidercrawl.document.walls import visible_text

PAYWALLED, FREE = "paywalled", "free"
# A paragraph longer than this is the article's own, whatever words it uses.
MAX_PROMPT_CHARS = 260
MAX_SCANNED_CHARS = 2 * 2**20  # a page's HTML beyond this is not searched for prompts
_PROMPT = re.compile(
    r"subscribe (now )?to (continue|keep) reading|subscribe to read (the|this) (full|whole|"
    r"rest)|to (continue|keep) reading,? (please )?(subscribe|log ?in|sign ?in|become a)|"
    r"(this|the) (article|story|content|piece) is (only )?(available|reserved|exclusive)"
    r" (only )?(to|for) (paid |paying |our )?(subscribers|members)|for subscribers only|"
    r"subscribers only\b|you(['\u2019]ve| have) (reached|used|read) (your|all (of )?your|the) "
    r"(free |monthly )?(article|story|stories|articles) (limit|allowance)|"
    r"you have \d+ free (article|story|articles|stories) (left|remaining)|already a "
    r"(subscriber|member)\? ?(log|sign) ?in|become a (subscriber|member) to (read|continue|"
    r"unlock)|unlock (this|the full) (article|story)|(read|get) unlimited (access|articles)"
    r" (for|from) (just |only )?[$£€]",
    re.IGNORECASE,
)


# The wordings that say a paywall, not a newsletter's "subscribe to keep reading" modal
# (shown on free blogs: four dev pages of wcxb-dev): a subscriber-only notice, a used-up
# meter, a sign-in for subscribers, a locked article.
_PAYWALL_PROMPT = re.compile(
    r"subscribers|members only|(article|story|stories|articles) (limit|allowance)|\d+ free "
    r"(article|story|articles|stories)|already a (subscriber|member)|unlock (this|the full)",
    re.IGNORECASE,
)


def declared_access(records: Iterable[Mapping[str, Any]]) -> str:
    """``paywalled``, ``free`` or "" from the page's article records (JSON-LD: their
    ``isAccessibleForFree``, also on a ``hasPart``); a paywall anywhere wins."""
    said = ""
    for record in records:
        value = record.get("isAccessibleForFree")
        if value is False:
            return PAYWALLED
        if value is True:
            said = FREE
    return said


# A word (lower case) of every wording ``_PROMPT`` matches: a text holds a prompt only on a
# line that has one of them, so only those lines are searched first.
_PROMPT_WORDS = (
    "subscri", "reading", "members", "limit", "allowance", "free", "already", "become",
    "unlock",
)  # fmt: skip
# Characters that ``re.IGNORECASE`` matches to a letter of the wordings and ``str.lower``
# does not lower to it (dotless i, long s; a capital dotted I lowers to i and a dot).
_FOLDED = (("\u0131", "i"), ("\u017f", "s"), ("\u0307", ""))


def _may_hold_prompt(text: str) -> bool:
    """False where no line of ``text`` (by ``\\n``, its spaces as ``is_prompt`` reads them)
    matches a prompt's wording: most pages, told without searching the whole page with
    the wordings, which is slow on a page of many lines. True says only "maybe"."""
    lowered = text.lower()
    for character, letter in _FOLDED:
        if character in lowered:
            lowered = lowered.replace(character, letter)
    searched: set[int] = set()
    for word in _PROMPT_WORDS:
        at = lowered.find(word)
        while at >= 0:
            start = lowered.rfind("\n", 0, at) + 1
            end = lowered.find("\n", at)
            end = len(lowered) if end < 0 else end
            if start not in searched:
                searched.add(start)
                if _PROMPT.search(" ".join(lowered[start:end].split())):
                    return True
            at = lowered.find(word, end)
    return False


def is_prompt(paragraph: str) -> bool:
    """Whether a paragraph is a subscription prompt, not the article's."""
    return len(paragraph) <= MAX_PROMPT_CHARS and _PROMPT.search(paragraph) is not None


def without_prompts(text: str) -> tuple[str, list[str]]:
    """``text`` (paragraphs separated by blank lines) less its subscription prompts, and
    the prompts taken out."""
    if not _may_hold_prompt(text):
        return text, []
    paragraphs = text.split("\n\n")
    prompts = [p for p in paragraphs if is_prompt(p.strip())]
    if not prompts:
        return text, []
    return "\n\n".join(p for p in paragraphs if not is_prompt(p.strip())), prompts


def page_prompts(blocks: Iterable[str], html: str) -> list[str]:
    """The subscription prompts anywhere on a page: among its text blocks (a rendered
    page), else among the text runs of its HTML (a page fetched plainly). A prompt the
    article's reader left out still tells that the article was cut short."""
    blocks = list(blocks)
    text = "\n".join(blocks) if blocks else visible_text(html[:MAX_SCANNED_CHARS])
    # Most pages hold no prompt, and a page's HTML has thousands of runs to test one by one
    # on the fast path: the lines with a prompt's words are searched first.
    if not _may_hold_prompt(text):
        return []
    runs = blocks or [" ".join(run.split()) for run in text.splitlines()]
    return [run for run in runs if is_prompt(run)]


def article_access(records: Iterable[Mapping[str, Any]], prompts: list[str]) -> str:
    """The article's access: the page's declaration, else ``paywalled`` where one of the
    prompts found says a paywall (not a newsletter's), else "" (nothing says)."""
    declared = declared_access(records)
    if declared == PAYWALLED or any(_PAYWALL_PROMPT.search(prompt) for prompt in prompts):
        return PAYWALLED
    return declared


def free_flag(value: Any) -> bool | None:
    """JSON-LD's ``isAccessibleForFree`` (a boolean, or the strings "true"/"false" as many
    pages write it) as True, False or None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
    return None


def html_without_prompts(html: str, prompts: list[str]) -> str:
    """The article's clean HTML less the elements whose text is one of ``prompts``."""
    if not html or not prompts:
        return html
    unwanted = {" ".join(p.split()) for p in prompts}
    return html_without_elements(
        html, lambda text: DROP if " ".join(text.split()) in unwanted else LOOK_INSIDE
    )
