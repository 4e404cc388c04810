"""Content as paragraphs with their kind, and its two outputs: plain text and clean HTML.

Every extractor (text density, a learned site model, rules) ends with a list of
:class:`Paragraph`; this module turns it into the article's ``text`` (paragraphs separated
by blank lines) and its structured ``html`` (paragraphs, headings, lists, quotes, code kept).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html import escape

import lxml.html

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
    """One paragraph of content: its text and what it is (``p``, ``h2``, ``li``, ``pre``...).

    ``group`` ties list items of one list (and paragraphs of one quote) together; ``quote``
    says the paragraph sits inside a blockquote.
    """

    text: str
    kind: str = "p"
    group: int = 0
    quote: bool = False


def paragraphs_text(paragraphs: Iterable[Paragraph]) -> str:
    return "\n\n".join(p.text for p in paragraphs if p.text)


def paragraphs_html(paragraphs: Iterable[Paragraph]) -> str:
    """Clean HTML of the paragraphs: consecutive list items share one list, quotes one quote."""
    parts: list[str] = []
    open_list: tuple[str, int] | None = None
    open_quote: int | None = None
    for para in paragraphs:
        if not para.text:
            continue
        list_key = (para.kind, para.group) if para.kind in LIST_TAGS else None
        if open_list and open_list != list_key:
            parts.append(f"</{open_list[0]}>")
            open_list = None
        quote_key = para.group if para.quote else None
        if open_quote is not None and open_quote != quote_key:
            parts.append("</blockquote>")
            open_quote = None
        if quote_key is not None and open_quote is None:
            parts.append("<blockquote>")
            open_quote = quote_key
        if list_key and not open_list:
            parts.append(f"<{para.kind}>")
            open_list = list_key
        text = escape(para.text, quote=False)
        if list_key:
            parts.append(f"<li>{text}</li>")
        elif para.kind in HEADINGS or para.kind == "pre":
            parts.append(f"<{para.kind}>{text}</{para.kind}>")
        else:
            parts.append(f"<p>{text}</p>")
    if open_list:
        parts.append(f"</{open_list[0]}>")
    if open_quote is not None:
        parts.append("</blockquote>")
    return "\n".join(parts)


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
    context: list[tuple[str, int, bool]] = [("p", 0, False)]

    def flush() -> Iterator[Paragraph]:
        text = _normalise_space("".join(buffer))
        buffer.clear()
        if text:
            kind, group, quote = context[-1]
            yield Paragraph(text, kind, group, quote)

    # Events: ("open", el) / ("close", el) / ("text", str), produced without recursion.
    stack: list[tuple[str, object]] = [("open", root)]
    while stack:
        event, value = stack.pop()
        if event == "text":
            buffer.append(value)  # type: ignore[arg-type]
            continue
        element: lxml.html.HtmlElement = value  # type: ignore[assignment]
        tag = element.tag if isinstance(element.tag, str) else ""
        is_block = tag in BLOCK_TAGS
        if event == "close":
            if is_block:
                yield from flush()
                context.pop()
            continue
        if is_block:
            yield from flush()
            context.append(_block_context(tag, element, context[-1]))
        stack.append(("close", element))
        own_text = element not in pass_through
        for child in reversed(element):
            if child.tail and own_text:
                stack.append(("text", child.tail))
            if isinstance(child.tag, str) and (keep is None or child in keep):
                stack.append(("open", child))
        if element.text and own_text:
            stack.append(("text", element.text))


def _block_context(
    tag: str, element: lxml.html.HtmlElement, parent: tuple[str, int, bool]
) -> tuple[str, int, bool]:
    """(kind, group, quote) for the paragraphs inside a block element."""
    kind, group, quote = parent
    if tag in HEADINGS or tag == "pre":
        return tag, group, quote
    if tag in LIST_TAGS:
        return tag, id(element), quote
    if tag == "li":
        return (kind if kind in LIST_TAGS else "ul"), group, quote
    if tag == "blockquote":
        return "p", id(element), True
    if kind in LIST_TAGS:  # a <p> or <div> inside a list item is still that item
        return kind, group, quote
    return ("p" if kind in HEADINGS else kind), group, quote
