"""An article's clean HTML as Markdown: headings, nested lists, tables, quotes and code.

The article's ``html`` (:func:`~spidercrawl.document.structure.paragraphs_html`) has a
small vocabulary of our own: ``h1``-``h6``, ``p``, ``ul``/``ol``/``li`` (nested),
``blockquote``, ``pre`` and ``table``/``tr``/``th``/``td``, with no inline markup. It is
turned into CommonMark with GitHub's tables here, element by element, so the Markdown is
the same article as ``text`` and ``html``, whichever extractor made it.

A general HTML-to-Markdown library (markdownify) wrote equivalent Markdown for this
vocabulary at 15 times the cost (docs/measurements.md): it parses with BeautifulSoup and
handles all of HTML, which the article's HTML does not need.

Text is escaped so that it reads the same once rendered: ``\\ ` * _ [ ] < >`` anywhere,
``#``, ``+``, ``-``, ``=`` and ``1.`` where a line starts, ``|`` in table cells, and
``&`` where it would start an entity. Code keeps its text unchanged inside a fence
longer than any run of backticks it holds.
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

from spidercrawl.document.html import CLEAN_HTML_PARSER

HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
LISTS = frozenset({"ul", "ol"})
MAX_LIST_DEPTH = 6  # deeper lists at this depth: Markdown readers stop nesting at 20 levels

_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>])")
_ENTITY = re.compile(r"&(?=#?\w+;)")
_LINE_START = re.compile(r"^(\s*)([#+=-]|\d+[.)])", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")


def escape_markdown(text: str) -> str:
    """Plain text as Markdown that renders as the same text."""
    text = _INLINE_SPECIAL.sub(r"\\\1", text)
    text = _ENTITY.sub(r"\\&", text)
    return _LINE_START.sub(_escape_line_start, text)


def _escape_line_start(match: re.Match[str]) -> str:
    space, mark = match.groups()
    if mark[0].isdigit():  # "1." or "1)": the mark is its last character
        return f"{space}{mark[:-1]}\\{mark[-1]}"
    return f"{space}\\{mark}"


def html_markdown(html: str) -> str:
    """The Markdown of an article's clean HTML ('' for none)."""
    if not html.strip():
        return ""
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div", parser=CLEAN_HTML_PARSER)
    except (etree.ParserError, ValueError):
        return ""
    return "\n\n".join(block for block in _blocks(root) if block).strip() + "\n"


def article_markdown(text: str, html: str) -> str:
    """An article's Markdown: of its HTML, or of its text's paragraphs where it has no
    HTML (an extractor that gave text alone)."""
    if html.strip():
        markdown = html_markdown(html)
        if markdown:
            return markdown
    paragraphs = [escape_markdown(p.strip()) for p in text.split("\n\n") if p.strip()]
    return "\n\n".join(paragraphs) + "\n" if paragraphs else ""


def without_heading(markdown: str, headline: str, within: int = 3) -> str:
    """The Markdown less its heading block that is ``headline`` (one of its first
    ``within`` blocks), for a feed whose readers show the title above the content."""

    def plain(text: str) -> str:
        return " ".join(text.replace("\\", "").split()).casefold()

    blocks = markdown.split("\n\n")
    for number, block in enumerate(blocks[:within]):
        if block.startswith("#") and plain(block.lstrip("#")) == plain(headline):
            rest = blocks[:number] + blocks[number + 1 :]
            return "\n\n".join(rest) if any(b.strip() for b in rest) else markdown
    return markdown


def _text(element: lxml.html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def _blocks(parent: lxml.html.HtmlElement) -> list[str]:
    """The Markdown blocks of ``parent``'s children, in order."""
    blocks: list[str] = []
    for child in parent:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in HEADINGS:
            text = _text(child)
            if text:
                heading = escape_markdown(text)
                if heading.endswith("#"):  # else read as the heading's closing sequence
                    heading = heading[:-1] + "\\#"
                blocks.append("#" * HEADINGS[tag] + " " + heading)
        elif tag in LISTS:
            blocks.append("\n".join(_list_lines(child, "")))
        elif tag == "blockquote":
            inner = "\n\n".join(block for block in _blocks(child) if block)
            blocks.append("\n".join(f"> {line}" if line else ">" for line in inner.split("\n")))
        elif tag == "pre":
            blocks.append(_code(child.text_content()))
        elif tag == "table":
            blocks.append(_table(child))
        elif tag:
            text = _text(child)
            if text:
                blocks.append(escape_markdown(text))
    return blocks


def _list_lines(element: lxml.html.HtmlElement, indent: str) -> list[str]:
    """A list's items as Markdown lines, the lists an item holds indented to its text
    (CommonMark's rule). Recursive over nesting, bounded by MAX_LIST_DEPTH: deeper lists
    are written at that depth."""
    lines: list[str] = []
    ordered = element.tag == "ol"
    number = 0
    for item in element:
        if item.tag != "li":
            continue
        number += 1
        marker = f"{number}. " if ordered else "- "
        own = " ".join((item.text or "").split())
        lines.append(indent + marker + escape_markdown(own))
        deeper = indent + " " * len(marker) if len(indent) < 4 * MAX_LIST_DEPTH else indent
        for sub in item:
            if sub.tag in LISTS:
                lines += _list_lines(sub, deeper)
    return lines


def _cell(cell: lxml.html.HtmlElement) -> str:
    return escape_markdown(_text(cell)).replace("|", "\\|")


def _code(code: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code.strip(chr(10))}\n{fence}"


def _table(table: lxml.html.HtmlElement) -> str:
    """A GitHub table; its first row is the header row (GitHub's tables must have one)."""
    rows = [
        [
            escape_markdown(_text(cell)).replace("|", "\\|")
            for cell in row
            if cell.tag in ("td", "th")
        ]
        for row in table.iter("tr")
    ]
    rows = [row for row in rows if row]
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    lines = []
    for number, row in enumerate(rows):
        cells = row + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if number == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)
