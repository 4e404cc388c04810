"""Site models that learn from the never-seen consensus's articles: a boxed feature that
relevance to the description misses, and a site whose consensus disagrees everywhere."""

from __future__ import annotations

import random

import pytest

from spidercrawl.learn.consensus_labels import CONSENSUS_FIELD, ConsensusArticle
from spidercrawl.learn.model import SiteModel
from tests.test_fallbacks import COMMENTS, ENTRY, FOOTER, NAV, PageBuilder, sentence

BOX = [*ENTRY, ("div", "", ("feature-box",))]


def feature_page(number: int) -> tuple[dict, str, list[str]]:
    """A feature whose body sits in a styled box and shares no words with the description,
    while the readers' comments repeat the description's words: relevance to the
    description points at the comments. Returns the page item, its article (what the
    consensus chose) and its body paragraphs."""
    rng = random.Random(number)
    topic = f"harbour{number} council{number}"
    page = PageBuilder()
    for name in ("News", "Sport", "Weather"):
        page.add(NAV, "a", name, {}, link=True)
    page.add(ENTRY[:2], "h1", f"The {topic} story", {"font-size": "32px"})
    body = [sentence(rng, 35) for _ in range(5)]
    for text in body:
        page.add(BOX, "p", text, {"font-size": "16px", "color": "navy"})
    for _ in range(4):
        page.add(COMMENTS, "p", f"{topic} {sentence(rng, 25)}", {"font-size": "13px"})
    page.add(FOOTER, "p", "© The Harbour Times", {"font-size": "11px"})
    item = page.page(number, f"The {topic} story", f"{topic} {topic} budget row")
    return item, "\n\n".join([f"The {topic} story", *body]), body


def training_pages(agreement: float) -> list[dict]:
    pages = []
    for number in range(10):
        item, article, _ = feature_page(number)
        readings = [article] * 3 if agreement >= 0.5 else []
        item[CONSENSUS_FIELD] = ConsensusArticle(article, agreement, readings).as_field()
        pages.append(item)
    return pages


def body_taken(model: SiteModel) -> int:
    page, _, body = feature_page(42)
    text = model.extract(page).text
    return sum(paragraph in text for paragraph in body)


def test_relevance_misses_a_boxed_feature_the_consensus_labels_get() -> None:
    relevance = SiteModel(labels="relevance").fit(training_pages(0.9))
    assert body_taken(relevance) == 0
    # Its parser, induced from the vote of the pages' readings (relevance's mask one of
    # four), takes the boxed feature.
    page, _, body = feature_page(42)
    parsed = relevance.usable_rules().extract(page["rendered_html"]).text
    assert all(paragraph in parsed for paragraph in body)
    for source in ("consensus", "consensus-clusters", "voted", "relevance-checked"):
        model = SiteModel(labels=source).fit(training_pages(0.9))
        assert body_taken(model) == 5, source
        assert model.clustering_["label_basis"].startswith(f"{source} on 10 of 10 pages")
    checked = SiteModel(labels="relevance-checked").fit(training_pages(0.9))
    assert "voted by role instead" in checked.clustering_["label_basis"]


def test_a_consensus_that_disagrees_everywhere_leaves_the_seeds_labels(caplog) -> None:
    with caplog.at_level("INFO"):
        model = SiteModel(labels="consensus").fit(training_pages(0.2))
    assert model.clustering_["label_basis"].startswith("consensus on 0 of 10 pages")
    assert "labelled by relevance" in caplog.text
    assert body_taken(model) == 0  # as with relevance labels


@pytest.mark.parametrize("field", [None, "text", {"text": 3, "agreement": 1}, {"text": "a"}])
def test_a_malformed_consensus_field_labels_by_relevance(field) -> None:
    pages = training_pages(0.9)
    for page in pages:
        page[CONSENSUS_FIELD] = field
    model = SiteModel(labels="consensus").fit(pages)
    assert model.clustering_["label_basis"].startswith("consensus on 0 of 10")


def test_an_unknown_label_source_is_refused() -> None:
    with pytest.raises(ValueError, match="labels must be one of"):
        SiteModel(labels="gold")


RELATED = [*ENTRY[:2], ("div", "", ("related",))]
KEPT_BY_THE_READING = (2, 5, 7)  # the pages whose reading keeps the related box


def page_with_related(number: int) -> tuple[dict, str, list[str], list[str]]:
    """An article page with a related-articles box below the body: linked teasers, long
    enough to pass for prose. Returns the page item, the page-level reading's article (the
    box kept on the pages of ``KEPT_BY_THE_READING``), the body and the teasers."""
    rng = random.Random(1000 + number)
    page = PageBuilder()
    for name in ("News", "Sport", "Weather"):
        page.add(NAV, "a", name, {}, link=True)
    title = f"The harbour{number} story"
    page.add(ENTRY[:2], "h1", title, {"font-size": "32px"})
    body = [sentence(rng, 40) for _ in range(5)]
    for text in body:
        page.add(ENTRY, "p", text, {"font-size": "16px"})
    teasers = [sentence(rng, 22) for _ in range(3)]
    for text in teasers:
        page.add(RELATED, "p", text, {"font-size": "14px", "color": "gray"}, link=True)
    page.add(FOOTER, "p", "© The Harbour Times", {"font-size": "11px"})
    item = page.page(number, title, f"harbour{number} {body[0][:60]}")
    kept = body + (teasers if number in KEPT_BY_THE_READING else [])
    return item, "\n\n".join([title, *kept]), body, teasers


def test_the_site_vote_leaves_out_a_box_the_reading_keeps_on_a_few_pages() -> None:
    """Ten pages; the page-level reading keeps the related box on three. Taken block by
    block, those three pages teach the box as article; voted across the site by template
    role, no page does, and the model leaves the box out of all ten."""
    pages, made = [], []
    for number in range(10):
        item, reading, body, teasers = page_with_related(number)
        made.append((dict(item), body, teasers))
        item[CONSENSUS_FIELD] = ConsensusArticle(reading, 0.9).as_field()
        pages.append(item)

    def box_labelled_on(source: str) -> set[int]:
        blocks, labels = SiteModel(labels=source).auto_label(pages)
        return {b.page for b, label in zip(blocks, labels, strict=True) if label and b.link_chars}

    assert box_labelled_on("consensus") == set(KEPT_BY_THE_READING)
    assert box_labelled_on("voted") == set()
    voted = SiteModel(labels="voted").fit(pages)
    assert voted.clustering_["label_basis"].startswith("voted on 10 of 10 pages")
    for item, body, teasers in made:
        text = voted.extract(item).text
        assert all(paragraph in text for paragraph in body)
        assert not any(teaser in text for teaser in teasers), item["url"]


def test_relevance_stands_where_the_reading_holds_its_content() -> None:
    """``relevance-checked``: where the page-level reading holds the article relevance
    chose, relevance's labels are the model's, the reading's extra box notwithstanding."""
    pages = []
    for number in range(10):
        item, reading, _, _ = page_with_related(number)
        item[CONSENSUS_FIELD] = ConsensusArticle(reading, 0.9).as_field()
        pages.append(item)
    checked = SiteModel(labels="relevance-checked").auto_label(pages)[1]
    relevance = SiteModel(labels="relevance").auto_label(pages)[1]
    assert (checked == relevance).all() and relevance.any()
    model = SiteModel(labels="relevance-checked").fit(pages)
    assert "relevance stands" in model.clustering_["label_basis"]
