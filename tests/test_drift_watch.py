"""The drift watch, without a crawler: when a site's model no longer fits, and when pages
of no known layout make a new layout."""

from __future__ import annotations

from spidercrawl.learn.drift import DriftWatch, FitVerdict

RENDERED = {"texts": [{"text": ["a block"]}]}
PLAIN = {"texts": []}


def test_half_the_window_failing_is_drift_and_its_misfits_are_learned_from() -> None:
    watch = DriftWatch(window=4, max_failure_share=0.5, min_pages=3)
    verdicts = [watch.observe(RENDERED, fitted) for fitted in (True, True, False)]
    assert verdicts == [FitVerdict.KEEP] * 3  # fewer than a window of pages seen
    assert watch.observe(RENDERED, False) is FitVerdict.DRIFT  # 2 of the last 4 failed
    assert len(watch.take_misfits()) == 2 and not watch.misfits
    watch.restart()
    assert watch.failures == 0


def test_pages_of_no_known_layout_make_a_new_layout_not_drift() -> None:
    watch = DriftWatch(window=4, max_failure_share=0.5, min_pages=3)
    verdicts = [watch.observe(RENDERED, False, of_no_layout=True) for _ in range(3)]
    assert verdicts == [FitVerdict.KEEP, FitVerdict.KEEP, FitVerdict.NEW_LAYOUT]
    assert watch.failures == 0  # not counted against the model
    assert len(watch.take_misfits()) == 3


def test_without_collecting_layouts_pages_of_no_layout_count_as_drift() -> None:
    watch = DriftWatch(window=2, max_failure_share=0.5, min_pages=10)
    watch.observe(RENDERED, True)
    verdict = watch.observe(RENDERED, False, of_no_layout=True, collects_layouts=False)
    assert verdict is FitVerdict.DRIFT


def test_a_page_without_blocks_counts_but_is_not_kept_to_learn_from() -> None:
    watch = DriftWatch(window=10, max_failure_share=0.5, min_pages=2)
    for _ in range(3):
        assert watch.observe(PLAIN, False) is FitVerdict.KEEP
    assert watch.failures == 3 and len(watch.misfits) == 0


def test_after_a_failed_learning_the_next_try_comes_with_enough_new_pages() -> None:
    from spidercrawl.learn.drift import LearningRetries

    retries = LearningRetries(min_pages=2, max_pages=3, max_tries=2)
    first = [{"texts": [1], "n": n} for n in range(4)]
    assert retries.failed_on(first) and retries.waiting
    assert retries.observe({"texts": [], "n": "plain"}) is None  # no blocks: not counted
    assert retries.observe({"texts": [1], "render_failed": "x"}) is None
    assert retries.observe({"texts": [1], "n": 4}) is None
    due = retries.observe({"texts": [1], "n": 5})
    assert [page["n"] for page in due] == [3, 4, 5]  # the newest max_pages
    assert not retries.failed_on(due)  # the second failure is the last try
    assert not retries.waiting and retries.failed == 2


def test_with_one_learner_for_every_worker_a_failure_is_not_tried_again() -> None:
    from spidercrawl.learn.drift import LearningRetries

    retries = LearningRetries(min_pages=2, max_pages=3, max_tries=3)
    assert not retries.failed_on([{"texts": [1]}], may_retry=False)
    assert not retries.waiting
