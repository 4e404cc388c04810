"""A news page's deck (the summary under its headline, outside the story's container) opens
the article, found by the page's own description and its place; nothing else is taken for
one."""

from __future__ import annotations

import lxml.html
import pytest
from scrapy.http import HtmlResponse, Request

from spidercrawl.capture.page_item import build_page_item
from spidercrawl.document.deck import (
    Deck,
    decks_in_blocks,
    decks_in_document,
    decks_of_field,
    lead_with_deck,
)
from spidercrawl.document.html import parse_raw_html
from spidercrawl.extract.api import extract_html
from spidercrawl.extract.chain import ExtractionChain
from spidercrawl.extract.fast_path import cut_raw_html
from spidercrawl.extract.item import article_item
from spidercrawl.text import word_count

DECK = (
    "The city council voted late on Tuesday to close the old harbour bridge for two years, "
    "as engineers warned that its steel had rusted far beyond repair."
)
STORY = [
    "Engineers who inspected the harbour bridge this spring found that more than half of its "
    "steel beams had lost a third of their thickness to rust since the last survey.",
    "The council's transport committee met for six hours before the vote, hearing from "
    "shopkeepers on both banks who fear that the closure will cost them their trade.",
    "A ferry service will run every fifteen minutes from next month, the council said, and "
    "buses will be diverted over the motorway crossing to the north of the city centre.",
    "The new bridge, designed to carry trams as well as cars, is due to open in two years "
    "if the contracts are signed before the end of the summer, officials told reporters.",
]


def news_page(
    deck_markup: str, description: str = DECK, first_paragraph: str = "", after: str = ""
) -> str:
    paragraphs = "".join(f"<p>{p}</p>" for p in ([first_paragraph] if first_paragraph else []))
    paragraphs += "".join(f"<p>{p}</p>" for p in STORY)
    return f"""<html><head><title>Harbour bridge to close for two years</title>
<meta name="description" content="{description}"></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<main><header><h2 class="headline">Harbour bridge to close for two years</h2>
{deck_markup}
<div class="byline">By Ann Reporter, 3 June 2025</div></header>
<figure><img src="b.jpg"><figcaption>The bridge at dawn. Photo: A. Reporter</figcaption></figure>
<div class="article-body">{paragraphs}</div></main>
<aside>{after}</aside>
<footer>Copyright 2025 The Harbour Gazette. All rights reserved.</footer></body></html>"""


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_a_deck_in_markup_of_its_own_opens_the_article():
    """A deck of spans in a div (no paragraph, no class a reader knows) right before the
    byline and the story: the article opens with it, in the text and the HTML."""
    page = news_page(f'<div class="lede"><span>HARBOURTON.</span> <span>{DECK}</span></div>')
    item = extract_html(page, "https://gazette.example/bridge", headline_in_text=False)
    assert lines(item["text"])[0] == DECK
    assert lines(item["text"])[1] == STORY[0]
    assert item["html"].startswith(f"<p>{DECK}</p>")
    assert item["word_count"] == word_count(item["text"])


@pytest.mark.parametrize(
    "markup",
    [
        f'<div style="display: none"><p>{DECK}</p></div>',  # not shown
        f'<p hidden="">{DECK}</p>',
        f'<a href="/bridge"><p>{DECK}</p></a>',  # a teaser link, not a deck
    ],
)
def test_a_description_not_shown_as_a_deck_is_not_taken(markup):
    item = extract_html(news_page(markup), "https://gazette.example/bridge")
    assert DECK not in item["text"]


def test_a_description_far_from_the_story_is_not_taken():
    """The page's description shown after the story (a teaser in the sidebar): the
    article's opening is not among the words that follow it."""
    item = extract_html(
        news_page("", after=f"<p>{DECK}</p>"), "https://gazette.example/b", headline_in_text=False
    )
    assert DECK not in item["text"]
    assert lines(item["text"])[0] == STORY[0]


def test_a_deck_the_article_holds_is_not_added_again():
    """The description is the story's first paragraph: once in the text."""
    item = extract_html(news_page("", first_paragraph=DECK), "https://gazette.example/bridge")
    assert item["text"].count("rusted far beyond repair") == 1


def test_the_og_description_is_the_deck_where_the_meta_one_is_the_first_paragraph():
    """Many pages describe themselves by their story's first paragraph in one description
    and by their deck in another (og:description): the deck is the one that opens the
    article, once."""
    page = news_page(f'<p class="standfirst">{DECK}</p>', description=STORY[0])
    page = page.replace("</head>", f'<meta property="og:description" content="{DECK}"></head>')
    item = extract_html(page, "https://gazette.example/bridge", headline_in_text=False)
    assert lines(item["text"])[:2] == [DECK, STORY[0]]


def test_a_deck_is_found_where_the_description_adds_a_sentence_of_the_sites_own():
    """A description of the deck and a sentence the site adds to every page ("Read this by
    ..."): the page shows the deck alone, and it still opens the article, on raw and
    rendered pages. A description that opens with part of a paragraph is still no deck, and
    an element that shows the whole description is the deck before one of its opening."""
    described = f"{DECK} Read this by Ann Reporter on The Harbour Gazette, the daily since 1881."
    page = news_page(f'<div class="lede"><span>{DECK}</span></div>', description=described)
    item = extract_html(page, "https://gazette.example/bridge", headline_in_text=False)
    assert lines(item["text"])[:2] == [DECK, STORY[0]]
    texts = ["Home News Sport", "Harbour bridge to close", DECK, "By Ann Reporter", *STORY]
    assert [deck.text for deck in decks_in_blocks(texts, [described])] == [DECK]
    opening = "A ferry service will run every fifteen minutes from next month, the council said."
    root = lxml.html.document_fromstring(news_page("", description=f"{opening} More to come."))
    assert decks_in_document(root, [f"{opening} More to come."]) == []  # part of a paragraph
    tagline = "News of the harbour bridge for the people of the old town and the quay."
    whole = f"{tagline} {DECK}"
    shown = f'<p class="tagline">{tagline}</p><div class="lede">{whole}</div>'
    root = lxml.html.document_fromstring(news_page(shown, description=whole))
    assert [deck.text for deck in decks_in_document(root, [whole])] == [whole]  # whole first


def test_a_short_description_or_the_headline_is_no_deck():
    root = lxml.html.document_fromstring(news_page("<p>Harbour news in brief</p>"))
    assert decks_in_document(root, ["Harbour news in brief"]) == []  # under 8 words
    headline = "Harbour bridge to close for two years as engineers warn of rust damage"
    root = lxml.html.document_fromstring(news_page(f"<h1>{headline}</h1>", description=headline))
    assert decks_in_document(root, [headline]) == []  # the headline is an <h1>
    root = lxml.html.document_fromstring(news_page(f"<p>{headline}</p>", description=headline))
    assert decks_in_document(root, [headline], [headline]) == []  # it is the title


def test_a_rendered_page_finds_its_deck_among_its_blocks():
    texts = ["Home News Sport", "Harbour bridge to close", DECK, "By Ann Reporter", *STORY]
    decks = decks_in_blocks(texts, [DECK])
    assert [deck.text for deck in decks] == [DECK]
    text, html = lead_with_deck("\n\n".join(STORY), "<p>story</p>", decks)
    assert lines(text) == [DECK, *STORY] and html.startswith(f"<p>{DECK}</p>")


@pytest.mark.parametrize(
    "value", [None, "a deck", ["text"], {"text": 3, "following": ""}, {"text": "", "following": ""}]
)
def test_a_malformed_deck_field_is_no_deck(value):
    """A capture's ``decks`` come from a crawl cache or a queue: any other shape is none."""
    assert Deck.of_field(value) is None
    assert decks_of_field(value) == [] and decks_of_field([value]) == []
    assert decks_of_field([{"text": DECK, "following": "x"}]) == [Deck(DECK, "x")]
    assert decks_of_field([{"text": DECK * 100, "following": "x"}]) == []  # none is this long


def test_a_description_of_a_whole_story_is_no_deck():
    """A page whose description holds thousands of words (and an element that holds them
    too): no deck, and no alignment of thousands of words by thousands."""
    story = " ".join(STORY * 60)
    root = lxml.html.document_fromstring(news_page(f"<p>{story}</p>", description=story))
    assert decks_in_document(root, [story]) == []
    assert decks_in_blocks([story, *STORY], [story]) == []


def test_a_page_of_the_crawls_fast_path_keeps_its_deck():
    """The crawl's way without a browser: the page item built from the raw page's capture
    carries its decks, and the article made of that item opens with the deck."""
    url = "https://gazette.example/bridge"
    html = news_page(f'<div class="lede"><span>{DECK}</span></div>')
    capture = cut_raw_html(parse_raw_html(html), url, None)[0]
    response = HtmlResponse(url, body=html.encode(), encoding="utf-8", request=Request(url))
    page = build_page_item(response, capture, "gazette.example", "sitemap")
    assert decks_of_field(page["decks"]) == decks_of_field(capture["decks"]) != []
    result = ExtractionChain().extract(page, None)
    item = article_item(page, result.extraction, result.method, None, headline_in_text=False)
    assert lines(item["text"])[:2] == [DECK, STORY[0]]
