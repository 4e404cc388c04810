"""Site learning on handmade page items and on the published ziyan-spider renders."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from spidercrawl.document.blocks import page_blocks
from spidercrawl.learn.cluster import knee_eps
from spidercrawl.learn.features import FEATURE_GROUPS, BlockVectorizer
from spidercrawl.learn.labeling import AutoLabeler, site_references
from spidercrawl.learn.model import (
    LearningError,
    SiteModel,
    article_mask,
    fill_gaps,
    take_nested,
    take_runs,
)
from spidercrawl.learn.relevance import lcs_relevance, site_relevance
from tests.conftest import SHARED

WORDS = [
    "harbour",
    "council",
    "budget",
    "ferry",
    "lantern",
    "market",
    "bridge",
    "school",
    "library",
    "festival",
]
FILLER = [f"word{n}" for n in range(300)]  # ordinary text: words a description rarely shares


def block(text: str, tag: str, classes: list[str], top: int, left: int = 300, **css: str) -> dict:
    element = {"name": tag, "id": "", "classes": classes}
    return {
        "text": [text],
        "html": text,
        "element": element,
        "path": ["div", tag],
        "selector": [{"name": "div", "id": "", "classes": ["wrap"]}, element],
        "bound": {"left": left, "top": top, "width": 600, "height": 40},
        "computed": {k.replace("_", "-"): v for k, v in css.items()},
    }


def make_page(number: int, description: bool = True, script: str = "latin") -> dict:
    """A page: a menu, a headline, article paragraphs about its topic, comments, a footer."""
    rng = random.Random(number)
    topic = rng.sample(WORDS, 3)
    if script == "cjk":
        topic = [rng.choice("港口议会预算渡轮灯笼市场桥梁学校") * 2 for _ in range(3)]
    sentence = " ".join(topic)
    paragraphs = [f"{sentence} {' '.join(rng.choices(FILLER, k=25))} {sentence}." for _ in range(5)]
    blocks = [block(name, "a", ["menu"], 10, left=40 * i) for i, name in enumerate(WORDS[:6])]
    blocks.append(block(f"Headline about {sentence}", "h1", ["headline"], 80, font_size="32px"))
    blocks += [
        block(text, "p", ["body"], 140 + 60 * i, font_size="18px")
        for i, text in enumerate(paragraphs)
    ]
    blocks += [
        block(f"Reader {i}: {' '.join(rng.choices(FILLER, k=12))}", "li", ["comment"], 600 + 40 * i)
        for i in range(3)
    ]
    blocks.append(block("© The Harbour Times", "footer", [], 900, font_size="11px"))
    return {
        "url": f"https://example.test/story-{number}",
        "titles": [f"Headline about {sentence}"],
        "descriptions": [f"{sentence} {sentence}"] if description else [],
        "body": {"bound": {"left": 0, "top": 0, "width": 1200, "height": 1000}},
        "texts": blocks,
    }


@pytest.fixture(scope="module")
def pages() -> list[dict]:
    return [make_page(n) for n in range(12)]


def test_vectorizer_groups_are_selectable(pages: list[dict]) -> None:
    blocks = page_blocks(pages[0])
    full = BlockVectorizer().fit_transform(blocks)
    only_text = BlockVectorizer(("text",)).fit_transform(blocks)
    assert only_text.shape == (len(blocks), 5)
    assert full.shape[1] > only_text.shape[1]
    with pytest.raises(ValueError, match="feature groups"):
        BlockVectorizer(("colour",)).fit(blocks)
    assert set(FEATURE_GROUPS) >= {"text", "tag_path", "selector", "css", "geometry", "density"}


def test_knee_of_a_k_distance_curve() -> None:
    distances = np.array([0.1] * 50 + [0.12] * 30 + [0.9, 1.0, 1.1])
    assert 0.1 <= knee_eps(distances) <= 0.2


def test_relevance_is_corrected_for_chance() -> None:
    assert lcs_relevance("the harbour council met", "harbour council") == 1.0
    scores = site_relevance(
        ["Home", "harbour budget news", "Home", "ferry lantern news"],
        [0, 0, 1, 1],
        ["harbour budget", "ferry lantern"],
        "lcs",
    )
    assert scores[0] == pytest.approx(0.0) and scores[2] == pytest.approx(0.0)
    assert scores[1] > 0.5 and scores[3] > 0.5


def test_chance_is_measured_against_several_pages_not_one() -> None:
    # The story of page 0 names what page 1 is about too: against page 1's description
    # alone it would look like chance, and the template's text like the story.
    references = [
        "harbour budget vote", "ferry lantern festival", "school roof repair",
        "market hall fire", "bridge toll rise",
    ]  # fmt: skip
    texts = ["ferry lantern festival as the harbour budget vote", "Home News Sport"]
    scores = site_relevance(texts, [0, 0], references, "lcs")
    assert scores[0] > 0.5
    assert scores[1] == pytest.approx(0.0)


@pytest.mark.parametrize("similarity", ["lcs", "tfidf"])
def test_learns_the_article_paragraphs(pages: list[dict], similarity: str) -> None:
    model = SiteModel(similarity=similarity).fit(pages)
    article = model.extract(make_page(99))
    assert article.text.count("\n\n") >= 4  # five paragraphs
    assert "Reader" not in article.text and "©" not in article.text
    assert "<p>" in article.html
    assert 0 < article.confidence <= 1
    assert model.clustering_["label_basis"] == "relevance"


def test_same_pages_same_model_and_storage(pages: list[dict], tmp_path) -> None:
    first = SiteModel().fit(pages)
    second = SiteModel().fit(pages)
    blocks = page_blocks(make_page(50))
    assert np.array_equal(first.decision(blocks), second.decision(blocks))
    folder = first.save(tmp_path / "example.test")
    meta = json.loads((folder / "model.json").read_text())
    assert meta["version"] and meta["created"] and meta["training"]["pages"] == 12
    assert np.array_equal(SiteModel.load(folder).decision(blocks), first.decision(blocks))


def test_the_same_pages_in_another_order_give_the_same_model(pages: list[dict]) -> None:
    # Workers fetch a site's pages in any order: what they learn must not hang on it.
    first = SiteModel().fit(pages)
    blocks = page_blocks(make_page(50))
    for seed in range(3):
        shuffled = pages[:]
        random.Random(seed).shuffle(shuffled)
        again = SiteModel().fit(shuffled)
        assert np.array_equal(again.decision(blocks), first.decision(blocks))
        assert again.clustering_ == first.clustering_
        assert again.rules_.summary() == first.rules_.summary()


def test_an_svm_stopped_short_of_converging_is_logged_not_warned(
    pages: list[dict], monkeypatch, caplog, recwarn
) -> None:
    """liblinear's ConvergenceWarning read as a failure in crawl logs: a site model whose
    SVM stops at its iteration cap says so in one log line and in its training record."""
    monkeypatch.setattr("spidercrawl.learn.model.SVM_MAX_ITER", 1)
    with caplog.at_level("INFO", logger="spidercrawl.learn.model"):
        model = SiteModel().fit(pages)
    assert model.training_["svm_converged"] is False
    assert "short of liblinear's tolerance" in caplog.text
    assert not [w for w in recwarn if "converge" in str(w.message)]
    monkeypatch.undo()  # the shipped cap: these pages converge
    assert SiteModel().fit(pages).training_["svm_converged"] is True


def test_the_later_runs_of_a_content_elements_text_join_the_article() -> None:
    """A post's text, a list nested in it, then its closing text: the capture makes the
    closing text a block of its own (``run_of`` its element's first run), which follows
    the first run into the article; a later run of a boilerplate element does not."""
    post = block("We made three changes this year and here they are.", "div", ["post"], 100)
    items = [block(f"Change {n}: a long enough item.", "li", [], 140 + 30 * n) for n in range(2)]
    for item in items:
        item["selector"] = [
            *post["selector"],
            {"name": "ul", "id": "", "classes": []},
            item["element"],
        ]
    closing = {**post, "text": ["We will keep looking for more."], "html": "", "run_of": 0}
    nav = block("Home News Sport", "div", ["nav"], 10)
    nav["selector"] = [{"name": "header", "id": "", "classes": []}, nav["element"]]
    markets = {**block("Markets", "p", [], 20), "selector": [*nav["selector"], {"name": "p"}]}
    nav_tail = {**nav, "text": ["Weather"], "html": "", "run_of": 4}
    page = {"texts": [post, *items, closing, nav, markets, nav_tail]}
    blocks = page_blocks(page)
    assert [b.run_of for b in blocks] == [-1, -1, -1, 0, -1, -1, 4]
    margins = np.array([1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0])  # only the opening run
    taken = article_mask(blocks, margins, max_gap=4)
    assert taken.tolist() == [True, True, True, True, False, False, False]
    assert take_runs(blocks, margins > 0).tolist() == [True, False, False, True] + [False] * 3


def test_a_page_of_another_layout_is_told_by_its_own_text_not_the_menus(pages) -> None:
    model = SiteModel().fit(pages)
    gallery = make_page(60)
    captions = [b for b in gallery["texts"] if b["element"]["classes"] == ["body"]]
    for extra in captions[2:]:
        gallery["texts"].remove(extra)
    for caption in captions[:2]:  # short texts, in elements the story pages never had
        caption["text"] = [caption["text"][0][:100]]
        caption["path"] = ["section", "figure", "figcaption"]
        caption["selector"] = [{"name": "section", "id": "", "classes": ["gallery"]},
                               {"name": "figure", "id": "", "classes": []},
                               {"name": "figcaption", "id": "", "classes": []}]  # fmt: skip
    del gallery["texts"][-4:-1]  # no comments on a gallery
    blocks = page_blocks(gallery)
    # Over a fifth of the page's text is in known tag paths, mostly the site's menu and
    # footer, which every layout shares: the page's own text is in paths never seen.
    known = [b for b in blocks if b.path in model.tag_paths_]
    assert sum(b.chars for b in known) >= 0.2 * sum(b.chars for b in blocks)
    assert model.familiarity(blocks) < 0.2
    assert model.familiarity(page_blocks(make_page(61))) > 0.8


def test_no_descriptions_falls_back_to_titles() -> None:
    model = SiteModel().fit([make_page(n, description=False) for n in range(10)])
    assert model.extract(make_page(77)).text


def test_a_description_the_whole_site_shares_is_not_a_pages_reference() -> None:
    blurb = "Fascinating letters. Interesting correspondence."
    pages = [
        {"descriptions": [blurb], "titles": [f"Letters of Note: letter {n}"]} for n in range(4)
    ]
    pages.append({"descriptions": ["A letter from 1918"], "titles": ["Letters of Note: 1918"]})
    assert site_references(pages) == [
        *(f"Letters of Note: letter {n}" for n in range(4)),
        "A letter from 1918",
    ]
    # A description found on one page only is that page's own.
    assert site_references(pages[:1] + pages[4:]) == [blurb, "A letter from 1918"]


def commented_page(number: int, blurb: bool = False) -> tuple[dict, list[int]]:
    """A page with a short article and many comments, and the cluster of each block.

    Clusters: 0 article paragraphs (and the author's reply), 1 comments (more text than
    the article, some of it quoting the topic), 2 the comments' "Reply" links, 3 the
    headline.
    """
    rng = random.Random(number)
    topic = " ".join(rng.sample(WORDS, 3))
    texts, clusters = [], []
    if blurb:  # a section blurb that looks like an article paragraph, above the article
        promo = block("Our newsletter: all the week's stories, every Friday", "p", ["body"], 60)
        promo["selector"][0] = {"name": "aside", "id": "", "classes": ["promo"]}
        texts.append(promo)
        clusters.append(0)
    texts.append(block(f"Headline about {topic}", "h1", ["headline"], 100))
    clusters.append(3)
    for i in range(3):
        words = " ".join(rng.choices(FILLER, k=20))
        texts.append(block(f"{topic} {words} {topic}.", "p", ["body"], 160 + 50 * i))
        clusters.append(0)
    for i in range(20):
        quote = topic if i % 3 == 0 else ""
        words = " ".join(rng.choices(FILLER, k=15))
        texts.append(block(f"{quote} {words}".strip(), "p", ["comment"], 340 + 60 * i))
        texts.append(block("Reply", "a", ["reply"], 380 + 60 * i))
        clusters += [1, 2]
    # A paragraph of the article's look far below (an author's reply to a comment), so
    # the article's box on the page holds the comments.
    texts.append(block(f"Thanks, all: more on {topic} soon.", "p", ["body"], 1600))
    clusters.append(0)
    page = {
        "titles": [f"Headline about {topic}"],
        "descriptions": [f"{topic} {topic}"],
        "body": {"bound": {"left": 0, "top": 0, "width": 1200, "height": 1700}},
        "texts": texts,
    }
    return page, clusters


def label_site(pages_and_clusters: list[tuple[dict, list[int]]]) -> tuple[AutoLabeler, list]:
    pages = [page for page, _ in pages_and_clusters]
    blocks = [b for n, page in enumerate(pages) for b in page_blocks(page, n)]
    clusters = np.array([c for _, page_clusters in pages_and_clusters for c in page_clusters])
    return AutoLabeler().fit(blocks, clusters, pages), blocks


def test_comments_in_many_short_stretches_lose_to_the_article() -> None:
    labeler, blocks = label_site([commented_page(n) for n in range(8)])
    assert labeler.content_cluster_ == 0
    chosen = [b.text for b, is_content in zip(blocks, labeler.labels_, strict=True) if is_content]
    assert len(chosen) == 4 * 8
    # The comments are larger than the article and inside its page column: they must not
    # join it as if they were quotes or captions.
    labels = zip(blocks, labeler.labels_, strict=True)
    assert not any(b.selector[-1] == "p.comment" and label for b, label in labels)


def test_a_blurb_that_looks_like_the_article_is_left_out() -> None:
    labeler, blocks = label_site([commented_page(n, blurb=True) for n in range(8)])
    assert labeler.content_cluster_ == 0
    kept = {b.text for b, is_content in zip(blocks, labeler.labels_, strict=True) if is_content}
    assert not any(text.startswith("Our newsletter") for text in kept)
    assert len(kept) == 4 * 8
    assert labeler.dropped_roles_ == ["aside.promo > p.body"]


def standfirst_page(number: int) -> tuple[dict, list[int]]:
    """A page whose standfirst restates its description word for word, above a lead
    photo; the article paragraphs below say more than it. Clusters: 0 article, 1
    standfirst, 2 headline."""
    rng = random.Random(number)
    topic = " ".join(rng.sample(WORDS, 3))
    summary = f"{topic} {' '.join(rng.choices(FILLER, k=14))}"
    texts = [
        block(f"Headline about {topic}", "h1", ["headline"], 100),
        block(summary, "p", ["standfirst"], 160),
        *(
            block(f"{' '.join(rng.choices(FILLER, k=30))} {topic}.", "p", ["body"], 700 + 60 * i)
            for i in range(4)
        ),
    ]
    page = {
        "titles": [f"Headline about {topic}"],
        "descriptions": [summary],
        "body": {"bound": {"left": 0, "top": 0, "width": 1200, "height": 1200}},
        "texts": texts,
    }
    return page, [2, 1, 0, 0, 0, 0]


def test_a_standfirst_that_restates_the_description_is_not_the_article() -> None:
    # It matches its description perfectly, as the article never does; that says nothing.
    labeler, blocks = label_site([standfirst_page(n) for n in range(6)])
    assert labeler.content_cluster_ == 0
    chosen = [b for b, is_content in zip(blocks, labeler.labels_, strict=True) if is_content]
    assert len(chosen) == 4 * 6 and all(b.selector[-1] == "p.body" for b in chosen)


def wrapped_paragraphs_page(number: int) -> tuple[dict, list[int]]:
    """An article whose last paragraphs sit in a nested table beside a photo (the same
    ``p.story`` one wrapper deeper), then a promo in that style and wrapper. Clusters: 0
    the article's usual paragraphs, 1 the nested ones, 2 headline, 3 the promo."""
    rng = random.Random(number)
    topic = " ".join(rng.sample(WORDS, 3))
    texts = [block(f"Headline about {topic}", "h1", ["headline"], 100)]
    texts += [
        block(f"{topic} {' '.join(rng.choices(FILLER, k=30))}.", "p", ["story"], 160 + 60 * i)
        for i in range(3)
    ]
    nested = [f"{' '.join(rng.choices(FILLER, k=30))} {topic}." for _ in range(2)] + [
        "Subscribe to our print edition and save half on every issue this winter."
    ]
    for i, text in enumerate(nested):
        deeper = block(text, "p", ["story"], 400 + 60 * i, left=320)
        deeper["selector"][1:1] = [
            {"name": "table", "id": "", "classes": []},
            {"name": "td", "id": "", "classes": ["promo" if i == 2 else "photo-side"]},
        ]
        texts.append(deeper)
    page = {
        "titles": [f"Headline about {topic}"],
        "descriptions": [f"{topic} {topic}"],
        "body": {"bound": {"left": 0, "top": 0, "width": 1200, "height": 800}},
        "texts": texts,
    }
    return page, [2, 0, 0, 0, 1, 1, 3]


def test_the_articles_paragraphs_in_another_wrapper_join_it() -> None:
    labeler, blocks = label_site([wrapped_paragraphs_page(n) for n in range(6)])
    assert labeler.content_cluster_ == 0
    taken = [b for b, is_content in zip(blocks, labeler.labels_, strict=True) if is_content]
    assert len(taken) == 5 * 6  # three usual and two nested paragraphs per page
    assert not any(b.text.startswith("Subscribe") for b in taken)  # the style, not the topic


def test_short_gaps_inside_the_article_are_filled() -> None:
    page = {
        "texts": [
            block("First paragraph of the story.", "p", ["body"], 100),
            block("A sub-heading", "h3", ["sub"], 140),
            block("Second paragraph of the story.", "p", ["body"], 180),
            block("Related: another story", "p", ["related"], 220),
            block("Third paragraph of the story.", "p", ["body"], 260),
            *(block(f"Comment {n} on the story", "p", ["comment"], 300 + 40 * n) for n in range(5)),
            block("Author's reply to the comments.", "p", ["body"], 520),
        ]
    }
    page["texts"][3]["html"] = '<a href="/other">Related: another story</a>'
    for comment in page["texts"][5:10]:  # comments sit in their own container
        comment["selector"].insert(1, {"name": "section", "id": "comments", "classes": []})
    blocks = page_blocks(page)
    classifier_says = np.array([True, False, True, False, True, *[False] * 5, True])
    filled = fill_gaps(blocks, classifier_says, max_gap=4)
    assert filled[1]  # the sub-heading between two paragraphs
    assert not filled[3]  # a link between two paragraphs is not the article
    assert not filled[5:10].any()  # five comments in a row: more than a gap
    assert filled[[0, 2, 4, 10]].all()


def test_a_long_gap_of_the_articles_own_paragraphs_is_filled() -> None:
    # Six quoted paragraphs the classifier missed, in the same element as the article's.
    texts = [block(f"Paragraph {n} of the story.", "p", ["body"], 100 + 40 * n) for n in range(8)]
    blocks = page_blocks({"texts": texts})
    classifier_says = np.array([True, *[False] * 6, True])
    assert fill_gaps(blocks, classifier_says, max_gap=4).all()


def test_a_long_list_in_the_articles_element_is_filled_a_box_deeper_down_is_not() -> None:
    # The classifier missed a bulleted list of six items and the article element's own
    # text after it; a box of related links sits deeper inside the same element.
    def inside(text: str, top: int, *steps: str) -> dict:
        item = block(text, steps[-1], [], top)
        item["selector"] = [
            item["selector"][0],
            *({"name": s, "id": "", "classes": []} for s in steps),
        ]
        return item

    own_text = block("Text of the article element itself, after the list.", "div", [], 400)
    own_text["selector"] = own_text["selector"][:1]
    texts = [
        block("First paragraph of the story.", "p", ["body"], 100),
        *(
            inside(f"Point {n} of the list in the story", 140 + 20 * n, "ul", "li")
            for n in range(6)
        ),
        own_text,
        block("Second paragraph of the story.", "p", ["body"], 460),
        *(inside(f"Another story {n}", 500 + 20 * n, "aside", "div", "ul", "li") for n in range(6)),
        block("Third paragraph of the story.", "p", ["body"], 640),
    ]
    blocks = page_blocks({"texts": texts})
    classifier_says = np.array([b.text.endswith("paragraph of the story.") for b in blocks])
    filled = fill_gaps(blocks, classifier_says, max_gap=4)
    assert filled[:9].all()  # the list and the element's own text join the article
    assert not filled[9:15].any()  # six items of a box two levels further down do not


def nested_block(outer: dict, text: str, tag: str, top: int, left: int = 300) -> dict:
    """A block inside ``outer``'s element (its selector path one step longer)."""
    inner = block(text, tag, [], top, left)
    inner["selector"] = [*outer["selector"], inner["element"]]
    inner["bound"]["width"] = 500
    return inner


def test_blocks_nested_in_a_content_block_join_the_article() -> None:
    # The article element has text of its own and <p> children; the classifier took only
    # the element's own text.
    article = block("Lead of the story, written in the article element.", "div", ["story"], 100)
    article["bound"]["height"] = 400
    sidebar = block("Sidebar box", "div", ["story"], 100, left=1000)  # same path, elsewhere
    page = {
        "texts": [
            article,
            nested_block(article, "Second paragraph of the story.", "p", 160),
            nested_block(article, "Third paragraph of the story.", "p", 220),
            nested_block(article, "Related: another story", "p", 280),
            nested_block(sidebar, "Most read today", "p", 160, left=1000),
            block("A footer paragraph after the story.", "p", [], 600),
        ]
    }
    page["texts"][3]["html"] = '<a href="/other">Related: another story</a>'
    blocks = page_blocks(page)
    taken = take_nested(blocks, np.array([True, False, False, False, False, False]))
    assert taken[[0, 1, 2]].all()
    assert not taken[3]  # a link inside the article is not its text
    assert not taken[4]  # same selector path, but outside the article's box
    assert not taken[5]  # not inside the article element


def test_text_repeated_on_every_page_is_the_template_not_the_article() -> None:
    # A blurb in the article paragraphs' own element and style after every article: only
    # its repetition from page to page tells it apart.
    blurb = "Subscribe to our harbour newsletter and never miss a council budget story again."
    pages = [make_page(n) for n in range(10)]
    for page in pages:
        page["texts"].append(block(blurb, "p", ["body"], 500, font_size="18px"))
    model = SiteModel().fit(pages[:8])
    assert blurb.casefold() in model.template_texts_
    for page in pages[8:]:
        text = model.extract(page).text
        assert "Subscribe to our harbour newsletter" not in text
        assert len(text) > 500  # the article itself is still there


def test_non_latin_text() -> None:
    model = SiteModel().fit([make_page(n, script="cjk") for n in range(10)])
    assert model.training_["content_blocks"] > 0


def test_pages_that_cannot_teach_raise_a_clear_error() -> None:
    with pytest.raises(LearningError, match="no text blocks"):
        SiteModel().fit([{"texts": []}, {"texts": []}])
    lonely = make_page(1)
    lonely["texts"] = lonely["texts"][:1]
    with pytest.raises(ValueError):  # one block: only noise or one class
        SiteModel().fit([lonely])


@pytest.mark.skipif(not (SHARED / "ziyan-spider").is_dir(), reason="needs ../shared")
def test_ziyan_npr_model_extracts_the_story() -> None:
    folder = SHARED / "ziyan-spider" / "npr"
    pages = [json.loads(p.read_text()) for p in sorted(folder.glob("0*.json"))]
    model = SiteModel().fit(pages[:20])
    text = model.extract(pages[21]).text
    first_words = pages[21]["descriptions"][0].split()[:4]
    assert len(text) > 1000
    assert all(word in text for word in first_words)


def test_link_counts_of_a_block_without_them_are_read_from_its_markup_in_one_pass() -> None:
    """Data without the capture's link counts (older page items) gets them from the
    block's markup; markup of links opened and never closed is read once, not again from
    every ``<a``."""
    text = "The harbour reopened today after the storm, said the council."

    def block(html: str) -> dict:
        selector = [{"name": "p", "id": "", "classes": []}]
        return {"selector": selector, "text": [text], "html": html}

    linked = "The <a href='/harbour'>harbour</a> reopened <A HREF=x>today <b>at</b></A> noon."
    hostile = "<a>x" * 200_000
    (first, second) = page_blocks({"texts": [block(linked), block(hostile)]}, densities=False)
    assert (first.link_count, first.link_chars) == (2, len("harbour") + len("today at"))
    assert second.link_count == 0
