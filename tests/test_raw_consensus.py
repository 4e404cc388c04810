"""Pages no browser rendered: the consensus of text density, readability-lxml and
trafilatura on the raw HTML (``extract_html``, the extract command, a failed render), and
the fast path's independent check of the rules' article."""

from __future__ import annotations

from pathlib import Path

import pytest

import spidercrawl
from spidercrawl.evaluate.metrics import score_text
from spidercrawl.extract.chain import ExtractionChain
from spidercrawl.extract.readers import Peers
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.rules import FastPathArticle, RuleExtraction
from tests.test_fallbacks import post_page

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
TOPICS = ("the quay", "the ferry", "the budget", "the school", "the lighthouse", "the market")


def story_paragraphs(count: int = 10) -> list[str]:
    return [
        f"Paragraph {n + 1}: the council said on Tuesday that repairs to {TOPICS[n % 6]} "
        f"would begin in spring, after a survey found damage that the winter storms had "
        f"made worse, and that residents would be told of every closure a week ahead."
        for n in range(count)
    ]


def story_page(paragraphs: list[str]) -> str:
    menu = "".join(f"<li><a href='/s{n}'>Section {n}</a></li>" for n in range(12))
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    return (
        "<html><head><title>Harbour repairs | Harbour Times</title></head><body>"
        f"<nav><ul>{menu}</ul></nav><article><h1>Harbour repairs begin in spring</h1>{body}"
        "</article><aside><a href='/more'>More stories from the harbour</a></aside>"
        "<footer>Copyright the Harbour Times</footer></body></html>"
    )


@pytest.fixture(scope="module")
def model() -> SiteModel:
    """A real site model with extraction rules (learned from handmade blog posts)."""
    fitted = SiteModel().fit([post_page(n) for n in range(10)])
    assert fitted.rules_ is not None
    return fitted


def fast_path_page(raw_html: str, rules_text: str, model: SiteModel) -> dict:
    """The page item the fast path hands the pipeline: raw HTML, and the article its rules
    cut and checked."""
    extraction = RuleExtraction(text=rules_text, html=f"<p>{rules_text}</p>")
    return {
        "url": "https://harbourtimes.example/2026/03/repairs",
        "site": "harbourtimes.example",
        "capture_mode": "http",
        "texts": [],
        "rendered_html": raw_html,
        "fast_path_article": FastPathArticle(extraction, model.version_),
    }


def test_rules_that_caught_one_paragraph_of_ten_go_to_the_consensus(model) -> None:
    paragraphs = story_paragraphs()
    page = fast_path_page(story_page(paragraphs), paragraphs[0], model)
    result = ExtractionChain(peers=Peers()).extract(page, model)
    assert result.method != "rules" and result.rules_check == "doubted", result.note
    assert "text density's reading disagrees with the rules" in result.note
    assert paragraphs[-1] in result.extraction.text and paragraphs[0] in result.extraction.text
    unchecked = ExtractionChain(peers=Peers(), check_rules=False).extract(page, model)
    assert unchecked.method == "rules" and paragraphs[-1] not in unchecked.extraction.text


def test_rules_that_caught_half_the_article_are_doubted_and_the_readers_give_it_whole(
    model,
) -> None:
    """Rules that took the first half of the story (a raw page that holds the rest in
    another wrapper): text density's reading agrees with them only in part (about two
    thirds), which does not let them stand; the readers of the raw HTML give the whole."""
    paragraphs = story_paragraphs()
    half = "\n\n".join(paragraphs[: len(paragraphs) // 2])
    page = fast_path_page(story_page(paragraphs), half, model)
    result = ExtractionChain(peers=Peers()).extract(page, model)
    assert result.rules_check == "doubted", result.note
    assert paragraphs[-1] in result.extraction.text, result.note


def test_rules_that_caught_the_whole_article_stand_without_the_peers(model) -> None:
    paragraphs = story_paragraphs()
    whole = "\n\n".join(["Harbour repairs begin in spring", *paragraphs])
    page = fast_path_page(story_page(paragraphs), whole, model)
    consensus = Peers()
    asked = []
    consensus.extractors = {
        name: lambda html, n=name: asked.append(n) or "" for name in consensus.extractors
    }
    result = ExtractionChain(peers=consensus).extract(page, model)
    assert result.method == "rules" and result.note == "" and asked == []
    assert result.rules_check == "density"  # a hand-made cut carries no prose reading


def test_a_peer_that_raises_is_one_vote_less(model) -> None:
    paragraphs = story_paragraphs()
    page = fast_path_page(story_page(paragraphs), paragraphs[0], model)
    consensus = Peers()

    def broken(html: str) -> str:
        raise RecursionError("a peer met a page it cannot read")

    consensus.extractors = dict.fromkeys(consensus.extractors, broken)
    result = ExtractionChain(peers=consensus).extract(page, model)
    assert result.extraction.text and result.errors == []
    assert "consensus of 4 readers" in result.note


def test_without_the_peers_or_on_a_huge_page_text_density_reads_alone() -> None:
    page = story_page(story_paragraphs()).encode()
    alone = spidercrawl.extract_html(page, raw_consensus=False)
    assert alone["method"] == "density" and "text density on the raw HTML" in alone["method_note"]
    no_peers = ExtractionChain(peers=Peers(names=[]))
    item = {"url": "", "capture_mode": "http", "texts": [], "rendered_html": page.decode()}
    result = no_peers.extract(item, None)
    assert result.method == "density" and "density alone (no peers installed)" in result.note
    padded = page.decode().replace("</footer>", "</footer>" + "<!-- pad -->" * 400_000)
    huge = {**item, "rendered_html": padded}
    result = ExtractionChain(peers=Peers()).extract(huge, None)
    assert result.method == "density" and "over the peers' size" in result.note


@pytest.mark.skipif(not DATASETS.exists(), reason="../shared/datasets not at hand")
def test_where_density_strays_the_readers_of_raw_html_outvote_it() -> None:
    """dallasnews.com (2017): text density keeps a third of the article; trafilatura, which
    the arbiter believes on a page of today's markup, reads all of it."""
    site = DATASETS / "gtrends2017-dev" / "dallasnews.com"
    raw, gold = (site / "pages" / "000.html").read_bytes(), (site / "gold" / "000.txt").read_text()
    url = "https://dallasnews.com/a"
    consensus = spidercrawl.extract_html(raw, url)
    density = spidercrawl.extract_html(raw, url, raw_consensus=False)
    assert consensus["method"] == "raw-consensus"
    note = consensus["method_note"]
    assert "today's markup" in note and "trafilatura's reading" in note
    assert score_text(consensus["text"], gold).f1 > score_text(density["text"], gold).f1 + 0.1


def test_past_the_pages_time_budget_no_peer_is_asked(model) -> None:
    paragraphs = story_paragraphs()
    consensus = Peers()
    asked = []
    consensus.extractors = {
        name: lambda html, n=name: asked.append(n) or "" for name in consensus.extractors
    }
    spent = ExtractionChain(peers=consensus, time_budget=0)
    doubted = spent.extract(fast_path_page(story_page(paragraphs), paragraphs[0], model), model)
    assert doubted.method == "rules" and "time budget was spent" in doubted.note
    plain = {
        "url": "",
        "capture_mode": "http",
        "texts": [],
        "rendered_html": story_page(paragraphs),
    }
    alone = spent.extract(plain, None)
    assert alone.method == "density" and "time budget was spent" in alone.note
    assert asked == []
