"""Sites never seen: the cross-site features, the choice of the article's run, and the
shipped cross-site model on a post under a long comment thread."""

from __future__ import annotations

import random

import numpy as np

from spidercrawl.document.blocks import page_blocks
from spidercrawl.extract.cold_start import block_indices, cold_start_extraction
from spidercrawl.extract.unseen import BlockSignals, UnseenExtractor, best_run, common_element
from spidercrawl.learn.cross_site import common_class_words, sample_site
from spidercrawl.learn.features import BlockVectorizer, step_words
from tests.test_fallbacks import NAV, PageBuilder, sentence

BODY = {"font-size": "16px"}


def test_step_words_split_ids_classes_and_camel_case() -> None:
    assert step_words("div#post-12.entry-content.commentBody") == {
        "post", "entry", "content", "comment", "body",
    }  # fmt: skip
    assert step_words("p") == frozenset()
    assert step_words("li.a1.ok") == frozenset()  # words of 3 letters or more only


POST = [("div", "page", ()), ("div", "", ("post", "hentry")), ("div", "", ("entry-content",))]


def menu_and_post(rng: random.Random) -> PageBuilder:
    """A page that opens with a menu of four links and a post's three paragraphs."""
    builder = PageBuilder()
    for name in ("News", "Sport", "Weather", "Opinion"):
        builder.add(NAV, "a", name, {}, link=True)
    for _ in range(3):
        builder.add(POST, "p", sentence(rng, 45), BODY)
    return builder


def comment_page(seed: int) -> PageBuilder:
    rng = random.Random(seed)
    builder = menu_and_post(rng)
    for number in range(12):
        item = ("li", f"comment-{number}", ("comment",))
        comment = [("div", "comments", ()), ("ol", "", ("commentlist",)), item]
        comment.append(("div", "", ("comment-body",)))
        builder.add(comment, "p", sentence(rng, 60), BODY)
    return builder


def test_class_words_features_keep_only_the_given_words() -> None:
    blocks = page_blocks(comment_page(0).page(0, "A post", ""))
    vectorizer = BlockVectorizer(("class_words",), frozenset({"comment", "entry"})).fit(blocks)
    assert set(vectorizer.feature_names()) == {"inside:entry", "inside:comment"}
    matrix = vectorizer.transform(blocks).toarray()
    names = vectorizer.feature_names()
    post_paragraph = 4  # after four menu links
    assert matrix[post_paragraph, names.index("inside:entry")] == 1
    assert matrix[post_paragraph, names.index("inside:comment")] == 0
    assert matrix[-1, names.index("inside:comment")] == 1


def test_common_class_words_need_enough_sites() -> None:
    sites = {
        name: (page_blocks(comment_page(n).page(0, "A post", "")), np.zeros(19, bool))
        for n, name in enumerate(["a", "b", "c"])
    }
    sites["d"] = (page_blocks(PageBuilder().page(0, "Empty", "")), np.zeros(0, bool))
    assert common_class_words(sites, min_sites=3) == {
        "nav", "page", "post", "hentry", "entry", "content", "comments", "commentlist", "comment",
        "body",
    }  # fmt: skip
    assert common_class_words(sites, min_sites=4) == frozenset()
    blocks, labels = sample_site(sites["a"], max_blocks=5)
    assert len(blocks) == 5 and len(labels) == 5
    assert [b.index for b in blocks] == sorted(b.index for b in blocks)


def test_best_run_is_the_maximum_subarray_by_characters() -> None:
    blocks = page_blocks(comment_page(1).page(0, "A post", ""))
    scores = np.full(len(blocks), -1.0)
    scores[4:7] = 2.0
    assert best_run(blocks, scores) == [4, 5, 6]
    assert best_run(blocks, np.full(len(blocks), -0.5)) == []


def test_post_beats_the_longer_comment_thread_density_prefers() -> None:
    builder = comment_page(2)
    page = builder.page(0, "A post", "")
    page["rendered_html"] = builder.rendered_html()
    density = block_indices(cold_start_extraction(page))
    assert density and density.isdisjoint({4, 5, 6})  # density alone takes the comments
    extraction = UnseenExtractor.load().extract(page)
    assert set(extraction.blocks) == {4, 5, 6}


def test_common_element_is_the_innermost_shared_parent() -> None:
    blocks = page_blocks(comment_page(3).page(0, "A post", ""))
    post, comments = blocks[4:7], blocks[7:]
    assert common_element(post) == ("div#page", "div.hentry.post", "div.entry-content")
    assert common_element(comments) == ("div#comments", "ol.commentlist")
    assert common_element([*post, *comments]) == ()


def split_post_page(seed: int) -> PageBuilder:
    """A post cut in two by a box of related links longer than a gap the article fills."""
    rng = random.Random(seed)
    builder = menu_and_post(rng)
    box = [*POST, ("div", "", ("related",))]
    builder.add(box, "h3", "Related stories", {"font-size": "18px"})
    for number in range(6):
        builder.add([*box, ("ul", "", ())], "li", f"Related story number {number}", {}, link=True)
    for _ in range(3):
        builder.add(POST, "p", sentence(rng, 45), BODY)
    for name in ("About", "Contact", "Jobs"):
        builder.add([("div", "footer", ())], "a", name, {}, link=True)
    return builder


def test_an_article_cut_by_a_box_of_links_is_taken_whole() -> None:
    page = split_post_page(4).page(0, "A post", "")
    extraction = UnseenExtractor.load().extract(page)
    assert {4, 5, 6, 14, 15, 16} <= set(extraction.blocks)
    assert not set(extraction.blocks) & set(range(8, 14))  # the links


def sign_up_page(seed: int, wrapper: list[tuple[str, str, tuple[str, ...]]]) -> PageBuilder:
    """A post (inside ``wrapper``) with a newsletter sign-up box between its paragraphs."""
    rng = random.Random(seed)
    builder = PageBuilder()
    for name in ("News", "Sport", "Weather", "Opinion"):
        builder.add(NAV, "a", name, {}, link=True)
    post = [*wrapper, *POST]
    for _ in range(3):
        builder.add(post, "p", sentence(rng, 45), BODY)
    box = [*post, ("aside", "", ("newsletter",))]
    builder.add(box, "h3", "Sign up for our morning briefing", {"font-size": "18px"})
    builder.add(box, "p", "Get the news you need to start your day, in your inbox.", BODY)
    builder.add([*box, ("form", "", ())], "button", "Subscribe", {})
    for _ in range(3):
        builder.add(post, "p", sentence(rng, 45), BODY)
    return builder


def test_a_sign_up_box_inside_the_article_is_left_out() -> None:
    extraction = UnseenExtractor.load().extract(sign_up_page(5, []).page(0, "A post", ""))
    assert {4, 5, 6, 10, 11, 12} <= set(extraction.blocks)
    assert not set(extraction.blocks) & {7, 8, 9}
    assert "Subscribe" not in extraction.text and "morning briefing" not in extraction.text


def test_an_article_inside_a_page_wide_form_is_still_taken() -> None:
    """ASP.NET pages wrap the whole page in a ``<form>``: above the article's element, it
    is no box; the sign-up inside the article still is."""
    page = sign_up_page(6, [("form", "aspnetForm", ())]).page(0, "A post", "")
    extraction = UnseenExtractor.load().extract(page)
    assert {4, 5, 6, 10, 11, 12} <= set(extraction.blocks)
    assert not set(extraction.blocks) & {7, 8, 9}


def table_layout_page(seed: int) -> tuple[dict, str]:
    """An old table layout: the story is one short paragraph in a deep cell; the densest
    block is the footer's long disclaimer."""
    rng = random.Random(seed)
    builder = PageBuilder()
    cell = [("table", "", ()), ("tbody", "", ()), ("tr", "", ()), ("td", "", ())]
    deep = cell * 4
    builder.add(deep, "h1", "Council approves harbour budget", {})
    for name in ("Print this article", "Email this article", "Have your say"):
        builder.add(deep, "div", name, {}, link=True)
    story = "harbour budget council vote " + sentence(rng, 40)
    builder.add([*deep, ("div", "", ())], "div", story, {"text-align": "justify"})
    for number in range(8):
        builder.add(cell, "td", f"Category {number}", {}, link=True)
    builder.add(cell * 2, "div", sentence(rng, 150), {"text-align": "-webkit-center"})
    return builder.page(0, "Council approves harbour budget", story[:120]), story


def test_the_description_points_to_the_article_density_and_the_svm_miss() -> None:
    """Margins as an SVM misled by the table layout gives them (the story no better than
    the footer's disclaimer, which text density takes): the description's relevance
    brings the story in. Set by hand, so the test does not hang on one model's errors."""
    page, story = table_layout_page(5)
    unseen = UnseenExtractor.load()
    blocks = page_blocks(page)
    measured = unseen.signals(page, blocks)
    at = next(i for i, block in enumerate(blocks) if block.text == story)
    disclaimer = len(blocks) - 1
    margins = np.full(len(blocks), -1.8)
    margins[at], margins[disclaimer] = 0.0, -0.4
    in_density = np.zeros(len(blocks))
    in_density[disclaimer] = 1.0
    misled = BlockSignals(margins, in_density, measured.relevance)
    assert measured.relevance[at] > measured.relevance[disclaimer]
    without = UnseenExtractor(unseen.model, relevance_bonus=0.0).extract_with(blocks, misled)
    assert story not in without.text  # the disclaimer instead
    assert story in unseen.extract_with(blocks, misled).text
