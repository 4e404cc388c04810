"""Where the site's classifier misses: continued paragraphs, the article container, and
text density less the site's template (handmade pages with their rendered HTML)."""

from __future__ import annotations

import copy
import html
import random

import numpy as np
import pytest

from spidercrawl.document.blocks import Extraction, page_blocks
from spidercrawl.document.captured import Page
from spidercrawl.document.selectors import path_css
from spidercrawl.extract.article import density_fallback, unseen_fallback
from spidercrawl.extract.chain import ChainResult, ExtractionChain
from spidercrawl.extract.cold_start import cold_start_extraction
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.learn.container import fit_container, inside_container
from spidercrawl.learn.model import SiteModel, take_continuation

Step = tuple[str, str, tuple[str, ...]]  # tag, id, classes
NAV: list[Step] = [("div", "nav", ())]
ENTRY: list[Step] = [("div", "page", ()), ("div", "", ("post", "hentry")), ("div", "", ("entry",))]
COMMENTS: list[Step] = [("div", "page", ()), ("div", "comments", ()), ("div", "", ("comment",))]
PROMO: list[Step] = [("div", "", ("promo",))]
FOOTER: list[Step] = [("div", "footer", ())]
NEWSLETTER = "Get the Harbour Times newsletter every morning in your inbox, free of charge."
WORDS = [f"word{n}" for n in range(400)]


def learned_extraction(
    page: dict | Page, model: SiteModel, unseen: UnseenExtractor | None = None
) -> ChainResult:
    """A learned site's rendered page as the chain reads it without the peers: the site's
    readers (its parser, its classifier and their fallbacks) and the decision among them."""
    return ExtractionChain(unseen).extract(page, model)


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words)) + "."


class PageBuilder:
    """Blocks (capture-script items) and the matching rendered HTML, with block marks."""

    def __init__(self) -> None:
        self.texts: list[dict] = []
        self.top = 0

    def add(self, parents: list[Step], tag: str, text: str, css: dict, link: bool = False) -> None:
        steps = [*parents, (tag, "", ())]
        self.top += 40
        self.texts.append(
            {
                "text": [text],
                "html": f'<a href="/x">{html.escape(text)}</a>' if link else html.escape(text),
                "element": {"name": tag, "id": "", "classes": []},
                "path": [s[0] for s in steps],
                "selector": [{"name": s[0], "id": s[1], "classes": list(s[2])} for s in steps],
                "bound": {"left": 300, "top": self.top, "width": 600, "height": 30},
                "computed": css,
                "link_chars": len(text) if link else 0,
                "link_count": int(link),
            }
        )

    def rendered_html(self) -> str:
        """Opens and closes the parent elements block by block, so the tree matches."""
        out, open_steps = ["<html><body>"], []
        for number, raw in enumerate(self.texts):
            steps = [(s["name"], s["id"], tuple(s["classes"])) for s in raw["selector"]]
            parents = steps[:-1]
            keep = 0
            while keep < min(len(open_steps), len(parents)) and open_steps[keep] == parents[keep]:
                keep += 1
            out += [f"</{s[0]}>" for s in reversed(open_steps[keep:])]
            for tag, element_id, classes in parents[keep:]:
                out.append(f'<{tag} id="{element_id}" class="{" ".join(classes)}">')
            open_steps = parents
            tag = steps[-1][0]
            out.append(f'<{tag} data-sc-block="{number}">{raw["html"]}</{tag}>')
        out += [f"</{s[0]}>" for s in reversed(open_steps)]
        return "".join(out) + "</body></html>"

    def page(self, number: int, title: str, description: str) -> dict:
        return {
            "url": f"https://example.test/post-{number}",
            "titles": [title],
            "descriptions": [description],
            "body": {"bound": {"left": 0, "top": 0, "width": 1200, "height": self.top + 100}},
            "texts": self.texts,
            "rendered_html": self.rendered_html(),
        }


BODY_CSS = {"font-size": "18px"}


def post_page(
    number: int, variant: bool = False, comments: int = 3, promo_in_entry: bool = False
) -> dict:
    """A blog post: menu, headline, paragraphs, comments, a newsletter box, a footer. The
    variant puts the post in an announcement box styled unlike the usual paragraphs."""
    rng = random.Random(number)
    topic = f"harbour{number} council{number} budget{number}"
    page = PageBuilder()
    for name in ("News", "Sport", "Weather", "Opinion"):
        page.add(NAV, "a", name, {}, link=True)
    page.add(ENTRY[:2], "h1", f"The {topic} story", {"font-size": "32px"})
    for _ in range(5):
        text = f"{topic} {sentence(rng, 30)}"
        if variant:
            page.add([*ENTRY, ("div", "", ("announcement",))], "span", text, {"color": "red"})
        else:
            page.add(ENTRY, "p", text, BODY_CSS)
    for _ in range(comments):
        page.add(COMMENTS, "p", sentence(rng, 60), {"font-size": "13px"})
    page.add(ENTRY if promo_in_entry else PROMO, "p", NEWSLETTER, BODY_CSS)
    page.add(FOOTER, "p", "© The Harbour Times", {"font-size": "11px"})
    return page.page(number, f"The {topic} story", f"{topic} {topic}")


@pytest.fixture(scope="module")
def full_model() -> SiteModel:
    return SiteModel().fit([post_page(n) for n in range(10)])


@pytest.fixture(scope="module")
def model(full_model: SiteModel) -> SiteModel:
    """The site model without its parser: the classifier and the fallbacks behind it,
    which a page the parser does not serve gets."""
    classifier = copy.deepcopy(full_model)
    del classifier.rules_
    return classifier


def test_the_container_is_learned_from_the_training_pages(model: SiteModel) -> None:
    assert model.container_ is not None
    assert path_css(model.container_) == "body > div#page > div.hentry.post > div.entry"
    blocks = page_blocks(post_page(20, variant=True), densities=False)
    inside = [b.text for b in blocks if inside_container(b, model.container_)]
    assert len(inside) == 5 and all(text.startswith("harbour20") for text in inside)


def test_a_container_without_id_or_class_is_none() -> None:
    page = PageBuilder()
    for n in range(3):
        page.add([("div", "", ()), ("div", "", ())], "p", f"Paragraph {n}", BODY_CSS)
    blocks = page_blocks({"texts": page.texts}, densities=False)
    assert fit_container(blocks, np.ones(3, bool)) is None


def test_a_post_in_another_wrapper_comes_from_the_container(model: SiteModel) -> None:
    # Long comments: text density over the whole page would take them instead.
    page = post_page(21, variant=True, comments=8)
    learned = learned_extraction(page, model)
    extraction, method = learned.extraction, learned.method
    assert method == "learned+container"
    assert extraction.text.count("harbour21 council21") == 5
    assert "word" in extraction.text and NEWSLETTER not in extraction.text
    assert not any(p.text in extraction.text for p in page_blocks(page)[-10:-2])


def test_text_density_keeps_out_the_sites_template(model: SiteModel) -> None:
    assert NEWSLETTER.casefold() in model.template_texts_
    page = post_page(22, comments=0, promo_in_entry=True)
    assert NEWSLETTER in cold_start_extraction(page).text  # as dense as the article
    extraction = density_fallback(page, model)
    assert "harbour22" in extraction.text
    assert NEWSLETTER not in extraction.text


def test_the_cross_site_fallback_keeps_out_the_sites_template_too(model: SiteModel) -> None:
    page = post_page(22, comments=0, promo_in_entry=True)
    unseen = UnseenExtractor.load()
    assert NEWSLETTER in unseen.extract(page).text  # a site never seen has no template
    extraction = unseen_fallback(Page(page), model, unseen)
    assert "harbour22" in extraction.text
    assert NEWSLETTER not in extraction.text


def test_paragraphs_that_continue_the_article_are_taken() -> None:
    page = PageBuilder()
    more = [*ENTRY, ("div", "", ("entry-more",))]
    body = [*ENTRY, ("div", "", ("entry-body",))]
    page.add(body, "p", "First paragraph, which the classifier found.", BODY_CSS)
    page.add(body, "p", "Second paragraph, which it found too.", BODY_CSS)
    page.add(more, "p", "Third paragraph, after the read-more cut.", BODY_CSS)
    page.add(more, "p", "Fourth paragraph, after the read-more cut.", BODY_CSS)
    long_plain = "A paragraph styled otherwise but long enough to be one. " * 3
    page.add([*ENTRY, ("div", "", ("quote",))], "div", long_plain, {"font-size": "16px"})
    page.add(more, "p", "Posted by the editor at noon", {"font-size": "12px"})
    page.add(more, "p", "A paragraph-like text after the byline.", BODY_CSS)
    page.add(COMMENTS, "p", "A comment styled like the article.", BODY_CSS)
    blocks = page_blocks({"texts": page.texts}, densities=False)
    taken = take_continuation(blocks, np.array([True, True] + [False] * 6))
    assert taken[:5].all()
    assert not taken[5]  # short and styled otherwise: the article has ended
    assert not taken[6:].any()


def test_continuation_stays_in_the_articles_element() -> None:
    page = PageBuilder()
    page.add(ENTRY, "p", "First paragraph, which the classifier found.", BODY_CSS)
    page.add(COMMENTS, "p", "A long comment right after the article. " * 5, BODY_CSS)
    blocks = page_blocks({"texts": page.texts}, densities=False)
    assert not take_continuation(blocks, np.array([True, False]))[1]


def test_continuation_takes_the_rest_of_the_article_after_an_advert() -> None:
    """A newspaper template (articles.chicagotribune.com, ziyan chaos page 076): the first
    paragraphs in a module of their own, then (past an advert with no text) the rest in
    another module of the same kind, a level further up; the comments below are styled
    alike but in a module of another kind, and are not taken."""
    column = [("div", "main-column", ())]
    first = [*column, ("div", "first-block", ()), ("div", "first-para", ("articletext",))]
    rest = [*column, ("div", "after-first-para", ("articletext", "with-ad"))]
    page = PageBuilder()
    page.add(first, "p", "The lead paragraph, which the classifier found. " * 3, BODY_CSS)
    page.add(rest, "p", "The second paragraph, after the advert. " * 3, BODY_CSS)
    page.add(rest, "p", "The third paragraph. " * 5, BODY_CSS)
    page.add([*column, ("div", "", ("comment",))], "p", "A comment styled alike. " * 5, BODY_CSS)
    blocks = page_blocks({"texts": page.texts}, densities=False)
    taken = take_continuation(blocks, np.array([True, False, False, False]))
    assert taken.tolist() == [True, True, True, False]


def test_continuation_stops_at_template_text_and_links() -> None:
    page = PageBuilder()
    page.add(ENTRY, "p", "First paragraph, which the classifier found.", BODY_CSS)
    page.add(ENTRY, "p", NEWSLETTER, BODY_CSS)
    page.add(ENTRY, "p", "A link styled like a paragraph", BODY_CSS, link=True)
    blocks = page_blocks({"texts": page.texts}, densities=False)
    template = frozenset({" ".join(NEWSLETTER.split()).casefold()})
    assert not take_continuation(blocks, np.array([True, False, False]), template)[1:].any()
    assert take_continuation(blocks, np.array([True, False, False]))[1]
    assert not take_continuation(blocks, np.array([True, True, False]))[2]


def print_view(number: int) -> dict:
    """The same site's post in another layout (a print view: tables, no ids or classes),
    with a jobs list the classifier can mistake for paragraphs."""
    rng = random.Random(number)
    topic = f"harbour{number} council{number} budget{number}"
    page = PageBuilder()
    cell = [("table", "", ()), ("tbody", "", ()), ("tr", "", ()), ("td", "", ())]
    page.add(cell, "h2", f"The {topic} story", {"font-size": "24px"})
    for _ in range(5):
        page.add([*cell, ("div", "", ())], "div", f"{topic} {sentence(rng, 40)}", BODY_CSS)
    for _ in range(3):
        page.add([("ul", "", ("jobs",)), ("li", "", ())], "p", sentence(rng, 12), BODY_CSS)
    return page.page(number, f"The {topic} story", f"{topic} {topic}")


def test_a_page_of_another_layout_is_extracted_as_a_site_never_seen(model: SiteModel) -> None:
    usual, other = post_page(23), print_view(24)
    assert model.familiarity(page_blocks(usual)) == 1.0
    assert model.familiarity(page_blocks(other)) < 0.2
    assert learned_extraction(usual, model, UnseenExtractor.load()).method == "learned"
    learned = learned_extraction(other, model, UnseenExtractor.load())
    extraction, method, reason = learned.extraction, learned.method, learned.note
    assert method == "learned+unseen"
    assert "layout the model knows" in reason
    assert extraction.text.count("harbour24 council24") == 6  # headline and paragraphs
    assert not any(b.text in extraction.text for b in page_blocks(other)[-3:])  # jobs


def test_a_lead_paragraph_past_an_inline_box_is_taken_and_the_box_is_not() -> None:
    page = PageBuilder()
    body = [*ENTRY, ("div", "", ("entry-body",))]
    aside = [*ENTRY, ("div", "", ("inline", "runaround"))]
    lead = "KIEV — The lead paragraph in a wrapper of its own, with a dateline. " * 3
    page.add(ENTRY, "h6", "Published: July 23, 2012", {"font-size": "11px"})
    page.add([*body, ("nyt_text", "", ())], "p", lead, {"font-size": "17px"})
    page.add(aside, "h4", "Connect With Us on Twitter", {"font-size": "13px"}, link=True)
    page.add(aside, "p", "Follow us for breaking news and headlines.", {"font-size": "13px"})
    page.add(body, "p", "Second paragraph, which the classifier found.", BODY_CSS)
    page.add(body, "p", "Third paragraph, which it found too.", BODY_CSS)
    blocks = page_blocks({"texts": page.texts}, densities=False)
    taken = take_continuation(blocks, np.array([False] * 4 + [True, True]))
    assert taken[1] and taken[4:].all()  # the lead joins the story
    assert not taken[2:4].any()  # the box beside it does not
    assert not taken[0]  # nor the short dateline above it


def test_no_lead_is_taken_past_a_paragraph_outside_the_article() -> None:
    page = PageBuilder()
    teaser = "A teaser of another story, long enough to pass for a paragraph. " * 3
    page.add(ENTRY, "p", teaser, {"font-size": "14px"})
    page.add(COMMENTS, "p", "A long paragraph outside the article's element. " * 4, BODY_CSS)
    page.add(ENTRY, "p", "Short box line", {"font-size": "13px"}, link=True)
    page.add(ENTRY, "p", "First paragraph, which the classifier found.", BODY_CSS)
    blocks = page_blocks({"texts": page.texts}, densities=False)
    assert not take_continuation(blocks, np.array([False, False, False, True]))[:3].any()


def test_blocks_built_once_give_the_same_article_as_blocks_built_for_it(
    model: SiteModel,
) -> None:
    """The crawl builds a page's blocks without densities for its kind and headline, then
    adds the densities for extraction (a :class:`Page` keeps them): the same blocks,
    features and article as building them with densities."""
    unseen = UnseenExtractor(SiteModel().fit([post_page(n) for n in range(20, 30)]))
    for item in (post_page(40), post_page(41, variant=True)):
        built = page_blocks(item)
        page = Page(item)
        without = page.blocks_without_densities()
        assert all(block.extra["text_density"] == 0 for block in without)
        added = page.blocks()
        assert added is without  # the same blocks, given their densities once
        assert any(block.extra["text_density"] > 0 for block in built)  # densities at all
        assert added == built
        fresh = learned_extraction(item, model, unseen)
        reused = learned_extraction(page, model, unseen)
        assert page.blocks() is added  # not built again
        assert (reused.method, reused.extraction.text) == (fresh.method, fresh.extraction.text)
        assert unseen.extract(page).text == unseen.extract(item).text


def wrapped_post(number: int) -> dict:
    """The site's usual post inside a wrapper the training pages never had (a campaign
    banner's frame, a redesign's shell): every tag path moves, the article's selectors
    (``div.entry > p``) do not."""
    page = post_page(number)
    for raw in page["texts"]:
        raw["path"] = [raw["path"][0], "section", *raw["path"][1:]]
        raw["selector"] = [
            raw["selector"][0],
            {"name": "section", "id": "", "classes": ["shell"]},
            *raw["selector"][1:],
        ]
    builder = PageBuilder()
    builder.texts = page["texts"]
    page["rendered_html"] = builder.rendered_html()
    return page


def test_a_rendered_page_is_cut_by_the_layouts_parser_first(full_model: SiteModel) -> None:
    """Where the layout's parser serves it and passes its check, a rendered page is cut by
    it, as the fast path cuts the site's raw pages: on a page of the usual layout, and on
    one whose blocks' tag paths the classifier never saw (an extra wrapper)."""
    assert learned_extraction(post_page(23), full_model).method == "rules"
    page = wrapped_post(25)
    assert full_model.familiarity(page_blocks(page)) < 0.2  # judged of another layout
    learned = learned_extraction(page, full_model, UnseenExtractor.load())
    assert learned.method == "rules" and not learned.note
    assert learned.extraction.text.count("harbour25 council25") == 5  # the paragraphs
    assert NEWSLETTER not in learned.extraction.text
    assert not any(b.text in learned.extraction.text for b in page_blocks(page)[-5:-2])


def test_what_the_parser_leaves_out_by_its_markup_is_out_of_the_classifiers_article_too(
    model: SiteModel,
) -> None:
    """A layout's parser that does not serve a page still knows what is never the story by
    its markup: a photo's caption and a sign-up form in the story, which the classifier or
    the article container (styled as the story, in its place) takes, are left out."""
    from spidercrawl.extract.article import SiteReaders, without_kinds_left_out

    rng = random.Random(31)
    topic = "harbour31 council31 budget31"
    page = PageBuilder()
    page.add(ENTRY[:2], "h1", f"The {topic} story", {"font-size": "32px"})
    story = [f"{topic} {sentence(rng, 30)}" for _ in range(5)]
    for text in story[:2]:
        page.add(ENTRY, "p", text, BODY_CSS)
    caption = "The council31 chamber on Tuesday. Photo: Harbour Times"
    page.add([*ENTRY, ("figure", "", ())], "figcaption", caption, BODY_CSS)
    page.add([*ENTRY, ("form", "", ("signup",))], "p", NEWSLETTER, BODY_CSS)
    for text in story[2:]:
        page.add(ENTRY, "p", text, BODY_CSS)
    page.add(FOOTER, "p", "© The Harbour Times", {"font-size": "11px"})
    item = Page.of(page.page(31, f"The {topic} story", f"{topic} {topic}"))
    blocks = item.blocks()
    everything = Extraction.of_blocks(blocks[1:-1], np.ones(len(blocks) - 2))
    assert caption in everything.text and NEWSLETTER in everything.text
    article = without_kinds_left_out(everything, blocks, item, model)
    assert caption not in article.text and NEWSLETTER not in article.text
    assert all(text in article.text for text in story)
    readers = SiteReaders(item, model, None)
    for reading in (readers.classifier(), readers.container()):  # each reading of blocks
        assert caption not in reading.text and all(text in reading.text for text in story)
