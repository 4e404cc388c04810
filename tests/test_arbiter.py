"""The arbiter of a never-seen page's raw HTML: trafilatura reads every page; the page's
markup and the readers' agreement decide whose article is delivered; a reader that fails
leaves the decision to the others, and the item's note says so."""

from __future__ import annotations

import time

import spidercrawl
from spidercrawl.extract.chain import ExtractionChain
from spidercrawl.extract.decision import markup_evidence
from spidercrawl.extract.readers import Peers
from tests.test_raw_consensus import story_page, story_paragraphs

VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'


def modern_page(paragraphs: list[str]) -> str:
    return story_page(paragraphs).replace("<head>", f"<head>{VIEWPORT}")


def plain_item(html: str) -> dict:
    return {"url": "https://harbourtimes.example/a", "capture_mode": "http", "texts": [],
            "rendered_html": html}  # fmt: skip


def test_markers_of_todays_markup_are_found_and_older_markup_has_none() -> None:
    assert markup_evidence(modern_page(["x"])).markers == ("viewport",)
    lazy = '<script type="application/ld+json">{}</script><img loading=lazy src=a.png>'
    assert markup_evidence(lazy).markers == ("json-ld", "lazy images")
    older = "<html><body><table><tr><td><font>Old news</font></td></tr></table></body></html>"
    assert not markup_evidence(older).modern
    assert markup_evidence(story_page(["x"])).describe() == "older markup"


def test_on_todays_markup_trafilaturas_reading_is_the_article() -> None:
    paragraphs = story_paragraphs()
    item = spidercrawl.extract_html(modern_page(paragraphs).encode(), "https://h.example/a")
    assert item["method"] == "raw-consensus", item["method_note"]
    assert "today's markup (viewport): trafilatura's reading" in item["method_note"]
    assert all(paragraph in item["text"] for paragraph in paragraphs)
    assert "Section 3" not in item["text"] and "Copyright" not in item["text"]


def test_on_older_markup_text_density_stands_where_readability_agrees() -> None:
    paragraphs = story_paragraphs()
    consensus = Peers()
    asked: list[str] = []
    real = dict(consensus.extractors)
    consensus.extractors = {
        name: (lambda html, n=name: asked.append(n) or real[n](html)) for name in real
    }
    result = ExtractionChain(peers=consensus).extract(plain_item(story_page(paragraphs)), None)
    assert "older markup: readability agrees with text density" in result.note, result.note
    assert result.method == "density" and result.note.endswith(": density's reading")
    assert asked == ["readability"]  # trafilatura's reading could not change the article
    assert all(paragraph in result.extraction.text for paragraph in paragraphs)


def test_a_reader_that_raises_leaves_the_decision_to_the_others_and_the_note_says_so() -> None:
    paragraphs = story_paragraphs()
    consensus = Peers()

    def broken(html: str) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    consensus.extractors = {**consensus.extractors, "trafilatura": broken,
                            "trafilatura-recall": broken}  # fmt: skip
    result = ExtractionChain(peers=consensus).extract(plain_item(modern_page(paragraphs)), None)
    assert result.errors == [] and result.extraction.text
    assert "trafilatura found almost nothing; the medoid of the others" in result.note
    assert "trafilatura failed (RecursionError: maximum recursion depth exceeded)" in result.note
    assert all(paragraph in result.extraction.text for paragraph in paragraphs)


def test_where_trafilatura_finds_almost_nothing_its_reading_that_keeps_more_is_asked() -> None:
    paragraphs = story_paragraphs()
    consensus = Peers()
    consensus.extractors = {**consensus.extractors, "trafilatura": lambda html: "Harbour repairs"}
    result = ExtractionChain(peers=consensus).extract(plain_item(modern_page(paragraphs)), None)
    assert result.extraction.source == "trafilatura-recall", result.note
    assert "its reading that keeps more" in result.note
    assert all(paragraph in result.extraction.text for paragraph in paragraphs)


def test_markup_evidence_of_a_hostile_page_is_bounded() -> None:
    """Sixteen megabytes of unclosed ``<meta`` tags: read in one pass, each tag's
    attributes only to the next angle bracket (0.2 s measured alone; a pattern reading on
    to the end from every tag took 0.58 s on a quarter of it, and grows with its square).
    The bound is on this process's CPU time, which other processes on a loaded machine do
    not lengthen (wall time reached 9 s under the full suite beside an evaluation)."""
    started = time.process_time()
    assert not markup_evidence("<meta " * 2_600_000).modern
    assert time.process_time() - started < 3.0
