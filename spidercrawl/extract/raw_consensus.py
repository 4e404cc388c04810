"""Pages no browser rendered: the readers of raw HTML, and which of them to believe.

Without a browser there are no blocks (no geometry, no CSS), so our cross-site extractor
cannot vote. What reads raw HTML can: text density (ours), readability-lxml and
trafilatura. Used by the extraction chain's first stage (:mod:`spidercrawl.extract.chain`)
for:

- a page with no site model, or whose site's rules fail their check (``extract_html``,
  the extract command, a page whose render failed): the arbiter of
  :mod:`spidercrawl.extract.arbiter` decides among the readers, from the page's markup and
  their agreement (a reader it does not need is not run);
- a page of the fast path whose rules' article the independent reading doubts
  (:meth:`RawHtmlConsensus.check_rules`): the medoid of the rules', density's and the
  peers' articles, the quicker peer (readability) first; where it agrees with the rules to
  ``rules_agreement`` (word F1), the rules stand and trafilatura is not run.

Without both peers installed, or on raw HTML over ``PEER_MAX_CHARS``, text density (or the
rules) stands alone and the note says so. A reader that raises gives an empty article (one
voice less). See docs/extraction.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spidercrawl.extract.arbiter import (
    DENSITY,
    Readers,
    arbitrate,
    markup_evidence,
    word_f1,
)
from spidercrawl.extract.consensus import (
    PEER_FACTORIES,
    PEER_MAX_CHARS,
    PEER_VARIANTS,
    PeerReaders,
    deadline_passed,
    medoid,
)
from spidercrawl.text import tokenize

logger = logging.getLogger(__name__)

RULES = "rules"
# The fast path's check: the rules' article stands where text density's reading (or then
# readability's) agrees with it this much; chosen leaving one dataset out, the quickest
# setting within a standard error of the best (docs/measurements.md).
RULES_AGREEMENT = 0.4


@dataclass
class RawChoice:
    """The chain's article of a raw page: the extraction, which candidate it is (``density``,
    ``rules``, ``readability``, ``trafilatura`` or ``trafilatura-recall``) and how it was
    chosen."""

    extraction: Any
    source: str
    note: str


class RawHtmlConsensus(PeerReaders):
    """The readers of raw HTML, and the article the arbiter (or, for the fast path's
    doubted rules, their medoid) takes from them (see the module doc)."""

    def __init__(
        self,
        peers: Sequence[str] | None = None,
        rules_agreement: float = RULES_AGREEMENT,
    ) -> None:
        super().__init__(peers)
        self.rules_agreement = rules_agreement
        # The peers' other readings the arbiter may ask for (trafilatura keeping more).
        self.variants = {
            name: factory() for name, (peer, factory) in PEER_VARIANTS.items() if peer in self.peers
        }
        if len(self.peers) < 2:
            logger.warning(
                "Raw HTML: %s not installed; text density alone reads pages no browser "
                "rendered", " and ".join(sorted(set(PEER_FACTORIES) - set(self.peers))),
            )  # fmt: skip

    def raw_input(self, page: Mapping[str, Any]) -> str:
        """The raw HTML the peers read ("" where they cannot: fewer than two peers, or a page
        over ``PEER_MAX_CHARS``, on which their time has no bound we set)."""
        raw = page.get("raw_html") or page.get("rendered_html") or ""
        if len(self.peers) < 2 or len(raw) > PEER_MAX_CHARS:
            return ""
        return raw

    def extract(
        self, page: Mapping[str, Any], density: Any, deadline: float | None = None
    ) -> RawChoice:
        """The article of a raw page without usable rules, as the arbiter decides
        (:func:`~spidercrawl.extract.arbiter.arbitrate`; ``density``: text density's
        article, already made). No reader starts after ``deadline`` (``time.monotonic()``:
        the page's time budget); past it, the arbiter decides with what it has."""
        raw = self.raw_input(page)
        if not raw:
            why = "no peers installed" if len(self.peers) < 2 else "raw HTML over the peers' size"
            return RawChoice(density, DENSITY, f"{DENSITY} alone ({why})")
        if deadline_passed(deadline):
            return RawChoice(density, DENSITY, "density alone (the page's time budget was spent)")
        late: list[str] = []

        def read(name: str) -> Any:
            if deadline_passed(deadline):
                late.append(name)
                return self._empty(name)
            if name in self.variants:
                return self._peer(name, raw, page, self.variants[name])
            return self._peer(name, raw, page)

        readers = Readers(read, {DENSITY: density})
        installed = {*self.peers, *self.variants}
        verdict = arbitrate(readers, markup_evidence(raw), installed)
        note = verdict.why
        failed = [
            f"{name} failed ({found.error})"
            for name, found in readers.found.items()
            if getattr(found, "error", "")
        ]
        if failed:
            note += f"; {', '.join(failed)}: the others decided"
        if late:
            note += f" ({', '.join(late)} not asked: the page's time budget was spent)"
        if not verdict.source:
            return RawChoice(density, DENSITY, "no reader of the raw HTML found text")
        chosen = readers[verdict.source]
        if verdict.source != DENSITY:
            chosen.confidence = round(verdict.agreement, 3)
        return RawChoice(chosen, verdict.source, note)

    def check_rules(
        self, page: Mapping[str, Any], rules: Any, density: Any, deadline: float | None = None
    ) -> RawChoice:
        """The fast path's independent check: the rules' article stands where text density's
        reading of the same raw HTML agrees with it (``rules_agreement``); where not, where
        readability does; where neither does, the medoid of the rules', density's and both
        peers' articles (the rules first among equals)."""
        rules_words = tokenize(rules.text)
        with_density = word_f1(rules_words, tokenize(density.text))
        if with_density >= self.rules_agreement:
            return RawChoice(rules, RULES, "")
        why = f"text density's reading disagrees with the rules (agreement {with_density:.2f})"
        found = {RULES: rules, DENSITY: density}
        choice = self._decide(page, found, RULES, self.rules_agreement, deadline)
        return RawChoice(choice.extraction, choice.source, f"{why}; {choice.note}")

    def _decide(
        self,
        page: Mapping[str, Any],
        found: dict[str, Any],
        own: str,
        agreement: float,
        deadline: float | None = None,
    ) -> RawChoice:
        """``found[own]`` where the quicker peer agrees with it to ``agreement``, else the
        medoid of ``found`` and both peers' articles (``own`` winning ties); ``found[own]``
        too where the page's time budget ends before a peer would start."""
        raw = self.raw_input(page)
        if not raw:
            why = "no peers installed" if len(self.peers) < 2 else "raw HTML over the peers' size"
            return RawChoice(found[own], own, f"{own} alone ({why})")
        if deadline_passed(deadline):
            return RawChoice(found[own], own, f"{own} alone (the page's time budget was spent)")
        first = self.first_peer
        found[first] = self._peer(first, raw, page)
        agreed = word_f1(tokenize(found[own].text), tokenize(found[first].text))
        if agreed >= agreement:
            return RawChoice(found[own], own, f"{first} agrees with {own} ({agreed:.2f})")
        if deadline_passed(deadline):
            why = f"{first} disagrees ({agreed:.2f}); the page's time budget was spent"
            return RawChoice(found[own], own, f"{own} alone ({why})")
        for name in self.peers:
            if name not in found:
                found[name] = self._peer(name, raw, page)
        texts = {name: extraction.text for name, extraction in found.items()}
        name, mean_agreement = medoid(texts, {own: 1e-6})
        if not name:
            return RawChoice(found[own], own, "no reader of the raw HTML found text")
        chosen = found[name]
        chosen.confidence = round(mean_agreement, 3)
        how = f"consensus of {len(found)} readers of the raw HTML: {name}'s text"
        return RawChoice(chosen, name, f"{how} (agreement {mean_agreement:.2f})")
