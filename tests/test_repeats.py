"""A paragraph the article repeats three times or more is kept once; twice, it stays."""

from __future__ import annotations

from spidercrawl import extract_html
from spidercrawl.document.repeats import without_repeats

PLACEHOLDER = "External content not available. Your privacy settings block embedded posts."
STORY = [
    "The harbour council voted on Tuesday to rebuild the old stone pier before winter.",
    "Fishermen had asked for the repair since the storms of last March broke its end.",
    "The work starts in October and should take eleven weeks, the council said.",
    "A ferry will run from the beach while the pier is closed to boats and walkers.",
]


def test_a_paragraph_seen_three_times_is_kept_once_in_text_and_html() -> None:
    paragraphs = [STORY[0], PLACEHOLDER, STORY[1], PLACEHOLDER, STORY[2], PLACEHOLDER.upper()]
    html = "".join(f"<div><p>{p}</p></div>" for p in paragraphs)
    text, clean, removed = without_repeats("\n\n".join(paragraphs), html)
    assert text.split("\n\n") == [STORY[0], PLACEHOLDER, STORY[1], STORY[2]]
    assert removed == 2
    assert clean.count("External content") + clean.count("EXTERNAL CONTENT") == 1
    assert all(line in clean for line in STORY[:3])


def test_a_paragraph_seen_twice_and_short_repeats_stay() -> None:
    refrain = "I make the money move and I do not dance now"
    paragraphs = [STORY[0], refrain, STORY[1], refrain, "Share this", "Share this", "Share this"]
    text = "\n\n".join(paragraphs)
    assert without_repeats(text, "") == (text, "", 0)


def test_damaged_clean_html_keeps_its_text_cut() -> None:
    text = "\n\n".join([PLACEHOLDER] * 4)
    cut, html, removed = without_repeats(text, "<")
    assert (cut, removed) == (PLACEHOLDER, 3)
    assert html == "<"  # nothing to parse: as it was


def test_the_article_of_a_page_with_a_placeholder_at_each_embed_holds_it_once() -> None:
    """extract_html, and with it the crawl's item, the CLI and the datatrove step."""
    body = []
    for number, line in enumerate(STORY):
        body.append(f"<p>{line}</p>")
        if number < 3:
            body.append(f"<div class='embed-consent'><p>{PLACEHOLDER}</p></div>")
    page = (
        "<html><head><title>Pier to be rebuilt</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        f"<article><h1>Pier to be rebuilt</h1>{''.join(body)}</article>"
        "<footer><p>The Harbour Times</p></footer></body></html>"
    )
    item = extract_html(page, url="https://harbour.example/news/pier")
    assert item["text"].count(PLACEHOLDER) == 1, item["text"]
    assert all(line in item["text"] for line in STORY)
    assert item["html"].count(PLACEHOLDER) == 1
    assert item["markdown"].count(PLACEHOLDER) == 1


def test_clean_html_nested_as_deep_as_a_page_may_be_keeps_its_story() -> None:
    """libxml2 drops what lies deeper than 255 elements unless asked for huge trees; a
    page's tree is flattened only past 512."""
    inner = "".join(f"<p>{line}</p><p>{PLACEHOLDER}</p>" for line in STORY)
    html = "<div>" * 500 + inner + "</div>" * 500
    text = "\n\n".join(p for line in STORY for p in (line, PLACEHOLDER))
    _, clean, removed = without_repeats(text, html)
    assert removed == 3
    assert clean.count(PLACEHOLDER) == 1
    assert all(line in clean for line in STORY)
