"""The page's deck: the sentence or two under the headline that sums the story up.

News gold texts keep it and readers often leave it out, for it stands outside the story's
container in markup of its own. It is found by what the page itself says its summary is
(its meta description) and by where it stands: a visible element of that text (not the
headline), with the article's opening among the words that follow it. A deck the article
already holds is not added again.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import lxml.html
from lxml import etree
from rapidfuzz.distance import LCSseq

from spidercrawl.text import tokenize, word_f1

MIN_WORDS = 8  # a description shorter than this is a tagline, not a deck
MAX_DESCRIPTIONS = 3  # the meta, og and twitter descriptions: each may be the deck
MAX_OPENINGS = 4  # a description's opening sentences tried as the deck, besides the whole
MAX_WORDS = 120  # ... and one longer than this no deck either (nor is its matching bounded)
MAX_FIELD_CHARS = 8000  # a capture's deck and its following words, each at most
MATCH = 0.8  # word F1 of an element's text with the description
MAX_LONGER = 1.5  # an element this many times the description's words (plus a few) holds more
FOLLOWING_WORDS = 300  # the words after the deck in which the article must open
OPENING_LINES = 3  # the article's first lines looked for there (a date line may come first)
OPENING_WORDS = 6  # the words of one opening line that must stand there in a row
MAX_TEXT_DEPTH = 64  # levels below a following element whose text is read
MAX_CANDIDATES = 20  # text nodes holding the description's first words, looked at in order
MAX_CHARS_A_WORD = 30  # an element of more characters than this per deck word is no deck
LEVELS_UP = 4  # from a text node's element, ancestors tried for the whole description
# Elements whose text is no deck: not shown, not prose, or a control.
NOT_SHOWN = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "a", "button", "option",
     "select", "textarea", "h1"}
)  # fmt: skip
NOT_TEXT = frozenset({"script", "style", "noscript", "template"})


@dataclass(frozen=True)
class Deck:
    """A deck's text as the page shows it, and the words that follow it on the page
    (tokens joined by spaces: where the article must open for the deck to be its own)."""

    text: str
    following: str

    def as_field(self) -> dict[str, str]:
        return {"text": self.text, "following": self.following}

    @classmethod
    def of_field(cls, value: Any) -> Deck | None:
        """A deck as a capture carries it, or None for a malformed one."""
        if not isinstance(value, Mapping):
            return None
        text, following = value.get("text"), value.get("following")
        if not isinstance(text, str) or not isinstance(following, str) or not text.strip():
            return None
        if len(text) > MAX_FIELD_CHARS or len(following) > MAX_FIELD_CHARS:
            return None  # no deck found here is this long: a damaged or hostile record
        return cls(text, following)


def decks_of_field(value: Any) -> list[Deck]:
    """The decks a capture carries (``decks``: a list, one a description at most); any
    other shape, or a malformed entry, is none."""
    if not isinstance(value, list):
        return []
    decks = (Deck.of_field(entry) for entry in value[:MAX_DESCRIPTIONS])
    return [deck for deck in decks if deck is not None]


@dataclass(frozen=True)
class Description:
    """A description that may be the page's deck: its text, and the words of each form
    the deck may take, tried in turn: the whole (a deck the page shows whole is found
    before a shorter element that holds only its first sentence), then its opening
    sentences where the site adds one of its own ("... Read this article by Mary Jo Foley
    on CNET News.")."""

    text: str
    forms: tuple[list[str], ...]


# A sentence's end in a description: the deck may be the sentences before it.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)]*\s+(?=\S)")


def _is_deck_text(words: Sequence[str], description: Sequence[str], titles: Iterable) -> bool:
    if len(words) > MAX_LONGER * len(description) + 5:
        return False
    if word_f1(words, description) < MATCH:
        return False
    return not any(word_f1(words, title) >= MATCH for title in titles)


def _wanted(descriptions: Sequence[str]) -> list[Description]:
    """The page's distinct descriptions (its meta, og and twitter ones, in that order)
    that may be a deck: a page's og:description is often its deck where its meta
    description is the story's first paragraph."""
    wanted: dict[str, Description] = {}
    for description in descriptions[:MAX_DESCRIPTIONS]:
        words = tokenize(description) if isinstance(description, str) else []
        if MIN_WORDS <= len(words) <= MAX_WORDS:
            openings = (
                opening
                for end in _SENTENCE_END.finditer(description)
                if len(opening := tokenize(description[: end.start() + 1])) >= MIN_WORDS
            )
            forms = [words, *itertools.islice(openings, MAX_OPENINGS)]
            wanted.setdefault(" ".join(words), Description(description, tuple(forms)))
    return list(wanted.values())


_TEXT_WITH = etree.XPath("//body//text()[contains(., $part)]")


def _shown(element: lxml.html.HtmlElement) -> bool:
    for node in (element, *element.iterancestors()):
        if not isinstance(node.tag, str) or node.tag in NOT_SHOWN:
            return False
        if node.get("hidden") is not None or node.get("aria-hidden") == "true":
            return False
        style = (node.get("style") or "").replace(" ", "").lower()
        if "display:none" in style or "visibility:hidden" in style:
            return False
    return True


def _texts_after(element: lxml.html.HtmlElement) -> Iterator[str]:
    """The texts that follow ``element`` in document order (scripts and styles aside),
    walked lazily: the caller stops after a few hundred words."""
    node = element
    while node is not None:
        if node.tail:
            yield node.tail
        for sibling in node.itersiblings():
            yield from _texts_within(sibling)
            if sibling.tail:
                yield sibling.tail
        node = node.getparent()


def _texts_within(element: lxml.html.HtmlElement, depth: int = 0) -> Iterator[str]:
    """Its texts in document order, to ``MAX_TEXT_DEPTH`` levels down (deeper text only
    locates the article less well)."""
    if not isinstance(element.tag, str) or element.tag in NOT_TEXT or depth > MAX_TEXT_DEPTH:
        return
    if element.text:
        yield element.text
    for child in element:
        yield from _texts_within(child, depth + 1)
        if child.tail:
            yield child.tail


def decks_in_document(
    root: lxml.html.HtmlElement, descriptions: Sequence[str], titles: Sequence[str] = ()
) -> list[Deck]:
    """The decks of a parsed page (read only), one a description at most: the smallest
    shown element, from a text node holding the description's first words up at most
    ``LEVELS_UP`` levels, whose text is the description."""
    wanted = _wanted(descriptions)
    if not wanted:
        return []
    title_words = [tokenize(t) for t in titles if t]
    decks = []
    for description in wanted:
        part = " ".join(description.text.split()[:2])  # the text nodes looked at, once
        nodes = list(itertools.islice(_TEXT_WITH(root, part=part), MAX_CANDIDATES))
        if nodes:
            decks.append(
                _first_found(
                    description,
                    lambda form, nodes=nodes: _deck_in_document(nodes, form, title_words),
                )
            )
    return _distinct(decks)


def _first_found(description: Description, find: Callable[[list[str]], Deck | None]) -> Deck | None:
    """The deck ``find`` finds for the first of the description's forms that has one: the
    whole, then its openings in turn."""
    return next(filter(None, map(find, description.forms)), None)


def _distinct(decks: Iterable[Deck | None]) -> list[Deck]:
    return list({deck.text: deck for deck in decks if deck is not None}.values())


def _deck_in_document(
    nodes: Sequence[Any], description: list[str], title_words: list
) -> Deck | None:
    """The deck among the elements of the text ``nodes`` (and their ancestors) that hold
    the description's first words."""
    longest = MAX_CHARS_A_WORD * (MAX_LONGER * len(description) + 5)
    for node in nodes:
        element = node.getparent()
        if element is None or element.tag in NOT_TEXT:
            continue  # a script's data: never climbed from
        for _ in range(LEVELS_UP):
            content = element.text_content()
            if len(content) > longest:
                element = None  # holds far more than a deck: not one, and not read
            if element is None or len(tokenize(content)) >= 0.7 * len(description):
                break
            element = element.getparent()
        if element is None or not _shown(element):
            continue
        text = " ".join(element.text_content().split())
        if not _is_deck_text(tokenize(text), description, title_words):
            continue
        chunks, words = [], 0
        for later in _texts_after(element):
            chunks.append(later)
            words += len(later.split())  # at most its tokens, tokenized once below
            if words >= 2 * FOLLOWING_WORDS:
                break
        following = tokenize(" ".join(chunks))[:FOLLOWING_WORDS]
        return Deck(text, " ".join(following))
    return None


def decks_in_blocks(
    texts: Sequence[str], descriptions: Sequence[str], titles: Sequence[str] = ()
) -> list[Deck]:
    """The decks of a rendered page, from its text blocks in document order (each shown),
    one a description at most."""
    wanted = _wanted(descriptions)
    if not wanted:
        return []
    title_words = [tokenize(t) for t in titles if t]
    words = [tokenize(text) for text in texts]  # once, for every description
    return _distinct(
        _first_found(description, lambda form: _deck_in_blocks(texts, words, form, title_words))
        for description in wanted
    )


def _deck_in_blocks(
    texts: Sequence[str], words: Sequence[list[str]], description: list[str], title_words: list
) -> Deck | None:
    for index, block_words in enumerate(words):
        if len(block_words) < 0.7 * len(description) or not _is_deck_text(
            block_words, description, title_words
        ):
            continue
        after = itertools.chain.from_iterable(words[index + 1 :])
        following = list(itertools.islice(after, FOLLOWING_WORDS))
        return Deck(" ".join(texts[index].split()), " ".join(following))
    return None


def lead_with_deck(text: str, html: str, decks: Sequence[Deck]) -> tuple[str, str]:
    """The article's text and HTML opening with the page's first deck that stands right
    before the article (one of its first lines among the words that follow the deck) and
    that the article does not hold already; else unchanged."""
    if not text.strip():
        return text, html
    for deck in decks:
        if _stands_before(text, deck):
            paragraph = f"<p>{escape(deck.text, quote=False)}</p>"
            return f"{deck.text}\n\n{text}", f"{paragraph}\n{html}" if html else html
    return text, html


def _stands_before(text: str, deck: Deck) -> bool:
    deck_words = tokenize(deck.text)
    reach = 3 * len(deck_words) + 200  # the article's first words where a deck would be
    opening = tokenize(text[: MAX_CHARS_A_WORD * reach])[:reach]
    if LCSseq.similarity(deck_words, opening) >= MATCH * len(deck_words):
        return False  # the article has it
    following = f" {deck.following} "
    lines = (tokenize(line) for line in text.splitlines() if line.strip())
    return any(
        len(words) >= OPENING_WORDS and f" {' '.join(words[:OPENING_WORDS])} " in following
        for words in itertools.islice(lines, OPENING_LINES)
    )
