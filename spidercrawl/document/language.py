"""A page's language: the tag it declares, checked against its text.

Templates often declare ``en`` whatever the article's language, so a declared tag is
checked by identifying the text (py3langid, about 0.2 ms per page, once the largest
single cost of the fast path). A site whose declared language was right on every one of
its training pages (:func:`confirmed_language`, kept in the site model) is trusted
without the check for pages that declare that language.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from spidercrawl.document.language_model import load_identifier
from spidercrawl.document.page import first_value

_LANGUAGE_TAG = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{2,8})*$", re.IGNORECASE)
MIN_TEXT = 100  # characters; shorter texts are identified unreliably
CONFIDENCE = 0.9
# Characters identified: its cost grows with them, its answer not (500 and 1,000 gave the
# same language on every page measured: docs/measurements.md).
SAMPLE = 500
MIN_CONFIRMING_PAGES = 3


_LOADING = threading.Lock()
_loaded: list[Any] = []  # the identifier, once loaded


def _identifier() -> Any:
    """The identifier, loaded once whichever thread asks first: a page asking while
    :func:`load_in_background` loads it waits for that load."""
    if not _loaded:
        with _LOADING:
            if not _loaded:
                _loaded.append(load_identifier())
    return _loaded[0]


def load_in_background() -> threading.Thread:
    """Load the identifier's model in a thread, which a crawl's first article would
    otherwise wait for: mostly LZMA, which releases the GIL, the first time on a machine;
    later processes read it decompressed (:mod:`.language_model`). Started when a crawl
    opens, it loads while the crawl fetches robots.txt, sitemaps and the home page, which
    AutoThrottle spaces at first by its start delay."""
    thread = threading.Thread(target=_identifier, name="language-model", daemon=True)
    thread.start()
    return thread


def declared_language(page: Mapping[str, Any]) -> str:
    """The BCP 47 tag the page declares (``<html lang>``, Content-Language, JSON-LD
    ``inLanguage``), or '' when it declares none or a malformed one."""
    jsonld = first_value(obj.get("inLanguage") for obj in page.get("jsonld") or [])
    meta = page.get("meta") or {}
    return well_formed(first_value([page.get("lang"), meta.get("content-language"), jsonld]))


def well_formed(tag: str) -> str:
    """``tag`` as a BCP 47 tag (``pt_BR`` -> ``pt-BR``), or '' if it is not one."""
    tag = tag.strip().replace("_", "-")
    return tag if _LANGUAGE_TAG.match(tag) else ""


def primary(tag: str) -> str:
    """``pt-BR`` -> ``pt``."""
    return tag.split("-")[0].lower()


def identify(text: str) -> tuple[str, float]:
    """The text's language (ISO 639-1) and how sure; ('', 0) for too short a text."""
    if len(text) < MIN_TEXT:
        return "", 0.0
    detected, confidence = _identifier().classify(text[:SAMPLE])
    return str(detected), float(confidence)


def language(declared: str, text: str, confirmed: str = "") -> str:
    """The article's language: the declared tag, unless the text clearly says otherwise.
    ``confirmed``: the site's declared language found right on its training pages; a page
    declaring it is taken at its word, unchecked."""
    declared = well_formed(declared)
    if declared and confirmed and primary(declared) == confirmed:
        return declared
    detected, confidence = identify(text)
    if confidence < CONFIDENCE:
        return declared
    if declared and primary(declared) == detected:
        return declared
    return detected


def confirmed_language(samples: Iterable[tuple[str, str]]) -> str:
    """The language a site declares, if its text agreed with it on every page where the
    text's language is clear (and there are at least three such pages); else ''.
    ``samples``: (declared tag, article text) per training page."""
    agreed: set[str] = set()
    confirming = 0
    for declared, text in samples:
        declared = well_formed(declared)
        detected, confidence = identify(text)
        if confidence < CONFIDENCE:
            continue
        if not declared or primary(declared) != detected:
            return ""  # one page the declaration gets wrong: check every page
        agreed.add(detected)
        confirming += 1
    return agreed.pop() if len(agreed) == 1 and confirming >= MIN_CONFIRMING_PAGES else ""
