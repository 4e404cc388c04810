"""The page's own reading: trafilatura's text of its raw HTML, made once and only when
asked.

The never-seen consensus asks trafilatura as one of its peers
(:mod:`spidercrawl.extract.consensus`); a learned layout's rules ask a page's reading only
where the page holds a role their records dispute (:func:`~spidercrawl.learn.rules.
reconcile`), on the fast path and in the chain alike.
"""

from __future__ import annotations

import importlib.util
import logging
import warnings
from collections.abc import Callable

logger = logging.getLogger(__name__)

# The reading reads pages up to this size (the fast path's FAST_PATH_MAX_BYTES, 4 MB).
MAX_READ_CHARS = 4 * 2**20


def trafilatura_reader(favor_recall: bool = False) -> Callable[[str], str]:
    """trafilatura with its defaults, its fallbacks included. Without them (``fast=True``)
    the vote took 1.5 ms a page less on dragnet, but on the pages where the peers are asked
    its fallbacks are what it is asked for: in a leave-one-dataset-out run a
    never-seen washingtonpost.com page fell from 0.90 to 0.09 and a site model's bbc.com
    page, overruled by the peers, from 0.96 to 0.40 (10 never-seen pages changed, -0.58 in
    sum; 14 learned, -0.23). ``favor_recall``: its reading that keeps more, which the
    arbiter of raw HTML asks for where the plain one found almost nothing."""
    with warnings.catch_warnings():  # urllib3 (through courlan) warns of SOCKS it lacks
        warnings.simplefilter("ignore")
        import trafilatura

    def extract(html: str) -> str:
        return trafilatura.extract(html, include_comments=False, favor_recall=favor_recall) or ""

    return extract


_reader: Callable[[str], str] | None = None


def page_reading(raw_html: str, url: object = None) -> Callable[[], str]:
    """The page's reading (trafilatura's text of ``raw_html``), made on the first call and
    only then. Empty where trafilatura is not installed or fails on the page."""
    text: list[str] = []

    def read() -> str:
        global _reader
        if not text:
            if _reader is None and importlib.util.find_spec("trafilatura") is not None:
                _reader = trafilatura_reader()
            try:
                text.append(_reader(raw_html[:MAX_READ_CHARS]) if _reader is not None else "")
            except Exception as error:  # its failure is one reading less, not ours
                logger.debug("trafilatura failed on %s: %s", url, error)
                text.append("")
        return text[0]

    return read
