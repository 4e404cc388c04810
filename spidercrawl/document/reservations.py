"""What a site reserves of its text: the opt-outs a corpus builder may have to honour.

Publishers say it in three ways besides robots.txt:

- ``<meta name="robots">`` and the ``X-Robots-Tag`` header: ``noai`` (no AI training),
  ``noimageai``, ``noindex`` (not to be indexed), each for every crawler or for one named
  agent (``X-Robots-Tag: GPTBot: noai``);
- TDMRep (W3C's text-and-data-mining reservation protocol): the ``tdm-reservation``
  header or ``<meta name="tdm-reservation" content="1">`` on the page, or the site's
  ``/.well-known/tdmrep.json`` listing URL patterns whose content is reserved.

The article item records what it found (``reserved: ["tdm", "noai"]``); with
``RESPECT_RESERVATIONS`` the article is not delivered. Only these names are recorded, so a
page's odd directives cannot fill the item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

DIRECTIVES = ("noai", "noimageai", "noindex")
TDM = "tdm"
MAX_TDM_RULES = 200  # a tdmrep.json's rules beyond this are ignored
MAX_TDMREP_BYTES = 256 * 1024


def robots_directives(value: str) -> set[str]:
    """The known directives of a robots meta tag's or ``X-Robots-Tag``'s value (a leading
    ``agent:`` is allowed: the directives count whichever agent they name)."""
    found = set()
    for part in value.lower().split(","):
        token = part.rsplit(":", 1)[-1].strip()
        if token in DIRECTIVES:
            found.add(token)
    return found


def tdm_reserved(value: object) -> bool:
    """Whether a ``tdm-reservation`` value reserves the content (``1``)."""
    return str(value).strip() == "1"


def page_reservations(
    meta: Mapping[str, object], robots_headers: Iterable[str], tdm_header: str, by_site: bool
) -> list[str]:
    """The reservations of one page, sorted: its robots meta and ``X-Robots-Tag`` headers'
    directives, and ``tdm`` from its ``tdm-reservation`` meta or header or the site's
    tdmrep.json (``by_site``)."""
    found = robots_directives(str(meta.get("robots") or ""))
    for value in robots_headers:
        found |= robots_directives(value)
    if by_site or tdm_reserved(tdm_header) or tdm_reserved(meta.get("tdm-reservation") or ""):
        found.add(TDM)
    return sorted(found)


@dataclass(frozen=True)
class TdmRule:
    """One rule of a tdmrep.json: a URL path pattern (``*`` any characters) and whether
    content there is reserved."""

    pattern: re.Pattern[str]
    reserved: bool


@dataclass(frozen=True)
class TdmPolicy:
    """A site's ``/.well-known/tdmrep.json``: the first rule whose location matches a
    path decides (TDMRep's order)."""

    rules: tuple[TdmRule, ...] = ()

    @classmethod
    def parse(cls, text: str) -> TdmPolicy:
        """The policy of a tdmrep.json's text; an empty one for anything malformed."""
        if len(text) > MAX_TDMREP_BYTES:
            return cls()
        try:
            entries = json.loads(text)
        except (ValueError, RecursionError):
            return cls()
        if not isinstance(entries, list):
            return cls()
        rules = []
        for entry in entries[:MAX_TDM_RULES]:
            if not isinstance(entry, dict) or not isinstance(entry.get("location"), str):
                continue
            location = entry["location"].strip()[:500]
            if not location.startswith("/"):
                location = "/" + location
            pattern = re.compile(".*".join(map(re.escape, location.split("*"))) + r"\Z")
            rules.append(TdmRule(pattern, tdm_reserved(entry.get("tdm-reservation"))))
        return cls(tuple(rules))

    def reserves(self, path: str) -> bool:
        for rule in self.rules:
            if rule.pattern.match(path or "/"):
                return rule.reserved
        return False
