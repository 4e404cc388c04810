"""The readers of a page: every extractor whose article the decision may take, behind one
interface, each run at most once a page and only when the decision asks.

A reader is a name and a function of no arguments that makes its article of the page at
hand (:class:`PageReadings` binds it to the page). The readers:

- the site's own: its layout's parser (``rules``), its layout's classifier (``learned``),
  the blocks in its article container (``learned+container``), the cross-site blocks or
  text density less the site's template (``learned+unseen``,
  ``learned+density-fallback``): :mod:`spidercrawl.extract.article`;
- ours across sites: the cross-site model's blocks (``blocks``,
  :mod:`spidercrawl.extract.unseen`) and text density (``density``);
- two well-kept peers that read the raw HTML as the server sent it: readability-lxml and
  trafilatura (also asked to keep more, ``trafilatura-recall``), and a third, quick one
  (resiliparse's main-content text) that witnesses between them.

A reader that raises, or declines (:class:`NoReadingError`), gives an empty article: one voice
less, and the error is kept for the note and the caller's count. The peers are not started
past the page's time budget. Which reading becomes the article is
:mod:`spidercrawl.extract.decision`'s question, answered once.
"""

from __future__ import annotations

import copy
import importlib.util
import logging
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spidercrawl.document.html import lexbor_input
from spidercrawl.document.structure import lines_html
from spidercrawl.text import tokenize, word_f1

logger = logging.getLogger(__name__)

PARSER = "rules"
CLASSIFIER = "learned"
CONTAINER = "learned+container"
SITE_BLOCKS = "learned+unseen"
SITE_DENSITY = "learned+density-fallback"
BLOCKS = "blocks"
DENSITY = "density"
READABILITY = "readability"
TRAFILATURA = "trafilatura"
# trafilatura asked to keep more (``favor_recall``): read only where plain trafilatura
# found (almost) nothing on a page of today's markup.
TRAFILATURA_RECALL = "trafilatura-recall"
# resiliparse's main-content text: a few milliseconds a page, read where trafilatura's
# reading of a page of today's markup is to be checked against readability's.
RESILIPARSE = "resiliparse"
PEERS = (TRAFILATURA, READABILITY)  # the two a vote needs; the witness is optional
FIRST_PEER = READABILITY  # the quicker of the two peers on our pages
# The peers read pages up to this size (as the fast path's FAST_PATH_MAX_BYTES, 4 MB): on
# a 30 MB page they took minutes.
PEER_MAX_CHARS = 4 * 2**20

PeerExtractor = Callable[[str], str]


class NoReadingError(Exception):
    """A reader that has no article of this page by design (the site's parser does not
    serve the page's layout, the page has no blocks): its reason, for the note."""


@dataclass
class PeerExtraction:
    """An article as text (a paragraph a line), and clean HTML made from its lines when
    asked for (:attr:`html`): each line takes the kind of the page's own paragraph of the
    same text (``page_html``), so that a sub-headline stays a heading and a list item an
    item. A failed or declined reader's article is an empty one, with ``error``."""

    text: str
    confidence: float
    source: str
    lines: list[str] = field(default_factory=list)
    page_html: str = field(default="", repr=False)
    _html: str | None = field(default=None, repr=False)
    error: str = ""

    @classmethod
    def of_text(
        cls, text: str, confidence: float, source: str, page_html: str = ""
    ) -> PeerExtraction:
        lines = [" ".join(line.split()) for line in text.splitlines()]
        lines = [line for line in lines if line]
        return cls("\n\n".join(lines), confidence, source, lines, page_html)

    @property
    def html(self) -> str:
        """Made once, on first use: most readings are only voted on."""
        if self._html is None:
            self._html = lines_html(self.lines, self.page_html)
        return self._html


# The line trafilatura writes under a table's first row (``|---|---|``): Markdown's mark of
# a header, no text of the page.
TABLE_RULE = re.compile(r"^[ \t]*\|(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*$", re.MULTILINE)


def trafilatura_reader(favor_recall: bool = False) -> PeerExtractor:
    """trafilatura with its defaults, its fallbacks included (without them a never-seen
    page fell from 0.90 to 0.09: docs/measurements.md). ``favor_recall``: its reading
    that keeps more."""
    with warnings.catch_warnings():  # urllib3 (through courlan) warns of SOCKS it lacks
        warnings.simplefilter("ignore")
        import trafilatura

    def extract(html: str) -> str:
        text = trafilatura.extract(html, include_comments=False, favor_recall=favor_recall)
        return TABLE_RULE.sub("", text or "")

    return extract


# The elements whose text readability's article gives a line of its own: paragraphs,
# headings, list items, table cells and the blocks around them.
_READABILITY_BLOCKS = (
    "p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "br", "div", "pre",
    "td", "th", "tr", "table", "ul", "ol", "dl", "dt", "dd", "figcaption", "section",
    "article", "header", "footer", "aside", "figure", "address",
)  # fmt: skip
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _writable(text: str | None) -> str:
    """``text`` as lxml writes it back: it reads control characters from HTML but refuses
    to set them (and empties the text it was setting)."""
    return _CONTROL_CHARACTERS.sub(" ", text or "")


# readability's whitespace clean-up of an element's text (its module's ``clean``): a run of
# 255 or more spaces cut to 255, the spaces around a line break and runs of spaces and
# tabs made one. It runs on every paragraph's and link's text, several times a page.
_LONG_SPACE = re.compile(r"\s{255,}")
_AROUND_NEWLINE = re.compile(r"\s*\n\s*")
_TABS_AND_SPACES = re.compile(r"\t|[ \t]{2,}")


def readability_clean(text: str) -> str:
    """readability's ``clean``, each step taken only where its pattern can match (most
    texts are short and hold no line break, tab or double space), each pattern compiled
    once: the same text, sooner."""
    if len(text) >= 255:
        text = _LONG_SPACE.sub(" " * 255, text)
    if "\n" in text:
        text = _AROUND_NEWLINE.sub("\n", text)
    if "\t" in text or "  " in text:
        text = _TABS_AND_SPACES.sub(" ", text)
    return text.strip()


class InPlaceCleaner:
    """An lxml ``Cleaner`` that cleans the tree it is given, not a copy of it. lxml's
    ``clean_html`` copies a tree first, to leave its caller's as it was; readability
    parses a tree for the cleaning alone and keeps only the cleaned one: the copy took
    time and changed nothing."""

    def __init__(self, cleaner: Any) -> None:
        self.cleaner = cleaner

    def clean_html(self, html: Any) -> Any:
        if isinstance(html, str | bytes):  # markup: parsed, then cleaned, as lxml does
            return self.cleaner.clean_html(html)
        self.cleaner(html)
        return html


def readability_reader() -> PeerExtractor:
    """readability-lxml's article as text, a block a line. Its cleaner's step that takes
    javascript: links and on* attributes out changes no text and took a quarter of its
    time, its cleaner copies the tree it cleans, and its ``clean`` looks its patterns up on
    every call: our reader swaps in a cleaner without the step that cleans in place
    (:class:`InPlaceCleaner`) and :func:`readability_clean`, for its own calls only."""
    import lxml.html
    import readability.readability as readability_module
    from readability import Document

    shipped_cleaner = getattr(readability_module, "html_cleaner", None)
    text_cleaner = None
    if shipped_cleaner is not None:
        without_javascript = copy.copy(shipped_cleaner)
        without_javascript.javascript = False
        text_cleaner = InPlaceCleaner(without_javascript)

    shipped_clean = readability_module.clean

    def extract(html: str) -> str:
        readability_module.html_cleaner = text_cleaner
        readability_module.clean = readability_clean
        try:
            summary = Document(html).summary(html_partial=True)
        finally:
            readability_module.html_cleaner = shipped_cleaner
            readability_module.clean = shipped_clean
        if not summary.strip():
            return ""
        root = lxml.html.fromstring(summary)
        for block in root.iter(*_READABILITY_BLOCKS):  # paragraphs on lines of their own
            if block.tag != "br":  # not glued to the text before it (a list in an item)
                block.text = "\n" + _writable(block.text)
            block.tail = "\n" + _writable(block.tail)
        return root.text_content()

    return extract


def resiliparse_reader() -> PeerExtractor:
    """resiliparse's main-content text, a block a line, without links' targets, images'
    alternative texts or form fields. Its reading of deep markup takes time growing with
    the square of the depth: deep markup is flattened first, as for our own tree; markup
    its tree builder (lexbor) builds in such time is not read."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    def extract(html: str) -> str:
        markup, hazard = lexbor_input(html)
        if hazard:
            raise NoReadingError(f"resiliparse does not read a page with {hazard}")
        tree = HTMLTree.parse(markup)
        return extract_plain_text(
            tree, main_content=True, preserve_formatting=True, list_bullets=False,
            alt_texts=False, links=False, form_fields=False, noscript=False,
        )  # fmt: skip

    return extract


PEER_FACTORIES: dict[str, Callable[[], PeerExtractor]] = {
    TRAFILATURA: trafilatura_reader,
    READABILITY: readability_reader,
    RESILIPARSE: resiliparse_reader,
}
# Readings a peer gives with other settings: made where their peer is installed.
PEER_VARIANTS: dict[str, tuple[str, Callable[[], PeerExtractor]]] = {
    TRAFILATURA_RECALL: (TRAFILATURA, lambda: trafilatura_reader(favor_recall=True)),
}


def available_peers() -> list[str]:
    """The peers installed here (``pip install -r requirements.txt`` installs all three)."""
    return [name for name in PEER_FACTORIES if importlib.util.find_spec(name) is not None]


class Peers:
    """The peers a run asks (``names``: None for every one installed) and their variants,
    made once (their imports take a second)."""

    def __init__(self, names: Sequence[str] | None = None) -> None:
        names = available_peers() if names is None else list(names)
        self.extractors: dict[str, PeerExtractor] = {n: PEER_FACTORIES[n]() for n in names}
        for name, (peer, factory) in PEER_VARIANTS.items():
            if peer in self.extractors:
                self.extractors[name] = factory()

    @property
    def enough(self) -> bool:
        """Whether both peers are here: one peer alone is no vote."""
        return all(name in self.extractors for name in PEERS)

    def names(self) -> list[str]:
        return list(self.extractors)

    def read(self, name: str, raw: str) -> PeerExtraction:
        """``name``'s article of ``raw`` (raises what the peer raises)."""
        return PeerExtraction.of_text(self.extractors[name](raw), 0.0, name, raw)


@dataclass
class ReaderError:
    """A reader that raised on a page, and what it raised."""

    stage: str
    error: BaseException

    def describe(self) -> str:
        return describe_error(self.error)


def describe_error(error: BaseException) -> str:
    """An exception as its type and first line, for a note or a log line."""
    first = (str(error).strip().splitlines() or [""])[0][:160]
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def deadline_passed(deadline: float | None) -> bool:
    """Whether the page's time budget, ending at ``deadline`` (``time.monotonic()``; None:
    no budget), is spent."""
    return deadline is not None and time.monotonic() > deadline


# The peers' readings: not started past the page's time budget (they cost the most), and
# their failures are theirs, not ours to count.
PEER_READINGS = frozenset({READABILITY, TRAFILATURA, TRAFILATURA_RECALL, RESILIPARSE})


class PageReadings:
    """The readers' articles of one page, each made on first use and kept. ``readers``:
    name -> the function making its article; a reader not here is not available on this
    page. ``found``: articles at hand before any reader runs. What each reader cost (CPU
    seconds of the thread), what it raised and why it declined are kept for the note, the
    caller's count and the evaluation's timing."""

    def __init__(
        self,
        readers: Mapping[str, Callable[[], Any]],
        deadline: float | None = None,
        url: object = None,
    ) -> None:
        self.readers = dict(readers)
        self.deadline = deadline
        self.url = url
        self.found: dict[str, Any] = {}
        self.seconds: dict[str, float] = {}
        self.errors: list[ReaderError] = []
        self.declined: dict[str, str] = {}
        self.late: list[str] = []
        self.asked: set[str] = set()  # the readers a decision asked for, made or kept
        self.asked_pairs: set[tuple[str, str]] = set()  # and the agreements it measured
        self.asked_words: set[str] = set()  # and the readings it tokenized
        self.word_seconds: dict[str, float] = {}
        self.pair_seconds: dict[tuple[str, str], float] = {}
        self._words: dict[str, list[str]] = {}
        self._agreements: dict[tuple[str, str], float] = {}

    def has(self, name: str) -> bool:
        return name in self.readers

    def __getitem__(self, name: str) -> Any:
        self.asked.add(name)
        if name not in self.found:
            self.found[name] = self._read(name)
        return self.found[name]

    def _read(self, name: str) -> Any:
        if name not in self.readers:
            return PeerExtraction.of_text("", 0.0, name)
        if name in PEER_READINGS and deadline_passed(self.deadline):
            self.late.append(name)
            return PeerExtraction.of_text("", 0.0, name)
        started = time.thread_time()
        try:
            return self.readers[name]()
        except NoReadingError as declined:
            self.declined[name] = str(declined)
            return PeerExtraction.of_text("", 0.0, name)
        except Exception as error:  # a reader's failure is one voice less, not a lost page
            logger.debug("%s failed on %s: %s", name, self.url, error)
            self.errors.append(ReaderError(name, error))
            empty = PeerExtraction.of_text("", 0.0, name)
            empty.error = describe_error(error)
            return empty
        finally:
            self.seconds[name] = time.thread_time() - started

    def failed(self, name: str) -> bool:
        """Whether ``name`` raised on this page (asked for it first where not yet)."""
        found = self[name]
        return any(error.stage == name for error in self.errors) and not found.text

    def text(self, name: str) -> str:
        return self[name].text or ""

    def words(self, name: str) -> list[str]:
        self.asked.add(name)  # kept words still stand on the reading
        self.asked_words.add(name)
        if name not in self._words:
            text = self.text(name)
            started = time.thread_time()
            self._words[name] = tokenize(text)
            self.word_seconds[name] = time.thread_time() - started
        return self._words[name]

    def agreement(self, first: str, second: str) -> float:
        """Word F1 of two readings, measured once a pair (the evaluation's grid asks the
        same pairs under many settings)."""
        pair = (first, second) if first <= second else (second, first)
        self.asked.update(pair)  # a kept measure still stands on both readings
        self.asked_pairs.add(pair)
        if pair not in self._agreements:
            first_words, second_words = self.words(first), self.words(second)
            started = time.thread_time()
            self._agreements[pair] = word_f1(first_words, second_words)
            self.pair_seconds[pair] = time.thread_time() - started
        return self._agreements[pair]

    def spent(self) -> float:
        """The seconds every reading and agreement made so far took."""
        made = [self.seconds, self.pair_seconds, self.word_seconds]
        return sum(sum(seconds.values()) for seconds in made)

    def start_decision(self) -> None:
        """Forget what was asked: the next decision's :meth:`cost` is its own."""
        self.asked, self.asked_pairs, self.asked_words = set(), set(), set()

    def cost(self) -> float:
        """The seconds of the readers and agreements the decision asked for (each made
        once a page, as a crawl makes them for its one decision)."""
        readers = sum(self.seconds.get(name, 0.0) for name in self.asked)
        words = sum(self.word_seconds.get(name, 0.0) for name in self.asked_words)
        return readers + words + sum(self.pair_seconds.get(p, 0.0) for p in self.asked_pairs)
