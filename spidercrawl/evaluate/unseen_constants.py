"""Leave one dataset out for the constants inside our blocks' extractor of sites never seen.

The cross-site SVM's C and the extractor's density bonus, tolerance and relevance bonus
(:class:`~spidercrawl.extract.unseen.UnseenExtractor`) were chosen on the dev
datasets themselves, so the ``unseen`` figures on those datasets were not clean of them.
Here every setting of a grid is scored on every page with a cross-site model that never saw
the page's dataset (one per C and held-out dataset,
:func:`~spidercrawl.evaluate.site_methods.cross_site_fold_models`), and
each dataset is then extracted with the setting that scored best on the *other* datasets
(the mean of their page means; all settings cost the same time, so no speed rule).
The consensus's own constants are chosen after, the same way, on top of that choice
(:func:`~spidercrawl.evaluate.site_methods.choose_unseen_bonus`).

A setting is scored on the extraction's text (no headline: it is the same for every
setting); the signals a setting weighs (margins, text density's article, relevance) are
measured once per page and model (:meth:`UnseenExtractor.signals`).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spidercrawl.document.captured import Page
from spidercrawl.evaluate.metrics import score_tokens
from spidercrawl.evaluate.runner import PageRecord, read_gold
from spidercrawl.evaluate.site_methods import SiteJob
from spidercrawl.extract.unseen import (
    DENSITY_BONUS,
    RELEVANCE_BONUS,
    TOLERANCE,
    UnseenExtractor,
)
from spidercrawl.learn.cross_site import CROSS_SITE_C
from spidercrawl.learn.model import SiteModel
from spidercrawl.text import tokenize

CROSS_SITE_C_GRID = (0.05, 0.1, 0.2)
DENSITY_BONUS_GRID = (0.5, 1.0, 1.5)
TOLERANCE_GRID = (0.5, 0.75, 1.0)
RELEVANCE_BONUS_GRID = (1.0, 2.0, 3.0)
METHOD_PREFIX = "unseen-constants@"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BlockConstants:
    """One setting of the never-seen blocks' extractor (defaults: what ships)."""

    c: float = CROSS_SITE_C
    density_bonus: float = DENSITY_BONUS
    tolerance: float = TOLERANCE
    relevance_bonus: float = RELEVANCE_BONUS

    @property
    def label(self) -> str:
        return (
            f"C {self.c:g}, density bonus {self.density_bonus:g}, tolerance "
            f"{self.tolerance:g}, relevance bonus {self.relevance_bonus:g}"
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "C": self.c,
            "density_bonus": self.density_bonus,
            "tolerance": self.tolerance,
            "relevance_bonus": self.relevance_bonus,
        }

    def extractor(self, model: SiteModel) -> UnseenExtractor:
        return UnseenExtractor(model, self.density_bonus, self.tolerance, self.relevance_bonus)


SHIPPED = BlockConstants()
GRID = [
    BlockConstants(*values)
    for values in itertools.product(
        CROSS_SITE_C_GRID, DENSITY_BONUS_GRID, TOLERANCE_GRID, RELEVANCE_BONUS_GRID
    )
]

_models: dict[str, SiteModel] = {}


def _model(folder: str) -> SiteModel:
    """One cross-site model per folder and worker process."""
    if folder not in _models:
        _models[folder] = SiteModel.load(Path(folder))
    return _models[folder]


def score_constants(job: SiteJob) -> list[PageRecord]:
    """A record per page of the job and setting of :data:`GRID` (method
    ``unseen-constants@LABEL``): the F1 of that setting's article, with the held-out
    cross-site model of its C (``job.models_by_c``). Pages the crawl did not render, or
    without gold, are left out: every setting would score them alike."""
    models = job.models_by_c or {}
    records = []
    for page_id in sorted(job.page_ids):
        gold = read_gold(Path(job.site_root) / "gold" / f"{page_id}.txt")
        page = job.pages.get(page_id)
        if page is None or gold is None:
            continue
        blocks = Page(page).blocks()
        gold_tokens = tokenize(gold)
        for c, settings in itertools.groupby(GRID, key=lambda s: s.c):
            model = _model(models[c])
            signals = SHIPPED.extractor(model).signals(page, blocks) if blocks else None
            for setting in settings:
                text = ""
                if signals is not None:
                    text = setting.extractor(model).extract_with(blocks, signals).text
                record = PageRecord(job.dataset, job.site, page_id, METHOD_PREFIX + setting.label)
                record.apply(score_tokens(tokenize(text), gold_tokens, with_difflib=False))
                records.append(record)
    return records


def choose_for_jobs(
    jobs: Sequence[SiteJob], models: Mapping[float, Mapping[str, str]], pool: Any
) -> dict[str, dict]:
    """The protocol over ``jobs`` (sites of several datasets), given their held-out
    cross-site models for each C of the grid (``models``: C -> site key -> folder, from
    :func:`cross_site_fold_models` with ``cs=CROSS_SITE_C_GRID``): every setting scored on
    every page, one setting chosen per dataset on the others (:func:`choose_constants`);
    each job then carries its dataset's choice (``model_dir``, ``block_constants``) for
    ``unseen``. Returns the choice per dataset (empty without models)."""
    if not models:
        return {}
    started = time.monotonic()
    for job in jobs:
        job.models_by_c = {c: models[c][job.site_key] for c in CROSS_SITE_C_GRID}
    records = [record for found in pool.map(score_constants, jobs) for record in found]
    chosen = choose_constants(records)
    for job in jobs:
        setting = chosen[job.dataset]["setting"]
        job.model_dir = models[setting.c][job.site_key]
        job.block_constants = (setting.density_bonus, setting.tolerance, setting.relevance_bonus)
        job.models_by_c = None  # not needed by the workers any more
    for dataset, choice in chosen.items():
        logger.info(
            "unseen on %s: our blocks' extractor with %s (F1 %.4f on %s, where the shipped "
            "setting had %.4f; here %.4f, the shipped %.4f)",
            dataset, choice["setting"].label, choice["f1_on_others"],
            ", ".join(choice["chosen_on"]), choice["shipped_f1_on_others"],
            choice["f1_here"], choice["shipped_f1_here"],
        )  # fmt: skip
    logger.info(
        "unseen: %d settings of the blocks' extractor scored on %d pages in %.1f s",
        len(GRID), len({(r.dataset, r.site, r.page_id) for r in records}),
        time.monotonic() - started,
    )  # fmt: skip
    return chosen


def summary(chosen: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The choice per dataset for ``summary.json``."""
    return {
        dataset: {**choice, "setting": choice["setting"].as_dict()}
        for dataset, choice in chosen.items()
    }


def choose_constants(records: Sequence[PageRecord]) -> dict[str, dict[str, Any]]:
    """Per dataset, the setting of :data:`GRID` with the best F1 on the other datasets (the
    mean of their page means, special cases apart), what it scored there, and what the
    shipped setting scored on the dataset itself and on the others. With one dataset, the
    shipped setting."""
    by_setting: dict[str, dict[str, list[float]]] = {}
    for record in records:
        if record.method.startswith(METHOD_PREFIX) and not record.special_case:
            label = record.method.removeprefix(METHOD_PREFIX)
            by_setting.setdefault(label, {}).setdefault(record.dataset, []).append(record.f1)
    datasets = sorted({record.dataset for record in records})

    def f1(setting: BlockConstants, on: Sequence[str]) -> float:
        scores = by_setting.get(setting.label, {})
        means = [sum(v) / len(v) for d in on if (v := scores.get(d))]
        return sum(means) / len(means) if means else float("-inf")

    chosen: dict[str, dict[str, Any]] = {}
    for dataset in datasets:
        others = [d for d in datasets if d != dataset]
        best = max(GRID, key=lambda s: f1(s, others)) if others else SHIPPED
        chosen[dataset] = {
            "setting": best,
            "chosen_on": others,
            "f1_on_others": round(f1(best, others), 4) if others else None,
            "f1_here": round(f1(best, [dataset]), 4),
            "shipped_f1_on_others": round(f1(SHIPPED, others), 4) if others else None,
            "shipped_f1_here": round(f1(SHIPPED, [dataset]), 4),
        }
    return chosen
