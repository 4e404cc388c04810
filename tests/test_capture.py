"""The capture script, run in a real Chromium on small handmade pages."""

from __future__ import annotations

import pytest

from spidercrawl.capture.middleware import capture_from_json, capture_script, capture_script_as_json

pytestmark = pytest.mark.browser

SCRIPT = capture_script()


def capture(page, html: str, max_blocks: int = 5000) -> dict:
    page.set_content(html)
    return page.evaluate(SCRIPT, {"maxHtmlChars": 65536, "maxBlocks": max_blocks})


def block_texts(result: dict) -> list[str]:
    return [" ".join("".join(b["text"]).split()) for b in result["texts"]]


def test_inline_links_and_emphasis_fold_into_their_paragraph(browser_page) -> None:
    result = capture(
        browser_page,
        "<body><p>Read <a href='/x'>the full report</a> and <em>weep</em> quietly.</p></body>",
    )
    assert block_texts(result) == ["Read the full report and weep quietly."]
    block = result["texts"][0]
    assert block["element"]["name"] == "p"
    assert block["link_count"] == 1
    assert block["link_chars"] == len("the full report")
    assert "<a href=" in block["html"]


def test_hidden_text_is_skipped(browser_page) -> None:
    result = capture(
        browser_page,
        """<body>
        <p>Visible paragraph.</p>
        <p style="display:none">Display none.</p>
        <p style="visibility:hidden">Visibility hidden.</p>
        <div style="display:none"><p>Inside a hidden parent.</p></div>
        <a style="position:absolute; left:-9999px" href="#main">Skip to content</a>
        <span style="position:absolute; width:1px; height:1px; overflow:hidden;
              clip:rect(0,0,0,0)">Screen reader only</span>
        <p style="opacity:0">Transparent.</p>
        </body>""",
    )
    assert block_texts(result) == ["Visible paragraph."]
    assert result["hidden_text_chars"] > 0
    # Hidden text right in <body> (pushed off the page) is skipped too, but the body is
    # not marked hidden: whatever reads the DOM later (rules, text density) still reads it.
    stray = capture(
        browser_page,
        "<body style='text-indent:-9999px'>stray words"
        "<p style='text-indent:0'>Visible paragraph.</p></body>",
    )
    assert block_texts(stray) == ["Visible paragraph."] and stray["hidden_text_chars"] > 0
    assert not browser_page.evaluate("document.body.hasAttribute('data-sc-hidden')")


def test_nested_blocks_keep_their_own_text(browser_page) -> None:
    result = capture(
        browser_page,
        "<body><div id='outer' class='story main'>Lead text"
        "<p class='para'>Inner <b>bold</b> paragraph</p>tail text</div></body>",
    )
    by_name = {b["element"]["name"]: b for b in result["texts"]}
    assert set(by_name) == {"div", "p"}
    assert " ".join("".join(by_name["p"]["text"]).split()) == "Inner bold paragraph"
    assert by_name["p"]["path"] == ["div", "p"]
    assert by_name["p"]["selector"] == [
        {"name": "div", "id": "outer", "classes": ["story", "main"]},
        {"name": "p", "id": "", "classes": ["para"]},
    ]
    # Blocks come in reading order: the div's text after the paragraph is a block of its
    # own, after it, with the div's paths and box.
    assert block_texts(result) == ["Lead text", "Inner bold paragraph", "tail text"]
    lead, _, tail = result["texts"]
    assert tail["selector"] == lead["selector"] and tail["bound"] == lead["bound"]
    assert tail["run_of"] == 0 and "run_of" not in lead
    assert browser_page.get_attribute("#outer", "data-sc-block") == "0 2"


def test_a_posts_text_around_a_list_keeps_its_reading_order(browser_page) -> None:
    """A blog post written as text and line breaks in one element, a list in the middle:
    the closing paragraph comes after the list (it used to join the opening one, before
    it); a separator between links is no run of its own."""
    result = capture(
        browser_page,
        "<body><div class='post-body'>We made three changes this year.<br><br>"
        "<ul><li>First, people.</li><li>Second, training.</li></ul>"
        "We will keep looking for more.<br>Posted by Ana</div>"
        "<div class='nav'><a href='/a'>Home</a> | <a href='/b'>News</a> | "
        "<a href='/c'>Sport</a></div></body>",
    )
    assert block_texts(result) == [
        "We made three changes this year.",
        "First, people.",
        "Second, training.",
        "We will keep looking for more.Posted by Ana",
        "Home | News | Sport",
    ]
    opening, closing = result["texts"][0], result["texts"][3]
    assert "<ul>" in opening["html"] and closing["html"] == ""  # the element's markup once
    assert result["texts"][4]["link_count"] == 3


def test_blocks_have_geometry_and_css_differing_from_body(browser_page) -> None:
    result = capture(
        browser_page,
        "<body style='font-size:16px'><h1 style='font-size:40px'>Headline</h1>"
        "<p>Body text.</p></body>",
    )
    h1, p = result["texts"]
    assert h1["bound"]["width"] > 0 and h1["bound"]["height"] > 0
    assert p["bound"]["top"] > h1["bound"]["top"]
    assert h1["computed"]["font-size"] == "40px"
    assert "font-size" not in p["computed"]  # same as body: left out, as in ziyan-spider
    assert result["body"]["computed"]["font-size"] == "16px"
    assert result["body"]["bound"]["width"] == 1600


def test_page_metadata(browser_page) -> None:
    result = capture(
        browser_page,
        """<html lang="de"><head><title>Ein Titel</title>
        <meta name="description" content="Worum es geht.">
        <meta property="og:title" content="OG Titel">
        <meta property="og:type" content="article">
        <meta property="article:published_time" content="2024-05-01T10:00:00Z">
        <meta name="author" content="Erika Muster">
        <link rel="canonical" href="https://example.org/a/1">
        <script type="application/ld+json">{"@graph": [{"@type": "NewsArticle",
          "headline": "LD Titel", "datePublished": "2024-05-01",
          "author": [{"@type": "Person", "name": "Erika Muster"}]}]}</script>
        <script type="application/ld+json">{ broken json </script>
        </head><body><p>Text.</p></body></html>""",
    )
    assert result["titles"] == ["Ein Titel", "OG Titel"]
    assert result["descriptions"] == ["Worum es geht."]
    assert result["lang"] == "de"
    assert result["canonical_url"] == "https://example.org/a/1"
    assert result["og"]["og:type"] == "article"
    assert result["og"]["article:published_time"] == "2024-05-01T10:00:00Z"
    assert result["meta"]["author"] == "Erika Muster"
    assert result["jsonld"][0]["headline"] == "LD Titel"
    assert result["jsonld"][0]["author"] == ["Erika Muster"]
    assert "NewsArticle" in result["jsonld_types"]


def test_empty_page_gives_no_blocks_and_no_error(browser_page) -> None:
    result = capture(browser_page, "<html><head><title>t</title></head><body></body></html>")
    assert result["texts"] == []
    assert result["body"] is not None


def test_dom_is_marked_for_later_alignment(browser_page) -> None:
    capture(browser_page, "<body><p>One.</p><p style='display:none'>Two.</p><p>Three.</p></body>")
    marked = browser_page.eval_on_selector_all(
        "[data-sc-block]", "els => els.map(e => e.dataset.scBlock + ':' + e.textContent)"
    )
    assert marked == ["0:One.", "1:Three."]
    assert browser_page.locator("[data-sc-hidden]").count() == 1


def test_script_and_style_text_is_not_content(browser_page) -> None:
    result = capture(
        browser_page,
        "<body><script>var x = 'not text';</script><style>p{color:red}</style>"
        "<noscript>enable js</noscript><p>Real.</p></body>",
    )
    assert block_texts(result) == ["Real."]


def test_blocks_beyond_the_cap_are_dropped_and_flagged(browser_page) -> None:
    html = "<body>" + "".join(f"<p>Paragraph {n}.</p>" for n in range(50)) + "</body>"
    result = capture(browser_page, html, max_blocks=10)
    assert block_texts(result) == [f"Paragraph {n}." for n in range(10)]
    assert result["blocks_truncated"] is True
    assert capture(browser_page, html)["blocks_truncated"] is False


def test_deeply_nested_dom_is_captured(browser_page) -> None:
    html = "<body>" + "<div>" * 3000 + "<p>Deep text.</p>" + "</div>" * 3000 + "</body>"
    assert block_texts(capture(browser_page, html)) == ["Deep text."]


def test_the_crawls_script_hands_back_the_same_capture_as_json(browser_page) -> None:
    """The crawl runs the script wrapped to return one JSON string (much quicker to pass
    through Playwright on large pages); what the middleware reads from it is what the
    script returns as an object; anything but a JSON object is no capture."""
    html = (
        "<body><nav><a href='/a'>Home</a> <a href='/b'>News</a></nav><h1>Harbour news</h1>"
        + "".join(f"<p>Paragraph {n} about the <em>harbour</em>.</p>" for n in range(30))
        + "<table><tr><td>Cell one</td><td>Cell two</td></tr></table></body>"
    )
    browser_page.set_content(html)
    options = {"maxHtmlChars": 65536, "maxBlocks": 5000}
    as_object = browser_page.evaluate(SCRIPT, options)
    browser_page.set_content(html)  # afresh: the script marks the blocks it found
    as_json = browser_page.evaluate(capture_script_as_json(), options)
    assert isinstance(as_json, str)
    assert capture_from_json(as_json) == as_object
    assert len(as_object["texts"]) >= 30
    assert capture_from_json("not json") is None and capture_from_json("[1, 2]") is None
