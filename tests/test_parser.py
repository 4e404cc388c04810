"""A layout's parser induced from the vote of its pages' readings: the container's whole
story (a second wrapper, lists, text a closed ``<p>`` leaves), the kinds and roles that
are never the story left out, class-less markup, a layout left to the arbiter, the parser
printed as a person writes it, and a malformed parser refused when loaded."""

from __future__ import annotations

import copy
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import lxml.html
import pytest

from spidercrawl.document.selectors import Step
from spidercrawl.learn import model_file
from spidercrawl.learn.consensus_labels import CONSENSUS_FIELD, ConsensusArticle
from spidercrawl.learn.model import MODEL_FILE, LearningError, SiteModel, _stored_classes
from spidercrawl.learn.parser import ParserPart, dropped_kinds
from spidercrawl.learn.parser_view import parser_lines
from spidercrawl.learn.rules import ExtractionRules, raw_document
from tests.test_fallbacks import FOOTER, NAV, PageBuilder, sentence

APP_BOXES = [
    f"Get our app: the Harbour Times on your phone, with alerts for {topic} as it happens."
    for topic in ("the harbour", "the council", "the schools", "the weather", "the ferries")
]


def story_html(number: int) -> tuple[str, list[str], list[str]]:
    """A news story as its raw HTML is served: the second half of the story one wrapper
    deeper, a sub-heading and a list, a pull quote opened inside a paragraph (the parser
    closes the ``<p>`` there, and the rest of the paragraph stands in the container), and
    the things that are never the story: a photo's caption, an embedded tweet, a box of
    related links, an app promotion and the author's contact line. Returns the HTML, the
    story's lines and the lines that are not the story."""
    rng = random.Random(number)
    first, second, third, fourth = (f"story{number} {sentence(rng, 25)}" for _ in range(4))
    rest = f"and after the quote story{number} {sentence(rng, 20)}"
    items = [f"item{number} {sentence(rng, 12)}" for _ in range(2)]
    subhead = f"What the council{number} decided"
    noise = [
        f"The pier{number} at dawn, seen from boat{number} (photo by crew{number})",
        f"The tide{number} is late again tonight, wrote a reader{number}",
        f"Ferry fares{number} rise",
        f"Pull quote{number}: we waited years",
        APP_BOXES[number % 5],
        f"Write to reporter{number} at reporter{number}@harbour.example or on Twitter "
        f"@reporter{number}",
    ]
    related = "".join(
        f"<li><a href='/r/{i}'>{noise[2] if i == 0 else f'Other story{number}-{i}'}</a></li>"
        for i in range(3)
    )
    html = (
        "<html><head><title>Story</title></head><body>"
        "<div class='masthead'><a href='/'>Home</a> <a href='/news'>News</a></div>"
        f"<article class='story'><h1>Harbour story {number}</h1><div class='story-body'>"
        f"<p>{first}</p>"
        f"<figure class='photo'><img src='/p.jpg'><figcaption>{noise[0]}</figcaption></figure>"
        f"<p>{second}<aside class='pull'>{noise[3]}</aside>{rest}</p>"
        f"<blockquote class='twitter-tweet'><p>{noise[1]}</p>"
        f"<a href='https://twitter.com/reader/status/1'>May 1</a></blockquote>"
        f"<h2>{subhead}</h2><ul><li>{items[0]}</li><li>{items[1]}</li></ul>"
        f"<div class='related'><ul>{related}</ul></div>"
        f"<p class='promo'>{noise[4]}</p>"
        f"<div class='read-all'><div class='more'><p>{third}</p><p>{fourth}</p></div></div>"
        f"<p>{noise[5]}</p>"
        "</div></article>"
        f"<div class='sidebar'><p>Most read story{number + 1} {sentence(rng, 15)}</p></div>"
        "<footer><p>© The Harbour Times</p></footer></body></html>"
    )
    story = [first, second, rest, subhead, *items, third, fourth]
    return html, story, noise


def story_item(number: int) -> tuple[dict, list[int], list[str], list[str]]:
    """The page item of :func:`story_html` with its blocks' texts and the readers' votes
    (three readers keep the story alone); and the blocks a noisy site model keeps: every
    line of the first wrapper, captions, tweet, boxes and contact line included, the
    second wrapper, the list and the rest of the split paragraph missed."""
    html, story, noise = story_html(number)
    first, second, rest, subhead, item_a, item_b, third, fourth = story
    blocks = [first, noise[0], second, noise[3], noise[1], subhead, noise[4], noise[5]]
    blocks += [rest, item_a, item_b, third, fourth]
    mask = list(range(8))
    item = {
        "url": f"https://harbour.example/story/{number}",
        "rendered_html": html,
        "raw_html": html,
        "texts": [{"text": [text]} for text in blocks],
        "descriptions": [],
        CONSENSUS_FIELD: ConsensusArticle(
            "\n\n".join(story), 0.9, ["\n\n".join(story)] * 3
        ).as_field(),
    }
    return item, mask, story, noise


@pytest.fixture(scope="module")
def story_rules() -> ExtractionRules:
    items = [story_item(n) for n in range(8)]
    content = [(page, index) for page, (_, mask, _, _) in enumerate(items) for index in mask]
    return ExtractionRules().fit([item for item, *_ in items], content)


def test_the_whole_story_of_the_container_is_in_the_fast_paths_article(story_rules) -> None:
    assert [part.css for part in story_rules.containers] == ["div.story-body"]
    assert story_rules.usable and not story_rules.serving_
    for number in (30, 31):
        html, story, noise = story_html(number)
        result = story_rules.extract(raw_document(html))
        assert story_rules.check(result).ok
        for line in story:
            assert line in result.text
        for line in noise:
            assert line not in result.text, line
        assert "Most read" not in result.text and "Home" not in result.text
        # In document order: the quote's paragraph, its rest, the list, the second wrapper.
        order = [result.text.index(line) for line in story]
        assert order == sorted(order)


def test_the_parser_lists_what_it_leaves_out_with_its_evidence(story_rules) -> None:
    exclusions = {part.css: part for part in story_rules.exclusions}
    assert "p.promo" in exclusions
    promo = exclusions["p.promo"]
    assert promo.pages == 8 and promo.kept_share == 0.0 and promo.repeated_share > 0.5
    markup = {part.css: part.why for part in story_rules.parts_ if part.kind == "markup"}
    assert markup["figure.photo"] == "by its markup: figure"
    assert markup["blockquote.twitter-tweet"] == "by its markup: an embedded post"
    assert markup["div.related"] == "by its markup: a list of links"
    assert markup["aside.pull"] == "by its markup: aside"
    assert markup["p"] == "by its markup: a contact line"


def classless_item(number: int) -> tuple[dict, list[str]]:
    rng = random.Random(number)
    story = [f"story{number} {sentence(rng, 25)}" for _ in range(4)]
    html = (
        "<html><body><div><a href='/'>Home</a> <a href='/a'>Archive</a></div>"
        "<div><div>" + "".join(f"<p>{line}</p>" for line in story) + "</div>"
        f"<div><p>Comment{number}: {sentence(rng, 20)}</p></div></div>"
        "<div><p>Copyright the Harbour</p></div></body></html>"
    )
    return voted_item(html, story), story


def voted_item(html: str, story: list[str]) -> dict:
    """A training page whose story's paragraphs are its blocks, read as the story alone
    by three readers."""
    return {
        "rendered_html": html,
        "texts": [{"text": [line]} for line in story],
        CONSENSUS_FIELD: ConsensusArticle(
            "\n\n".join(story), 0.9, ["\n\n".join(story)] * 3
        ).as_field(),
    }


def test_a_classless_layout_still_has_its_container_and_no_classless_paragraph_path() -> None:
    items = [classless_item(n) for n in range(6)]
    content = [(page, index) for page in range(6) for index in range(4)]
    rules = ExtractionRules().fit([item for item, _ in items], content)
    assert [(part.css, part.anchored) for part in rules.containers] == [
        ("body > div:nth-of-type(2) > div:nth-of-type(1)", True)
    ]
    assert not [part for part in rules.parts_ if part.kind != "container" and part.anchored]
    assert not [p for p in rules.parts_ if p.kind == "exclusion" and not p.steps[-1].classes]
    new, story = classless_item(40)
    result = rules.extract(new["rendered_html"])
    assert all(line in result.text for line in story)
    assert "Comment40" not in result.text and "Archive" not in result.text


def styled_item(number: int, deploy: str) -> tuple[dict, list[str]]:
    """A story page whose wrapper and paragraphs carry, beside their own class, the names
    a CSS-in-JS library hashed for one ``deploy`` (each deploy renames them)."""
    rng = random.Random(number)
    story = [f"story{number} {sentence(rng, 25)}" for _ in range(4)]
    box, line = {"A": ("sc-gicCDI hngCMv", "czqpjL"), "B": ("sc-osfUn fobYxZ", "kzaFDA")}[deploy]
    html = (
        "<html><body><div class='nav'><a href='/'>Home</a></div>"
        f"<div class='content-area {box}'>"
        + "".join(f"<p class='{line}'>{text}</p>" for text in story)
        + f"</div><div class='more {box}'><p>Comment{number}: {sentence(rng, 20)}</p></div>"
        "<div class='footer'><p>Copyright the Harbour</p></div></body></html>"
    )
    return voted_item(html, story), story


def test_a_parser_names_no_class_a_css_in_js_library_hashed() -> None:
    from spidercrawl.learn.parser import hashed

    assert all(map(hashed, ["sc-gicCDI", "hngCMv", "czqpjL", "fobYxZ", "kzaFDA", "cxylLy"]))
    assert not any(map(hashed, ["content-area", "navBar", "mainNav", "storyBody", "TopNav"]))
    items = [styled_item(n, "A") for n in range(5)]
    content = [(page, index) for page in range(5) for index in range(4)]
    rules = ExtractionRules().fit([item for item, _ in items], content)
    assert [part.css for part in rules.containers] == ["div.content-area"]
    assert not [part for part in rules.parts_ if any(map(hashed, part.css.split(".")))]
    new, story = styled_item(40, "B")  # after the next deploy
    result = rules.extract(new["rendered_html"])
    assert rules.check(result).ok and all(text in result.text for text in story)
    assert "Comment40" not in result.text


def verdict_item(number: int, case: str) -> dict:
    """A training page for the verdict: a story of three paragraphs in ``div.story``, read
    by three readers as the story alone; the page's reading (the arbiter's) as ``case``
    makes it (module doc of the test below)."""
    rng = random.Random(number)
    story = [f"story{number} {sentence(rng, 25)}" for _ in range(3)]
    more = f"more{number} {sentence(rng, 25)}"
    tweet = f"tweet{number} {sentence(rng, 12)}"
    wrapper = "story-special" if case == "one-page" and number == 4 else "story"
    inner = "".join(f"<p>{line}</p>" for line in story)
    if case == "embedded":
        inner += (
            f"<blockquote class='twitter-tweet'><p>{tweet}</p>"
            "<a href='https://twitter.com/a/status/1'>May 1</a></blockquote>"
        )
    outside = f"<div class='more-{number}'><p>{more}</p></div>" if case == "misses" else ""
    story_html = f"<div class='{wrapper}'>{inner}</div>"
    if case == "flattened":
        story_html = f"<table><tr><td>{story_html}</td><td>Photo desk{number}</td></tr></table>"
    html = (
        "<html><body><div class='nav'><a href='/'>Home</a></div>"
        f"{story_html}{outside}"
        "<div class='footer'><p>Copyright the Harbour</p></div></body></html>"
    )
    text = "\n\n".join(story)
    readings = [text] * 3
    arbiter = text
    if case == "flattened":  # one line of the whole table row, a cell the readers drop
        arbiter = " ".join([*story, f"Photo desk{number}"])
    elif case == "embedded":  # half the readers keep the embedded post; the parser not
        readings = [f"{text}\n\n{tweet}"] * 2 + [text]
        arbiter = readings[0]
    elif case == "misses":  # story outside the container, kept by every reader
        readings = [f"{text}\n\n{more}"] * 3
        arbiter = readings[0]
    return {
        "rendered_html": html,
        "texts": [{"text": [line]} for line in story],
        CONSENSUS_FIELD: ConsensusArticle(arbiter, 0.9, readings).as_field(),
    }


@pytest.mark.parametrize("case", ["flattened", "embedded", "one-page"])
def test_a_layout_whose_parser_reads_the_story_is_served_by_it(case: str) -> None:
    """The text in dispute is judged word by word and by the readers' support: a reading
    that flattens a table row into one line disputes only the words the parser lacks
    (which no reader keeps); an embedded post the parser leaves out by its markup is not
    held against it; a page whose own wrapper no other page has is no evidence."""
    items = [verdict_item(number, case) for number in range(5)]
    content = [(page, index) for page in range(5) for index in range(3)]
    rules = ExtractionRules().fit(items, content)
    assert rules.usable and not rules.serving_, rules.read_by_arbiter
    assert [part.css for part in rules.containers] == ["div.story"]


def test_a_layout_whose_parser_misses_story_the_readers_keep_is_read_by_the_arbiter(
    boxed_model: SiteModel,
) -> None:
    items = [verdict_item(number, "misses") for number in range(5)]
    content = [(page, index) for page in range(5) for index in range(3)]
    rules = ExtractionRules().fit(items, content)
    assert rules.containers and not rules.usable
    assert rules.read_by_arbiter.startswith("on 5 training pages, the text only the page's")
    assert rules.summary()["served"] == f"by the arbiter: {rules.read_by_arbiter}"
    # The line the learner logs and the archive's learning reports for the site.
    model = copy.deepcopy(boxed_model)
    model.rules_ = rules
    assert model.read_by_arbiter() == [
        f"its pages read by the arbiter, not its parser: {rules.read_by_arbiter}"
    ]
    assert boxed_model.read_by_arbiter() == []


@pytest.fixture(scope="module")
def boxed_model() -> SiteModel:
    """A site model (classifier and parser) of ten stories with an app box the readers
    leave out and a photo caption."""
    pages = []
    body = [("div", "", ("page",)), ("article", "", ("story",)), ("div", "", ("story-body",))]
    for number in range(10):
        rng = random.Random(number)
        page = PageBuilder()
        for name in ("News", "Sport", "Weather"):
            page.add(NAV, "a", name, {}, link=True)
        story = [f"harbour{number} council{number} {sentence(rng, 30)}"]
        story += [sentence(rng, 30) for _ in range(3)]
        for index, text in enumerate(story):
            page.add(body, "p", text, {"font-size": "18px"})
            if index == 1:
                page.add([*body, ("div", "", ("app-promo",))], "p", APP_BOXES[number % 5], {})
        page.add(FOOTER, "p", "© The Harbour Times", {"font-size": "11px"})
        item = page.page(number, f"Harbour{number} story", f"harbour{number} council{number}")
        text = "\n\n".join(story)
        item[CONSENSUS_FIELD] = ConsensusArticle(text, 0.9, [text] * 3).as_field()
        pages.append(item)
    return SiteModel().fit(pages)


def test_show_prints_the_parser_with_its_evidence(boxed_model, tmp_path: Path) -> None:
    boxed_model.save(tmp_path / "harbour.example")
    shown = subprocess.run(
        [sys.executable, "-m", "spidercrawl.learn", "show", str(tmp_path / "harbour.example")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert any(line.split()[:2] == ["container", "div.story-body"] for line in lines), lines
    excluded = [line for line in lines if "div.app-promo" in line]
    assert excluded and "10 pages, vote keeps 0%" in excluded[0], lines
    assert any(line.strip().startswith("served") and "by its parser" in line for line in lines)


def test_show_on_a_folder_without_a_model_is_one_error_line(tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "spidercrawl.learn", "show", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 2
    assert shown.stdout == "" and len(shown.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda parts: parts.__setitem__(0, "body"),
        lambda parts: parts.__setitem__(0, ParserPart("run-this", parts[0].steps)),
        lambda parts: parts.__setitem__(0, ParserPart("container", ())),
        lambda parts: parts.__setitem__(0, ParserPart("container", (Step("p] | //*[x"),))),
        lambda parts: parts.__setitem__(0, ParserPart("container", parts[0].steps, pages=-1)),
        lambda parts: parts.extend([parts[0]] * 100),
    ],
)
def test_a_malformed_parser_is_refused_when_loaded(boxed_model, tmp_path: Path, damage) -> None:
    folder = boxed_model.save(tmp_path / "site")
    stored = model_file.load(folder / MODEL_FILE, _stored_classes())
    damage(stored.rules_.parts_)
    model_file.dump(folder / MODEL_FILE, stored, _stored_classes())
    with pytest.raises(LearningError, match="malformed parser"):
        SiteModel.load(folder)


def kinds_item(number: int) -> tuple[dict, list[str], list[str], list[str]]:
    """A story in a class-less wrapper under ``div#main``, with story highlights before it
    (a class-less list under ``div#highlights``, which one reader keeps) and, inside it, a
    date line, a byline (a wire story's with how long ago it was filed), a slideshow caption,
    a one-link line, a copyright line, a comment count and a picture's caption in emphasis
    (no class) the readers split on."""
    rng = random.Random(number)
    story = [f"story{number} {sentence(rng, 25)}" for _ in range(3)]
    highlights = [f"highlight{number} {sentence(rng, 9)}" for _ in range(3)]
    junk = [
        f"Page last updated at 10:{number + 10} GMT, Monday, {number + 1} March 2012",
        f"By Jane Smith{number} and John Doe"
        if number % 2
        else f"By JANE SMITH{number}, Associated Press Writer {number + 1} hours, 5 minutes ago",
        f"The pier{number} at dawn, seen from the ferry",
        f"RELATED: Ferry fares{number} rise again",
        f"© 2012 The Harbour Times{number}. All rights reserved.",
        f"{number + 3} Comments",
        f"The harbour master{number} greets the first ferry",
    ]
    html = (
        "<html><body><div class='nav'><a href='/'>Home</a> <a href='/a'>Archive</a></div>"
        f"<div id='main'><h1>Headline {number}</h1><div id='highlights'><ul>"
        + "".join(f"<li>{line}</li>" for line in highlights)
        + f"</ul></div><div><div><p>{junk[0]}</p><p>{junk[1]}</p><p>{story[0]}</p>"
        f"<div class='slideshow-cap'>{junk[2]}</div><p>{story[1]}</p>"
        f"<p>RELATED: <a href='/r/{number}'>Ferry fares{number} rise again</a></p>"
        f"<p>{story[2]}</p><p><img src='/m{number}.jpg'><br><em>{junk[6]}</em></p>"
        f"<p>{junk[4]}</p><div>{junk[5]}</div></div></div></div>"
        f"<div><p>Most read story{number + 1} {sentence(rng, 15)}</p></div></body></html>"
    )
    text, noisy = "\n\n".join(story), "\n\n".join([*junk, *story])
    item = {
        "rendered_html": html,
        "texts": [{"text": [line]} for line in [*junk, *story]],
        CONSENSUS_FIELD: ConsensusArticle(
            text, 0.9, ["\n\n".join([*highlights, text]), noisy, text]
        ).as_field(),
    }
    return item, story, highlights, junk


def test_captions_date_lines_and_one_link_lines_out_and_highlights_before_the_story_in() -> None:
    items = [kinds_item(number) for number in range(6)]
    content = [(page, index) for page in range(6) for index in range(10)]
    rules = ExtractionRules().fit([item for item, *_ in items], content)
    assert [part.css for part in rules.containers] == ["div#main > div > div"]
    assert rules.usable, rules.read_by_arbiter
    summaries = {part.css: part.why for part in rules.summaries}
    assert "story highlights right before the story" in summaries["div#highlights > ul"]
    item, story, highlights, junk = kinds_item(40)
    result = rules.extract(raw_document(item["rendered_html"]))
    assert rules.check(result).ok
    lines = result.text.split("\n\n")
    assert [line for line in lines if line.startswith("highlight40")] == highlights
    order = [result.text.index(line) for line in [*highlights, *story]]
    assert order == sorted(order)
    for line in junk:
        assert line not in result.text, line
    assert "Headline" not in result.text and "Most read" not in result.text
    markup = {(p.css, p.why) for p in rules.parts_ if p.kind == "markup" and p.pages == 6}
    assert {("div.slideshow-cap", "by its markup: a caption")} | {
        ("p", f"by its markup: {kind}")
        for kind in (
            "a date line",
            "a byline",
            "a line of one link",
            "a copyright line",
            "a caption",
        )
    } | {("div", "by its markup: a comment count")} <= markup


def deck_item(number: int) -> tuple[dict, str, list[str], str]:
    """A story under its headline, after a byline of the post's date in a ``div`` and a
    deck of spans in a ``div`` of its own (a city, then its sentences), which one reader
    keeps."""
    rng = random.Random(number)
    story = [f"story{number} {sentence(rng, 25)}" for _ in range(3)]
    deck = f"Deck{number} {sentence(rng, 12)}. Second{number} {sentence(rng, 6)}."
    author, posted = f"Jane Doe{number}", f"on Monday, May {number + 1}, 2011 at 11:{number + 10}am"
    byline = f"by {author} {posted}"
    html = (
        "<html><body><div class='nav'><a href='/'>Home</a> <a href='/a'>Archive</a></div>"
        f"<div class='post'><h1>Headline {number}</h1>"
        f"<div class='meta'>by <a href='/jane'>{author}</a> {posted}</div>"
        f"<div class='teaser'><span class='city'>Essen.</span> <span>{deck}</span></div>"
        "<div class='story'>" + "".join(f"<p>{line}</p>" for line in story) + "</div></div>"
        f"<div><p>Most read story{number + 1} {sentence(rng, 15)}</p></div></body></html>"
    )
    text = "\n\n".join(story)
    item = {
        "rendered_html": html,
        "texts": [{"text": [line]} for line in [byline, deck, *story]],
        CONSENSUS_FIELD: ConsensusArticle(
            text, 0.9, ["\n\n".join([f"Essen. {deck}", text]), text, text]
        ).as_field(),
    }
    return item, f"Essen. {deck}", story, byline


def test_a_deck_of_spans_before_the_story_is_in_and_a_byline_there_is_not() -> None:
    """A deck in markup of its own (spans in a ``div``) is a summary by its markup and place
    where it reads as sentences; a byline with the post's date in the same markup is not."""
    items = [deck_item(number) for number in range(5)]
    content = [(page, index) for page in range(5) for index in range(1, 5)]
    rules = ExtractionRules().fit([item for item, *_ in items], content)
    assert [part.css for part in rules.containers] == ["div.story"]
    summaries = {part.css: part.why for part in rules.summaries}
    assert list(summaries) == ["div.teaser"], summaries
    assert "a deck right before the story" in summaries["div.teaser"]
    item, deck, story, byline = deck_item(40)
    result = rules.extract(raw_document(item["rendered_html"]))
    assert result.text.split("\n\n") == [deck, *story]
    assert byline not in result.text and "Jane Doe" not in result.text


def test_a_template_line_is_left_out_whatever_its_quotation_marks() -> None:
    """A line the site's pages repeat inside the story's container (a newsletter's plug) is
    the template's, also on a page that writes its apostrophe as a typographer's."""
    plug = "Our newsletter: the day's news at six. Here's where to sign up!"

    def item(number: int, line: str) -> tuple[dict, list[str]]:
        rng = random.Random(number)
        story = [f"story{number} {sentence(rng, 25)}" for _ in range(3)]
        html = (
            f"<html><body><div class='post'><h1>Headline {number}</h1><div class='story'>"
            + "".join(f"<p>{text}</p>" for text in [story[0], line, *story[1:]])
            + "</div></div></body></html>"
        )
        text = "\n\n".join(story)
        return {
            "rendered_html": html,
            "texts": [{"text": [text]} for text in [story[0], line, *story[1:]]],
            CONSENSUS_FIELD: ConsensusArticle(text, 0.9, [text, text, text]).as_field(),
        }, story

    items = [item(number, plug)[0] for number in range(4)]
    content = [(page, index) for page in range(4) for index in (0, 2, 3)]
    rules = ExtractionRules().fit(items, content)
    page, story = item(40, plug.replace("'", "\u2019"))
    result = rules.extract(raw_document(page["rendered_html"]))
    assert result.text.split("\n\n") == story


def list_page(number: int, listed: str) -> tuple[dict, list[str]]:
    """A blog post, and its story's lines; ``listed`` says what list it holds: ``story``
    (steps of the story), ``offers`` (a class-less list of shop offers, a link in each but
    most words not, which the readers leave out) or ``none``."""
    rng = random.Random(number)
    story = [f"post{number} {sentence(rng, 30)}" for _ in range(4)]
    lines = {
        "story": [f"step{number}-{i} {sentence(rng, 10)}" for i in range(3)],
        "offers": [
            f"Offer{number}-{i} {sentence(rng, 6)} <a href='/shop'>buy</a>" for i in range(2)
        ],
        "none": [],
    }[listed]
    items = "".join(f"<li>{line}</li>" for line in lines)
    html = (
        "<html><body><div class='menu'><a href='/'>Home</a></div>"
        f"<article class='post'><h1>Post {number}</h1><div class='entry'>"
        f"<p>{story[0]}</p><p>{story[1]}</p>{f'<ul>{items}</ul>' if items else ''}"
        f"<p>{story[2]}</p><p>{story[3]}</p></div></article>"
        "<footer><p>(c) The Blog</p></footer></body></html>"
    )
    kept = [*story[:2], *lines, *story[2:]] if listed == "story" else story
    return agreed_item(html, [*story, *lines], kept), kept


def agreed_item(html: str, blocks: list[str], kept: list[str]) -> dict:
    """The page item of ``html`` with its blocks' texts, whose three readers all keep the
    lines ``kept``."""
    text = "\n\n".join(kept)
    return {
        "rendered_html": html,
        "texts": [{"text": [line]} for line in blocks],
        CONSENSUS_FIELD: ConsensusArticle(text, 0.9, [text] * 3).as_field(),
    }


def test_one_pages_list_the_readers_leave_out_does_not_take_every_list_of_the_layout() -> None:
    """A selector of tag and place alone (``div.entry > ul``) learned from one training
    page's list took the story's own lists off every page of the layout."""
    pages = [list_page(number, "offers" if number == 0 else "none")[0] for number in range(10)]
    content = [(page, index) for page in range(10) for index in range(4)]
    rules = ExtractionRules().fit(pages, content)
    assert rules.usable, rules.read_by_arbiter
    assert not [part.css for part in rules.exclusions if part.css.endswith("ul")]
    item, story = list_page(40, "story")
    result = rules.extract(raw_document(item["rendered_html"]))
    assert result.text.split("\n\n") == story


def wire_story(number: int, notice: str, markup: Callable[[list[str], str], str]) -> dict:
    """A wire story's page: three paragraphs and its ``notice`` set by ``markup``, which
    every reader keeps."""
    rng = random.Random(number)
    story = [f"wire{number} {sentence(rng, 30)}" for _ in range(3)]
    html = (
        "<html><body><div class='menu'><a href='/'>Home</a></div><div class='story'>"
        + markup(story, notice)
        + "</div><footer><p>(c) The Paper</p></footer></body></html>"
    )
    return agreed_item(html, [*story, notice], [*story, notice])


def text_of_a_new_page(page: Callable[[int], dict]) -> str:
    """The article of a new page by the parser learned from six of ``page``'s."""
    rules = ExtractionRules().fit(
        [page(n) for n in range(6)], [(p, i) for p in range(6) for i in range(4)]
    )
    assert rules.usable, rules.read_by_arbiter
    return rules.extract(raw_document(page(40)["rendered_html"])).text


def test_a_copyright_line_is_left_out_even_where_every_reader_keeps_it() -> None:
    """A wire story's copyright notice at the end of the story, which the readers keep:
    the page's text, never its story."""

    def page(number: int) -> dict:
        notice = f"© Copyright {2000 + number} Wires{number}. All rights reserved."
        return wire_story(number, notice, lambda story, notice: "".join(
            f"<p>{line}</p>" for line in [*story, notice]
        ))  # fmt: skip

    text = text_of_a_new_page(page)
    assert text.startswith("wire40") and "Copyright" not in text


def test_a_byline_is_left_out_even_where_every_reader_keeps_it() -> None:
    """A story's byline above its first paragraph, which every reader keeps: its author,
    whom the article names in ``authors``, not a line of its story."""

    def page(number: int) -> dict:
        byline = f"By Jane Writer{number} and John Doe"
        return wire_story(number, byline, lambda story, byline: "".join(
            f"<p>{line}</p>" for line in [byline, *story]
        ))  # fmt: skip

    text = text_of_a_new_page(page)
    assert text.startswith("wire40") and "Writer40" not in text, text


def test_readers_comments_in_the_container_are_left_out_even_where_every_reader_keeps_them() -> (
    None
):
    """A blog's comments inside the post's container (``div#comments`` holding a
    ``dl#comment_list``), kept by every reader: what its readers answered, not what the
    publisher wrote. A ``div.commentary`` is a column, and stays."""

    def page(number: int) -> dict:
        rng = random.Random(number + 100)
        comments = [f"reader{number}-{i} {sentence(rng, 14)}" for i in range(3)]
        return wire_story(number, "\n\n".join(comments), lambda story, joined: (
            "".join(f"<p>{line}</p>" for line in story[:2])
            + f"<div class='commentary'><p>{story[2]}</p></div>"
            + "<div id='comments'><h3>3 Responses</h3><dl id='comment_list'>"
            + "".join(
                f"<dt class='comment-author'>Reader {i}</dt>"
                f"<dd class='comment even'><p>{c}</p></dd>"
                for i, c in enumerate(joined.split("\n\n"))
            )
            + "</dl></div>"
        ))  # fmt: skip

    text = text_of_a_new_page(page)
    assert text.startswith("wire40") and text.split("\n\n")[-1].startswith("wire40"), text
    assert "reader40" not in text and "Responses" not in text
    comments = lxml.html.fromstring(
        "<div><section class='article-comments'><p>x</p></section><div class='commentary'>"
        "<p>y</p></div><ol class='commentlist'><li>z</li></ol></div>"
    )
    assert [e.get("class") for e in dropped_kinds(comments)] == ["article-comments", "commentlist"]


def test_comments_in_the_storys_own_markup_after_their_anchor_are_left_out() -> None:
    """A 2008 news page writes its readers' comments in its story's own paragraphs
    (``p.story``), after an empty ``<a name="comments">`` and a heading: what follows the
    anchor is the comments. An anchor before the story (a page that opens with it) leaves
    the story in. The comments are no prose of the page the article missed: the fast path's
    check still finds the page's prose in the article."""

    def page(number: int) -> dict:
        rng = random.Random(number + 200)
        comments = [f"reader{number}-{i} {sentence(rng, 14)}" for i in range(8)]
        return wire_story(number, "\n\n".join(comments), lambda story, joined: (
            "".join(f"<p class='story'>{line}</p>" for line in story)
            + "<a name='comments'></a><div class='yvhd'>Comments</div>"
            + "".join(
                f"<p class='story'>{c}<br><b>Posted by Reader {i} on January 10, 2008</b></p>"
                for i, c in enumerate(joined.split("\n\n"))
            )
        ))  # fmt: skip

    rules = ExtractionRules().fit(
        [page(n) for n in range(6)], [(p, i) for p in range(6) for i in range(4)]
    )
    assert rules.usable, rules.read_by_arbiter
    result = rules.extract(raw_document(page(40)["rendered_html"]))
    text = result.text
    assert text.startswith("wire40") and text.split("\n\n")[-1].startswith("wire40"), text
    assert "reader40" not in text and "Posted by" not in text
    assert rules.check(result).ok and result.prose.agrees_with(len(text.split()))
    rng = random.Random(7)
    story = "".join(f"<p class='story'>{sentence(rng, 25)}</p>" for _ in range(3))
    opening = lxml.html.fromstring(f"<div><a name='comments'></a>{story}</div>")
    assert dropped_kinds(opening) == {}


def test_sign_up_boxes_teaser_cards_and_their_headings_in_the_story_are_left_out() -> None:
    """Today's story containers hold a newsletter's sign-up (a heading, a blurb, a form, a
    consent line), a teaser card for another story (a link around a box: "Read also" and
    its title) and a box of such cards under a heading ("More on ..."), on which the
    readers split: none of it is the story. A heading over a shop's one price link, a
    long box beside a button, and a link around a line break are no such kinds."""

    def page(number: int) -> dict:
        rng = random.Random(number)
        story = [f"today{number} {sentence(rng, 30)}" for _ in range(4)]
        sign_up = (
            f"<section class='box'><h3>Newsletter: The Harbour{number} Weekly</h3>"
            f"<p>Every Monday the top stories from desk{number}</p>"
            "<form action='/subscribe'><input type='email' name='e'>"
            "<button>Sign up now</button></form>"
            f"<p>By signing up to list{number} I accept its terms.</p></section>"
        )
        card = (
            f"<a href='/other{number}'><div><span>Read also:</span>"
            f"<h3>Ferry strike{number} ends after three days</h3></div></a>"
        )
        cards = "".join(
            f"<div class='teaser'><a href='/more{number}{i}'><div><h4>Council{number} "
            f"vote {i} postponed again</h4><p>Von Jo Writer</p></div></a></div>"
            for i in range(2)
        )
        html = (
            "<html><body><div class='menu'><a href='/'>Home</a></div><article>"
            f"<div class='body'><p>{story[0]}</p>{sign_up}<p>{story[1]}</p>{card}"
            f"<p>{story[2]}</p><h3>More on council{number}</h3><div class='cards'>{cards}</div>"
            f"<p>{story[3]}</p></div></article><footer><p>(c) The Paper</p></footer>"
            "</body></html>"
        )
        boxes = [
            f"Newsletter: The Harbour{number} Weekly",
            f"Every Monday the top stories from desk{number}",
            f"By signing up to list{number} I accept its terms.",
            "Read also:", f"Ferry strike{number} ends after three days", f"More on council{number}",
            *(f"Council{number} vote {i} postponed again" for i in range(2)), "Von Jo Writer",
        ]  # fmt: skip
        alone, with_boxes = "\n\n".join(story), "\n\n".join([*story, *boxes])
        readings = [alone, with_boxes, alone, with_boxes]  # the readers split on the boxes
        return {
            "rendered_html": html,
            "texts": [{"text": [line]} for line in story],
            CONSENSUS_FIELD: ConsensusArticle(readings[0], 0.9, readings).as_field(),
        }

    text = text_of_a_new_page(page)
    assert text.split("\n\n") == [
        line for line in text.split("\n\n") if line.startswith("today40")
    ], text
    assert len(text.split("\n\n")) == 4
    kinds = dropped_kinds(
        lxml.html.fromstring(
            "<div><h3>Best value</h3><p><a href='/shop'>£79.99, Lakeland</a></p>"
            f"<div><p>{'A long paragraph of the story beside its button. ' * 8}</p>"
            "<button>Share</button></div><p><a href='/x'>Read<br>more</a> of it</p></div>"
        )
    )
    assert list(kinds.values()) == ["a line of one link", "button"], kinds


def test_a_short_line_of_one_endless_word_is_judged_in_bounded_time() -> None:
    """A paragraph of a few words, one of them 60,000 characters long (a hostile page's
    endless token): the contact-line pattern took time growing as the square of its
    length (0.7 s for 20,000 characters, 1.6 s for 30,000); it is not searched on a text
    that long. The bound is on this process's CPU time, which other processes do not
    lengthen."""
    root = lxml.html.fromstring(
        f"<div><p>Write to {'x' * 60_000} today</p><p>Mail desk@harbour.example</p></div>"
    )
    started = time.process_time()
    kinds = dropped_kinds(root)
    assert time.process_time() - started < 2.0
    assert list(kinds.values()) == ["a contact line"]
    assert next(iter(kinds)).text.startswith("Mail")


def test_an_inline_element_on_a_line_of_its_own_is_judged_as_a_paragraph() -> None:
    """A notice set as a ``<span>`` between the story's blocks (a comment and an empty
    anchor beside it) shows as a line of its own: a copyright line, left out by the
    parser learned from pages where the readers keep it; the same words inside a
    paragraph's text are no line of their own."""

    def page(number: int) -> dict:
        notice = f"© {2000 + number} Wires Interactive Inc. All Rights Reserved."
        return wire_story(number, notice, lambda story, notice: (
            "<div class='text'>" + "".join(f"<p>{line}</p>" for line in story)
            + f"</div> <span class='stamp'>{notice}</span> <!-- end --> <a name='c'></a>"
        ))  # fmt: skip

    text = text_of_a_new_page(page)
    assert text.startswith("wire40") and "Rights Reserved" not in text
    inside = lxml.html.fromstring(
        "<div><p>Filed at <span>© 2012 Wires Inc. All Rights Reserved.</span> today</p>"
        "<div>x</div> <span>© 2012 Wires Inc. All Rights Reserved.</span><br></div>"
    )
    assert list(dropped_kinds(inside).values()) == ["a copyright line"]
    assert next(iter(dropped_kinds(inside))).getparent() is inside


def test_a_sub_heading_every_story_repeats_stays_where_the_readers_keep_it() -> None:
    """A Q&A template's sub-headings (an ``<h3>``, a paragraph of bold text) stand on every
    page with the same words; where the readers keep them before the story's prose, they
    are the story's, not the template's repeated text. A repeated heading before a list of
    links stays out."""

    def page(number: int) -> dict:
        rng = random.Random(number)
        story = [f"idea{number} {sentence(rng, 30)}" for _ in range(4)]
        latest, big = "What's the Latest Development?", "What's the Big Idea?"
        related = "".join(f"<li><a href='/r{number}{i}'>Related {i}</a></li>" for i in range(4))
        html = (
            "<html><body><div class='menu'><a href='/'>Home</a></div><div class='story'>"
            f"<h3>{latest}</h3><p>{story[0]}</p><p>{story[1]}</p>"
            f"<p><strong>{big}</strong></p><p>{story[2]}</p><p>{story[3]}</p>"
            f"<h3>Related Content</h3><ul>{related}</ul>"
            "</div><footer><p>(c) The Ideas</p></footer></body></html>"
        )
        kept = [latest, *story[:2], big, *story[2:]]
        return agreed_item(html, [*kept, "Related Content"], kept)

    text = text_of_a_new_page(page)
    assert text.split("\n\n")[0] == "What's the Latest Development?", text
    assert "What's the Big Idea?" in text and "Related Content" not in text


def test_show_prints_the_summary_and_the_kinds_left_out_with_their_evidence(
    boxed_model: SiteModel,
) -> None:
    items = [kinds_item(number) for number in range(6)]
    content = [(page, index) for page in range(6) for index in range(10)]
    model = copy.deepcopy(boxed_model)
    model.rules_ = ExtractionRules().fit([item for item, *_ in items], content)
    lines = list(parser_lines(model, "quay.example"))
    summary = [line for line in lines if line.split()[:2] == ["summary", "div#highlights"]]
    assert summary and "story highlights right before the story; 6 pages" in summary[0], lines
    for kind in (
        "a caption", "a date line", "a byline", "a line of one link", "a copyright line",
        "a comment count",
    ):  # fmt: skip
        assert any(f"(by its markup: {kind}; 6 pages" in line for line in lines), (kind, lines)
