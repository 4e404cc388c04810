"""Text-density extraction (CETD) on handmade pages and on bad input."""

from __future__ import annotations

import pytest

from spidercrawl.document.density import METHODS, DensityExtractor, TextDensity
from spidercrawl.document.html import parse_html

ARTICLE = " ".join(["The council approved the harbour budget after a long debate."] * 3)
PAGE = f"""<html><head><title>T</title><style>p {{color: red}}</style></head><body>
<div id="nav"><a href="/">Home</a> | <a href="/news">News</a> | <a href="/sport">Sport</a></div>
<div id="main">
  <h1>Budget approved</h1>
  <p>{ARTICLE} <a href="/x">Read more</a> about it.</p>
  <p>{ARTICLE}</p>
  <blockquote><p>{ARTICLE}</p></blockquote>
  <ul><li>{ARTICLE}</li><li>{ARTICLE}</li></ul>
  <p>{ARTICLE}</p>
</div>
<div id="footer"><a href="/about">About us</a> <a href="/contact">Contact</a></div>
<script>var secret = "never text";</script>
</body></html>"""


@pytest.mark.parametrize("method", [*METHODS, None])
def test_extracts_the_article_and_not_the_navigation(method: str | None) -> None:
    extractor = DensityExtractor.product() if method is None else DensityExtractor(method)
    result = extractor.extract(PAGE.encode())
    assert result.ok, result.reason
    assert result.text.count("harbour budget") == 18
    assert "Read more about it" in result.text  # inline links stay with their paragraph
    assert "never text" not in result.text
    if method != "cectd-s":  # smoothing lends the short nav bar its neighbour's density
        assert "Contact" not in result.text and "Sport" not in result.text


def test_structured_html_keeps_lists_and_quotes() -> None:
    result = DensityExtractor.product().extract(PAGE)
    assert "<blockquote>" in result.html
    assert result.html.count("<li>") == 2 and "<ul>" in result.html
    assert "<script" not in result.html


def test_densities_follow_the_definitions() -> None:
    body = parse_html("<body><div><p>abcd</p><p>ef<a>gh</a></p></div></body>").find("body")
    measure = TextDensity(body)
    div = measure.index[body.find("div")]
    assert measure.chars[div] == 8
    assert measure.tags[div] == 3  # p, p, a
    assert measure.link_chars[div] == 2
    assert measure.link_tags[div] == 1
    assert measure.text_density[div] == pytest.approx(8 / 3)
    leaf = measure.index[body.find("div/p")]
    assert measure.text_density[leaf] == 4  # no tags below: the denominator counts as 1


def test_render_aware_drops_hidden_text() -> None:
    hidden = "Disclaimer: this text is hidden by the page and never shown to readers at all."
    page = PAGE.replace("<h1>", f'<div style="display: none">{hidden}</div><h1>')
    page = page.replace("<h1>", f"<p data-sc-hidden>{hidden}</p><h1>")
    assert "Disclaimer" not in DensityExtractor.product().extract(page).text
    blind = DensityExtractor("cectd-ds", render_aware=False).extract(page)
    assert "Disclaimer" in blind.text


@pytest.mark.parametrize("marked", ["data-sc-hidden", 'style="display:none"', "hidden"])
def test_a_body_marked_hidden_is_still_read(marked: str) -> None:
    # Shown by scripts later (raw HTML), or marked by an older capture for a stray hidden
    # text node in it: the page's text is still there to extract.
    page = PAGE.replace("<body>", f"<body {marked}>")
    assert page != PAGE
    assert ARTICLE in DensityExtractor.product().extract(page).text


@pytest.mark.parametrize(
    ("markup", "reason"),
    [
        (b"", "empty document"),
        (b"<!-- only a comment -->", "no HTML document"),
        (b"<html><head><title>x</title></head></html>", "no visible text"),
    ],
)
def test_empty_input_says_why(markup: bytes, reason: str) -> None:
    result = DensityExtractor.product().extract(markup)
    assert not result.ok
    assert reason in result.reason


def test_pathological_pages_do_not_crash() -> None:
    deep = "<html><body>" + "<div>" * 10_000 + "deep text" + "</div>" * 10_000 + "</body></html>"
    assert "deep text" in DensityExtractor.product().extract(deep).text
    links = "<html><body>" + "".join(f'<a href="/{i}">link {i}</a>' for i in range(500))
    only_links = DensityExtractor.product().extract(links + "</body></html>")
    assert only_links.ok or only_links.reason
    big = "<html><body>" + f"<p>{ARTICLE}</p>" * 120_000 + "</body></html>"
    assert len(big) > 20_000_000
    assert DensityExtractor.product().extract(big.encode()).ok


def test_mislabelled_encoding() -> None:
    latin1 = '<meta charset="utf-8"><body><p>Café olé, señor.</p></body>'.encode("cp1252")
    assert "Café olé" in DensityExtractor.product().extract(latin1).text
    utf8 = '<meta charset="iso-8859-1"><body><p>Café olé, señor.</p></body>'.encode()
    assert "Café olé" in DensityExtractor.product().extract(utf8).text


def test_an_element_marked_with_several_blocks_gives_each_its_density() -> None:
    """The capture script marks an element whose own text runs around a nested block with
    every block number it holds ("0 2"): each run gets the element's densities, and each
    is in text density's article when the element is."""
    from spidercrawl.document.blocks import block_densities
    from spidercrawl.document.density import rendered_page_density
    from spidercrawl.extract.cold_start import block_indices

    html = (
        "<html><body><div id='nav' data-sc-block='3'><a href='/'>Home</a> | "
        "<a href='/n'>News</a></div>"
        f"<div id='post' data-sc-block='0 2'>{ARTICLE} {ARTICLE}<br>"
        f"<ul data-sc-block='1'><li>{ARTICLE}</li></ul>{ARTICLE} {ARTICLE}</div>"
        "</body></html>"
    )
    densities = block_densities(html)
    assert densities[0] == densities[2] and densities[0] != densities.get(3)
    assert {0, 2} <= block_indices(rendered_page_density(html))
