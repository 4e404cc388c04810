"""The extractors the evaluation can run, by name: ours and peers.

A *page method* turns one page's HTML bytes into text, with no other input; the evaluation
runs those in parallel worker processes. Peers are optional: one that is not installed is
skipped with a note (they are benchmark-only, see ``requirements-bench.txt``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from spidercrawl.document.density import METHODS as DENSITY_METHODS
from spidercrawl.document.density import DensityExtractor

PageExtractor = Callable[[bytes], str]


class MethodUnavailableError(LookupError):
    """The method cannot run here (unknown name, or a peer library not installed)."""


def _density(method: str | None) -> PageExtractor:
    """A text-density method by its paper name, or spidercrawl's own setting (None)."""
    extractor = DensityExtractor.product() if method is None else DensityExtractor(method)
    return lambda html: extractor.extract(html).text


def _fulltext() -> PageExtractor:
    """All visible text of the page: the baseline that shows how much boilerplate there is."""
    from spidercrawl.document.density import remove_invisible
    from spidercrawl.document.html import UnusableDocumentError, parse_html
    from spidercrawl.document.structure import element_paragraphs, paragraphs_text

    def extract(html: bytes) -> str:
        try:
            root = parse_html(html)
        except UnusableDocumentError:
            return ""
        remove_invisible(root)
        return paragraphs_text(element_paragraphs(root))

    return extract


def _crawl_peer(name: str) -> PageExtractor:
    """A peer as the crawl's consensus runs it (one wrapper per peer: the evaluation's
    trafilatura and readability-lxml are the crawl's), on the page's decoded bytes."""
    from spidercrawl.document.html import decode_html
    from spidercrawl.extract.readers import PEER_FACTORIES

    peer = PEER_FACTORIES[name]()
    return lambda html: peer(decode_html(html)[0] if isinstance(html, bytes) else html)


def _trafilatura_metadata() -> PageExtractor:
    """trafilatura making an article as ours does, with its title, date, author and
    language (``with_metadata``): the like-for-like speed reference for our article items,
    which carry them. Its text is the same as plain ``trafilatura``'s."""
    import trafilatura

    def extract(html: bytes) -> str:
        document = trafilatura.bare_extraction(html, include_comments=False, with_metadata=True)
        return (document.text if document is not None else "") or ""

    return extract


def _raw_consensus(headline_in_text: bool = True) -> PageExtractor:
    """``spidercrawl.extract_html`` without a site model, as users call it: the extraction
    chain's readers of raw HTML (text density, readability-lxml, trafilatura) and the
    arbiter's choice among them (:mod:`spidercrawl.extract.decision`), the article item's
    text, headline first unless ``headline_in_text`` is False."""
    from spidercrawl.extract.api import extract_html

    return lambda html: extract_html(html, headline_in_text=headline_in_text)["text"]


def _justext() -> PageExtractor:
    import justext

    stoplist = justext.get_stoplist("English")  # the datasets here are English

    def extract(html: bytes) -> str:
        paragraphs = justext.justext(html, stoplist)
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return extract


def _boilerpy3() -> PageExtractor:
    from boilerpy3 import extractors

    from spidercrawl.document.html import decode_html

    extractor = extractors.ArticleExtractor(raise_on_failure=False)
    return lambda html: extractor.get_content(decode_html(html)[0]) or ""


# name -> (module that must be importable, factory)
_PAGE_METHODS: dict[str, tuple[str | None, Callable[[], PageExtractor]]] = {
    "cetd": (None, lambda: _density(None)),
    **{name: (None, lambda name=name: _density(name)) for name in DENSITY_METHODS},
    "fulltext": (None, _fulltext),
    "trafilatura": ("trafilatura", lambda: _crawl_peer("trafilatura")),
    "trafilatura-metadata": ("trafilatura", _trafilatura_metadata),
    "raw-consensus": ("trafilatura", _raw_consensus),
    "readability-lxml": ("readability", lambda: _crawl_peer("readability")),
    "justext": ("justext", _justext),
    "boilerpy3": ("boilerpy3", _boilerpy3),
}
# Our article items among the page methods: their text follows the dataset's headline
# convention, as the site methods' does (:mod:`spidercrawl.evaluate.conventions`).
HEADLINE_METHODS: dict[str, Callable[[bool], PageExtractor]] = {"raw-consensus": _raw_consensus}
# Other projects' extractors, scored beside ours (the report's collapses compare with them).
PEERS = ("trafilatura", "trafilatura-metadata", "readability-lxml", "justext", "boilerpy3")
# Methods that need a whole site (a crawl and a model), run by the site-method runner.
SITE_METHODS = ("learned", "unseen", "rules")


def page_method_names() -> list[str]:
    return list(_PAGE_METHODS)


def check_page_method(name: str) -> None:
    """Raise :class:`MethodUnavailableError` with the reason if ``name`` cannot run here."""
    if name not in _PAGE_METHODS:
        raise MethodUnavailableError(f"unknown method {name!r}")
    module = _PAGE_METHODS[name][0]
    if module and importlib.util.find_spec(module) is None:
        raise MethodUnavailableError(
            f"{name} is not installed (pip install -r requirements-bench.txt)"
        )


def check_site_method(name: str, models: Path | None = None) -> None:
    """Raise :class:`MethodUnavailableError` if the site method ``name`` cannot run here."""
    if name == "unseen":
        from spidercrawl.extract.unseen import UnseenExtractor

        if not UnseenExtractor.available(models):
            raise MethodUnavailableError(
                "no cross-site model: build it with python -m spidercrawl.learn.cross_site"
            )


def page_extractor(name: str, headline_in_text: bool = True) -> PageExtractor:
    """The page method ``name``; ``headline_in_text`` is for our article items (a peer's
    text is as its library gives it)."""
    check_page_method(name)
    if name in HEADLINE_METHODS:
        return HEADLINE_METHODS[name](headline_in_text)
    return _PAGE_METHODS[name][1]()
