"""The fast path's cheap reading: a page's prose paragraphs, and how much of them the
rules' article took. Where the two agree the rules stand without text density's slower
reading; where not, the slower readings decide."""

from __future__ import annotations

import lxml.html
import pytest

from spidercrawl.document.density import body_of, remove_invisible
from spidercrawl.document.prose import ProseCoverage, prose_coverage
from spidercrawl.extract.chain import ExtractionChain
from spidercrawl.extract.readers import Peers
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.rules import FastPathArticle, RuleExtraction, raw_document
from tests.test_fallbacks import post_page
from tests.test_raw_consensus import fast_path_page, story_page, story_paragraphs


def story_body() -> lxml.html.HtmlElement:
    root = lxml.html.fromstring(story_page(story_paragraphs()))
    remove_invisible(root)
    return body_of(root)


def test_the_whole_article_taken_agrees_with_the_prose() -> None:
    body = story_body()
    article = next(body.iter("article"))
    coverage = prose_coverage(body, set(article.iter("p")))
    words = sum(len(p.split()) for p in story_paragraphs())
    assert coverage == ProseCoverage(words, words)
    assert coverage.agrees_with(words + 5)  # the headline's words are not prose


def test_one_paragraph_of_ten_does_not_agree() -> None:
    body = story_body()
    first = next(body.iter("p"))
    coverage = prose_coverage(body, {first})
    assert coverage.share_taken == pytest.approx(0.1)
    assert not coverage.agrees_with(len(first.text_content().split()))


def test_an_article_mostly_of_other_text_does_not_agree() -> None:
    body = story_body()
    coverage = prose_coverage(body, set(body.iter("p")))
    assert coverage.share_taken == 1.0
    assert not coverage.agrees_with(4 * coverage.taken_words)  # three quarters not prose


def test_links_captions_and_a_page_without_prose_are_not_prose() -> None:
    links = " ".join(f"<a href='/s{n}'>Section {n} of the paper</a>" for n in range(8))
    root = lxml.html.fromstring(
        f"<html><body><p>{links}</p><p>Photo: the quay at dawn.</p>"
        "<script>var text = 'a script of many words, none of them prose at all'</script>"
        "</body></html>"
    )
    remove_invisible(root)
    coverage = prose_coverage(body_of(root), set(root.iter("p")))
    assert coverage == ProseCoverage(0, 0) and coverage.share_taken == 0.0
    assert not coverage.agrees_with(0)


@pytest.fixture(scope="module")
def model() -> SiteModel:
    fitted = SiteModel().fit([post_page(n) for n in range(10)])
    assert fitted.extraction_rules() is not None
    return fitted


def test_real_rules_report_how_much_of_the_prose_they_took(model: SiteModel) -> None:
    rules = model.extraction_rules()
    alone = rules.extract(raw_document(post_page(30, comments=0)["rendered_html"]))
    assert alone.prose.share_taken > 0.9  # all but the newsletter box's line
    assert alone.prose.agrees_with(len(alone.text.split()))
    # Readers' comments are prose the rules rightly leave: not the page's prose.
    commented = rules.extract(raw_document(post_page(30, comments=3)["rendered_html"]))
    assert commented.text == alone.text and commented.prose == alone.prose
    # The same long paragraphs outside a comment section are prose the rules left out.
    html = post_page(30, comments=3)["rendered_html"].replace("comment", "reading")
    elsewhere = rules.extract(raw_document(html))
    assert elsewhere.prose.page_words > elsewhere.prose.taken_words == alone.prose.taken_words
    assert not elsewhere.prose.agrees_with(len(elsewhere.text.split()))


def test_text_set_apart_by_line_breaks_is_prose() -> None:
    sentence = "the council met on Tuesday and agreed that the repairs would begin in spring"
    root = lxml.html.fromstring(
        f"<html><body><div class='post'>{sentence}<br><br>{sentence}<br>{sentence}</div>"
        f"<div id='comments'><div>{sentence}<br>{sentence}</div></div></body></html>"
    )
    post = next(root.iter("div"))
    coverage = prose_coverage(body_of(root), {post})
    words = 3 * len(sentence.split())
    assert coverage == ProseCoverage(words, words)


def test_where_the_prose_agrees_nothing_else_is_asked(model: SiteModel) -> None:
    paragraphs = story_paragraphs()
    whole = "\n\n".join(paragraphs)
    page = fast_path_page(story_page(paragraphs), whole, model)
    words = len(whole.split())
    prose = ProseCoverage(words, words)
    page["fast_path_article"] = FastPathArticle(
        RuleExtraction(text=whole, html="", prose=prose), model.version_
    )
    consensus = Peers()
    asked: list[str] = []
    consensus.extractors = {
        name: lambda html, n=name: asked.append(n) or "" for name in consensus.extractors
    }
    result = ExtractionChain(peers=consensus).extract(page, model)
    assert result.method == "rules" and result.note == "" and asked == []
    assert result.extraction.text == whole and result.rules_check == "prose"


def test_a_page_nested_deeper_than_a_browser_builds_is_read_whole() -> None:
    from spidercrawl.document.html import parse_raw_html

    line = "the council met on Tuesday and agreed that the repairs would begin soon"
    html = "<html><body>" + f"<div>{line}<br>in spring " * 600 + "</div>" * 600 + "</body></html>"
    root = parse_raw_html(html)  # deeper than a browser builds: every word kept
    remove_invisible(root)
    coverage = prose_coverage(body_of(root), set())
    assert coverage.page_words == 600 * (len(line.split()) + 2)
