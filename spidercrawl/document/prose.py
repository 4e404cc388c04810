"""A page's prose: its paragraphs of running text, and how much of it an article took.

The fast path's rules cut a page's article from its raw HTML; whether they cut the right
thing needs a second reading of the page that does not come from the rules. Text density
is one (a second parse and a measure of every element). This is a cheaper one,
made on the tree the rules already parsed: the ``<p>`` elements that hold a sentence or
more and are not mostly links, and the text an element sets apart with ``<br>`` (posts
written without paragraphs); readers' comments are left out unless the article took them
(a comment section is prose an article rightly leaves). Where the rules took at least
half of that prose and a good part of their text is prose, the two readings agree and
nothing else need be asked; where not (a rule that caught one paragraph of ten, or that
took a sidebar), the slower readings decide.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

import lxml.html

# A paragraph of prose holds a sentence or more: fewer words is a caption, a byline, a
# teaser's line or a button.
MIN_PROSE_WORDS = 12
# A paragraph whose words are mostly inside links is navigation, not prose.
MAX_PROSE_LINK_SHARE = 0.5
# An article agrees with the page's prose where it took at least this share of it, its
# words are at least this share prose, and the page has at least this much prose. A page
# outside them is not judged wrong, only read again the slower way (text density's
# check), so they trade time against the articles that check would mend: chosen leaving
# one dataset out among (2/3, 1/2), (1/2, 1/3) and (1/3, 1/4), the quickest that left no
# page's article worse on the other datasets (docs/measurements.md).
MIN_SHARE_TAKEN = 1 / 2
MIN_ARTICLE_PROSE_SHARE = 1 / 3
MIN_PAGE_PROSE_WORDS = 4 * MIN_PROSE_WORDS


@dataclass(frozen=True)
class ProseCoverage:
    """The words of a page's prose paragraphs, and of those an article took."""

    page_words: int = 0
    taken_words: int = 0

    @property
    def share_taken(self) -> float:
        """The share of the page's prose the article took (0 on a page without prose)."""
        return self.taken_words / self.page_words if self.page_words else 0.0

    def agrees_with(self, article_words: int) -> bool:
        """Whether an article of ``article_words`` words that took this much of the page's
        prose reads the page as its prose does (see the module doc)."""
        return (
            self.page_words >= MIN_PAGE_PROSE_WORDS
            and self.share_taken >= MIN_SHARE_TAKEN
            and self.taken_words >= MIN_ARTICLE_PROSE_SHARE * article_words
        )


def prose_coverage(
    body: lxml.html.HtmlElement,
    taken: Collection[lxml.html.HtmlElement],
    not_prose: Collection[lxml.html.HtmlElement] = (),
) -> ProseCoverage:
    """The prose of ``body`` (a tree with its invisible elements already removed) and how
    much of it lies in ``taken``: the elements whose own text the article holds.
    ``not_prose``: elements known to be no part of the page's prose (readers' comments)."""
    in_comments = _CommentSections()
    page = in_article = 0
    for element, words in _prose_units(body):
        if element in taken:
            page += words
            in_article += words
        elif element not in not_prose and not in_comments(element):
            page += words
    return ProseCoverage(page, in_article)


def _prose_units(body: lxml.html.HtmlElement) -> Iterator[tuple[lxml.html.HtmlElement, int]]:
    """The page's paragraphs of prose and their words: ``<p>`` elements of a sentence or
    more, not mostly links; elements whose own text ``<br>`` sets apart, likewise."""
    paragraphs = list(body.iter("p"))
    for paragraph in paragraphs:
        words = len(paragraph.text_content().split())
        if words >= MIN_PROSE_WORDS and _link_words(paragraph) <= MAX_PROSE_LINK_SHARE * words:
            yield paragraph, words
    # Not the XPath ``.//br/..``: it sorts its node set into document order, which is slow
    # on a tree nested hundreds deep.
    with_breaks = dict.fromkeys(br.getparent() for br in body.iter("br"))
    if not with_breaks:
        return
    # Paragraphs do not nest, so this is each element once: no walk up a deep tree per <br>.
    in_paragraphs = {element for paragraph in paragraphs for element in paragraph.iter()}
    for element in with_breaks:
        if element in in_paragraphs:
            continue  # counted with its paragraph
        words = len((element.text or "").split())
        words += sum(len((child.tail or "").split()) for child in element)
        if words >= MIN_PROSE_WORDS:
            yield element, words


def _link_words(paragraph: lxml.html.HtmlElement) -> int:
    return sum(len(link.text_content().split()) for link in paragraph.iter("a"))


class _CommentSections:
    """Whether an element lies in a section of readers' comments (an ancestor whose id or
    class says "comment", as nearly every blog and news template names them); each
    ancestor looked at once per page."""

    def __init__(self) -> None:
        self.known: dict[lxml.html.HtmlElement, bool] = {}

    def __call__(self, element: lxml.html.HtmlElement) -> bool:
        walked = []
        answer = False
        for ancestor in element.iterancestors():
            if ancestor in self.known:
                answer = self.known[ancestor]
                break
            walked.append(ancestor)
            names = f"{ancestor.get('id', '')} {ancestor.get('class', '')}"
            if "comment" in names.lower():
                answer = True
                break
        for ancestor in walked:
            self.known[ancestor] = answer
        return answer
