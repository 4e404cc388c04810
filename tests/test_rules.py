"""A layout's parser as the fast path's rules: learned from pages, applied to raw HTML,
checked, saved and loaded."""

from __future__ import annotations

import copy

import parsel
import pytest

from spidercrawl.capture.static import static_capture
from spidercrawl.document.selectors import Step
from spidercrawl.learn.model import MODEL_FORMAT, SiteModel
from spidercrawl.learn.parser import ParserPart
from spidercrawl.learn.rules import ExtractionRules
from spidercrawl.learn.store import ModelStore


def test_a_selectors_xpath_quotes_odd_names_and_makes_tbody_optional() -> None:
    part = ParserPart(
        "container",
        (Step("table", "", frozenset({"it's"})), Step("tbody"), Step("tr"), Step("td")),
        anchored=True,
    )
    html = '<html><body><table class="it\'s"><tr><td>kept</td></tr></table></body></html>'
    assert parsel.Selector(text=html).xpath(part.xpath).getall() == ["<td>kept</td>"]
    assert part.css == "body > table.it's > tbody > tr > td"


# --- a small handmade site: article paragraphs, a menu, a footer -------------------------------


def page_html(number: int, paragraphs: int = 3, article_class: str = "article") -> str:
    body = "".join(
        f"<p class='para'>Paragraph {i} of story {number} tells what happened at the harbour "
        f"on day {number} and why it matters to the town.</p>"
        for i in range(paragraphs)
    )
    return (
        f"<html><head><title>Story {number}</title>"
        f"<meta name='description' content='What happened at the harbour on day {number}'>"
        f"</head><body><ul class='menu'><li><a href='/a'>News</a></li><li><a href='/b'>Sport"
        f"</a></li></ul><div class='{article_class}'>{body}</div>"
        f"<div class='footer'>Copyright the Harbour</div></body></html>"
    )


def page_item(number: int) -> dict:
    """The page item a crawl would make of :func:`page_html` (blocks with selector paths)."""

    def block(selector: list[tuple[str, str]], text: str) -> dict:
        return {
            "selector": [{"name": n, "id": "", "classes": [c] if c else []} for n, c in selector],
            "text": [text],
        }

    texts = [block([("ul", "menu"), ("li", "")], word) for word in ("News", "Sport")]
    texts += [
        block(
            [("div", "article"), ("p", "para")],
            f"Paragraph {i} of story {number} tells what happened at the harbour on day "
            f"{number} and why it matters to the town.",
        )
        for i in range(3)
    ]
    texts.append(block([("div", "footer")], "Copyright the Harbour"))
    return {
        "rendered_html": page_html(number),
        "descriptions": [f"What happened at the harbour on day {number}"],
        "texts": texts,
    }


@pytest.fixture(scope="module")
def rules() -> ExtractionRules:
    pages = [page_item(n) for n in range(6)]
    content = [(p, i) for p in range(6) for i in (2, 3, 4)]
    return ExtractionRules().fit(pages, content)


def test_rules_learned_from_pages_extract_a_new_page(rules: ExtractionRules) -> None:
    assert [part.css for part in rules.containers] == ["div.article"]
    assert rules.usable and rules.recall_ == 1.0
    result = rules.extract(page_html(42))
    assert result.text.count("\n\n") == 2 and "story 42" in result.text
    assert "Sport" not in result.text and "Copyright" not in result.text
    assert result.html.startswith("<p>Paragraph 0 of story 42")
    assert rules.check(result, "What happened at the harbour on day 42").ok


def test_the_check_sends_misfits_to_the_browser(rules: ExtractionRules) -> None:
    redesigned = rules.extract(page_html(7, article_class="post-body"))
    verdict = rules.check(redesigned)
    assert not verdict.ok and verdict.reason == "the layout's container is not on the page"
    huge = rules.extract(page_html(7, paragraphs=60))
    assert not rules.check(huge).ok and "too much text" in rules.check(huge).reason
    tiny = rules.extract(page_html(7, paragraphs=0).replace("<div class='article'>", "<div>"))
    assert not rules.check(tiny).ok
    menu_as_article = rules.extract(
        page_html(7, paragraphs=0).replace(
            "<div class='article'></div>",
            "<div class='article'>"
            + "".join(
                f"<p class='para'><a href='/{i}'>Link number {i}</a> to <a href='/o{i}'>"
                f"another story of the harbour and the town</a></p>"
                for i in range(3)
            )
            + "</div>",
        )
    )
    verdict = rules.check(menu_as_article)
    assert not verdict.ok and "links" in verdict.reason
    for broken in ("", "<html>", b"\xff\xfe\x00garbage"):
        assert not rules.check(rules.extract(broken)).ok


def test_text_missing_a_description_the_page_echoes_goes_to_the_browser(
    rules: ExtractionRules,
) -> None:
    """The relevance check rejects rules' text that misses the description only where the
    page itself says what the description says; a teaser written apart from the page is
    no sign that the rules took the wrong text."""
    other = "".join(
        f"<p class='para'>Tide table {i}: high water at six, low water at noon, and the "
        f"ferry timetable for the week ahead is unchanged.</p>"
        for i in range(3)
    )
    page = page_html(7).replace(
        "<div class='article'>",
        "<h2 class='standfirst'>What happened at the harbour on day 7</h2>"
        f"<div class='article'>{other}</div><div class='old'>",
    )
    misled = rules.extract(page)
    assert "Tide table 0" in misled.text and "Paragraph 0" not in misled.text
    verdict = rules.check(misled, "What happened at the harbour on day 7")
    assert not verdict.ok and "does not echo the description" in verdict.reason
    assert rules.check(misled, "Councillors argued over a budget for the lighthouse").ok


def test_a_quote_in_the_container_joins_a_figure_and_a_box_of_links_do_not(
    rules: ExtractionRules,
) -> None:
    """No training page had a quote, a photo or a box of links in its article: the
    container's text takes the quote where it stands; the figure and its caption, and a
    box that is mostly links, are never the story, by their markup."""
    page = (
        page_html(9)
        .replace(
            "</p><p class='para'>Paragraph 1",
            "</p><blockquote><p>We waited years for this, said the harbour master.</p>"
            "</blockquote><p class='para'>Paragraph 1",
        )
        .replace(
            "</p><p class='para'>Paragraph 2",
            "</p><figure><img src='/dawn.jpg'><figcaption>The harbour at dawn, seen from the "
            "old lighthouse.</figcaption></figure><ul><li><a href='/mail'>Email to a friend"
            "</a></li><li><a href='/print'>Printer friendly</a></li><li><a href='/more'>More "
            "stories</a></li></ul><p class='para'>Paragraph 2",
        )
    )
    result = rules.extract(page)
    assert "said the harbour master" in result.text
    assert result.text.index("Paragraph 0") < result.text.index("harbour master")
    assert result.text.index("harbour master") < result.text.index("Paragraph 1")
    assert "Email to a friend" not in result.text and "old lighthouse" not in result.text
    assert "Paragraph 2 of story 9" in result.text


def test_a_pages_own_id_names_no_container() -> None:
    """Each page's article element has the page's own id (``story-12``): the container is
    named by the template's class, and a new page is read."""

    def item(number: int) -> dict:
        story = "".join(
            f"<p>Paragraph {i} of story {number} tells of the harbour and the town.</p>"
            for i in range(3)
        )
        html = (
            f"<html><body><div class='menu'><a href='/'>Home</a></div>"
            f"<div id='story-{number}' class='article'>{story}</div></body></html>"
        )
        texts = [
            {"selector": [{"name": "div", "id": f"story-{number}", "classes": ["article"]},
                          {"name": "p", "id": "", "classes": []}],
             "text": [f"Paragraph {i} of story {number} tells of the harbour and the town."]}
            for i in range(3)
        ]  # fmt: skip
        return {"rendered_html": html, "texts": texts}

    rules = ExtractionRules().fit(
        [item(n) for n in range(5)], [(p, i) for p in range(5) for i in range(3)]
    )
    assert [part.css for part in rules.containers] == ["div.article"]
    assert "story 77" in rules.extract(item(77)["rendered_html"]).text


def test_static_capture_reads_metadata_of_raw_html() -> None:
    html = """<html lang="fr"><head><title> Le port </title>
    <meta name="Description" content="Ce qui s'est passe">
    <meta property="og:title" content="Le port, jour 3">
    <meta property="article:tag" content="a"><meta property="article:tag" content="b">
    <meta name="author" content="Ana Silva"><link rel="Canonical" href="/port/3">
    <script type="application/ld+json">{"@graph": [{"@type": "NewsArticle",
      "headline": "Le port", "author": {"name": "Ana Silva"}, "datePublished": "2026-01-02"}]}
    </script><script type="application/ld+json">{broken</script></head>
    <body><time datetime="2026-01-02T08:00">2 janvier</time></body></html>"""
    capture = static_capture(html, "http://127.0.0.1:8000/port/?p=3")
    assert capture["titles"] == ["Le port", "Le port, jour 3"]
    assert capture["descriptions"] == ["Ce qui s'est passe"]
    assert capture["canonical_url"] == "http://127.0.0.1:8000/port/3"
    assert capture["lang"] == "fr" and capture["meta"]["author"] == "Ana Silva"
    assert capture["og"]["article:tag"] == ["a", "b"]
    assert capture["jsonld"][0]["author"] == ["Ana Silva"]
    assert capture["time_datetimes"] == ["2026-01-02T08:00"]
    assert capture["texts"] == [] and capture["capture_mode"] == "http"
    assert static_capture("", "http://x/")["titles"] == []


@pytest.fixture(scope="module")
def fitted() -> SiteModel:
    """A real site model: the store checks that a loaded model's parts fit together."""
    from tests.test_fallbacks import post_page

    return SiteModel().fit([post_page(n) for n in range(10)])


def test_saving_a_new_model_keeps_the_old_one_as_a_version(tmp_path, fitted) -> None:
    store = ModelStore(tmp_path, keep_versions=2)
    versions = ("20260101T000000Z", "20260201T000000Z", "20260301T000000Z", "20260401T000000Z")
    for version in versions:
        model = copy.deepcopy(fitted)
        model.version_, model.created_ = version, version
        store.save("news.example", model)
    assert store.load("news.example").version_ == "20260401T000000Z"
    assert store.versions("news.example") == ["20260201T000000Z", "20260301T000000Z"]
    assert store.load("unknown.example") is None


def test_a_model_from_an_older_spidercrawl_is_learned_again(tmp_path, fitted) -> None:
    store = ModelStore(tmp_path)
    model = copy.deepcopy(fitted)
    model.format_ = MODEL_FORMAT - 1  # before models were stored without pickle
    store.save("old.example", model)
    assert store.load("old.example") is None


def test_a_model_rendered_directly_by_a_decision_on_libxml2s_tree_is_learned_again(
    tmp_path, fitted
) -> None:
    content = [(p, i) for p in range(4) for i in (2, 3, 4)]
    drawn = [page_item(n) | {"raw_html": page_html(n, paragraphs=0)} for n in range(4)]
    store = ModelStore(tmp_path)
    for site, pages in (
        ("drawn.example", drawn),
        ("plain.example", [page_item(n) for n in range(4)]),
    ):
        model = copy.deepcopy(fitted)
        model.rules_ = ExtractionRules().fit(pages, content)
        store.save(site, model)
        assert store.load(site) is not None  # decided now: kept
        del model.rules_.raw_parser_  # as fitted before raw HTML was parsed as a browser does
        store.save(site, model)
    # Its decision to render every page was made on libxml2's tree: learned again.
    assert store.load("drawn.example") is None
    # A model that made no such decision loads as it is.
    assert store.load("plain.example") is not None


def test_rules_saved_and_loaded_extract_as_before(rules, tmp_path) -> None:
    from spidercrawl.learn import model_file
    from spidercrawl.learn.rules import LayoutRules

    allowed = {c.__name__: c for c in (ExtractionRules, LayoutRules, ParserPart, Step)}
    both = LayoutRules([rules, rules])
    model_file.dump(tmp_path / "rules.npz", both, allowed)
    loaded = model_file.load(tmp_path / "rules.npz", allowed)
    assert loaded.layouts[0].parts_ == rules.parts_ and loaded.summary() == both.summary()
    for number in (42, 43):
        ours, theirs = both.extract(page_html(number)), loaded.extract(page_html(number))
        assert "story" in theirs.text and theirs.text == ours.text
        assert loaded.check(theirs).ok


def test_rules_that_miss_the_article_in_raw_html_decide_to_render() -> None:
    content = [(p, i) for p in range(4) for i in (2, 3, 4)]
    served = [page_item(n) | {"raw_html": page_html(n)} for n in range(4)]
    assert ExtractionRules().fit(served, content).render_reason == ""
    # A script writes the story: the HTML as served has an empty article.
    drawn = [page_item(n) | {"raw_html": page_html(n, paragraphs=0)} for n in range(4)]
    fitted = ExtractionRules().fit(drawn, content)
    assert fitted.raw_html_ == {"pages": 4, "held": 0}
    assert "raw HTML of 0 of 4 training pages" in fitted.render_reason
    assert fitted.summary()["render"] == fitted.render_reason
    # Without raw HTML (an older crawl's pages) nothing is decided.
    assert ExtractionRules().fit([page_item(n) for n in range(4)], content).render_reason == ""


def test_text_of_the_container_no_training_page_showed_is_taken() -> None:
    """On the training pages the article is ``div.article``'s paragraphs. A page whose
    article goes on in a list inside that container has the list in its article: the
    container's text is the article, whatever markup it comes in."""
    content = [(p, i) for p in range(4) for i in (2, 3, 4)]
    served = [page_item(n) | {"raw_html": page_html(n)} for n in range(4)]
    rules = ExtractionRules().fit(served, content)
    items = "".join(
        f"<li>Item {i}: the ferry to the island runs again from the old harbour wall, "
        f"twice a day and three times on market days.</li>"
        for i in range(4)
    )
    listed = page_html(9).replace(
        "</div><div class='footer'>", f"<ul>{items}</ul></div><div class='footer'>"
    )
    result = rules.extract(listed)
    assert "Paragraph 2 of story 9" in result.text and "Item 3: the ferry" in result.text
    assert result.container_share == 1.0 and rules.check(result).ok


def test_the_page_share_bound_of_one_or_two_training_pages_is_never_under_the_floor() -> None:
    """Rules learned from one page of a long menu took a fifth of its text; a page of the
    same template whose story is three times as long is a larger share of its page, and is
    not refused for it (1.5 times the one page's share said it was). From three training
    pages the bound stands: the same page goes to the browser."""

    def with_menu(html: str) -> str:
        menu = "".join(
            f"<li><a href='/s{i}'>Section number {i} of the harbour paper</a></li>"
            for i in range(40)
        )
        return html.replace("<ul class='menu'>", f"<ul class='menu'>{menu}")

    content = [(p, i) for p in range(3) for i in (2, 3, 4)]
    pages = [page_item(n) | {"rendered_html": with_menu(page_html(n))} for n in range(3)]
    longer = ExtractionRules().fit(pages[:1], content[:3]).extract(with_menu(page_html(9, 9)))
    share = longer.chars / longer.page_chars
    assert 0.3 < share < 0.5
    assert ExtractionRules().fit(pages[:1], content[:3]).check(longer).ok
    verdict = ExtractionRules().fit(pages, content).check(longer)
    assert not verdict.ok and verdict.reason == f"the rules took {share:.0%} of the page's text"
