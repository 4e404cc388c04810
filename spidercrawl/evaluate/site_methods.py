"""Methods that need a whole crawled site: ``learned``, ``rules`` and ``unseen``.

``learned`` is spidercrawl on a site it knows: the snapshot is crawled with the real
``scrapy crawl news`` (see :mod:`spidercrawl.evaluate.crawl`), a :class:`SiteModel` is
learned from some pages without labels, and the other pages are extracted and scored.
With ``folds`` K every page is scored once by a model that did not see it; with
``train_pages`` N the model learns from N pages and the rest are scored. The learning curve
is measured alongside, on the same sites and test pages at every size
(:func:`curve_sizes`).

``rules`` is the crawl's fast path on a learned site: the model's extraction rules on each
held-out page's raw HTML, and the rendered page with the model where the rules' check
fails (each page's ``note`` says which; same folds as ``learned``).

``unseen`` is spidercrawl on a site it has no model for: a cross-site model and text
density, page by page (:mod:`spidercrawl.extract.unseen`). ``learned`` and ``rules`` use the
cross-site model too, on pages of a layout the site's model does not know and where it
finds almost nothing; a site that cannot be learned is extracted as ``unseen``. The
shipped cross-site model has seen the dataset sites, so by default each site gets a
cross-site model that never saw it (:func:`cross_site_fold_models`): over a folder of
several datasets, one model per held-out dataset, trained on the other datasets (leave one
dataset out); over one dataset, ``UNSEEN_SITE_FOLDS`` seeded folds of its sites.
``--models`` names one model to use instead.

Sites are independent, so they run in parallel worker processes.
"""

from __future__ import annotations

import gc
import logging
import math
import random
import resource
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spidercrawl.document.captured import Page
from spidercrawl.document.html import decode_html
from spidercrawl.document.page import fetched_plainly
from spidercrawl.evaluate.runner import (
    PageRecord,
    PeerTiming,
    page_clock,
    read_gold,
    score_record,
)
from spidercrawl.extract.chain import ExtractionChain
from spidercrawl.extract.decision import SETTINGS, decide
from spidercrawl.extract.fast_path import cut_raw_html
from spidercrawl.extract.item import article_item
from spidercrawl.extract.readers import BLOCKS, PEERS, Peers
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.learn.cross_site import CROSS_SITE_C
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.rules import RuleExtraction, raw_document
from spidercrawl.snapshot import SiteSnapshot
from spidercrawl.text import tokenize, word_f1

# Methods that learn from some of a site's pages and score the rest.
TRAIN_TEST_METHODS = frozenset({"learned", "rules"})

logger = logging.getLogger(__name__)

LEARNING_CURVE = (2, 3, 5, 10, 20)
UNSEEN_SITE_FOLDS = 4
DEFAULT_FOLDS = 4
SEED = 20261123


@dataclass(frozen=True)
class NeverSeenSetting:
    """How ``unseen`` extracted a site, chosen without the site's dataset: its held-out
    cross-site model, the blocks' extractor's constants and the consensus's. ``learned`` and
    ``rules`` extract the pages they have no site model for (and their cross-site
    fallbacks) the same way, so that no figure of theirs rests on constants chosen with the
    pages it scores."""

    model_dir: str | None
    block_constants: tuple[float, float, float] | None
    consensus_constants: tuple[float, float | None, float | None]


@dataclass
class SiteJob:
    """One site to evaluate with one site method."""

    method: str
    dataset: str
    site: str
    site_root: str
    pages: dict[str, dict[str, Any]]  # page ID -> crawled page item
    page_ids: list[str]  # every page of the snapshot, rendered or not
    folds: int | None = None
    train_pages: int | None = None
    model_dir: str | None = None
    learning_curve: bool = True
    layouts: bool = True  # site models of several layouts (LEARN_LAYOUTS)
    # train_pages: the first N pages by ID (a snapshot's crawl order), not a seeded sample
    crawl_order: bool = False
    # unseen: the blocks' extractor's density bonus, tolerance and relevance bonus (None:
    # the shipped ones), as leave one dataset out chose them (:mod:`.unseen_constants`)
    block_constants: tuple[float, float, float] | None = None
    # the consensus's own bonus and density agreement (None: the shipped ones); learned and
    # rules take unseen's held-out choice for the pages they extract as a site never seen
    consensus_constants: tuple[float, float | None, float | None] | None = None
    # unseen's protocol: the held-out cross-site model per SVM C of its grid
    models_by_c: dict[float, str] | None = None
    # our article items' text starts with the headline, as the crawl's default
    # ARTICLE_HEADLINE_IN_TEXT has it; False scores the body alone (gold without headlines)
    headline_in_text: bool = True
    # learned/rules: the site models' training labels (learn/consensus_labels.py)
    labels: str = "relevance"

    @property
    def site_key(self) -> str:
        return f"{self.dataset}/{self.site}"

    def extract_never_seen_as(self, setting: NeverSeenSetting) -> None:
        """Extract what this job extracts as a site never seen as ``setting`` says."""
        self.model_dir, self.block_constants = setting.model_dir, setting.block_constants
        self.consensus_constants = setting.consensus_constants


# The consensus's peers by their evaluation method names.
PEER_METHODS = {"trafilatura": "trafilatura", "readability": "readability-lxml"}


@dataclass
class SiteOutcome:
    records: list[PageRecord] = field(default_factory=list)
    curve: dict[int, list[float]] = field(default_factory=dict)  # N -> held-out page F1s
    learning: list[dict[str, float]] = field(default_factory=list)  # pages, seconds, MiB
    peer_timings: list[PeerTiming] = field(default_factory=list)  # unseen: beside ours


def _gold(job: SiteJob, page_id: str) -> str | None:
    return read_gold(Path(job.site_root) / "gold" / f"{page_id}.txt")


def shuffled_ids(ids: Sequence[str]) -> list[str]:
    """The page IDs in the evaluation's seeded order: k folds take every k-th of them."""
    ids = sorted(ids)
    random.Random(SEED).shuffle(ids)
    return ids


def _score_pages(
    job: SiteJob,
    page_ids: Sequence[str],
    extract: Callable[[dict[str, Any], PageRecord], tuple[str, str]],
    note: str = "",
) -> list[PageRecord]:
    """Score ``extract(page, record) -> (text, note or "")`` on each page (``extract`` may
    fill the record's fields on how it went); missing pages score empty."""
    records = []
    for page_id in page_ids:
        record = PageRecord(job.dataset, job.site, page_id, job.method, note=note)
        page = job.pages.get(page_id)
        gold = _gold(job, page_id)
        if page is None:
            record.note = "not rendered by the crawl"
            records.append(score_record(record, "", gold))
            continue
        page = _with_raw_html(page, job, page_id)
        started = page_clock()
        text, page_note = extract(page, record)
        record.seconds = page_clock() - started
        record.note = page_note or record.note
        records.append(score_record(record, text, gold))
    return records


def _article_text(
    job: SiteJob,
    page: Mapping[str, Any],
    extraction: Any,
    method: str,
    model: SiteModel | None = None,
) -> str:
    """The text of the article item the crawl writes for ``page`` (headline first, as
    with the default ``ARTICLE_HEADLINE_IN_TEXT``, unless the job scores without it):
    what users get is what is scored. A :class:`Page` gives the blocks its extraction
    built, as the crawl does."""
    headline = job.headline_in_text
    item = article_item(page, extraction, method, model, headline_in_text=headline)
    return item["text"]


def _score_with(
    job: SiteJob, model: SiteModel | None, test_ids: Sequence[str], note: str
) -> list[PageRecord]:
    """Score a site model as the crawl extracts with it; without one, as the crawl
    extracts a site it cannot learn: both by the crawl's own extraction chain
    (:mod:`spidercrawl.extract.chain`), so that what is scored is what is delivered."""
    chain = _chain(job)

    def extract(item: dict[str, Any], record: PageRecord) -> tuple[str, str]:
        page = Page(item)  # its blocks built once, for extraction and headline
        result = chain.extract(page, model)
        text = _article_text(job, page, result.extraction, result.method, model)
        record.way, record.plain = result.method, page.plain
        record.has_model = model is not None
        if record.plain:
            return text, f"raw HTML: {result.method}"
        return text, ("" if result.method in ("learned", "unseen") else result.method)

    return _score_pages(job, test_ids, extract, note)


_peers: list[Peers] = []


def _chain(job: SiteJob) -> ExtractionChain:
    """The crawl's extraction chain for the job's site: its cross-site model and the
    consensus's constants the job extracts a site never seen with (one chain per process
    and setting; the peers made once per process: their imports take a second)."""
    key = _extractor_key(job), job.consensus_constants
    if key not in _chains:
        if not _peers:
            _peers.append(Peers())
        bonus, agreement, modern = job.consensus_constants or (
            SETTINGS.own_bonus, SETTINGS.density_agreement, SETTINGS.modern_rendered_lead
        )  # fmt: skip
        settings = replace(
            SETTINGS, own_bonus=bonus, density_agreement=agreement, modern_rendered_lead=modern
        )
        chain = ExtractionChain(_unseen_extractor(job), _peers[0], settings=settings)
        _warm_up(chain, job)
        _chains[key] = chain
    return _chains[key]


ExtractorKey = tuple[str | None, tuple[float, float, float] | None]
_unseen_extractors: dict[ExtractorKey, UnseenExtractor | None] = {}


def _extractor_key(job: SiteJob) -> ExtractorKey:
    return job.model_dir, job.block_constants


def _unseen_extractor(job: SiteJob) -> UnseenExtractor | None:
    """The cross-site extractor for the job's site (one per model folder, constants and
    process); None when there is no cross-site model."""
    key = _extractor_key(job)
    if key not in _unseen_extractors:
        path = Path(job.model_dir) if job.model_dir else None
        extractor = UnseenExtractor.load(path) if UnseenExtractor.available(path) else None
        if extractor is not None and job.block_constants is not None:
            extractor = UnseenExtractor(extractor.model, *job.block_constants)
        _unseen_extractors[key] = extractor
    return _unseen_extractors[key]


def _learn(job: SiteJob, train_ids: Sequence[str], outcome: SiteOutcome) -> SiteModel | None:
    """A model of the site from ``train_ids``, or None when they cannot teach one."""
    pages = [job.pages[i] for i in train_ids if i in job.pages]
    started = time.perf_counter()
    pages = _chain(job).consensus_articles(  # as the crawl's pipeline does before learning
        [_with_raw_html(job.pages[i], job, i) for i in train_ids if i in job.pages]
    )
    try:
        model = SiteModel(random_state=0, layouts=job.layouts, labels=job.labels).fit(pages)
    except ValueError as error:
        logger.info(
            "%s: no model from %d pages (%s); extracted as a site never seen",
            job.site,
            len(pages),
            error,
        )
        return None
    outcome.learning.append(
        {
            "pages": len(pages),
            "blocks": model.training_["blocks"],
            "seconds": round(time.perf_counter() - started, 3),
            "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }
    )
    return model


Scorer = Callable[[SiteJob, SiteModel | None, Sequence[str], str], list[PageRecord]]


def _held_out(job: SiteJob, outcome: SiteOutcome, score: Scorer) -> list[str]:
    """Score every held-out page (k folds, or train on N and test on the rest); returns
    the site's page IDs in the order used (shuffled, or by ID with ``crawl_order``)."""
    crawl_order = job.train_pages and job.crawl_order
    ids = sorted(job.page_ids) if crawl_order else shuffled_ids(job.page_ids)
    if job.train_pages:
        train, test = ids[: job.train_pages], ids[job.train_pages :]
        model = _learn(job, train, outcome)
        note = f"trained on {len(train)} pages" if model else "no model"
        outcome.records = score(job, model, test, note)
    else:
        folds = max(2, min(job.folds or DEFAULT_FOLDS, len(ids)))
        for fold in range(folds):
            test = ids[fold::folds]
            train = [i for i in ids if i not in test]
            model = _learn(job, train, outcome)
            note = f"fold {fold + 1}/{folds}" if model else "no model"
            outcome.records += score(job, model, test, note)
    return ids


def _score_fast_path(
    job: SiteJob, model: SiteModel | None, test_ids: Sequence[str], note: str
) -> list[PageRecord]:
    """Score the crawl's fast path: the rules on the page's raw HTML (as a plain HTTP
    fetch gets it) when they pass their check, then the extraction chain's first stage
    (the independent check, the raw-HTML consensus where it doubts the rules), else the
    rendered page and the model."""
    snapshot = SiteSnapshot(Path(job.site_root))
    rules = model.extraction_rules() if model is not None else None
    chain = _chain(job)
    records = []
    for page_id in test_ids:
        page = job.pages.get(page_id) or {}
        if rules is None or not rules.usable:
            records += _score_with(job, model, [page_id], note or "no usable rules")
            continue
        if rules.render_reason:  # as a crawl does: the model decided its pages need the browser
            records += _score_with(job, model, [page_id], "rendered: the model's render decision")
            continue
        started = page_clock()
        raw_html, _ = decode_html(snapshot.page_bytes(page_id))
        document = raw_document(raw_html)  # parsed as the fast path parses it
        if isinstance(document, RuleExtraction):
            records += _score_with(job, model, [page_id], f"rendered: {document.reason}")
            continue
        # The fast path's own metadata, headlines and deck, read from the raw HTML as a
        # crawl reads them: what is scored is the item the crawl delivers.
        capture, verdict = cut_raw_html(document, str(page.get("url") or ""), model)
        assert verdict is not None  # the rules are usable (above)
        if not verdict.ok:
            records += _score_with(job, model, [page_id], f"rendered: {verdict.reason}")
            continue
        result = capture["fast_path_article"].extraction
        fetched = {**page, **capture, "rendered_html": raw_html, "raw_html": raw_html}
        chained = chain.extract(fetched, model)
        seconds = page_clock() - started
        record = PageRecord(
            job.dataset, job.site, page_id, job.method, note="fast path",
            way=chained.method, has_model=True, plain=True, fast_path=True,
        )  # fmt: skip
        if chained.method != "rules":
            record.note = f"fast path: {chained.method} ({chained.note})"
        elif chained.rules_check == "prose":
            record.note = "fast path (the page's prose agrees)"
        else:
            prose = result.prose
            record.note = (
                f"fast path (text density's check: the rules took {prose.share_taken:.0%} of "
                f"the page's {prose.page_words} words of prose, {prose.taken_words} of the "
                f"article's {len(result.text.split())})"
            )
        record.seconds = seconds
        text = _article_text(job, fetched, chained.extraction, chained.method, model)
        records.append(score_record(record, text, _gold(job, page_id)))
        _agreement_with_unseen(job, page_id, record, chained.extraction.text, result.text)
    return records


def _agreement_with_unseen(
    job: SiteJob, page_id: str, record: PageRecord, delivered: str, unchecked: str
) -> None:
    """Set ``record``'s agreements (word F1) of the fast path's article, and of the rules'
    own before the check, with the article the rendered page gets as a site never seen."""
    page = job.pages.get(page_id)
    if _unseen_extractor(job) is None or not page or not page.get("texts"):
        return
    rendered = _with_raw_html(page, job, page_id)
    unseen = tokenize(_chain(job).extract(rendered, None).extraction.text)
    record.unseen_agreement = round(word_f1(tokenize(delivered), unseen), 4)
    record.unchecked_agreement = round(word_f1(tokenize(unchecked), unseen), 4)


def run_rules(job: SiteJob) -> SiteOutcome:
    outcome = SiteOutcome()
    _held_out(job, outcome, _score_fast_path)
    return outcome


def curve_sizes(pages: int) -> tuple[int, ...]:
    """The training sizes of the learning curve a site of ``pages`` pages is measured at:
    those of ``LEARNING_CURVE`` that leave at least one page to test. Every size is tested
    on the same pages (those after the largest size's training pages), so that the curve
    compares sizes, not sites or pages."""
    return tuple(n for n in LEARNING_CURVE if n < pages)


def run_learned(job: SiteJob) -> SiteOutcome:
    outcome = SiteOutcome()
    ids = _held_out(job, outcome, _score_with)
    sizes = curve_sizes(len(ids)) if job.learning_curve else ()
    for n in sizes:
        model = _learn(job, ids[:n], outcome)
        scored = _score_with(job, model, ids[sizes[-1] :], "")
        outcome.curve[n] = [r.f1 for r in scored if not r.special_case]
    return outcome


# The consensus's constants tried: ``own_bonus``, and ``density_agreement`` (None: off;
# 0.8, 0.7 and 0.6 added later). Over several datasets the evaluation picks, for
# each dataset, a setting by its scores on the others (:func:`choose_unseen_bonus`).
UNSEEN_BONUS_GRID = (0.0, 0.05, 0.1, 0.2, 0.3)
UNSEEN_AGREEMENT_GRID = (None, 0.95, 0.9, 0.8, 0.7, 0.6)
# On a rendered page of today's markup: trafilatura's reading (None), or the medoid of our
# blocks and both peers with trafilatura leading by this much.
UNSEEN_MODERN_GRID = (None, 0.2, 0.3, 0.4, 0.5, 0.6)
UNSEEN_GRID = [
    (b, a, m) for m in UNSEEN_MODERN_GRID for a in UNSEEN_AGREEMENT_GRID for b in UNSEEN_BONUS_GRID
]
ConsensusConstants = tuple[float, float | None, float | None]
UNSEEN_BLOCKS = "unseen-blocks"  # our cross-site extractor alone, for comparison


def unseen_variant(
    bonus: float, agreement: float | None = None, modern: float | None = None
) -> str:
    """``unseen@0.1``; with a density agreement, ``unseen@0.1~0.9``; with trafilatura's
    lead on today's markup, ``unseen@0.1~0.9^0.3``."""
    return (
        f"unseen@{bonus:g}"
        + ("" if agreement is None else f"~{agreement:g}")
        + ("" if modern is None else f"^{modern:g}")
    )


ChainKey = tuple[ExtractorKey, ConsensusConstants | None]
_chains: dict[ChainKey, ExtractionChain] = {}


def _warm_up(chain: ExtractionChain, job: SiteJob) -> None:
    """One page of ``job`` extracted untimed, the whole way to its article item, once per
    worker process and chain: what loads on first use (the language identifier's model,
    the date parser, lazy imports; about 0.5 s measured on a fresh process's first page)
    is then not charged to one page, as the peers' imports are outside their timing too."""
    first = next((item for item in sorted(job.pages.items()) if item[1].get("texts")), None)
    if first is None:
        return
    page_id, page = first
    page = Page(_with_raw_html(page, job, page_id))
    readings, _ = chain.readings(page, None)
    for name in readings.readers:
        _article_text(job, page, readings[name], "unseen")


def _with_raw_html(page: dict[str, Any], job: SiteJob, page_id: str) -> dict[str, Any]:
    """The page item with the raw HTML the crawl keeps (from the snapshot for page items
    crawled before it did)."""
    if page.get("raw_html"):
        return page
    raw = (Path(job.site_root) / "pages" / f"{page_id}.html").read_bytes()
    return {**page, "raw_html": decode_html(raw)[0]}


def run_unseen(job: SiteJob) -> SiteOutcome:
    """Each page as the crawl extracts a site never seen (the decision among our blocks and
    the peers, :mod:`spidercrawl.extract.decision`), once per setting of the grid, on the
    same readings (each reader run once a page; a setting is charged the readers it asks
    for), plus our blocks alone (``unseen-blocks``). Each peer's own call is also kept as
    a :class:`PeerTiming`, for the speed comparison made page by page in one process."""
    chain = _chain(job) if _unseen_extractor(job) is not None else None
    variants = [unseen_variant(*setting) for setting in UNSEEN_GRID]
    records: list[PageRecord] = []
    timings: list[PeerTiming] = []
    for page_id in sorted(job.page_ids):
        gold, page = _gold(job, page_id), job.pages.get(page_id)
        methods = [UNSEEN_BLOCKS, *variants]
        if page is None or chain is None:
            why = "not rendered by the crawl" if page is None else "no model"
            records += _one_text_for_all(job, page_id, methods, gold, "", why)
            continue
        page = _with_raw_html(page, job, page_id)
        if fetched_plainly(page):  # no blocks to extract from: every setting reads the HTML
            started = page_clock()
            result = chain.extract(page, None)  # as the crawl reads it
            text = _article_text(job, page, result.extraction, result.method)
            note = f"raw HTML: {result.method}"
            seconds = page_clock() - started
            records += _one_text_for_all(job, page_id, methods, gold, text, note, seconds)
            continue
        page = Page(page)  # its blocks built once, for extraction and headline, as in a crawl
        readings, facts = chain.readings(page, None)
        # The article item's text per chosen reading, made once, and what making it took:
        # charged to every setting that chooses that reading, as a crawl makes one item.
        texts: dict[str, tuple[str, float]] = {}
        grid = [(UNSEEN_BLOCKS, (None, None, None)), *zip(variants, UNSEEN_GRID, strict=True)]
        for method, (bonus, agreement, modern) in grid:
            readings.start_decision()
            began, spent = page_clock(), readings.spent()
            if bonus is None:
                source, how = BLOCKS, ""
                readings[BLOCKS]
            else:
                settings = replace(
                    chain.settings, own_bonus=bonus, density_agreement=agreement,
                    modern_rendered_lead=modern,
                )  # fmt: skip
                decision = decide(readings, facts, settings)
                source, how = decision.source, decision.why
            # the decision's own time: its wall less the readings and agreements made in it
            choosing = page_clock() - began - (readings.spent() - spent)
            if source not in texts:
                began = page_clock()
                text = _article_text(job, page, readings[source], "unseen")
                texts[source] = text, page_clock() - began
            text, item_seconds = texts[source]
            record = PageRecord(job.dataset, job.site, page_id, method, note=how)
            record.seconds = readings.cost() + max(choosing, 0.0) + item_seconds
            records.append(score_record(record, text, gold))
        if facts.peers_read:
            for name in PEERS:  # each peer timed on every page, beside ours
                readings[name]
                timings.append(
                    PeerTiming(job.dataset, job.site, page_id, PEER_METHODS[name],
                               readings.seconds.get(name, 0.0))
                )  # fmt: skip
    return SiteOutcome(records=records, peer_timings=timings)


def _one_text_for_all(
    job: SiteJob,
    page_id: str,
    methods: Sequence[str],
    gold: str | None,
    text: str,
    note: str,
    seconds: float = 0.0,
) -> list[PageRecord]:
    """One scored record per method, all of the same text: a page no setting votes on."""
    records = []
    for method in methods:
        record = PageRecord(job.dataset, job.site, page_id, method, note=note)
        record.seconds = seconds
        records.append(score_record(record, text, gold))
    return records


def unseen_grid(records: Sequence[PageRecord]) -> dict[str, dict[str, dict[str, float]]]:
    """Every setting of the grid (``own_bonus``, ``~density_agreement``, ``^modern_lead``),
    per dataset: mean F1 (special cases apart) and pages/s, before one is chosen. This says
    what each scores and how fast it is (a bonus above 0 lets the slower peer rest where
    the quicker one agrees with our blocks; a density agreement lets both rest where text
    density agrees with them; a modern lead asks both peers on today's markup)."""
    f1s, seconds = _grid_samples(records)
    grid: dict[str, dict[str, dict[str, float]]] = {}
    for variant, by_dataset in sorted(seconds.items()):
        for dataset, spent in sorted(by_dataset.items()):
            scores = f1s.get(variant, {}).get(dataset, [])
            grid.setdefault(variant.removeprefix("unseen@"), {})[dataset] = {
                "f1": round(sum(scores) / len(scores), 4) if scores else 0.0,
                "pages_per_s": round(len(spent) / sum(spent), 2) if sum(spent) > 0 else 0.0,
            }
    return grid


Samples = dict[str, dict[str, list[float]]]  # grid variant -> dataset -> one value per page


def _grid_samples(records: Sequence[PageRecord]) -> tuple[Samples, Samples]:
    """The grid variants' page F1s (special cases apart) and page seconds, by dataset."""
    f1s: Samples = {}
    seconds: Samples = {}
    for record in records:
        if record.method.startswith("unseen@"):
            by_dataset = seconds.setdefault(record.method, {})
            by_dataset.setdefault(record.dataset, []).append(record.seconds)
            if not record.special_case:
                f1s.setdefault(record.method, {}).setdefault(record.dataset, []).append(record.f1)
    return f1s, seconds


def choose_unseen_bonus(records: Sequence[PageRecord]) -> tuple[list[PageRecord], dict]:
    """Leave one dataset out: each dataset's ``unseen`` records are those of the grid
    setting chosen on the *other* datasets, by the one-standard-error rule (Breiman et al.;
    Hastie, Tibshirani & Friedman, *Elements of Statistical Learning*, 7.10): of the
    settings whose F1 there (the mean of the datasets' page means) is within one standard
    error of the best setting's, the fastest (pages/s there), among the settings that take
    trafilatura's reading on today's markup; then, with those two constants, how today's
    markup is read (``modern_lead``: trafilatura's reading, or the medoid of the three with
    trafilatura's lead) by the best F1 there alone (a lead asks one peer more on today's
    pages, never fewer, and the article item of the reading it takes costs what it costs:
    speed would choose by which reading is cheaper to deliver, not by the decision). With
    one dataset, the shipped constants. Returns the records (grid variants replaced by
    ``unseen``) and the choice per dataset."""
    f1s, seconds = _grid_samples(records)
    datasets = sorted({record.dataset for record in records})
    chosen: dict[str, dict[str, object]] = {}
    for dataset in datasets:
        others = [d for d in datasets if d != dataset]
        if not others:
            chosen[dataset] = {
                "own_bonus": SETTINGS.own_bonus,
                "density_agreement": SETTINGS.density_agreement,
                "modern_lead": SETTINGS.modern_rendered_lead,
                "chosen_on": [],
            }  # fmt: skip
            continue

        def f1(variant: str, others: list[str] = others) -> float:
            means = [sum(v) / len(v) for d in others if (v := f1s.get(variant, {}).get(d))]
            return sum(means) / len(means) if means else float("-inf")

        def speed(variant: str, others: list[str] = others) -> float:
            spent = [s for d in others for s in seconds.get(variant, {}).get(d, [])]
            return len(spent) / sum(spent) if sum(spent) > 0 else 0.0

        def standard_error(variant: str, others: list[str] = others) -> float:
            samples = [v for d in others if len(v := f1s.get(variant, {}).get(d, [])) > 1]
            variance = sum(statistics.variance(v) / len(v) for v in samples)
            return math.sqrt(variance) / len(samples) if samples else 0.0

        plain = [s for s in UNSEEN_GRID if s[2] is None]
        best = max((unseen_variant(*s) for s in plain), key=f1)
        bar = f1(best) - standard_error(best)
        good = [s for s in plain if f1(unseen_variant(*s)) >= bar]
        bonus, agreement, _ = max(good, key=lambda s: speed(unseen_variant(*s)))
        modern = max(  # the best F1; trafilatura's reading where no lead does better
            UNSEEN_MODERN_GRID,
            key=lambda m: (f1(unseen_variant(bonus, agreement, m)), m is None),
        )
        chosen[dataset] = {
            "own_bonus": bonus, "density_agreement": agreement, "modern_lead": modern,
            "chosen_on": others,
        }  # fmt: skip
    kept = []
    for record in records:
        if not record.method.startswith("unseen@"):
            kept.append(record)
            continue
        choice = chosen[record.dataset]
        setting = consensus_constants(choice)
        if record.method == unseen_variant(*setting):
            record.method = "unseen"
            kept.append(record)
    return kept, chosen


def consensus_constants(choice: Mapping[str, object]) -> ConsensusConstants:
    """A dataset's choice of :func:`choose_unseen_bonus` as the constants a chain takes."""
    bonus, agreement = float(choice["own_bonus"]), choice["density_agreement"]  # type: ignore[arg-type]
    return bonus, agreement, choice.get("modern_lead")  # type: ignore[return-value]


def _label_site(job: SiteJob) -> tuple[str, Any]:
    from spidercrawl.learn.cross_site import MAX_BLOCKS_PER_SITE, sample_site, site_labels

    try:  # sampled here: a worker sends back only what training will use
        return job.site_key, sample_site(site_labels(list(job.pages.values())), MAX_BLOCKS_PER_SITE)
    except ValueError as error:
        logger.info("%s: no labels for the cross-site model (%s)", job.site, error)
        return job.site_key, None


def _train_fold(task: tuple[dict[str, Any], str, float]) -> str:
    from spidercrawl.learn.cross_site import train_cross_site_labeled

    labeled, folder, c = task
    train_cross_site_labeled(labeled, C=c).save(folder)
    return folder


def _site_folds(jobs: Sequence[SiteJob], folds: int) -> dict[str, int]:
    """Site key -> fold: whole datasets when there are several (leave one dataset out),
    else seeded folds of sites."""
    datasets = sorted({job.dataset for job in jobs})
    if len(datasets) >= 2:
        return {job.site_key: datasets.index(job.dataset) for job in jobs}
    order = shuffled_ids([job.site_key for job in jobs])
    folds = min(folds, len(order))
    return {key: position % folds for position, key in enumerate(order)}


def cross_site_fold_models(
    jobs: Sequence[SiteJob],
    out_dir: Path,
    pool: Any,
    folds: int = UNSEEN_SITE_FOLDS,
    cs: Sequence[float] = (CROSS_SITE_C,),
) -> dict[float, dict[str, str]]:
    """Held-out sites for ``unseen``: label every site with its own model, split the sites
    into folds, and train one cross-site model per fold on the other folds' sites only.

    With several datasets a fold is a whole dataset (leave one dataset out), and a host
    that the held-out dataset also has (the same site years apart) is left out of its
    training; with one dataset the folds are seeded folds of its sites. One set of fold
    models per SVM C of ``cs`` (the shipped C's under ``out_dir``, others under
    ``out_dir/C<c>``). Returns, per C, each site's model folder; empty with fewer than
    two sites, where nothing is held out (the shipped model is used then)."""
    if len(jobs) < 2:
        return {}
    labels = dict(pool.map(_label_site, jobs))
    fold_of = _site_folds(jobs, folds)
    host_of = {job.site_key: job.site for job in jobs}
    training_of = {}
    for fold in sorted(set(fold_of.values())):
        held_hosts = {host_of[k] for k, f in fold_of.items() if f == fold}
        training_of[fold] = {
            k: v
            for k, v in labels.items()
            if v is not None and fold_of[k] != fold and host_of[k] not in held_hosts
        }
    if not all(training_of.values()):
        logger.warning("unseen: too few learnable sites for held-out folds; shipped model")
        return {}
    keys = [(c, fold) for c in cs for fold in training_of]
    tasks = [
        (training_of[fold], str(_c_folder(out_dir, c) / f"fold-{fold + 1}"), c) for c, fold in keys
    ]
    folders = dict(zip(keys, pool.map(_train_fold, tasks), strict=True))
    return {c: {key: folders[(c, fold)] for key, fold in fold_of.items()} for c in cs}


def _c_folder(out_dir: Path, c: float) -> Path:
    """Where the fold models of SVM C ``c`` go: the shipped C's in ``out_dir`` itself."""
    return out_dir if c == CROSS_SITE_C else out_dir / f"C{c:g}"


SITE_RUNNERS = {"learned": run_learned, "unseen": run_unseen, "rules": run_rules}


def run_site_job(job: SiteJob) -> SiteOutcome:
    # The job's pages (all of a site's crawled pages, just unpickled) are the evaluation's
    # data, not the extractor's garbage: frozen, collections while a page is timed do not
    # walk them, as a crawl holds one page at a time (see ``worker_pool``). Never unfrozen
    # in the worker: freezing only hides them from the cycle collector, and pages, which
    # hold no cycles, are freed as usual when the job is done. Garbage left by the previous
    # job is collected first, so that none of it is frozen for good.
    gc.collect()
    gc.freeze()
    try:
        return SITE_RUNNERS[job.method](job)
    except Exception as error:  # one broken site must not end the evaluation
        logger.exception("%s on %s failed", job.method, job.site)
        outcome = SiteOutcome()
        for page_id in job.page_ids:
            record = PageRecord(job.dataset, job.site, page_id, job.method)
            record.error, record.special_case = f"{type(error).__name__}: {error}"[:300], "error"
            outcome.records.append(record)
        return outcome


@dataclass
class CurveRow:
    """The learning curve of one dataset's sites that share their largest training size
    (``up_to``): mean F1 of their sites' test pages per training size, the same sites and
    pages at every size."""

    dataset: str
    up_to: int
    sites: int
    f1: dict[int, float]


def merge_curves(outcomes: Sequence[SiteOutcome]) -> list[CurveRow]:
    """One :class:`CurveRow` per dataset and largest training size, from the sites'
    curves (each site's F1 the mean over its test pages, then the mean over sites)."""
    groups: dict[tuple[str, int], list[SiteOutcome]] = {}
    for outcome in outcomes:
        if outcome.curve and outcome.records:
            key = outcome.records[0].dataset, max(outcome.curve)
            groups.setdefault(key, []).append(outcome)
    rows = []
    for (dataset, up_to), members in sorted(groups.items()):
        f1 = {}
        for n in sorted(members[0].curve):
            per_site = [sum(o.curve[n]) / len(o.curve[n]) for o in members if o.curve.get(n)]
            f1[n] = round(sum(per_site) / len(per_site), 4) if per_site else 0.0
        rows.append(CurveRow(dataset, up_to, len(members), f1))
    return rows
