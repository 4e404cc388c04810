"""The evaluation's leave-one-dataset-out choice of the constants inside our blocks'
extractor of sites never seen (:mod:`spidercrawl.evaluate.unseen_constants`)."""

from __future__ import annotations

import json

import pytest

from spidercrawl.evaluate.metrics import score_text
from spidercrawl.evaluate.runner import PageRecord
from spidercrawl.evaluate.site_methods import SiteJob
from spidercrawl.evaluate.unseen_constants import (
    CROSS_SITE_C_GRID,
    GRID,
    METHOD_PREFIX,
    SHIPPED,
    BlockConstants,
    choose_constants,
    score_constants,
)
from spidercrawl.extract.unseen import DEFAULT_CROSS_SITE_MODEL, UnseenExtractor
from tests.conftest import SHARED

CHAOS = SHARED / "ziyan-spider" / "chaos"


def test_each_dataset_gets_the_setting_the_other_datasets_liked() -> None:
    liked = {"a": GRID[0], "b": GRID[-1], "c": GRID[-1]}
    records = []
    for dataset, favourite in liked.items():
        for setting in GRID:
            for page in range(3):
                record = PageRecord(dataset, "site", f"{page:03}", METHOD_PREFIX + setting.label)
                record.f1 = 0.9 if setting == favourite else 0.8
                records.append(record)
    chosen = choose_constants(records)
    # "a" is scored with what "b" and "c" liked, never with its own favourite.
    assert chosen["a"]["setting"] == GRID[-1] and chosen["a"]["chosen_on"] == ["b", "c"]
    assert chosen["a"]["f1_on_others"] == 0.9 and chosen["a"]["f1_here"] == 0.8
    assert chosen["b"]["setting"] == GRID[0]  # "a" and "c" tie; the grid's first wins
    assert chosen["a"]["shipped_f1_here"] == 0.8
    lone = choose_constants([r for r in records if r.dataset == "a"])
    assert lone["a"]["setting"] == SHIPPED and lone["a"]["chosen_on"] == []


@pytest.mark.skipif(not CHAOS.is_dir(), reason="needs ../shared/ziyan-spider")
def test_every_setting_is_scored_and_the_shipped_one_as_the_crawl_extracts(tmp_path) -> None:
    """The grid reuses a page's signals across settings: the shipped setting's score must be
    that of the extractor a crawl runs, and other settings must change some articles."""
    ids = ["057", "078", "095"]
    (tmp_path / "gold").mkdir()
    pages = {}
    for page_id in ids:
        pages[page_id] = json.loads((CHAOS / f"{page_id}.json").read_text("utf-8"))
        gold = (CHAOS / f"{page_id}.txt").read_text("utf-8-sig")
        (tmp_path / "gold" / f"{page_id}.txt").write_text(gold, "utf-8")
    job = SiteJob("unseen", "chaos", "chaos", str(tmp_path), pages, [*ids, "999"])
    job.models_by_c = {c: str(DEFAULT_CROSS_SITE_MODEL) for c in CROSS_SITE_C_GRID}
    records = score_constants(job)
    assert len(records) == len(ids) * len(GRID)  # page 999 was not rendered: left out
    extractor = UnseenExtractor.load()
    for page_id in ids:
        gold = (tmp_path / "gold" / f"{page_id}.txt").read_text("utf-8")
        expected = score_text(extractor.extract(pages[page_id]).text, gold, with_difflib=False)
        shipped = [r for r in records if r.page_id == page_id and r.method.endswith(SHIPPED.label)]
        assert [round(r.f1, 6) for r in shipped] == [round(expected.f1, 6)]
    assert len({round(r.f1, 4) for r in records}) > len(ids)
    assert BlockConstants(c=0.05).label != SHIPPED.label
