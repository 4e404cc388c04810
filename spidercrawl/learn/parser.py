"""A layout's article parser as a person writes one: its container, and what to leave out.

Induced from the layout's training pages without labels. Each page's text units (the own
text of its block elements) carry a vote: the share of the page's independent readings
(the site model's mask, the cross-site blocks, trafilatura, readability) that keep the
unit's words. Units the readings split on are not counted; a unit whose text stands on
another training page too (a template's line) counts as left out, whoever keeps it.

- **Container**: among the selectors the pages offer (a stable id or class, ``article`` or
  ``main``, or the tag path on class-less markup), the one whose text agrees best with the
  vote over the pages (word F1 of the counted units), less a cost per kind of selector; an
  ordered list where some pages lack the first (template drift within a layout).
- **Exclusions inside it**: kinds that are never the story, recognised by markup alone
  (:func:`never_the_story`: figures and captions, embedded posts, link lists, contact
  lines, readers' comments), and roles of the site (tag and stable classes) the vote
  leaves out, each kept only where it raises the agreement by more than a selector's cost.

The parser is data (:class:`ParserPart` records of :class:`~.selectors.Step` selectors)
and :func:`cut` applies it to any parsed page, raw or rendered.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field

import lxml.html
from lxml import etree

from spidercrawl.document.selectors import Step
from spidercrawl.document.structure import (
    BLOCK_TAGS,
    Paragraph,
    element_paragraphs,
    paragraphs_text,
)
from spidercrawl.text import folded, tokenize

logger = logging.getLogger(__name__)

# A unit is kept by the vote where at least this share of the readings hold it, left out
# where at most ``1 - VOTE_KEEP`` do; between, the readings split and it is not counted.
VOTE_KEEP = 0.66
# The objective's cost of a selector, in mean page F1: a selector must earn its place.
CONTAINER_COST = {
    "id": 0.0, "class": 0.0, "tag": 0.004, "id-path": 0.01, "id-position": 0.02,
    "path": 0.02, "position": 0.03,
}  # fmt: skip
MAX_ID_PATH_STEPS = 4  # a class-less container is named from an id at most this far up
# Elements that can hold an article (a paragraph, a list or a heading is part of one).
CONTAINER_TAGS = frozenset(
    {"div", "article", "section", "main", "td", "table", "center", "font", "span", "form"}
)
EXCLUSION_COST = 0.005  # summed page F1 a selector must gain
# An exclusion that names its elements by tag alone (``div.body > ul``: every list of the
# story) must gain on this many pages: one page's list of links the vote leaves out is no
# evidence against every list of the story.
MIN_BARE_EXCLUSION_PAGES = 2
MAX_TEMPLATE_LINES = 200  # the site's template lines a parser keeps to leave out
MAX_TEMPLATE_LINE = 300  # characters
# Headings below the title (:func:`_sub_heading`): a repeated one is the story's where
# readers keep it before the story's prose (:func:`_story_headings`).
SUB_HEADINGS = frozenset({"h2", "h3", "h4", "h5", "h6"})
MAX_CONTAINERS = 4  # an ordered list: the first that matches a page is its container
MAX_ROLE_LEVELS = 8  # an exclusion is offered for the roles this far above a unit
MIN_CONTAINER_SHARE = 0.25  # a later container must serve this share of the pages left
MIN_LATER_CONTAINER_PAGES = 2  # ... and this many pages
# Markup kinds that are never the story (their text is no reader's article either).
NEVER_STORY_TAGS = frozenset(
    {"figure", "figcaption", "aside", "nav", "form", "button", "select", "textarea",
     "iframe", "svg", "video", "audio", "template", "dialog", "label"}
)  # fmt: skip
EMBED_HOSTS = re.compile(
    r"(twitter\.com|x\.com|instagram\.com|facebook\.com|tiktok\.com|youtube\.com)/", re.I
)
EMBED_CLASSES = re.compile(r"twitter-tweet|instagram-media|tiktok-embed|fb-post|bluesky")
CONTACT_LINE = re.compile(
    r"[\w.+-]+@[\w-]+\.[\w.]+|(?<!\w)@\w{2,}|\bfollow (?:\w+ ){0,4}on (?:twitter|x|facebook)",
    re.I,
)
LINK_LIST_TAGS = frozenset({"ul", "ol", "div", "section", "table", "dl"})
LINK_LIST_SHARE = 0.6  # of an element's text in links: a list of links, not prose
MIN_LINK_LIST_LINKS = 3
MAX_CONTACT_WORDS = 16  # a contact line is short: an address in a sentence is the story
MAX_CONTACT_CHARS = 600
# A photo's or slideshow's caption or credit, by a class token of its own (``caption``,
# ``wp-caption-text``, ``photoCredit``, ``cap``): never a site's one name, a kind's.
CAPTION_CLASS = re.compile(r"caption|(?:^|[\s_-])(?:cap|credits?|photo-?credit)(?:$|[\s_-])", re.I)
MAX_CAPTION_WORDS = 80
# A paragraph of an image and a line in emphasis, no class named: a caption of at most
# this many words (a sentence or two; not chosen on the dev sets).
MAX_IMAGE_CAPTION_WORDS = 40
CAPTION_EMPHASIS = ("em", "i", "small")
# Readers' comments under the story, by an id or class that names them (``#comments``,
# ``ol.commentlist``, ``div.article-comments``, ``#disqus_thread``): a corpus of articles
# holds what the publisher wrote, not what its readers answered.
# A part of an id or class (split at spaces, ``-`` and ``_``): ``comment-body`` and
# ``article-comments`` name comments, ``commentary`` does not.
COMMENTS_NAME = re.compile(r"(?:^|[\s_-])(?:comments?|commentlist|disqus|dsq)(?:$|[\s_-])", re.I)
COMMENTS_TAGS = frozenset({"div", "section", "ol", "ul", "dl", "table"})
# An empty element named for the comments (``<a name="comments"></a>``, the target of a
# page's "N comments" link) marks where they begin: its later siblings are the readers'
# comments, even in the story's own markup (``p.story``), once story prose stands before it.
MIN_STORY_BEFORE_COMMENTS = 40  # words in the marker's earlier siblings
MAX_COMMENTS_MARKERS = 4  # tried in document order: a hostile page may hold thousands
COMMENTS = "readers' comments"
# A line that dates the page ("Page last updated at 10:31 GMT", "Posted on May 3, 2012"),
# or names its author ("By Jane Smith and John Doe"): short, and led by what it is.
DATE_LEAD = re.compile(
    r"^\W*(?:page\s+)?(?:last\s+)?(?:updated|published|posted|modified|created|"
    r"first published|date)\b",
    re.I,
)
DATE_WORD = re.compile(
    r"^(?:\d{1,4}(?:st|nd|rd|th)?|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|"
    r"june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|mon|tue|wed|thu|fri|sat|sun|am|pm|a|p|m|"
    r"gmt|utc|bst|cet|cest|est|edt|pst|pdt|cst|cdt|et|pt|at|on|of|the|updated|published|"
    r"posted|last|page|modified|created|first|date)$",
    re.I,
)
CALENDAR_WORD = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)",
    re.I,
)
TIME_OF_DAY = re.compile(r"\b\d{1,2}:\d{2}\b")
MAX_DATE_WORDS = 16
BYLINE = re.compile(r"^\W*(?:by|von|par|por|di|door|av|af)\s+\S", re.I)
MAX_BYLINE_WORDS = 12
# How long ago a wire story was filed, after its byline's names ("1 hour, 32 minutes ago").
MAX_BYLINE_AGE_WORDS = 5
BYLINE_AGE = re.compile(
    r"(?:,?\s*\d+\s+(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?))+\s+ago\W*$", re.I
)
# The page's copyright notice ("© 2012 CBS Interactive Inc. All Rights Reserved. This
# material may not be published...") and the count of its comments ("26 Comments +").
COPYRIGHT_LEAD = re.compile(r"^\W*(?:©|\(c\)|copyright\b)", re.I)
COPYRIGHT_YEAR = re.compile(r"^\W*(?:©|\(c\)|copyright\s*(?:©|\(c\))?)\s*(?:19|20)\d\d\b", re.I)
MAX_COPYRIGHT_WORDS = 80  # a wire service's notice runs to 40-60 words
COMMENT_COUNT = re.compile(
    r"^\W*(?:\d+\s+(?:comments?|kommentare?|commentaires?|comentarios?)|"
    r"(?:comments?|kommentare?)\s*\(\d+\))\W*$",
    re.I,
)
MAX_COMMENT_COUNT_WORDS = 4
ONE_LINK_TAGS = frozenset({"p", "div", "h3", "h4", "h5", "h6", "strong"})
# A newsletter's or an account's sign-up inside the story: a small box around a form, a
# field or a button ("Newsletter: Sport inside ... Jetzt abonnieren"), its heading and
# its consent line with it.
CONTROL_TAGS = frozenset({"form", "input", "button", "select", "textarea"})
SIGN_UP_TAGS = frozenset({"div", "section"})
MAX_SIGN_UP_WORDS = 50
# A link around blocks (a heading, a paragraph, a box): a teaser card for another story
# ("Lesen Sie auch: ..."). Bounded: an anchor a raw page leaves unclosed can swallow the
# story's paragraphs in a parser that does not mend it as browsers do.
CARD_BLOCKS = frozenset({"div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "section", "figure"})
MAX_CARD_WORDS = 60
# The title of a box of links left out ("Auch interessant", "Related stories"); not of one
# link line, which may be a shop's price under its product's heading.
HEADING_TAGS = ("h2", "h3", "h4", "h5", "h6")
MAX_BOX_HEADING_WORDS = 6
LINK_KINDS = frozenset({"a list of links", "a teaser card"})
HEADING_OVER_LINKS = "a heading over links"
# Inline elements a page sets on a line of their own between blocks, as a paragraph.
INLINE_LINE_TAGS = frozenset({"span", "small", "font", "strong", "b", "em", "i"})
MAX_ONE_LINK_WORDS = 30
_DIGITS = re.compile(r"\d")
_XML_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
# Names a CSS-in-JS library makes from a style's hash ("sc-bdfBwQ", "css-1x2y3z", "knQylx",
# "hngCMv", "czqpjL"): the next deploy renames them, so they name no template. Short runs
# of letters with capitals where no word puts them: two in a row or one at the end after a
# small letter, one small letter between two, or no vowel at all.
_HASHED = re.compile(r"^(?:css|sc|jsx|emotion|styled)-|^[a-zA-Z]{1,3}[A-Z][a-zA-Z]{3,}$")
_ODD_CAPITALS = re.compile(r"[a-z][A-Z](?:[A-Z]|$)|[A-Z][a-z][A-Z]")
_VOWEL = re.compile(r"[aeiouAEIOU]")


@dataclass(frozen=True)
class ParserPart:
    """One selector of a layout's parser and the evidence that chose it: the pages it is
    on, the share of its counted words the vote keeps, the share of its text repeated
    across pages, and why (``kind``: container or exclusion)."""

    kind: str
    steps: tuple[Step, ...]
    anchored: bool = False
    positions: tuple[int, ...] = ()  # of an anchored path: each step's place among its kind
    pages: int = 0
    kept_share: float = 0.0
    repeated_share: float = 0.0
    why: str = ""

    @property
    def css(self) -> str:
        places = self.positions or (0,) * len(self.steps)
        steps = " > ".join(
            step.css() + (f":nth-of-type({place})" if place else "")
            for step, place in zip(self.steps, places, strict=True)
        )
        return f"body > {steps}" if self.anchored else steps

    @property
    def xpath(self) -> str:
        """From ``<body>`` down (``anchored``) or anywhere below it; a ``tbody`` step is
        optional (browsers insert it into tables, raw HTML often lacks it)."""
        parts = ["//body" if self.anchored else "//body/"]
        places = self.positions or (0,) * len(self.steps)
        last = len(self.steps) - 1
        for number, (step, place) in enumerate(zip(self.steps, places, strict=True)):
            if step.name == "tbody" and not step.id and number < last:
                parts.append("/")
            else:
                parts.append("/" + step.xpath() + (f"[{place}]" if place else ""))
        return "".join(parts).replace("///", "//")


PART_KINDS = ("container", "exclusion", "summary", "markup", "kept")
MAX_PARTS = 64
MAX_STEPS = 40


def check_template_lines(lines: object) -> None:
    """Raise ValueError unless ``lines`` is a parser's template lines as a model file may
    hold them: a frozenset of a few short strings."""
    if not isinstance(lines, frozenset) or len(lines) > MAX_TEMPLATE_LINES:
        raise ValueError("the template lines are not a set of a few lines")
    if not all(isinstance(line, str) and len(line) <= MAX_TEMPLATE_LINE for line in lines):
        raise ValueError("a template line that is not a short text")


def check_parts(parts: object) -> None:
    """Raise ValueError unless ``parts`` is a parser as a model file may hold one: a list
    of :class:`ParserPart` of known kinds, each of a few :class:`Step` of plain names."""
    if not isinstance(parts, list) or len(parts) > MAX_PARTS:
        raise ValueError("the parser is not a list of a few parts")
    for part in parts:
        if not isinstance(part, ParserPart) or part.kind not in PART_KINDS:
            raise ValueError("a part of no known kind")
        steps = part.steps
        if not isinstance(steps, tuple) or not 0 < len(steps) <= MAX_STEPS:
            raise ValueError(f"a {part.kind} of no steps or too many")
        for step in steps:
            if not (
                isinstance(step, Step)
                and isinstance(step.name, str)
                and _XML_NAME.fullmatch(step.name)
                and isinstance(step.id, str)
                and isinstance(step.classes, frozenset)
                and all(isinstance(c, str) for c in step.classes)
            ):
                raise ValueError(f"a {part.kind} step that is not a plain selector")
        if not isinstance(part.anchored, bool):
            raise ValueError(f"a {part.kind} anchored neither way")
        places = part.positions
        if (
            not isinstance(places, tuple)
            or (places and len(places) != len(steps))
            or not all(
                isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= 10_000 for p in places
            )
        ):
            raise ValueError(f"a {part.kind} with malformed places")
        for value, top in ((part.pages, 1e9), (part.kept_share, 1), (part.repeated_share, 1)):
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not 0 <= value <= top
            ):
                raise ValueError(f"a {part.kind} with malformed evidence")
        if not isinstance(part.why, str):
            raise ValueError(f"a {part.kind} with malformed evidence")


@dataclass
class Unit:
    """A block element's own text on a training page, and the vote on it (+1 kept, -1 left
    out, 0 split) weighted by its words."""

    element: lxml.html.HtmlElement
    words: int
    vote: int
    repeated: bool = False
    text: str = ""


@dataclass
class PageEvidence:
    """One training page as the parser's induction reads it: its units and votes, and per
    element the words kept and left out by the vote in its subtree and its elements
    (kinds that are never the story aside), so that a candidate container is scored by a
    few sums."""

    body: lxml.html.HtmlElement
    units: list[Unit]
    dropped: set[lxml.html.HtmlElement]  # inside a kind that is never the story
    kept_words: int  # counted words the vote keeps on the page, dropped kinds aside
    sums: dict[lxml.html.HtmlElement, tuple[int, int, int]] = field(default_factory=dict)
    dropped_tops: dict[lxml.html.HtmlElement, str] = field(default_factory=dict)  # and why

    def counted(
        self, inside: set[lxml.html.HtmlElement], excluded: set[lxml.html.HtmlElement]
    ) -> tuple[int, int]:
        """Words kept and words left out by the vote among the units in ``inside`` and not
        in ``excluded`` nor in a dropped kind."""
        kept = left = 0
        for unit in self.units:
            element = unit.element
            if element in inside and element not in excluded and element not in self.dropped:
                if unit.vote > 0:
                    kept += unit.words
                elif unit.vote < 0:
                    left += unit.words
        return kept, left

    def f1(self, inside: set, excluded: set) -> float:
        return self._f1(*self.counted(inside, excluded))

    def f1_of_tops(self, tops: Sequence[lxml.html.HtmlElement]) -> tuple[float, int]:
        """The F1 of the subtrees of ``tops`` (none inside another) and their elements."""
        kept = left = size = 0
        for top in tops:
            k, l_, c = self.sums.get(top, (0, 0, 0))
            kept, left, size = kept + k, left + l_, size + c
        return self._f1(kept, left), size

    def _f1(self, kept: int, left: int) -> float:
        missed = self.kept_words - kept
        return 2 * kept / (2 * kept + left + missed) if kept else 0.0


# -- reading a page ---------------------------------------------------------------------
@dataclass
class LinkCounts:
    """Per element of a subtree, counted once from the leaves up (linear in the subtree:
    a page of elements nested thousands deep costs what a flat one does): its words, the
    words inside links, its links, and whether one of them points to a social network."""

    words: dict[lxml.html.HtmlElement, int]
    link_words: dict[lxml.html.HtmlElement, int]
    links: dict[lxml.html.HtmlElement, int]
    social: set[lxml.html.HtmlElement]
    controls: set[lxml.html.HtmlElement]  # holding a form, a field or a button

    @classmethod
    def of(cls, root: lxml.html.HtmlElement) -> LinkCounts:
        words: Counter = Counter()
        link_words: Counter = Counter()
        links: Counter = Counter()
        social: set[lxml.html.HtmlElement] = set()
        controls: set[lxml.html.HtmlElement] = set()
        elements = [e for e in root.iter() if isinstance(e.tag, str)]
        for element in reversed(elements):
            own = len((element.text or "").split())
            own += sum(len((child.tail or "").split()) for child in element)
            words[element] += own
            if element.tag == "a":
                link_words[element] = words[element]
                links[element] += 1
                if EMBED_HOSTS.search(element.get("href") or ""):
                    social.add(element)
            parent = element.getparent()
            if parent is not None and element is not root:
                words[parent] += words[element]
                link_words[parent] += link_words[element]
                links[parent] += links[element]
                if element in social:
                    social.add(parent)
                if element in controls or element.tag in CONTROL_TAGS:
                    controls.add(parent)
        return cls(words, link_words, links, social, controls)


def never_the_story(element: lxml.html.HtmlElement, counts: LinkCounts) -> str:
    """Why ``element`` is never the story, by its markup alone ("" where it may be);
    ``counts`` of a subtree holding it."""
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag in NEVER_STORY_TAGS:
        return tag
    if tag in ("blockquote", "div") and (
        EMBED_CLASSES.search(element.get("class") or "")
        or (tag == "blockquote" and element in counts.social)
    ):
        return "an embedded post"
    words = counts.words.get(element, 0)
    if (
        tag in LINK_LIST_TAGS
        and counts.links.get(element, 0) >= MIN_LINK_LIST_LINKS
        and words
        and counts.link_words.get(element, 0) >= LINK_LIST_SHARE * words
    ):
        return "a list of links"
    has_blocks = any(isinstance(c.tag, str) and c.tag in BLOCK_TAGS for c in element)
    if (
        tag in ("p", "div", "li")
        and words <= MAX_CONTACT_WORDS
        and not has_blocks
        and _contact_line(element)
    ):
        return "a contact line"
    if 0 < words <= MAX_CAPTION_WORDS and CAPTION_CLASS.search(element.get("class") or ""):
        return "a caption"
    if tag in ("p", "div") and 0 < words <= MAX_IMAGE_CAPTION_WORDS and _image_caption(element):
        return "a caption"
    if tag in SIGN_UP_TAGS and 0 < words <= MAX_SIGN_UP_WORDS and element in counts.controls:
        return "a sign-up box"
    if 0 < words <= MAX_CARD_WORDS and _is_teaser_card(element, counts):
        return "a teaser card"
    if tag in COMMENTS_TAGS and COMMENTS_NAME.search(
        f"{element.get('id') or ''} {element.get('class') or ''}"
    ):
        return COMMENTS
    if has_blocks or not words or (tag not in BLOCK_TAGS and not _on_a_line_of_its_own(element)):
        return ""
    text = " ".join(" ".join(element.itertext()).split())
    return _line_kind(
        tag, text, words, counts.links.get(element, 0), counts.link_words.get(element, 0)
    )


def _image_caption(element: lxml.html.HtmlElement) -> bool:
    """Whether ``element`` holds an image and shows no text but in emphasis
    (``<p><img ...><em>Murder victims from left: ...</em></p>``): the caption an editor
    writes under a picture in a blog's editor, with no class to name it."""
    if next(element.iter("img"), None) is None:
        return False
    emphasis, stack = [], list(element)
    while stack:  # the outermost emphasis elements
        child = stack.pop()
        if child.tag in CAPTION_EMPHASIS:
            emphasis.append(child)
        elif isinstance(child.tag, str):
            stack.extend(child)
    inside = sum(len(" ".join(e.itertext()).split()) for e in emphasis)
    return bool(emphasis) and inside == len(" ".join(element.itertext()).split())


def _contact_line(element: lxml.html.HtmlElement) -> bool:
    """Whether a short element's text holds an e-mail address, a handle or a "follow us"
    line. A text of a few words but thousands of characters (one endless word) is none,
    and is not searched: the address pattern takes time on it that grows as its square."""
    text = " ".join(element.itertext())
    return len(text) <= MAX_CONTACT_CHARS and bool(CONTACT_LINE.search(text))


def _is_teaser_card(element: lxml.html.HtmlElement, counts: LinkCounts) -> bool:
    """Whether ``element`` is a link around blocks, or holds nothing but one such link."""
    if element.tag == "a":
        link = element
    elif counts.links.get(element, 0) == 1 and counts.link_words[element] == counts.words[element]:
        link = next(element.iter("a"))
    else:
        return False
    return bool(link.get("href")) and any(
        isinstance(e.tag, str) and e.tag in CARD_BLOCKS for e in link.iterdescendants()
    )


def _on_a_line_of_its_own(element: lxml.html.HtmlElement) -> bool:
    """Whether an inline element stands between blocks (or line breaks) with no text
    beside it, so that a browser shows it as a line of its own, as it shows a paragraph
    (``<div class="story">...</div><span>© 2012 ...</span>``); an element that shows no
    text (an anchor, a comment) stands nowhere."""
    parent = element.getparent()
    if element.tag not in INLINE_LINE_TAGS or parent is None or (element.tail or "").strip():
        return False
    before, text_before = _shown_neighbour(element, preceding=True)
    after, text_after = _shown_neighbour(element, preceding=False)
    if before is None:
        text_before += parent.text or ""
    neighbours = [n for n in (before, after) if n is not None]
    return (
        bool(neighbours)
        and all(n.tag in BLOCK_TAGS for n in neighbours)
        and not (text_before + text_after).strip()
    )


def _shown_neighbour(
    element: lxml.html.HtmlElement, preceding: bool
) -> tuple[lxml.html.HtmlElement | None, str]:
    """The nearest sibling on one side that is a block or shows text, and the text between
    it and ``element`` (the tails of the comments and empty elements passed)."""
    between = []
    for sibling in element.itersiblings(preceding=preceding):
        shows = isinstance(sibling.tag, str) and (
            sibling.tag in BLOCK_TAGS or any(text.strip() for text in sibling.itertext())
        )
        if shows:
            if preceding:
                between.append(sibling.tail or "")
            return sibling, "".join(between)
        between.append(sibling.tail or "")
    return None, "".join(between)


def _line_kind(tag: str, text: str, words: int, links: int, link_words: int) -> str:
    """Why a block of no blocks is a line that is never the story, by its shape: a date
    line, a byline, or a paragraph that is one link ("RELATED: ...", "Read more »")."""
    if words <= MAX_DATE_WORDS:
        tokens = tokenize(text)
        dated = sum(1 for token in tokens if DATE_WORD.match(token))
        has_date = any(token.isdigit() for token in tokens)
        calendar = CALENDAR_WORD.search(text) or TIME_OF_DAY.search(text)
        if has_date and (DATE_LEAD.match(text) or (calendar and dated >= len(tokens) - 1)):
            return "a date line"
    if words <= MAX_BYLINE_WORDS + MAX_BYLINE_AGE_WORDS and BYLINE.match(text):
        names = BYLINE_AGE.sub("", text).split()  # "By Jane Smith, AP Writer 59 minutes ago"
        named = [w for w in names[1:] if w[:1].isalpha() and w.lower() not in _JOINERS]
        if len(names) <= MAX_BYLINE_WORDS and named and all(w[:1].isupper() for w in named):
            return "a byline"
    if (
        tag in ONE_LINK_TAGS
        and links == 1
        and words <= MAX_ONE_LINK_WORDS
        and link_words >= LINK_LIST_SHARE * words
    ):
        return "a line of one link"
    if (
        words <= MAX_COPYRIGHT_WORDS
        and COPYRIGHT_LEAD.match(text)
        and (COPYRIGHT_YEAR.match(text) or "rights reserved" in text.lower())
    ):
        return "a copyright line"
    if words <= MAX_COMMENT_COUNT_WORDS and COMMENT_COUNT.match(text):
        return "a comment count"
    return ""


_JOINERS = frozenset(
    {"and", "und", "et", "y", "e", "en", "och", "og", "of", "the", "de", "van", "von"}
)


def dropped_kinds(
    root: lxml.html.HtmlElement, kept: Sequence[ParserPart] = ()
) -> dict[lxml.html.HtmlElement, str]:
    """The outermost elements below ``root`` of a kind that is never the story, in
    document order, each with why (``root`` itself is not judged: a container is what it
    is); but for the kinds the site's vote keeps (``kept``: parts of kind ``kept``, each
    naming the role and the kind)."""
    counts = LinkCounts.of(root)
    tops: dict[lxml.html.HtmlElement, str] = {}
    covered: set[lxml.html.HtmlElement] = set()
    covered_kept: set[lxml.html.HtmlElement] = set()
    for element in root.iterdescendants():
        if element in covered or element in covered_kept or not isinstance(element.tag, str):
            continue
        why = never_the_story(element, counts)
        if why:  # left out, or kept whole (a kept caption box keeps its caption's line)
            if not any(_fits(part, element, why) for part in kept):
                tops[element] = why
                covered.update(element.iter())
            else:
                covered_kept.update(element.iter())
    after_marker = [
        element
        for element in _after_comments_marker(root, counts)
        if element not in covered and element not in covered_kept
    ]
    for element in after_marker:  # outermost: a kind found inside it goes with it
        for inner in element.iterdescendants():
            tops.pop(inner, None)
        tops[element] = COMMENTS
        covered.update(element.iter())
    headings = [
        heading
        for heading in _headings_over_links(root, tops, covered, counts)
        if not any(_fits(part, heading, HEADING_OVER_LINKS) for part in kept)
    ]
    if not headings and not after_marker:
        return tops
    tops.update(dict.fromkeys(headings, HEADING_OVER_LINKS))
    return {element: tops[element] for element in root.iter() if element in tops}


def _after_comments_marker(
    root: lxml.html.HtmlElement, counts: LinkCounts
) -> list[lxml.html.HtmlElement]:
    """The elements after the first empty element named for the comments below ``root``
    with story prose before it (its later siblings); none where there is none."""
    markers = (
        element
        for element in root.iterdescendants("a", "span", "div")
        if (element.get("name") or element.get("id"))
        and not len(element)
        and not (element.text or "").strip()
        and COMMENTS_NAME.search(f"{element.get('name') or ''} {element.get('id') or ''}")
    )
    for marker in itertools.islice(markers, MAX_COMMENTS_MARKERS):
        before = sum(
            counts.words.get(sibling, 0)
            for sibling in marker.itersiblings(preceding=True)
            if isinstance(sibling.tag, str)
        )
        if before >= MIN_STORY_BEFORE_COMMENTS:
            return [s for s in marker.itersiblings() if isinstance(s.tag, str)]
    return []


def _headings_over_links(
    root: lxml.html.HtmlElement,
    tops: Mapping[lxml.html.HtmlElement, str],
    left_out: Set[lxml.html.HtmlElement],
    counts: LinkCounts,
) -> list[lxml.html.HtmlElement]:
    """The short headings right above a box whose text is all left out, some of it as
    links ("Auch interessant" over a teaser card, "Related stories" over a list of links):
    the box's title goes with it. What each subtree shows, keeps and holds is gathered
    once from the leaves up, so a page nested thousands deep costs what a flat one does;
    a container with no box of links left out (most) is not walked again."""
    if not LINK_KINDS.intersection(tops.values()):
        return []
    elements = [e for e in root.iter() if isinstance(e.tag, str)]
    shows: set[lxml.html.HtmlElement] = set()  # some text of the subtree is shown
    keeps: set[lxml.html.HtmlElement] = set()  # ... and some of it is not left out
    has_links_out: set[lxml.html.HtmlElement] = set()  # it holds a box of links left out
    holds_left_out: set[lxml.html.HtmlElement] = set()  # a part of it is left out
    for element in reversed(elements):
        if _shows_own_text(element):
            shows.add(element)
            if element not in left_out:
                keeps.add(element)
        if tops.get(element) in LINK_KINDS:
            has_links_out.add(element)
        parent = element.getparent()
        if parent is None or element is root:
            continue
        for found in (shows, keeps, has_links_out):
            if element in found:
                found.add(parent)
        if element in left_out or element in holds_left_out:
            holds_left_out.add(parent)
    found = []
    for heading in elements:
        if heading.tag not in HEADING_TAGS or heading is root or heading in left_out:
            continue
        if heading in holds_left_out or (heading.tail or "").strip():
            continue
        if not 0 < counts.words.get(heading, 0) <= MAX_BOX_HEADING_WORDS:
            continue
        box = _next_shown_sibling(heading, shows)
        if box is not None and box not in keeps and box in has_links_out:
            found.append(heading)
    return found


def _next_shown_sibling(
    element: lxml.html.HtmlElement, shows: Set[lxml.html.HtmlElement]
) -> lxml.html.HtmlElement | None:
    """The next sibling that shows text, with no text between (None: text or nothing)."""
    for sibling in element.itersiblings():
        if isinstance(sibling.tag, str) and sibling in shows:
            return sibling
        if (sibling.tail or "").strip():
            return None
    return None


def _shows_own_text(element: lxml.html.HtmlElement) -> bool:
    return bool((element.text or "").strip()) or any(
        (child.tail or "").strip() for child in element
    )


def _fits(part: ParserPart, element: lxml.html.HtmlElement, why: str) -> bool:
    """Whether a ``kept`` part names ``element`` (its tag and classes) and its kind."""
    step = part.steps[-1]
    classes = set((element.get("class") or "").split())
    return step.name == element.tag and step.classes <= classes and part.why.endswith(why)


def text_units(body: lxml.html.HtmlElement) -> Iterator[tuple[lxml.html.HtmlElement, str]]:
    """Each block element's own text (its text, its inline children's and their tails),
    in document order: what a reader keeps or leaves out as one piece."""
    owners = {e for e in body.iter() if isinstance(e.tag, str) and e.tag in BLOCK_TAGS}
    for element in list(owners):  # an inline element holding blocks owns its own text
        for ancestor in element.iterancestors():
            if ancestor in owners or ancestor is body:
                break
            owners.add(ancestor)
    owners.add(body)
    for element in body.iter():
        if element not in owners:
            continue
        parts = [element.text or ""]
        for child in element:
            if isinstance(child.tag, str) and child not in owners:
                parts.append(" ".join(child.itertext()))
            parts.append(child.tail or "")
        text = " ".join(" ".join(parts).split())
        if text:
            yield element, text


def _phrase(text: str) -> str:
    """``text``'s words between spaces: one text holds another's words in a row where its
    phrase holds the other's ("" for a text of no words)."""
    words = tokenize(text)
    return " " + " ".join(words) + " " if words else ""


def page_evidence(
    body: lxml.html.HtmlElement, readings: Sequence[str], repeated: set[str]
) -> PageEvidence:
    """The units of a training page with the vote of ``readings`` (texts of the page's
    article as independent readers give it) and the site's ``repeated`` unit phrases."""
    phrases = [phrase for phrase in map(_phrase, readings) if phrase]
    dropped_tops = dropped_kinds(body)
    dropped = subtree(dropped_tops)
    units = []
    for element, text in text_units(body):
        phrase = _phrase(text)
        if not phrase:
            continue
        words = phrase.count(" ") - 1
        is_repeated = phrase in repeated
        if is_repeated or not phrases:
            vote = -1 if is_repeated else 0
        else:
            share = sum(phrase in reading for reading in phrases) / len(phrases)
            vote = 1 if share >= VOTE_KEEP else -1 if share <= 1 - VOTE_KEEP else 0
        units.append(Unit(element, words, vote, is_repeated, text))
    _story_headings(units, phrases, dropped)
    kept = sum(u.words for u in units if u.vote > 0 and u.element not in dropped)
    sums = _subtree_sums(body, units, dropped)
    return PageEvidence(body, units, dropped, kept, sums, dropped_tops)


def _story_headings(units: list[Unit], phrases: Sequence[str], dropped: set) -> None:
    """A sub-heading the template repeats on every page (a Q&A's "What's the Big Idea?",
    a recipe's "Directions") is the story's where the readers keep it and the story's own
    prose follows it: it is voted in, not left out as the template's text."""
    if not phrases:
        return
    counted = [number for number, unit in enumerate(units) if unit.element not in dropped]
    for number, following in itertools.pairwise(counted):
        unit, after = units[number], units[following]
        if not unit.repeated or not _sub_heading(unit.element):
            continue
        if after.repeated or after.vote <= 0:
            continue
        phrase = _phrase(unit.text)
        if sum(phrase in reading for reading in phrases) / len(phrases) >= VOTE_KEEP:
            units[number] = Unit(unit.element, unit.words, 1, False, unit.text)


def _sub_heading(element: lxml.html.HtmlElement) -> bool:
    """A heading below the title: ``<h2>``-``<h6>``, or a paragraph all of whose text is
    one bold element (``<p><strong>What's the Big Idea?</strong></p>``)."""
    if element.tag in SUB_HEADINGS:
        return True
    children = [child for child in element if isinstance(child.tag, str)]
    return (
        element.tag == "p"
        and len(children) == 1
        and children[0].tag in ("b", "strong")
        and not (element.text or "").strip()
        and not (children[0].tail or "").strip()
    )


def _subtree_sums(
    body: lxml.html.HtmlElement, units: Sequence[Unit], dropped: set
) -> dict[lxml.html.HtmlElement, tuple[int, int, int]]:
    """Per element: the words kept and left out by the vote in its subtree, and its
    elements, dropped kinds aside (children summed into parents, last element first)."""
    kept: Counter = Counter()
    left: Counter = Counter()
    for unit in units:
        if unit.element in dropped:
            continue
        if unit.vote > 0:
            kept[unit.element] += unit.words
        elif unit.vote < 0:
            left[unit.element] += unit.words
    size: Counter = Counter()
    elements = [e for e in body.iter() if isinstance(e.tag, str)]
    for element in reversed(elements):
        if element not in dropped:
            size[element] += 1
        parent = element.getparent()
        if parent is not None and element is not body:
            kept[parent] += kept[element]
            left[parent] += left[element]
            size[parent] += size[element]
    return {e: (kept[e], left[e], size[e]) for e in elements}


def repeated_phrases(bodies: Sequence[lxml.html.HtmlElement]) -> set[str]:
    """The unit phrases that stand on two or more of the pages: the site's template."""
    seen: Counter[str] = Counter()
    for body in bodies:
        seen.update({_phrase(text) for _, text in text_units(body)})
    return {phrase for phrase, pages in seen.items() if pages >= 2 and phrase}


# -- selectors --------------------------------------------------------------------------
def stable(name: str) -> bool:
    """A class or id a template keeps from page to page: no digits, not a hashed name."""
    return bool(name) and len(name) <= 48 and not _DIGITS.search(name) and not hashed(name)


def hashed(name: str) -> bool:
    """Whether ``name`` is one a CSS-in-JS library made from a style's hash (``_HASHED``)."""
    if _HASHED.search(name):
        return True
    if not (5 <= len(name) <= 8 and name.isascii() and name.isalpha()) or name[1:].islower():
        return False
    return _ODD_CAPITALS.search(name) is not None or _VOWEL.search(name) is None


def container_keys(element: lxml.html.HtmlElement) -> Iterator[tuple[str, ParserPart]]:
    """The selectors that could name ``element`` as a container: its stable id, each stable
    class, its tag where it says ``article`` or ``main``, else its tag path (with and
    without each step's place among its kind: class-less markup tells a story's cell from
    the menu's by place alone). Only elements that can hold an article are offered."""
    tag = element.tag
    if tag not in CONTAINER_TAGS and tag not in ("article", "main"):
        return
    element_id = element.get("id") or ""
    if stable(element_id):
        yield "id", ParserPart("container", (Step(tag, element_id),))
    classes = [c for c in (element.get("class") or "").split() if stable(c)]
    for name in classes:
        yield "class", ParserPart("container", (Step(tag, "", frozenset({name})),))
    if tag in ("article", "main"):
        yield "tag", ParserPart("container", (Step(tag),))
    if classes or stable(element_id):
        return
    above = itertools.islice(element.iterancestors(), MAX_STEPS)  # deeper: no path
    chain = [element, *(e for e in above if e.tag not in ("body", "html"))]
    if len(chain) >= MAX_STEPS:
        return
    if not all(isinstance(e.tag, str) and _XML_NAME.match(e.tag) for e in chain):
        return
    # From the nearest ancestor with a stable id, where one is near: the path a person
    # writes (``#content > div > div``), which a wrapper added above the id survives.
    for depth, ancestor in enumerate(chain[1 : MAX_ID_PATH_STEPS + 1], start=1):
        ancestor_id = ancestor.get("id") or ""
        if stable(ancestor_id):
            below = list(reversed(chain[:depth]))
            steps = (Step(ancestor.tag, ancestor_id), *(Step(e.tag) for e in below))
            yield "id-path", ParserPart("container", steps)
            places = (0, *(_place(e) for e in below))
            if any(place > 1 for place in places):
                yield "id-position", ParserPart("container", steps, positions=places)
            return
    chain.reverse()
    steps = tuple(Step(e.tag) for e in chain)
    yield "path", ParserPart("container", steps, anchored=True)
    places = tuple(_place(e) for e in chain)
    if any(place > 1 for place in places):
        yield "position", ParserPart("container", steps, anchored=True, positions=places)


def _place(element: lxml.html.HtmlElement) -> int:
    """``element``'s place among its parent's children of its tag (1 for the first; a
    ``tbody``, which browsers add, is never counted)."""
    if element.tag == "tbody":
        return 0
    parent = element.getparent()
    if parent is None:
        return 1
    return 1 + sum(
        1 for sibling in element.itersiblings(preceding=True) if sibling.tag == element.tag
    )


def role_parts(element: lxml.html.HtmlElement) -> list[ParserPart]:
    """Exclusion selectors of ``element``'s role: its tag with all its stable classes, and
    with each one alone (a box's variants share one class: ``story-feature narrow`` and
    ``story-feature wide``; a comment's, ``commentbody by-roger``); under its parent's
    the same way where it has none of its own (none where neither has a stable class)."""
    if not _XML_NAME.match(element.tag):
        return []
    classes = sorted(c for c in (element.get("class") or "").split() if stable(c))
    if classes:
        sets = [frozenset(classes)] + (
            [frozenset({c}) for c in classes] if len(classes) > 1 else []
        )
        return [ParserPart("exclusion", (Step(element.tag, "", chosen),)) for chosen in sets]
    parent = element.getparent()
    if parent is None or not isinstance(parent.tag, str) or not _XML_NAME.match(parent.tag):
        return []
    above = sorted(c for c in (parent.get("class") or "").split() if stable(c))
    if not above:
        return []
    sets = [frozenset(above)] + ([frozenset({c}) for c in above] if len(above) > 1 else [])
    return [
        ParserPart("exclusion", (Step(parent.tag, "", chosen), Step(element.tag)))
        for chosen in sets
    ]


def matches(part: ParserPart, root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The outermost elements ``part`` selects in ``root``, in document order."""
    try:
        found = [e for e in _compiled(part.xpath)(root) if isinstance(e, lxml.html.HtmlElement)]
    except etree.XPathError as error:  # a selector no XPath can say: it selects nothing
        logger.info("the selector %s cannot be applied: %s", part.css, error)
        return []
    return outermost(found)


@functools.lru_cache(maxsize=4096)
def _compiled(xpath: str) -> etree.XPath:
    """A selector's XPath, compiled once per process."""
    return etree.XPath(xpath)


def outermost(elements: Iterable[lxml.html.HtmlElement]) -> list[lxml.html.HtmlElement]:
    """Of ``elements`` in document order, those inside none of the others (linear in the
    elements they hold: nesting thousands deep costs no more)."""
    tops: list[lxml.html.HtmlElement] = []
    covered: set[lxml.html.HtmlElement] = set()
    for element in elements:
        if element not in covered:
            tops.append(element)
            covered.update(element.iter())
    return tops


def subtree(elements: Iterable[lxml.html.HtmlElement]) -> set[lxml.html.HtmlElement]:
    return {e for top in elements for e in top.iter() if isinstance(e.tag, str)}


# -- induction --------------------------------------------------------------------------
@dataclass
class Induced:
    """A layout's parser: containers in order, exclusions inside them, and the share of
    the words the vote keeps on the training pages that it takes."""

    containers: list[ParserPart]
    exclusions: list[ParserPart]
    summaries: list[ParserPart] = field(default_factory=list)
    recall: float = 0.0
    markup: list[ParserPart] = field(default_factory=list)  # shown, not applied: :func:`cut`
    # The site's template lines met inside the containers: never a paragraph of the article.
    template_lines: list[str] = field(default_factory=list)


def induce(pages: Sequence[PageEvidence]) -> Induced:
    """The parser whose articles agree best with the pages' votes, less a cost per
    selector (module doc)."""
    candidates: dict[ParserPart, tuple[str, dict[int, list]]] = {}
    for number, page in enumerate(pages):
        found: dict[ParserPart, list] = defaultdict(list)
        for element in page.body.iter():
            if not isinstance(element.tag, str) or element is page.body:
                continue
            if element in page.dropped:
                continue
            for kind, part in container_keys(element):
                found[part].append(element)
                candidates.setdefault(part, (kind, {}))
        for part, elements in found.items():
            candidates[part][1][number] = outermost(elements)
    keys: list[ParserPart] = []
    open_pages = set(range(len(pages)))
    while open_pages and len(keys) < MAX_CONTAINERS:
        best, best_score, best_pages = None, (0.0, 0), set()
        for part, (kind, tops_of) in candidates.items():
            served = open_pages & tops_of.keys()
            if not served or len(served) < MIN_CONTAINER_SHARE * len(open_pages):
                continue
            if keys and len(served) < MIN_LATER_CONTAINER_PAGES:
                continue  # one page's own wrapper: no template, and no leave-one-out test
            total = size = 0.0
            for number in served:
                f1, elements = pages[number].f1_of_tops(tops_of[number])
                total, size = total + f1, size + elements
            # Of two that agree as well, the one holding fewer elements: the story's own.
            score = (round(total / len(open_pages) - CONTAINER_COST[kind], 6), -size)
            if score[0] > 0 and score > best_score:
                best, best_score, best_pages = part, score, served
        if best is None:
            break
        keys.append(best)
        open_pages -= best_pages
    insides = {key: {n: subtree(tops) for n, tops in candidates[key][1].items()} for key in keys}
    containers = [_with_evidence(key, pages, insides[key]) for key in keys]
    exclusions = _exclusions(pages, keys, insides)
    summaries = _summaries(pages, keys, insides)
    by_vote = {part.steps for part in summaries}
    summaries += [
        part for part in _summaries_before_the_story(pages, keys, insides)
        if part.steps not in by_vote
    ]  # fmt: skip
    markup = _markup_parts(pages, keys, insides)
    kept = [part for part in markup if part.kind == "kept"]
    taken = wanted = 0
    lines: dict[str, None] = {}
    for page in pages:
        found = cut(page.body, containers, exclusions, summaries, kept)
        inside = (found.keep - found.pass_through) if found else set()
        taken += page.counted(inside, set())[0]
        wanted += page.kept_words
        lines.update(
            (folded(u.text), None)
            for u in page.units
            if u.repeated and u.element in inside and len(u.text) <= MAX_TEMPLATE_LINE
        )
    recall = taken / wanted if wanted else 0.0
    template = list(lines)[:MAX_TEMPLATE_LINES]
    return Induced(containers, exclusions, summaries, recall, markup, template)


def _holders(
    page: PageEvidence, keys: Sequence[ParserPart], insides_of: Mapping, number: int
) -> set[lxml.html.HtmlElement]:
    """The elements of page ``number`` that hold its container (its tops' ancestors)."""
    for key in keys:
        inside = insides_of[key].get(number)
        if inside:
            tops = [e for e in inside if e.getparent() not in inside]
            return {ancestor for top in tops for ancestor in top.iterancestors()}
    return set()


def container_of(
    keys: Sequence[ParserPart], insides: Mapping[ParserPart, Mapping[int, set]], number: int
) -> set[lxml.html.HtmlElement]:
    """The elements of page ``number``'s container: the first of ``keys`` on it."""
    for key in keys:
        inside = insides[key].get(number)
        if inside:
            return inside
    return set()


def _exclusions(
    pages: Sequence[PageEvidence], keys: Sequence[ParserPart], insides_of: Mapping
) -> list[ParserPart]:
    """Roles inside the containers whose leaving out raises the pages' agreement with the
    vote by more than a selector's cost, best first, each judged after those before it."""
    insides = [container_of(keys, insides_of, n) for n in range(len(pages))]
    offered: dict[ParserPart, None] = {}  # the roles of what the vote leaves out, in order
    for page, inside in zip(pages, insides, strict=True):
        for unit in page.units:
            if unit.element in inside and unit.vote < 0 and unit.element not in page.dropped:
                above = itertools.islice(unit.element.iterancestors(), MAX_ROLE_LEVELS)
                for element in [unit.element, *above]:
                    if element not in inside:
                        break
                    offered.update(dict.fromkeys(role_parts(element)))
    # Each judged by all it selects, as it will select on every page.
    roles: dict[ParserPart, dict[int, set]] = defaultdict(dict)
    for part in offered:
        for number, (page, inside) in enumerate(zip(pages, insides, strict=True)):
            members = subtree(e for e in matches(part, page.body) if e in inside)
            if members:
                roles[part][number] = members
    excluded: list[set] = [set() for _ in pages]
    current = [p.f1(inside, set()) for p, inside in zip(pages, insides, strict=True)]
    chosen_parts: list[ParserPart] = []
    while True:
        best, best_gain = None, (EXCLUSION_COST, 0)
        for part, on_pages in roles.items():
            gains = [
                pages[n].f1(insides[n], excluded[n] | members) - current[n]
                for n, members in on_pages.items()
            ]
            if _bare(part) and sum(1 for gain in gains if gain > 0) < MIN_BARE_EXCLUSION_PAGES:
                continue  # one page's evidence does not take every list of a layout
            gain = sum(gains)
            # Of two that gain as much, the one of fewer classes: it holds on variants.
            score = (round(gain, 6), -len(part.steps[-1].classes))
            if score > best_gain:
                best, best_gain = part, score
        if best is None:
            break
        for number, members in roles.pop(best).items():
            excluded[number] |= members
            current[number] = pages[number].f1(insides[number], excluded[number])
        evidence = roles_evidence(best, pages, insides)
        chosen_parts.append(_with_evidence(best, pages, {}, excluded_of=evidence))
    return chosen_parts


def _bare(part: ParserPart) -> bool:
    """Whether ``part`` names its elements by tag and place alone (no class, no id)."""
    last = part.steps[-1]
    return not last.classes and not last.id


SUMMARY_PAGES = 2 / 3  # a summary outside the container: kept by the vote on most pages


def _summaries(
    pages: Sequence[PageEvidence], keys: Sequence[ParserPart], insides_of: Mapping
) -> list[ParserPart]:
    """Roles outside the containers (an element with stable classes of its own, holding
    no container) that the vote keeps on ``SUMMARY_PAGES`` of the pages that have them,
    and whose taking raises the pages' agreement by more than a selector's cost: a
    summary or dek above the story."""
    insides = [container_of(keys, insides_of, n) for n in range(len(pages))]
    holders = [_holders(page, keys, insides_of, n) for n, page in enumerate(pages)]
    seen: dict[ParserPart, dict[int, list]] = defaultdict(dict)
    for number, (page, inside) in enumerate(zip(pages, insides, strict=True)):
        if not inside:
            continue
        for unit in page.units:
            element = unit.element
            if element in inside or element in page.dropped or unit.repeated:
                continue
            classes = frozenset(c for c in (element.get("class") or "").split() if stable(c))
            if not classes or not _XML_NAME.match(element.tag):
                continue
            if element in holders[number]:  # it holds the container
                continue
            part = ParserPart("summary", (Step(element.tag, "", classes),))
            seen[part].setdefault(number, []).append(unit)
    chosen = []
    for part, on_pages in seen.items():
        kept = sum(1 for units in on_pages.values() if all(u.vote > 0 for u in units))
        if kept < SUMMARY_PAGES * len(on_pages) or len(on_pages) < SUMMARY_PAGES * len(pages):
            continue
        gain = 0.0
        for number, units in on_pages.items():
            members = subtree(u.element for u in units)
            gain += pages[number].f1(insides[number] | members, set())
            gain -= pages[number].f1(insides[number], set())
        if gain > EXCLUSION_COST:
            words = sum(u.words for units in on_pages.values() for u in units)
            chosen.append(
                ParserPart(
                    "summary",
                    part.steps,
                    pages=len(on_pages),
                    kept_share=round(kept / len(on_pages), 3),
                    why=f"kept by the vote outside the container ({words} words)",
                )
            )
    return chosen


# A summary right before the story, by its markup and place alone (the readers often
# leave story highlights and decks out, and the gold keeps them): a short list of
# sentences, or a sentence-long deck, among the few text elements before the container.
BY_PLACE = "by its markup and place"
PLACE_SUMMARY_PAGES = 0.5  # of the pages with a container, at least two
MAX_BEFORE = 4  # text elements looked at before the container, nearest first
MAX_LEVELS_UP = 3  # from the container's top, ancestors whose earlier siblings are looked at
HIGHLIGHT_ITEMS = (2, 8)
HIGHLIGHT_ITEM_WORDS = (4, 50)
DECK_WORDS = (8, 60)
DECK_TAGS = frozenset({"p", "h2", "h3"})
# A block of inline text is a deck only where it reads as sentences: a byline and date
# ("by Jane Doe on Monday, May 2 at 11:30am") stands in such markup too.
PROSE_DECK_TAGS = frozenset({"div", "span"})
SENTENCE_END = re.compile("[.!?\u2026][\"'\u201d\u2019\u00bb)\\]]*\\s*$")


def _summaries_before_the_story(
    pages: Sequence[PageEvidence], keys: Sequence[ParserPart], insides_of: Mapping
) -> list[ParserPart]:
    """Story highlights or a deck standing right before the container on most pages, by
    markup and place (:func:`summary_shape`), named by their own stable classes or their
    parent's id or classes; none that repeats across pages (the template)."""
    found: dict[ParserPart, int] = Counter()
    with_container = 0
    for number, page in enumerate(pages):
        inside = container_of(keys, insides_of, number)
        if not inside:
            continue
        with_container += 1
        repeated = {u.element for u in page.units if u.repeated}
        top = next(e for e in page.body.iter() if e in inside)
        on_page: dict[ParserPart, None] = {}  # in document order: the same pages, one parser
        for element in _before(top, page.body):
            if element in page.dropped or any(e in repeated for e in element.iter()):
                continue
            if element.tag == "h1":
                break  # the headline: what stands before it is not this story's
            part = _summary_named(element, page.body)
            if part is not None:
                on_page[part] = None
        found.update(list(on_page))
    wanted = max(2, PLACE_SUMMARY_PAGES * with_container)
    return [
        ParserPart("summary", part.steps, pages=on, why=part.why)
        for part, on in found.items()
        if on >= wanted
    ]


def _summary_named(
    element: lxml.html.HtmlElement, body: lxml.html.HtmlElement
) -> ParserPart | None:
    """The summary ``element`` is, named by the element it wraps or else by itself (a
    deck's span names it by a class every line of the page's text carries, its ``div`` by
    one of its own): a selector that finds it and at most one more element on the page."""
    for candidate in dict.fromkeys((_unwrapped(element), element)):
        shape = summary_shape(candidate)
        part = _summary_part(candidate, shape) if shape else None
        if part is not None and len(matches(part, body)) <= 2:
            return part
    return None


def _before(top: lxml.html.HtmlElement, body: lxml.html.HtmlElement) -> Iterator:
    """The text-bearing elements right before ``top``, nearest first: its earlier siblings
    and its ancestors' (``MAX_LEVELS_UP``), at most ``MAX_BEFORE``."""
    seen = 0
    element = top
    for _ in range(MAX_LEVELS_UP + 1):
        for sibling in element.itersiblings(preceding=True):
            if not isinstance(sibling.tag, str) or not " ".join(sibling.itertext()).split():
                continue
            yield sibling
            seen += 1
            if seen >= MAX_BEFORE:
                return
        element = element.getparent()
        if element is None or element is body:
            return


def _unwrapped(element: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """``element``, or the element it only wraps (one child and no text of its own)."""
    for _ in range(MAX_STEPS):
        children = [c for c in element if isinstance(c.tag, str)]
        if len(children) != 1 or (element.text or "").strip() or (children[0].tail or "").strip():
            break
        element = children[0]
    return element


def summary_shape(element: lxml.html.HtmlElement) -> str:
    """ "story highlights" for a short list of sentence-long items with few links, "a deck"
    for a sentence-long paragraph or sub-heading of no links, or a block of inline text
    of such sentences; "" for neither."""
    counts = LinkCounts.of(element)
    words = counts.words.get(element, 0)
    if not words or counts.link_words.get(element, 0) > 0.3 * words:
        return ""
    if element.tag in ("ul", "ol"):
        items = [c for c in element if c.tag == "li"]
        lengths = [counts.words.get(item, 0) for item in items]
        low, high = HIGHLIGHT_ITEM_WORDS
        if HIGHLIGHT_ITEMS[0] <= len(items) <= HIGHLIGHT_ITEMS[1] and all(
            low <= n <= high for n in lengths
        ):
            return "story highlights"
        return ""
    if not DECK_WORDS[0] <= words <= DECK_WORDS[1] or any(
        isinstance(c.tag, str) and c.tag in BLOCK_TAGS for c in element
    ):
        return ""
    if element.tag in DECK_TAGS:
        return "a deck"
    if element.tag in PROSE_DECK_TAGS:
        text = " ".join(" ".join(element.itertext()).split())
        if SENTENCE_END.search(text) and not BYLINE.match(text) and not TIME_OF_DAY.search(text):
            return "a deck"
    return ""


def _summary_part(element: lxml.html.HtmlElement, shape: str) -> ParserPart | None:
    """The selector of a summary: its tag and stable classes, else under its parent's
    stable id or classes (None where neither names it)."""
    why = f"{BY_PLACE}: {shape} right before the story"
    classes = frozenset(c for c in (element.get("class") or "").split() if stable(c))
    if classes:
        return ParserPart("summary", (Step(element.tag, "", classes),), why=why)
    parent = element.getparent()
    if parent is None or not isinstance(parent.tag, str) or not _XML_NAME.match(parent.tag):
        return None
    parent_id = parent.get("id") or ""
    above = frozenset(c for c in (parent.get("class") or "").split() if stable(c))
    if stable(parent_id):
        return ParserPart("summary", (Step(parent.tag, parent_id), Step(element.tag)), why=why)
    if above:
        return ParserPart("summary", (Step(parent.tag, "", above), Step(element.tag)), why=why)
    return None


MAX_MARKUP_PARTS = 12
# A kind never the story by its markup is kept all the same in a role whose words the
# vote keeps at this share, on two pages or more (a site's contact lines that its readers
# all keep, a list of links that is the story).
KEPT_SHARE = 2 / 3  # the kinds left out by their markup that the parser's view lists
# A kind recognised by its shape or a class token (a caption, a date line, a line of one
# link) is a guess the site's readers can overrule: where the vote keeps most
# of its words over all its roles, on two pages or more, the site keeps the kind in every
# element of its tags (the gold of a blog that keeps its ``wp-caption`` boxes; each box
# variant, ``alignright`` or ``aligncenter``, on a page or two).
SHAPE_KINDS = frozenset({"a caption", "a date line", "a line of one link"})
# Kinds left out whatever the vote: readers that keep a wire story's copyright notice keep
# it as the page's text, never as its story; a byline names the author, whom the article
# item carries in its ``authors``.
ALWAYS_OUT_KINDS = frozenset(
    {"a copyright line", "a comment count", "readers' comments", "a byline"}
)
SHAPE_KEPT_SHARE = 0.5


def _markup_parts(
    pages: Sequence[PageEvidence], keys: Sequence[ParserPart], insides_of: Mapping
) -> list[ParserPart]:
    """The roles inside the containers that were left out by their markup alone (kind
    ``markup``: not applied as selectors, as :func:`cut` recognises the kinds on every
    page), with their evidence, for a person reading the parser."""
    seen: dict[ParserPart, list] = {}  # part -> [why, pages, words, counted, kept]
    for number, page in enumerate(pages):
        inside = container_of(keys, insides_of, number)
        units_of: dict[lxml.html.HtmlElement, list[Unit]] = defaultdict(list)
        for unit in page.units:
            units_of[unit.element].append(unit)
        on_page: set[ParserPart] = set()
        for top, why in page.dropped_tops.items():
            if top not in inside:
                continue
            classes = frozenset(c for c in (top.get("class") or "").split() if stable(c))
            # One role of one kind: a site's ``p`` holds date lines and bylines apart.
            part = ParserPart("markup", (Step(top.tag, "", classes),), why=why)
            entry = seen.setdefault(part, [why, 0, 0, 0, 0])
            if part not in on_page:
                entry[1] += 1
                on_page.add(part)
            for element in top.iter():
                for unit in units_of.get(element, ()):
                    entry[2] += unit.words
                    entry[3] += unit.words if unit.vote else 0
                    entry[4] += unit.words if unit.vote > 0 else 0
    ranked = sorted(seen.items(), key=lambda item: -item[1][2])[:MAX_MARKUP_PARTS]
    parts = [
        ParserPart(
            "kept"
            if on >= 2 and counted and kept >= KEPT_SHARE * counted and why not in ALWAYS_OUT_KINDS
            else "markup",
            part.steps,
            pages=on,
            kept_share=round(kept / counted, 3) if counted else 0.0,
            why=f"by its markup: {why}",
        )
        for part, (why, on, words, counted, kept) in ranked
        if words
    ]
    return _kinds_the_site_keeps(pages, keys, insides_of, seen) + parts


def _kinds_the_site_keeps(
    pages: Sequence[PageEvidence], keys: Sequence[ParserPart], insides_of: Mapping, seen: Mapping
) -> list[ParserPart]:
    """A ``kept`` part (the tag alone) for each tag of a shape kind the site's vote keeps
    over all its roles (``SHAPE_KEPT_SHARE`` of its counted words, on two pages or more)."""
    on_pages: dict[str, set[int]] = defaultdict(set)
    for number, page in enumerate(pages):
        inside = container_of(keys, insides_of, number)
        for top, why in page.dropped_tops.items():
            if top in inside:
                on_pages[why].add(number)
    kept_parts = []
    for why in sorted(SHAPE_KINDS):
        entries = [(part, entry) for part, entry in seen.items() if part.why == why]
        counted = sum(entry[3] for _, entry in entries)
        kept = sum(entry[4] for _, entry in entries)
        if len(on_pages[why]) < 2 or not counted or kept < SHAPE_KEPT_SHARE * counted:
            continue
        for tag in sorted({part.steps[-1].name for part, _ in entries}):
            kept_parts.append(
                ParserPart(
                    "kept",
                    (Step(tag),),
                    pages=len(on_pages[why]),
                    kept_share=round(kept / counted, 3),
                    why=f"by its markup: {why}",
                )
            )
    return kept_parts


def roles_evidence(
    part: ParserPart, pages: Sequence[PageEvidence], insides: Sequence[set]
) -> tuple[int, float, float]:
    """Pages, share of counted words kept by the vote, share repeated, of ``part``'s
    elements inside the containers."""
    on = kept = counted = repeated = words = 0
    for page, inside in zip(pages, insides, strict=True):
        members = subtree(e for e in matches(part, page.body) if e in inside)
        if not members:
            continue
        on += 1
        for unit in page.units:
            if unit.element in members:
                words += unit.words
                repeated += unit.words if unit.repeated else 0
                if unit.vote:
                    counted += unit.words
                    kept += unit.words if unit.vote > 0 else 0
    return on, kept / counted if counted else 0.0, repeated / words if words else 0.0


def _with_evidence(
    part: ParserPart,
    pages: Sequence[PageEvidence],
    inside_of: Mapping[int, set],
    excluded_of: tuple[int, float, float] | None = None,
) -> ParserPart:
    if excluded_of is not None:
        on, kept_share, repeated_share = excluded_of
        why = "the vote leaves it out" if repeated_share < 0.5 else "its text repeats"
    else:
        kept = counted = repeated = words = 0
        for number, inside in inside_of.items():
            for unit in pages[number].units:
                if unit.element in inside and unit.element not in pages[number].dropped:
                    words += unit.words
                    repeated += unit.words if unit.repeated else 0
                    if unit.vote:
                        counted += unit.words
                        kept += unit.words if unit.vote > 0 else 0
        on, kept_share = len(inside_of), kept / counted if counted else 0.0
        repeated_share = repeated / words if words else 0.0
        why = "holds the text the vote keeps"
    return ParserPart(
        part.kind, part.steps, part.anchored, part.positions, on,
        round(kept_share, 3), round(repeated_share, 3), why,
    )  # fmt: skip


# -- applying ---------------------------------------------------------------------------
@dataclass
class Cut:
    """What a parser keeps of a page: the elements whose text it takes, and those that
    only lead to them (ancestors of the container), for
    :func:`~spidercrawl.document.structure.element_paragraphs`."""

    keep: set[lxml.html.HtmlElement]
    pass_through: set[lxml.html.HtmlElement]
    containers: list[lxml.html.HtmlElement]
    # What it leaves out by its kinds in the containers (outermost, in order), with why.
    left_out: dict[lxml.html.HtmlElement, str] = field(default_factory=dict)

    @property
    def comments(self) -> list[lxml.html.HtmlElement]:
        """The readers' comments it left out."""
        return [element for element, why in self.left_out.items() if why == COMMENTS]


def cut(
    body: lxml.html.HtmlElement,
    containers: Sequence[ParserPart],
    exclusions: Sequence[ParserPart],
    summaries: Sequence[ParserPart] = (),
    kept: Sequence[ParserPart] = (),
) -> Cut | None:
    """The first container that is on the page, with the summaries outside it, less the
    exclusions and the kinds that are never the story (None: no container is on the
    page)."""
    found: list[lxml.html.HtmlElement] = []
    for part in containers:
        found = matches(part, body)
        if found:
            break
    if not found:
        return None
    inside = subtree(found)
    dropped: set[lxml.html.HtmlElement] = set()
    for part in exclusions:
        dropped |= subtree(e for e in matches(part, body) if e in inside)
    left_out: dict[lxml.html.HtmlElement, str] = {}
    for top in found:
        left_out.update(dropped_kinds(top, kept))
    dropped |= subtree(left_out)
    tops = list(found)
    holders = {a for top in found for a in top.iterancestors()}
    for part in summaries:
        for element in matches(part, body):
            if element not in inside and element not in holders:
                tops.append(element)
                inside |= subtree([element])
    keep = inside - dropped
    pass_through: set[lxml.html.HtmlElement] = {body}
    for top in tops:
        for ancestor in top.iterancestors():
            if ancestor in pass_through:
                break
            pass_through.add(ancestor)
    return Cut(keep | pass_through, pass_through, found, left_out)


def cut_text(body: lxml.html.HtmlElement, induced: Induced) -> str:
    """The text ``induced`` cuts from ``body`` ("" where its container is not there)."""
    kept = [part for part in induced.markup if part.kind == "kept"]
    found = cut(body, induced.containers, induced.exclusions, induced.summaries, kept)
    if found is None:
        return ""
    paragraphs = element_paragraphs(body, found.keep, found.pass_through)
    return paragraphs_text(without_lines(paragraphs, frozenset(induced.template_lines)))


def without_lines(paragraphs: Iterable[Paragraph], lines: frozenset[str]) -> list[Paragraph]:
    """``paragraphs`` less those whose text is one of the site's template ``lines``, its
    quotation marks as any: a template's line may come back with other ones ("Hier
    geht's" on one page, "Hier geht\u2019s" on the next)."""
    if not lines:
        return list(paragraphs)
    keys = _line_keys(lines)
    return [p for p in paragraphs if folded(p.text).translate(_PLAIN_QUOTES) not in keys]


_PLAIN_QUOTES = str.maketrans("\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f", "''''\"\"\"\"")


@functools.lru_cache(maxsize=64)
def _line_keys(lines: frozenset[str]) -> frozenset[str]:
    """A parser's template lines as :func:`without_lines` compares them, made once."""
    return frozenset(line.translate(_PLAIN_QUOTES) for line in lines)


MAX_VERDICT_PAGES = 12  # pages left out one at a time to judge the parser
# The arbiter reads a layout where the story text only it has outweighs the parser's by
# more than this share of the words it reads on the judged pages.
VERDICT_MARGIN = 0.02
# A run of words only one side has is story where at least this share of the page's
# readers keep it, and not the story where fewer do; a run standing on another training
# page is the site's template whoever keeps it.
STORY_SUPPORT = 0.5
MIN_RUN_WORDS = 3  # shorter runs are the readers' ways with punctuation and spacing
MAX_ALIGNED_WORDS = 6000  # of each side, aligned word by word


@dataclass
class Dispute:
    """The words of a page only the parser or only the page's reading has, judged: story
    (kept by the page's readers) counts for the side that has it, text the readers leave
    out or the template counts against it."""

    parser: int = 0
    arbiter: int = 0
    judged_pages: int = 0
    read_words: int = 0

    def add(self, side: str, words: int) -> None:
        setattr(self, side, getattr(self, side) + words)


def story_verdict(
    pages: Sequence[PageEvidence],
    arbiter: Sequence[str],
    bodies: Sequence[lxml.html.HtmlElement],
    readings: Sequence[Sequence[str]] = (),
) -> str:
    """Whether the layout is read by the arbiter rather than cut by its parser ("": by
    its parser), judged by the words the two dispute on the training pages, each page cut
    by the parser induced without it. The two texts are aligned word by word; a run only
    one side has counts for it where the page's readers (``readings``) keep it, against it
    where they do not or where it stands on another training page. A page whose container
    the parser induced without it does not find is no evidence (such a page goes to the
    arbiter at run time anyway), nor is text the parser leaves out by its kinds or takes
    as a summary by its place on purpose.
    Agreement with the vote alone cannot judge this: the reading is one of the vote's."""
    page_phrases = [_phrase(" ".join(body.itertext())) for body in bodies]
    dispute = Dispute()
    judged = [n for n, text in enumerate(arbiter) if text][:MAX_VERDICT_PAGES]
    for number in judged:
        others = [p for n, p in enumerate(pages) if n != number]
        if not others:
            continue
        induced = induce(others)
        kept = [part for part in induced.markup if part.kind == "kept"]
        found = cut(bodies[number], induced.containers, induced.exclusions, induced.summaries, kept)
        if found is None:
            continue
        paragraphs = element_paragraphs(bodies[number], found.keep, found.pass_through)
        parsed = paragraphs_text(without_lines(paragraphs, frozenset(induced.template_lines)))
        on_purpose = {  # what the parser leaves out or takes by markup alone
            "arbiter": _phrase(" ".join(" ".join(top.itertext()) for top in found.left_out)),
            "parser": _phrase(
                " ".join(
                    " ".join(element.itertext())
                    for part in induced.summaries
                    if part.why.startswith(BY_PLACE)
                    for element in matches(part, bodies[number])
                )
            ),
        }
        headline = " ".join(_phrase(" ".join(h.itertext())) for h in bodies[number].iter("h1"))
        supports = [p for p in map(_phrase, readings[number] if readings else ()) if p]
        elsewhere = [p for n, p in enumerate(page_phrases) if n != number]
        dispute.judged_pages += 1
        dispute.read_words += len(tokenize(arbiter[number]))
        for side, run in _only_one_side(parsed, arbiter[number]):
            phrase = " " + " ".join(run) + " "
            if phrase in headline or phrase in on_purpose[side]:
                continue
            if any(phrase in other for other in elsewhere):
                dispute.add(side, -len(run))
            elif supports:
                share = sum(phrase in support for support in supports) / len(supports)
                dispute.add(side, len(run) if share >= STORY_SUPPORT else -len(run))
            logger.debug("page %d: only the %s has %r", number, side, phrase[:120])
    margin = VERDICT_MARGIN * dispute.read_words
    if dispute.judged_pages and dispute.arbiter - dispute.parser > margin:
        return (
            f"on {dispute.judged_pages} training pages, the text only the "
            f"page's reading has outweighs the text only the parser has "
            f"({dispute.arbiter} story words against {dispute.parser})"
        )
    return ""


def _only_one_side(parsed: str, read: str) -> Iterator[tuple[str, list[str]]]:
    """The runs of words, aligned word by word, that only the parser's text (``parser``)
    or only the reading (``arbiter``) has, each cut at its own side's line breaks (a
    reader that flattens a table into one line disputes only the words the parser lacks)."""
    sides = {"parser": _words_by_line(parsed), "arbiter": _words_by_line(read)}
    words = {side: [w for w, _ in pairs] for side, pairs in sides.items()}
    matcher = difflib.SequenceMatcher(None, words["parser"], words["arbiter"], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for side, start, end in (("parser", i1, i2), ("arbiter", j1, j2)):
            pairs = sides[side][start:end]
            for _, group in itertools.groupby(pairs, key=lambda pair: pair[1]):
                run = [word for word, _ in group]
                if len(run) >= MIN_RUN_WORDS:
                    yield side, run


def _words_by_line(text: str) -> list[tuple[str, int]]:
    """``text``'s words with the number of the line each stands on (at most
    ``MAX_ALIGNED_WORDS``)."""
    pairs: list[tuple[str, int]] = []
    for number, line in enumerate(text.splitlines()):
        pairs.extend((word, number) for word in tokenize(line))
        if len(pairs) >= MAX_ALIGNED_WORDS:
            return pairs[:MAX_ALIGNED_WORDS]
    return pairs
