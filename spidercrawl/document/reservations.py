"""What a site reserves of its text: the opt-outs a corpus builder may have to honour.

Publishers say it in three ways besides robots.txt:

- ``<meta name="robots">`` and the ``X-Robots-Tag`` header: ``noai`` (no AI training),
  ``noimageai``, ``noindex`` (not to be indexed). A directive may be meant for one crawler:
  ``X-Robots-Tag: googlebot: noindex`` (an agent named before directives owns them), or
  ``<meta name="GPTBot" content="noai">``; it counts only for an agent of
  ``ROBOTS_AGENTS`` (Google's ``noindex`` says nothing to a corpus of ours);
- TDMRep (W3C's text-and-data-mining reservation protocol): the ``tdm-reservation``
  header or ``<meta name="tdm-reservation" content="1">`` on the page, or the site's
  ``/.well-known/tdmrep.json`` listing URL patterns whose content is reserved.

The article item records the reservations that apply (``reserved: ["tdm", "noai"]``);
``RESPECT_RESERVATIONS`` names those that keep an article from being delivered (none by
default; True: the AI and TDM ones, as ``noindex`` is a search engine's matter). Only
these names are recorded, so a page's odd directives cannot fill the item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

DIRECTIVES = ("noai", "noimageai", "noindex")
# Directives that stand for others: ``none`` is ``noindex, nofollow`` (Google's and
# Bing's reading; nofollow is not a reservation of the text).
ALIASES = {"none": ("noindex",)}
TDM = "tdm"
RESERVATIONS = (*DIRECTIVES, TDM)
# What ``RESPECT_RESERVATIONS = True`` keeps back: the opt-outs from AI and text and data
# mining, not ``noindex``.
AI_RESERVATIONS = frozenset({"noai", "noimageai", TDM})
MAX_TDM_RULES = 200  # a tdmrep.json's rules beyond this are ignored
MAX_TDMREP_BYTES = 256 * 1024
# A robots meta tag named for an agent is kept in the capture's ``meta`` under this prefix
# (``meta["robots:gptbot"]``), the first MAX_AGENT_METAS of a page.
AGENT_META_PREFIX = "robots:"
MAX_AGENT_METAS = 8
_AGENT = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")  # as capture.js's AGENT
# Rules whose name a colon follows without naming an agent (``max-snippet:20``).
_VALUED_RULES = frozenset({"unavailable_after", "max-snippet", "max-image-preview",
                           "max-video-preview"})  # fmt: skip
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def robots_directives(value: str, agents: Iterable[str] = (), agent: str = "") -> set[str]:
    """The known directives of a robots meta tag's or ``X-Robots-Tag``'s value that apply
    to us: those for every crawler and those for one of ``agents``. An ``agent:`` before
    a directive names the agent of it and of the ones after it (``googlebot: noindex,
    nofollow``); ``agent`` is the one a meta tag is named for (``<meta name="GPTBot">``)."""
    ours = {str(name).strip().lower() for name in agents}
    current = "" if agent.strip().lower() in ("", "*") else agent.strip().lower()
    found = set()
    for part in value.lower().split(","):
        name, colon, rest = part.partition(":")
        name = name.strip()
        if colon and (name == "*" or _AGENT.match(name)) and name not in _VALUED_RULES:
            current, part = ("" if name == "*" else name), rest
        token = part.strip()
        if not current or current in ours:
            found.update(d for d in ALIASES.get(token, (token,)) if d in DIRECTIVES)
    return found


def agent_robots_metas(metas: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The robots meta tags named for an agent among ``(name, content)`` pairs: those
    whose content holds a known directive (``<meta name="GPTBot" content="noai">``), keyed
    ``robots:AGENT``, the first MAX_AGENT_METAS (``capture.js`` keeps the same). Which
    agents count is decided later (:func:`page_reservations`): a page's capture does not
    depend on the settings."""
    found: dict[str, str] = {}
    for name, content in metas:
        agent = name.strip().lower()
        if agent == "robots" or not _AGENT.match(agent):
            continue
        tokens = (part.rsplit(":", 1)[-1].strip() for part in content.lower().split(","))
        if any(token in DIRECTIVES or token in ALIASES for token in tokens):
            found.setdefault(AGENT_META_PREFIX + agent, content.strip()[:200])
            if len(found) >= MAX_AGENT_METAS:
                break
    return found


def tdm_reserved(value: object) -> bool:
    """Whether a ``tdm-reservation`` value reserves the content (``1``)."""
    return str(value).strip() == "1"


def page_reservations(
    meta: Mapping[str, object],
    robots_headers: Iterable[str],
    tdm_header: str,
    by_site: bool,
    agents: Iterable[str] = (),
) -> list[str]:
    """The reservations of one page that apply, sorted: the directives of its robots meta
    tags and ``X-Robots-Tag`` headers for every crawler or for one of ``agents``, and
    ``tdm`` from its ``tdm-reservation`` meta or header or the site's tdmrep.json
    (``by_site``)."""
    agents = tuple(agents)
    found = robots_directives(str(meta.get("robots") or ""), agents)
    for key, value in meta.items():
        if key.startswith(AGENT_META_PREFIX):
            found |= robots_directives(str(value), agents, key.removeprefix(AGENT_META_PREFIX))
    for value in robots_headers:
        found |= robots_directives(value, agents)
    if by_site or tdm_reserved(tdm_header) or tdm_reserved(meta.get("tdm-reservation") or ""):
        found.add(TDM)
    return sorted(found)


def respected_reservations(value: object) -> frozenset[str]:
    """``RESPECT_RESERVATIONS`` as the reservations that keep an article from delivery:
    names among RESERVATIONS (a list, or comma-separated); True the default set (the
    AI and TDM ones), False none. A ValueError names anything else."""
    if value is None or isinstance(value, bool):
        return _default_respected() if value else frozenset()
    items = value if isinstance(value, list | tuple | set | frozenset) else str(value).split(",")
    names = [str(item).strip().lower() for item in items if str(item).strip()]
    if len(names) == 1 and names[0] in _TRUE:
        return _default_respected()
    if not names or (len(names) == 1 and names[0] in _FALSE):
        return frozenset()
    unknown = [name for name in names if name not in RESERVATIONS]
    if unknown:
        raise ValueError(
            f"RESPECT_RESERVATIONS takes True, False or names among {', '.join(RESERVATIONS)}"
            f": not {unknown[0]!r}"
        )
    return frozenset(names)


def _default_respected() -> frozenset[str]:
    return AI_RESERVATIONS


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
