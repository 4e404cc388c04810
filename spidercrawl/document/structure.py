"""Content as paragraphs with their kind, and its two outputs: plain text and clean HTML.

Every extractor (text density, a learned site model, rules) ends with a list of
:class:`Paragraph`; this module turns it into the article's ``text`` (paragraphs separated
by blank lines) and its structured ``html`` (paragraphs, headings, lists, quotes, code kept).
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any, NamedTuple

import lxml.html

from spidercrawl.document.html import UnusableDocumentError, parse_raw_html

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LIST_TAGS = frozenset({"ul", "ol"})
# Elements that start a new paragraph in the text (the rest flow inline).
BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)

# Elements that flow inside a paragraph: judged with their paragraph, never on their own.
INLINE_TAGS = frozenset(
    [
        "a",
        "abbr",
        "acronym",
        "b",
        "bdi",
        "bdo",
        "big",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "font",
        "i",
        "img",
        "ins",
        "kbd",
        "label",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strike",
        "strong",
        "sub",
        "sup",
        "time",
        "tt",
        "u",
        "var",
        "wbr",
    ]
)


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of content: its text and what it is (``p``, ``h2``, ``ul``/``ol`` for a
    list item of that list, ``pre``, ``td``/``th`` for a table cell).

    ``group`` ties list items of one list (and paragraphs of one quote) together; ``quote``
    says the paragraph sits inside a blockquote; ``depth`` is a list item's nesting (0 in
    a list of its own); ``table``, ``row`` and ``cell`` tie a cell's paragraphs to their
    table, row and cell; ``raw`` is a ``pre`` paragraph's text as written (the code's
    lines and indentation; ``text`` has its whitespace normalised like every paragraph's).
    """

    text: str
    kind: str = "p"
    group: int = 0
    quote: bool = False
    depth: int = 0
    table: int = 0
    row: int = 0
    cell: int = 0
    raw: str = ""


CELL_KINDS = frozenset({"td", "th"})
# A run of cells is a data table (rows of at least two cells) when no cell is longer than
# this: a table around the whole article, or its columns, is layout.
MAX_CELL_CHARS = 400
# Lists nested deeper than this are written at this depth (a hostile page nests thousands;
# Markdown readers (markdown-it) stop nesting blocks at about 20 levels, a list 2 of them).
MAX_LIST_DEPTH = 6


def paragraphs_text(paragraphs: Iterable[Paragraph]) -> str:
    return "\n\n".join(p.text for p in paragraphs if p.text)


def paragraphs_html(paragraphs: Iterable[Paragraph]) -> str:
    """Clean HTML of the paragraphs, an element a line: list items in their (nested)
    lists, quotes in one quote, data tables as tables (layout tables as paragraphs),
    pre-formatted text as written."""
    items = [p for p in paragraphs if p.text]
    parts: list[str] = []
    open_quote: int | None = None
    at = 0
    while at < len(items):
        para = items[at]
        quote_key = para.group if para.quote else None
        if open_quote is not None and open_quote != quote_key:
            parts.append("</blockquote>")
            open_quote = None
        if quote_key is not None and open_quote is None:
            parts.append("<blockquote>")
            open_quote = quote_key
        end = at + 1
        if para.kind in LIST_TAGS:
            while (
                end < len(items)
                and items[end].kind in LIST_TAGS
                and (items[end].quote == para.quote)
            ):
                end += 1
            parts += _list_html(items[at:end])
        elif para.kind in CELL_KINDS and para.table:
            while end < len(items) and items[end].table == para.table:
                end += 1
            parts += _table_html(items[at:end])
        else:
            parts.append(_paragraph_html(para))
        at = end
    if open_quote is not None:
        parts.append("</blockquote>")
    return "\n".join(parts)


def lines_html(lines: Sequence[str], page_html: str = "") -> str:
    """Clean HTML of an article given as lines of text (a peer extractor's), each line
    taking the kind of the page's paragraph of the same text where the page has one (a
    sub-headline stays a heading, a list item an item, a code block its lines); other
    lines are paragraphs. A line written as a list item (``- text``) or a table row
    (``| cell | cell |``), as trafilatura writes them, is the page's item or the page's
    cells of one row where the page has them. The page is parsed once, as a browser
    would build it."""
    page = _PageParagraphs()
    if page_html:
        try:
            root = parse_raw_html(page_html)
        except UnusableDocumentError:
            root = None
        body = root.find("body") if root is not None else None
        for para in (
            element_paragraphs(body if body is not None else root) if root is not None else ()
        ):
            page.add(para)
    return paragraphs_html(paragraph for line in lines for paragraph in page.standing_for(line))


LIST_ITEM_MARK = "- "  # how trafilatura writes a list item on its line


# How many rows, from the last row a reading's line took, a line's cells are looked for in:
# a table of one word in every cell ("Yes") is matched in bounded time.
MAX_ROW_TRIES = 50
# A list item's paragraphs a line may join (a heading, a paragraph, a note), and how many
# places of a first word one looks at: a page of a thousand items beginning alike is read
# in bounded time.
MAX_ITEM_RUN = 8
MAX_ITEM_STARTS = 50


@dataclass
class _PageParagraphs:
    """A page's paragraphs by text, for the lines of a reading to find theirs: the first
    of each text, the first list item of each, the lists' paragraphs in order (an item of
    a heading and a paragraph), and the table cells of each by row (a name that stands in
    two tables: the row that holds all of a line's cells decides, the first after the row
    the line before took, as a reading follows the page)."""

    first: dict[str, Paragraph] = field(default_factory=dict)
    items: dict[str, Paragraph] = field(default_factory=dict)
    cells: dict[str, dict[int, list[Paragraph]]] = field(default_factory=dict)
    rows: dict[str, list[int]] = field(default_factory=dict)  # each text's rows, in order
    last_row: int = 0
    in_lists: list[Paragraph] = field(default_factory=list)  # lists' paragraphs, in order
    item_starts: dict[str, list[int]] = field(default_factory=dict)  # by first word

    def add(self, para: Paragraph) -> None:
        self.first.setdefault(para.text, para)
        if para.group and not para.quote and (para.kind in LIST_TAGS or para.kind in HEADINGS):
            starts = self.item_starts.setdefault(para.text.split(" ", 1)[0], [])
            if len(starts) < MAX_ITEM_STARTS:
                starts.append(len(self.in_lists))
            self.in_lists.append(para)
        if para.kind in LIST_TAGS:
            self.items.setdefault(para.text, para)
        elif para.kind in CELL_KINDS and para.row:
            in_rows = self.cells.setdefault(para.text, {})
            if para.row not in in_rows:
                in_rows[para.row] = []
                self.rows.setdefault(para.text, []).append(para.row)
            in_rows[para.row].append(para)

    def standing_for(self, line: str) -> list[Paragraph]:
        """The page's paragraphs ``line`` stands for: the one of its text, the list item
        a ``- `` line names, the cells of one row a ``| ... |`` line names; else the line
        as a paragraph."""
        if (paragraph := self.first.get(line)) is not None:
            return [replace(paragraph, text=line)]
        if line.startswith(LIST_ITEM_MARK):
            text = line[len(LIST_ITEM_MARK) :]
            item = self.items.get(text)
            if item is not None:
                return [item]
            if run := self._item_run(text):
                return run
        if len(line) > 1 and line[0] == line[-1] == "|":
            texts = [text.strip() for text in line[1:-1].split("|") if text.strip()]
            if texts and all(text in self.cells for text in texts):
                return self._row_cells(texts) or [Paragraph(line)]
        return [Paragraph(line)]

    def _item_run(self, text: str) -> list[Paragraph]:
        """One item of the page's list whose paragraphs in a row, joined by spaces, are
        ``text`` (an item holding a heading and a paragraph, which trafilatura writes on
        one line): the line as that list's item; [] where there is none."""
        for start in self.item_starts.get(text.split(" ", 1)[0], ()):
            run: list[Paragraph] = []
            rest = text
            for para in self.in_lists[start : start + MAX_ITEM_RUN]:
                if para.group != self.in_lists[start].group or not rest.startswith(para.text):
                    break
                run.append(para)
                rest = rest[len(para.text) :]
                if not rest:
                    items = [p for p in run if p.kind in LIST_TAGS]
                    if len(run) > 1 and items:
                        return [replace(items[0], text=text)]
                    break
                if rest[0] != " ":
                    break
                rest = rest[1:]
        return []

    def _row_cells(self, texts: list[str]) -> list[Paragraph]:
        """The cells of the first row after ``last_row`` (else of the first row) that
        holds a cell of each of ``texts``; [] where no row does."""
        fewest = min(texts, key=lambda text: len(self.rows[text]))
        rows = self.rows[fewest]
        after = bisect.bisect_right(rows, self.last_row)
        needed = Counter(texts)  # a row of "Yes | Yes" takes both of its cells
        for row in itertools.chain(rows[after : after + MAX_ROW_TRIES], rows[:MAX_ROW_TRIES]):
            if all(len(self.cells[text].get(row, ())) >= n for text, n in needed.items()):
                self.last_row = row
                in_row = {text: iter(self.cells[text][row]) for text in needed}
                return [next(in_row[text]) for text in texts]
        return []


def _paragraph_html(para: Paragraph) -> str:
    if para.kind == "pre":
        return f"<pre>{escape(para.raw or para.text, quote=False)}</pre>"
    if para.kind in HEADINGS:
        return f"<{para.kind}>{escape(para.text, quote=False)}</{para.kind}>"
    return f"<p>{escape(para.text, quote=False)}</p>"


def _list_html(items: list[Paragraph]) -> list[str]:
    """List items as (nested) lists: an item holds the lists deeper than it that follow."""
    parts: list[str] = []
    open_lists: list[tuple[str, int, int]] = []  # (kind, group, depth), outermost first
    item_open: list[bool] = []  # whether each open list's last item waits for its </li>

    def close_list() -> None:
        if item_open.pop():
            parts.append("</li>")
        parts.append(f"</{open_lists.pop()[0]}>")

    items = [replace(item, depth=min(item.depth, MAX_LIST_DEPTH)) for item in items]
    for number, item in enumerate(items):
        key = (item.kind, item.group, item.depth)
        while open_lists and (
            open_lists[-1][2] > item.depth
            or (open_lists[-1][2] == item.depth and open_lists[-1] != key)
        ):
            close_list()
        if open_lists and open_lists[-1] == key:
            if item_open[-1]:
                parts.append("</li>")
                item_open[-1] = False
        else:
            parts.append(f"<{item.kind}>")
            open_lists.append(key)
            item_open.append(False)
        following = items[number + 1] if number + 1 < len(items) else None
        text = escape(item.text, quote=False)
        if following is not None and following.depth > item.depth:
            parts.append(f"<li>{text}")  # closed after the deeper list it holds
            item_open[-1] = True
        else:
            parts.append(f"<li>{text}</li>")
    while open_lists:
        close_list()
    return parts


def table_rows(cells: list[Paragraph]) -> list[list[tuple[str, bool]]]:
    """A table's cells as rows of (text, is a header cell); a cell's paragraphs joined."""
    rows: dict[int, dict[int, list[Paragraph]]] = {}
    for cell in cells:
        rows.setdefault(cell.row, {}).setdefault(cell.cell, []).append(cell)
    return [
        [(" ".join(p.text for p in paras), paras[0].kind == "th") for paras in row.values()]
        for row in rows.values()
    ]


def is_data_table(cells: list[Paragraph]) -> bool:
    """Rows of short cells, at least two rows and a row of two cells: not a layout table
    (one cell around the article, or columns of the page)."""
    if any(cell.kind not in CELL_KINDS for cell in cells):
        return False
    rows = table_rows(cells)
    return (
        len(rows) >= 2
        and max(len(row) for row in rows) >= 2
        and all(len(text) <= MAX_CELL_CHARS for row in rows for text, _ in row)
    )


def _table_html(cells: list[Paragraph]) -> list[str]:
    if not is_data_table(cells):  # layout: its paragraphs, headings and lists as they are
        plain = [
            replace(c, table=0, row=0, cell=0, kind="p" if c.kind in CELL_KINDS else c.kind)
            for c in cells
        ]
        return paragraphs_html(plain).split("\n")
    parts = ["<table>"]
    for row in table_rows(cells):
        tags = "".join(
            f"<{'th' if header else 'td'}>{escape(text, quote=False)}</{'th' if header else 'td'}>"
            for text, header in row
        )
        parts.append(f"<tr>{tags}</tr>")
    parts.append("</table>")
    return parts


def _normalise_space(text: str) -> str:
    return " ".join(text.split())


def element_paragraphs(
    root: lxml.html.HtmlElement,
    keep: set[lxml.html.HtmlElement] | None = None,
    pass_through: set[lxml.html.HtmlElement] | None = None,
) -> Iterator[Paragraph]:
    """The paragraphs under ``root`` in document order.

    With ``keep``, only elements in ``keep`` contribute (a dropped element drops its whole
    subtree, its tail text still belongs to its parent). Elements in ``pass_through`` lead
    to kept ones but give no text of their own. Iterative: deep trees are fine.
    """
    pass_through = pass_through or set()
    buffer: list[str] = []
    context: list[_Context] = [_Context()]

    def flush() -> Paragraph | None:
        """The paragraph of the text gathered since a block began or ended, if any."""
        if not buffer:
            return None
        raw = "".join(buffer)
        buffer.clear()
        text = _normalise_space(raw)
        if not text:
            return None
        c = context[-1]
        code = raw.strip("\n") if c.kind == "pre" else ""
        return Paragraph(text, c.kind, c.group, c.quote, c.depth, c.table, c.row, c.cell, code)

    # The walk's stack, without recursion: a text to gather, an element to open, or the end
    # of a block element (an inline element's end changes nothing). Its items are told
    # apart by type: a page's walk pushes one for each element and text.
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            buffer.append(item)
            continue
        if item is _BLOCK_END:
            if (paragraph := flush()) is not None:
                yield paragraph
            context.pop()
            continue
        element: lxml.html.HtmlElement = item
        tag = element.tag
        if isinstance(tag, str) and tag in BLOCK_TAGS:
            if (paragraph := flush()) is not None:
                yield paragraph
            context.append(_block_context(tag, context[-1]))
            stack.append(_BLOCK_END)
        own_text = element not in pass_through
        for child in reversed(element):
            if own_text and (tail := child.tail):
                stack.append(tail)
            if isinstance(child.tag, str) and (keep is None or child in keep):
                stack.append(child)
        if own_text and (text := element.text):
            stack.append(text)


# The end of a block element, on element_paragraphs' stack.
_BLOCK_END = object()


class _Context(NamedTuple):
    """What the paragraphs inside a block element are (see :class:`Paragraph`)."""

    kind: str = "p"
    group: int = 0
    quote: bool = False
    depth: int = 0
    table: int = 0
    row: int = 0
    cell: int = 0


# Each list, quote, table, row and cell a walk opens is told apart by a number of its own,
# unique in the process: an element's id() is its proxy's address, which lxml may free and
# hand to the next element, so that two lists, tables, rows or cells could be taken for one.
_serials = itertools.count(1)


def _block_context(tag: str, parent: _Context) -> _Context:
    """The context of the paragraphs inside a block element."""
    kind = parent.kind
    if tag in HEADINGS or tag == "pre":
        return parent._replace(kind=tag)
    if tag in LIST_TAGS:
        depth = parent.depth + 1 if kind in LIST_TAGS else 0
        return parent._replace(kind=tag, group=next(_serials), depth=depth)
    if tag == "li":
        return parent._replace(kind=kind if kind in LIST_TAGS else "ul")
    if tag == "blockquote":
        return _Context("p", next(_serials), True)
    if tag == "table":
        return parent._replace(kind="p", table=next(_serials), row=0, cell=0)
    if tag == "tr":
        return parent._replace(kind="p", row=next(_serials), cell=0)
    if tag in CELL_KINDS and parent.table:
        return parent._replace(kind=tag, cell=next(_serials))
    if kind in LIST_TAGS or kind in CELL_KINDS:  # a <p> or <div> inside an item or a cell
        return parent
    return parent._replace(kind="p" if kind in HEADINGS else kind)
