"""No page is lost to an error: an extractor that raises hands the page to the next one.

The learning pipeline (a real Scrapy crawler, the shipped cross-site model) is fed a site
whose saved model is damaged so that it raises on every page, and a page whose blocks
carry none of a model's feature names (where ``np.bincount`` once returned integers and
the site model crashed on every such page).
"""

from __future__ import annotations

import numpy as np

from spidercrawl.document.blocks import page_blocks
from spidercrawl.learn.features import BlockVectorizer
from tests.test_fallbacks import PageBuilder, post_page, sentence
from tests.test_learning_retry import MIN_PAGES, SITE, pipeline_for, post, run


def test_blocks_with_no_known_feature_name_get_float_margins() -> None:
    import random

    known = page_blocks(post_page(1), densities=False)
    vectorizer = BlockVectorizer(groups=("tag_path", "text")).fit(known)
    width = vectorizer.width
    stranger = PageBuilder()
    stranger.add([("table", "", ())], "td", sentence(random.Random(3), 20), {})
    blocks = page_blocks(stranger.page(1, "t", "d"), densities=False)
    margins = vectorizer.linear_decision(blocks, np.full(width, 0.5), 0.25)
    assert margins.dtype == float and margins.shape == (1,)
    # The continuous part (text length...) still counts: the margin is not the intercept.
    assert margins[0] != 0.25


def test_a_site_model_that_raises_hands_every_page_to_the_next_extractor(tmp_path) -> None:
    pipeline, crawler = pipeline_for(tmp_path)
    first = [post(n) for n in range(MIN_PAGES)]
    run(pipeline, first)  # learns the site's model
    state = pipeline.sites[SITE]
    assert state.model is not None
    state.model.weights_.coef = np.zeros(2)  # damaged: too few weights for its features
    rules = state.model.extraction_rules()
    for layout in getattr(rules, "layouts", None) or [rules]:
        layout.parts_ = [None]  # damaged: the parser, which cuts a rendered page first

    pages = [post(n) for n in range(40, 46)]
    articles = run(pipeline, pages)

    assert [a["url"] for a in articles] == [p["url"] for p in pages]  # every page, once
    for article in articles:
        assert article["method"] == "unseen", article["method"]
        assert "AttributeError" in article["method_note"]
        assert "harbour" in article["text"]
    # Each reader that raised is counted: the site's parser and its classifier, each page.
    errors = crawler.stats.get_value("spidercrawl/articles/extractor_errors")
    assert errors == 2 * len(pages)
    assert crawler.stats.get_value(f"spidercrawl/site/{SITE}/extractor_errors") == 2 * len(pages)


def test_a_page_whose_html_breaks_every_extractor_is_still_an_article(tmp_path) -> None:
    """Density raising too (a page item whose HTML is not text) leaves an empty article
    that says why, not a lost page."""
    pipeline, crawler = pipeline_for(tmp_path)
    run(pipeline, [post(n) for n in range(MIN_PAGES)])  # learns the site's model
    page = {**post(7), "rendered_html": 12345}  # no extractor can read this
    (article,) = run(pipeline, [page])
    assert article["url"] == page["url"]
    assert "in text density" in article["method_note"]
    assert crawler.stats.get_value("spidercrawl/articles/extractor_errors") >= 1
