"""Which reader's article a page gets: the one decision among the readers.

Given a page's readings (:class:`~spidercrawl.extract.readers.PageReadings`: the readers
available on this page, each run at most once and only when asked) and what the page
says of itself (fetched with or without a browser, its markup's age), :func:`decide`
names the reading to deliver and why, in words. A page is of today's markup where it
carries a viewport, JSON-LD or lazy images and does not say it was published before
``today_since`` (a responsive blog of 2012 is of the older web). Every way a page is read
is a case of it:

- **raw HTML, the site's parser at hand** (the fast path, ``extract_html`` with a model):
  the parser's article where the page's prose agrees with it, or text density's reading
  does, or readability's does (``rules_agreement``); else the medoid of the four, the
  parser first among equals;
- **raw HTML, no parser**: the arbiter: on today's markup trafilatura's reading where it
  finds an article, unless readability's and resiliparse's agree (``witness_agreement``)
  where trafilatura's stands apart from both and from text density's (``witness_apart``):
  two readers against one; its reading that keeps more, then the medoid, where it finds
  almost nothing. On older markup text density's reading where readability agrees with
  it (``older_agreement``) and it holds the description the page shows as prose (else
  trafilatura's, where that holds it), else the medoid of the three, trafilatura leading
  by ``older_traf_lead``;
- **a rendered page of a learned site**: the layout's parser where it serves the page and
  takes its prose; a page of no layout the site knows gets a never-seen page's vote with
  the site's template cut from our blocks; else the layout's classifier (checked by the
  peers unless it is sure and our blocks bear it out, ``SURE_AGREEMENT``), the blocks in
  its article container, the cross-site blocks (voted on), text density less the
  template (checked); each reading of blocks less what the layout's parser leaves out
  by its markup;
- **a rendered page of a site never seen**: on today's markup, where trafilatura finds an
  article, the reading raw HTML gets, two against one included (``modern_rendered_lead``
  None; a number: the medoid of our blocks and both peers with trafilatura leading by
  it); else our blocks where text density agrees with them (``density_agreement``) or
  the quicker peer does (``own_bonus``), as long as they hold the description the page
  shows as prose (else trafilatura's reading, where that holds it); else the medoid of
  our blocks and both peers, ours leading by ``own_bonus``.

A reader that fails is an empty voice; the next one decides. Constants were chosen leaving
one dataset out over the dev sets (docs/measurements.md).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spidercrawl.document.density import shown_text
from spidercrawl.extract.readers import (
    BLOCKS,
    CLASSIFIER,
    CONTAINER,
    DENSITY,
    FIRST_PEER,
    PARSER,
    READABILITY,
    RESILIPARSE,
    SITE_BLOCKS,
    SITE_DENSITY,
    TRAFILATURA,
    TRAFILATURA_RECALL,
    PageReadings,
)
from spidercrawl.text import holds_run, tokenize, word_f1

# A reading of fewer words is no article: the reader collapsed on the page.
MIN_ARTICLE_WORDS = 10
# A description's opening words, a sentence's worth: where the page shows them as prose
# they open its story (the same pages are found from 6 to 15: docs/measurements.md).
DESCRIPTION_OPENING_WORDS = 10
# A site classifier's sure article stands unchecked only where our cross-site blocks share
# at least this much of it (word F1): a half, not chosen on the dev sets
# (docs/measurements.md).
SURE_AGREEMENT = 0.5


# The year from which a page's own date no longer says it is of the older web: responsive
# pages (a viewport) spread from about 2012, JSON-LD and lazy images later. Not chosen on
# the dev sets (docs/measurements.md).
TODAY_SINCE = 2015
# The markers a page's date can overrule: a viewport was written from about 2012 on; JSON-LD
# and lazy images say the page was made with today's tools, whatever its story's date.
DATED_MARKERS = frozenset({"viewport"})


@dataclass(frozen=True)
class DecisionSettings:
    """The decision's constants (see the module doc for where each acts)."""

    # Raw HTML, older markup: text density's reading where readability agrees this much.
    older_agreement: float = 0.9
    older_agreeing_reader: str = DENSITY
    older_traf_lead: float = 0.3
    # Today's markup: None, trafilatura's reading; a number, the medoid with its lead.
    modern_traf_lead: float | None = None
    markers: tuple[str, ...] | None = ("viewport", "json-ld", "lazy images")
    # Raw HTML with the site's parser: it stands where a reading agrees with it this much;
    # a reading that agrees in part lets through a raw page holding half the article the
    # browser shows (chosen leaving one dataset out: docs/measurements.md).
    rules_agreement: float = 0.8
    # Rendered, never seen: our blocks' lead, and text density's agreement that settles it
    # (None: the peers always vote).
    own_bonus: float = 0.3
    density_agreement: float | None = 0.6
    # Rendered, learned: the site model's lead over the peers.
    confirm_bonus: float = 0.1
    # Rendered, today's markup: None, trafilatura's reading where it finds an article; a
    # number, the medoid of our blocks and both peers, trafilatura leading by it (our
    # blocks' own lead does not count there).
    modern_rendered_lead: float | None = None
    # Today's markup: readability's reading instead of trafilatura's where readability and
    # resiliparse agree at least this much, trafilatura's agrees under ``witness_apart``
    # with each and with text density's, and readability's holds at least
    # ``witness_share`` of trafilatura's words (two readers agreeing on a fragment do not
    # outvote an article). None: trafilatura's stands. Chosen on the dev sets' raw
    # readings, where only wcxb-dev's pages tell settings apart (docs/measurements.md).
    witness_agreement: float | None = 0.75
    witness_apart: float = 0.9
    witness_share: float = 0.7

    # A page that says it was published before this year is of the older web whatever its
    # markup's markers (None: the markers alone decide).
    today_since: int | None = TODAY_SINCE

    def reads_as_today(self, markup: MarkupEvidence) -> bool:
        """Whether a page of ``markup`` is read as today's markup: it carries one of the
        ``markers`` and does not say it was published before ``today_since``."""
        if self.markers is None or not set(markup.markers) & set(self.markers):
            return False
        return not self.dated_older(markup)

    def describe(self, markup: MarkupEvidence) -> str:
        """``markup`` in words, as this decision reads it."""
        if self.dated_older(markup):
            return f"older markup (published {markup.published_year}; its only marker a viewport)"
        return markup.describe()

    def dated_older(self, markup: MarkupEvidence) -> bool:
        """Whether the page says it was published before ``today_since`` and carries no
        marker that only today's tools write (JSON-LD, lazy images: a story of 2007 served
        in today's template is read as today's markup)."""
        if not markup.markers or set(markup.markers) - DATED_MARKERS or self.today_since is None:
            return False
        year = markup.published_year
        return year is not None and year < self.today_since


SETTINGS = DecisionSettings()

# Markers of today's markup, each a feature of pages made after about 2012.
_MODERN_MARKERS = {
    "viewport": re.compile(r"""<meta[^<>]{0,200}name\s*=\s*["']?viewport""", re.I),
    "json-ld": re.compile(r"""application/ld\+json""", re.I),
    "lazy images": re.compile(r"""loading\s*=\s*["']?lazy""", re.I),
}
# A piece of every match of each marker, in lower case, found in the lowered page before
# its pattern is searched: a case-blind pattern scans the whole page a character at a time
# where it finds nothing. No piece holds i, k or s, the letters that ``re.IGNORECASE``
# matches to characters ``str.lower`` does not lower to them.
_MARKER_PIECES = {"viewport": "ewport", "json-ld": "ld+j", "lazy images": "lazy"}


@dataclass(frozen=True)
class MarkupEvidence:
    """What a page says of its age: the markers of today's markup its raw HTML carries,
    and the date it says it was published (ISO 8601, "" where unknown), read only where
    asked: a page of older markup never asks."""

    markers: tuple[str, ...] = ()
    published: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    @property
    def modern(self) -> bool:
        return bool(self.markers)

    @functools.cached_property
    def published_year(self) -> int | None:
        date = self.published() if self.published is not None else ""
        return int(date[:4]) if date[:4].isdigit() else None

    def describe(self) -> str:
        return f"today's markup ({', '.join(self.markers)})" if self.markers else "older markup"


def markup_evidence(raw_html: str, published: Callable[[], str] | None = None) -> MarkupEvidence:
    """The markers of today's markup in ``raw_html`` (a viewport, JSON-LD, lazy images), and
    where asked the page's date of publication (``published``)."""
    lowered = raw_html.lower()
    return MarkupEvidence(
        tuple(
            name
            for name, pattern in _MODERN_MARKERS.items()
            if _MARKER_PIECES[name] in lowered and pattern.search(raw_html)
        ),
        published,
    )


@dataclass(frozen=True)
class PageFacts:
    """What the decision knows of a page besides its readings: fetched without a browser
    (``plain``), its markup, whether the peers can read it (and if not, why), and for a
    learned site's rendered page how much of it the site's layouts know and how much text
    its model expects (``familiarity``, ``enough_chars``) and whether its model is sure of
    an article (``sure``)."""

    plain: bool
    raw_html: str = field(default="", repr=False)  # what the peers read ("": none)
    peers_read: bool = False
    without_peers: str = ""  # why the peers cannot read it ("": none asked for)
    check_rules: bool = True
    familiarity: Callable[[], float] | None = None
    enough_chars: Callable[[], int] | None = None
    sure: Callable[[Any], bool] | None = None
    descriptions: tuple[str, ...] = ()  # the page's own: meta, og, twitter
    published: Callable[[], str] | None = None  # the date it says it was published

    @functools.cached_property
    def markup(self) -> MarkupEvidence:
        """The markers of today's markup in the raw HTML, looked for when first asked (a
        page the site's parser reads on the fast path never asks)."""
        return markup_evidence(self.raw_html, self.published)

    @functools.cached_property
    def shown_words(self) -> list[str]:
        """The words the raw HTML shows, read when first asked (on few pages)."""
        return tokenize(shown_text(self.raw_html))

    def description_opening(self) -> list[str]:
        """The first words of the page's first description, where it has that many."""
        words = tokenize(self.descriptions[0]) if self.descriptions else []
        return words[:DESCRIPTION_OPENING_WORDS] if len(words) >= DESCRIPTION_OPENING_WORDS else []


@dataclass
class Decision:
    """The reading to deliver (a reader's name), why in words, the confidence to give it
    (None: its own), the method the item names, whether the page is of no layout the site
    knows, and how the parser's article of a raw page was checked (``prose``,
    ``density``, ``doubted``; "" where no check ran)."""

    source: str
    why: str = ""
    agreement: float | None = None
    method: str = ""
    of_no_layout: bool = False
    rules_check: str = ""


# A learned site's page of no known layout: the note's words.
UNFAMILIAR = "is in a layout the model knows"
# Under this share of a page's text in tag paths the model saw, the page is of another
# template (print views, redesigns).
MIN_FAMILIAR_SHARE = 0.2


def medoid(words: Mapping[str, Sequence[str]], lead: Mapping[str, float]) -> tuple[str, float]:
    """The candidate (name -> its words) that agrees most with the others, plus its
    ``lead``, and its mean agreement with them; "" where none has words. A candidate that
    the others contradict is one that went wrong."""
    best, best_score, best_agreement = "", float("-inf"), 0.0
    for name, own in words.items():
        if not own:
            continue
        others = [word_f1(own, words[other]) for other in words if other != name]
        score = sum(others) + lead.get(name, 0.0)
        if score > best_score:
            mean = sum(others) / len(others) if others else 1.0
            best, best_score, best_agreement = name, score, mean
    return best, best_agreement


def medoid_of(
    readings: PageReadings, names: Sequence[str], lead: Mapping[str, float]
) -> tuple[str, float]:
    """:func:`medoid` of the readings ``names``."""
    return medoid({name: readings.words(name) for name in names}, lead)


def decide(
    readings: PageReadings, facts: PageFacts, settings: DecisionSettings = SETTINGS
) -> Decision:
    """The reading of the page to deliver (see the module doc)."""
    if facts.plain:
        if readings.has(PARSER):
            return _raw_with_parser(readings, facts, settings)
        return _raw(readings, facts, settings)
    if readings.has(CLASSIFIER):
        return _learned(readings, facts, settings)
    if readings.has(BLOCKS):
        return _never_seen(readings, facts, settings, BLOCKS, gate=True, bonus=settings.own_bonus)
    return Decision(DENSITY, method=DENSITY)


# -- raw HTML ---------------------------------------------------------------------------
def _raw_with_parser(
    readings: PageReadings, facts: PageFacts, settings: DecisionSettings
) -> Decision:
    """The fast path's check of the parser's article, else the readers of raw HTML."""
    parser = readings[PARSER]
    if not parser.text:
        return _raw(readings, facts, settings)
    if not facts.check_rules:
        return Decision(PARSER, method=PARSER)
    if parser.prose.agrees_with(len(parser.text.split())):
        return Decision(PARSER, method=PARSER, rules_check="prose")
    with_density = readings.agreement(PARSER, DENSITY)
    if with_density >= settings.rules_agreement:
        return Decision(PARSER, method=PARSER, rules_check="density")
    why = f"text density's reading disagrees with the rules (agreement {with_density:.2f})"
    if not facts.peers_read:
        return Decision(PARSER, f"{why}; rules alone ({facts.without_peers})", method=PARSER,
                        rules_check="doubted")  # fmt: skip
    agreed = readings.agreement(PARSER, FIRST_PEER)
    if readings.late:
        return Decision(PARSER, f"{why}; rules alone (the page's time budget was spent)",
                        method=PARSER, rules_check="doubted")  # fmt: skip
    if agreed >= settings.rules_agreement:
        how = f"{why}; {FIRST_PEER} agrees with rules ({agreed:.2f})"
        return Decision(PARSER, how, method=PARSER, rules_check="doubted")
    names = [PARSER, DENSITY, READABILITY, TRAFILATURA]
    name, agreement = medoid_of(readings, names, {PARSER: 1e-6})
    if not name:
        return Decision(PARSER, f"{why}; no reader of the raw HTML found text", method=PARSER,
                        rules_check="doubted")  # fmt: skip
    how = (
        f"{why}; consensus of 4 readers of the raw HTML: {name}'s text (agreement {agreement:.2f})"
    )
    method = name if name in (PARSER, DENSITY) else "raw-consensus"
    return Decision(name, how, round(agreement, 3), method, rules_check="doubted")


def _raw(readings: PageReadings, facts: PageFacts, settings: DecisionSettings) -> Decision:
    """A raw page without a usable parser: the arbiter of the module doc."""
    failed = readings.declined.get(PARSER, "" if readings.has(PARSER) else "no site model")
    if not facts.peers_read:
        if facts.without_peers:
            why = _joined(failed, f"density alone ({facts.without_peers})")
        else:
            why = f"{failed}: text density on the raw HTML" if failed else ""
        return Decision(DENSITY, why, method=DENSITY)
    verdict = arbitrate(readings, facts.markup, settings, facts)
    if not verdict.source:
        return Decision(DENSITY, _joined(failed, "no reader of the raw HTML found text"),
                        method=DENSITY)  # fmt: skip
    agreement = None if verdict.source == DENSITY else round(verdict.agreement or 0.0, 3)
    method = DENSITY if verdict.source == DENSITY else "raw-consensus"
    return Decision(verdict.source, _joined(failed, verdict.why), agreement, method)


def todays_reading(
    readings: PageReadings, markup: MarkupEvidence, settings: DecisionSettings
) -> Decision | None:
    """trafilatura's reading of a page of today's markup where it found an article; None
    where the markup is older or trafilatura found almost nothing (the others decide)."""
    if not settings.reads_as_today(markup) or not readings.has(TRAFILATURA):
        return None
    if len(readings.words(TRAFILATURA)) < MIN_ARTICLE_WORDS:
        return None
    lead = settings.modern_traf_lead
    if lead is None:
        outvoted = _outvoted(readings, settings)
        if outvoted is not None:
            return Decision(READABILITY, f"{markup.describe()}: {outvoted[0]}", outvoted[1])
        # Its confidence: how far text density's reading of the page agrees with it.
        agreement = readings.agreement(TRAFILATURA, DENSITY) if readings.has(DENSITY) else 0.0
        return Decision(TRAFILATURA, f"{markup.describe()}: trafilatura's reading", agreement)
    names = [n for n in (DENSITY, READABILITY, TRAFILATURA) if readings.has(n)]
    name, agreement = medoid_of(readings, names, {TRAFILATURA: lead})
    return Decision(name, f"{markup.describe()}: consensus of {len(names)} readers", agreement)


def _outvoted(readings: PageReadings, settings: DecisionSettings) -> tuple[str, float] | None:
    """Why trafilatura's reading gives way to readability's, and their agreement, where
    resiliparse's reading agrees with readability's (``witness_agreement``), trafilatura's
    agrees with neither nor with text density's (under ``witness_apart``) and
    readability's is not a fragment of it (``witness_share``): two readers against one.
    None where trafilatura's stands. Text density's agreement is at hand (the reading's
    confidence); resiliparse is asked next (milliseconds a page), readability only where
    resiliparse's reading stands apart from trafilatura's."""
    needed = settings.witness_agreement
    if needed is None or not readings.has(RESILIPARSE) or not readings.has(READABILITY):
        return None
    apart = settings.witness_apart
    if readings.has(DENSITY) and readings.agreement(TRAFILATURA, DENSITY) >= apart:
        return None  # text density bears trafilatura's reading out: no witness asked
    if len(readings.words(RESILIPARSE)) < MIN_ARTICLE_WORDS:
        return None
    with_witness = readings.agreement(TRAFILATURA, RESILIPARSE)
    if with_witness >= apart:
        return None
    with_readability = readings.agreement(TRAFILATURA, READABILITY)
    if with_readability >= apart:
        return None
    share = len(readings.words(READABILITY)) / max(len(readings.words(TRAFILATURA)), 1)
    if share < settings.witness_share:
        return None
    pair = readings.agreement(READABILITY, RESILIPARSE)
    if pair < needed:
        return None
    why = (
        f"readability's and resiliparse's readings agree ({pair:.2f}) where trafilatura's "
        f"stands apart ({with_readability:.2f}, {with_witness:.2f}): readability's reading"
    )
    return why, round(pair, 3)


def arbitrate(
    readings: PageReadings,
    markup: MarkupEvidence,
    settings: DecisionSettings = SETTINGS,
    facts: PageFacts | None = None,
) -> Decision:
    """The article of a never-seen page's raw HTML (see the module doc); ``facts`` give
    the page's description and shown text for :func:`_story_elsewhere`."""
    verdict = todays_reading(readings, markup, settings)
    described = settings.describe(markup)
    if verdict is not None:
        return _with_failures(readings, verdict)
    if settings.reads_as_today(markup) and readings.has(TRAFILATURA):
        if len(readings.words(TRAFILATURA_RECALL)) >= MIN_ARTICLE_WORDS:
            why = "trafilatura found almost nothing; its reading that keeps more"
            agreement = readings.agreement(TRAFILATURA_RECALL, DENSITY)
            return _with_failures(
                readings, Decision(TRAFILATURA_RECALL, f"{described}: {why}", agreement)
            )
        names = [n for n in (DENSITY, READABILITY, TRAFILATURA_RECALL) if readings.has(n)]
        name, agreement = medoid_of(readings, names, {})
        why = "trafilatura found almost nothing; the medoid of the others"
        return _with_failures(readings, Decision(name, f"{described}: {why}", agreement))
    if readings.has(READABILITY) and readings.words(READABILITY):
        agreement = readings.agreement(DENSITY, READABILITY)
        if agreement >= settings.older_agreement:
            reader = settings.older_agreeing_reader
            why = f"readability agrees with text density ({agreement:.2f}): {reader}'s reading"
            agreed = Decision(reader, f"{described}: {why}", agreement)
            return _with_failures(readings, _unless_story_elsewhere(readings, facts, agreed))
    names = [n for n in (DENSITY, READABILITY, TRAFILATURA) if readings.has(n)]
    name, agreement = medoid_of(readings, names, {TRAFILATURA: settings.older_traf_lead})
    why = f"{described}: consensus of {len(names)} readers of the raw HTML"
    return _with_failures(readings, Decision(name, why, agreement))


def _unless_story_elsewhere(
    readings: PageReadings, facts: PageFacts | None, agreed: Decision
) -> Decision:
    """``agreed`` (a reading another reader agrees with), or trafilatura's reading where
    the agreed one leaves out the description the page shows as its prose and
    trafilatura's holds it (:func:`_story_elsewhere`; never without ``facts``)."""
    if facts is None or not _story_elsewhere(readings, facts, agreed.source):
        return agreed
    why = (
        f"{agreed.why}, but that reading leaves out the description the page shows as its "
        "prose: trafilatura's reading, which holds it"
    )
    agreement = readings.agreement(TRAFILATURA, agreed.source)
    return Decision(TRAFILATURA, why, round(agreement, 3), agreed.method)


def _story_elsewhere(readings: PageReadings, facts: PageFacts, reader: str) -> bool:
    """Whether the page shows the opening of its own description as prose that
    ``reader``'s reading leaves out and trafilatura's holds: where two readers agree on
    another block than the story (a teaser list, the comments), the description still
    names the story. The cheap tests first: trafilatura is asked last, on few pages."""
    opening = facts.description_opening()
    if not opening or holds_run(readings.words(reader), opening):
        return False
    if not holds_run(facts.shown_words, opening):  # a summary written for the metadata
        return False
    return readings.has(TRAFILATURA) and holds_run(readings.words(TRAFILATURA), opening)


def _with_failures(readings: PageReadings, decision: Decision) -> Decision:
    """``decision`` with the readers that failed, or were not asked for lack of time, in
    its note."""
    failed = [f"{error.stage} failed ({error.describe()})" for error in readings.errors]
    if failed:
        decision.why += f"; {', '.join(failed)}: the others decided"
    if readings.late:
        decision.why += f" ({', '.join(readings.late)} not asked: the page's time budget was spent)"
    return decision


# -- rendered pages ---------------------------------------------------------------------
def _never_seen(
    readings: PageReadings,
    facts: PageFacts,
    settings: DecisionSettings,
    own: str,
    gate: bool,
    bonus: float,
    method: str = "unseen",
) -> Decision:
    """The vote on a rendered page among ``own`` (our blocks' reading) and the peers'."""
    if not facts.peers_read:
        return Decision(own, method=method)
    lead = settings.modern_rendered_lead
    modern = lead is not None and settings.reads_as_today(facts.markup)
    if modern and len(readings.words(TRAFILATURA)) >= MIN_ARTICLE_WORDS:
        agreed = readings.agreement(TRAFILATURA, own)
        if agreed >= 1 - (lead or 0.0):  # readability could not outvote trafilatura then
            markup = facts.markup.describe()
            why = f"consensus on {markup}: trafilatura's text, our blocks agreeing ({agreed:.2f})"
            return Decision(TRAFILATURA, why, round(agreed, 3), method)
        names = [own, TRAFILATURA, READABILITY]
        name, agreement = medoid_of(readings, names, {TRAFILATURA: lead or 0.0})
        named = BLOCKS if name == own else name
        why = f"consensus on {facts.markup.describe()}: {named}'s text ({agreement:.2f})"
        return Decision(name, why, round(agreement, 3), method)
    todays = None if lead is not None else todays_reading(readings, facts.markup, settings)
    if todays is not None:  # its confidence: how far our blocks agree with it
        todays.agreement = round(readings.agreement(todays.source, own), 3)
        todays.why = f"consensus: {todays.why}"
        todays.method = method
        return todays
    if gate and settings.density_agreement is not None:
        agreement = readings.agreement(own, DENSITY)
        if agreement >= settings.density_agreement:
            why = f"consensus: the blocks' text, text density agreeing ({agreement:.2f})"
            agreed = Decision(own, why, round(agreement, 3), method)
            return _unless_story_elsewhere(readings, facts, agreed)
    settled = _settled(readings, own, bonus)
    if settled is not None:
        why = f"consensus: the blocks' text, {FIRST_PEER} agreeing ({settled:.2f})"
        agreed = Decision(own, why, round(settled, 3), method)
        return _unless_story_elsewhere(readings, facts, agreed)
    return _medoid_of_three(readings, own, bonus, method)


def _settled(readings: PageReadings, own: str, bonus: float) -> float | None:
    """The agreement of ``own`` with the quicker peer where it settles the medoid without
    the slower peer (word F1 above 1 - ``bonus``: the slower could then not win), else
    None."""
    if bonus <= 0:
        return None
    agreement = readings.agreement(own, FIRST_PEER)
    return agreement if agreement > 1 - bonus else None


def _medoid_of_three(readings: PageReadings, own: str, bonus: float, method: str) -> Decision:
    names = [own, TRAFILATURA, READABILITY]
    name, agreement = medoid_of(readings, names, {own: bonus})
    if not name:
        return Decision(own, method=method)
    named = BLOCKS if name == own else name
    why = f"consensus of 3 extractors: {named}'s text (agreement {agreement:.2f})"
    return Decision(name, why, round(agreement, 3), method)


def _confirmed(
    readings: PageReadings, facts: PageFacts, settings: DecisionSettings, own: str
) -> Decision:
    """A site model's article, or a peer's where the peers agree with each other more than
    with it by the model's lead (``confirm_bonus``): method ``learned+consensus``."""
    if not facts.peers_read or _settled(readings, own, settings.confirm_bonus) is not None:
        return Decision(own, method=own)
    chosen = _medoid_of_three(readings, own, settings.confirm_bonus, own)
    if chosen.source == own:
        return Decision(own, method=own)
    chosen.method = "learned+consensus"
    return chosen


def _learned(readings: PageReadings, facts: PageFacts, settings: DecisionSettings) -> Decision:
    """A rendered page of a learned site (see the module doc)."""
    if readings.has(PARSER):
        parser = readings[PARSER]
        if parser.text and parser.prose.agrees_with(len(parser.text.split())):
            return Decision(PARSER, method=PARSER)
    nothing = "the model found almost nothing here"
    familiarity = facts.familiarity() if facts.familiarity is not None else 1.0
    if readings.has(SITE_BLOCKS) and familiarity < MIN_FAMILIAR_SHARE:
        reason = f"only {familiarity:.0%} of the page's text {UNFAMILIAR}"
        if readings.text(SITE_BLOCKS):
            vote = _site_vote(readings, facts, settings)
            vote.why = _joined(vote.why, f"{reason}; what a site never seen gets instead")
            vote.of_no_layout = True
            return vote
    if readings.has(BLOCKS) and readings.failed(CLASSIFIER):
        vote = _never_seen(readings, facts, settings, BLOCKS, gate=True, bonus=settings.own_bonus)
        vote.why = _joined(vote.why, "the site model failed; what a site never seen gets instead")
        return vote
    enough = facts.enough_chars() if facts.enough_chars is not None else 0
    if readings.has(CLASSIFIER) and len(readings.text(CLASSIFIER)) >= enough:
        if facts.sure is not None and facts.sure(readings[CLASSIFIER]) and _borne_out(readings):
            return Decision(CLASSIFIER, method=CLASSIFIER)
        return _confirmed(readings, facts, settings, CLASSIFIER)
    if readings.has(CONTAINER) and len(readings.text(CONTAINER)) >= enough:
        why = f"{nothing}; the site's article container instead"
        return Decision(CONTAINER, why, method=CONTAINER)
    if readings.has(SITE_BLOCKS) and readings.text(SITE_BLOCKS):
        vote = _site_vote(readings, facts, settings)
        vote.why = _joined(vote.why, f"{nothing}; what a site never seen gets instead")
        return vote
    if readings.has(SITE_DENSITY) and readings.text(SITE_DENSITY):
        confirmed = _confirmed(readings, facts, settings, SITE_DENSITY)
        confirmed.why = _joined(confirmed.why, f"{nothing}; text density instead")
        return confirmed
    return _confirmed(readings, facts, settings, CLASSIFIER)  # the peers, where they find text


def _borne_out(readings: PageReadings) -> bool:
    """Whether our cross-site blocks bear out an article the site's classifier is sure of
    (at least ``SURE_AGREEMENT`` of their words agree): a layout learned from a few pages
    can be sure of the wrong part of a page. No blocks to ask, no evidence against it."""
    if not readings.has(BLOCKS) or not readings.text(BLOCKS):
        return True
    return readings.agreement(CLASSIFIER, BLOCKS) >= SURE_AGREEMENT


def _site_vote(readings: PageReadings, facts: PageFacts, settings: DecisionSettings) -> Decision:
    """A learned site's page read as a never-seen page's (our blocks less the site's
    template): the vote without text density's gate and with the learned lead."""
    return _never_seen(
        readings, facts, settings, SITE_BLOCKS, gate=False, bonus=settings.confirm_bonus,
        method=SITE_BLOCKS,
    )  # fmt: skip


def _joined(*parts: str) -> str:
    return "; ".join(part for part in parts if part)
