"""Structured data of any shape is read where it says something and skipped where it does
not; it never raises, in the API, the crawl's plain path or the browser's records."""

from __future__ import annotations

import json

import pytest

from spidercrawl import extract_html
from spidercrawl.capture.static import static_capture
from spidercrawl.document.structured import clean_records, names_of, read_jsonld, text_of

ARTICLE_BODY = "".join(
    f"<p>Paragraph {n}: the regional parliament debated the new water law for hours, and the "
    f"vote was postponed to the next session after a long dispute over its costs.</p>"
    for n in range(6)
)


def page_with_jsonld(*blocks: str) -> str:
    scripts = "".join(f'<script type="application/ld+json">{block}</script>' for block in blocks)
    return (
        f"<html><head><title>Water law postponed</title>{scripts}</head><body><article>"
        f"<h1>Water law postponed</h1>{ARTICLE_BODY}</article></body></html>"
    )


ODD_SHAPES = [
    # An author list holding a list (the page that crashed the API).
    {"@type": "NewsArticle", "headline": "A", "author": [[{"@type": "Person", "name": "Ana B"}]]},
    {"@type": ["NewsArticle"], "author": {"name": ["Ana Berg", "x"]}, "headline": {"@value": "A"}},
    {"@type": "NewsArticle", "author": [None, 3, True, {"name": None}, "Ana Berg"]},
    {"@type": "NewsArticle", "author": {"givenName": "Ana", "familyName": "Berg"}},
    {"@type": {"weird": 1}, "author": "x"},
    {"@graph": {"@graph": [{"@type": "Article", "author": [{"name": {"@value": "Ana Berg"}}]}]}},
    {"@type": "Article", "datePublished": ["2025-03-01", "2025-03-02"], "url": {"@id": "u"}},
    {"@type": "Article", "headline": 12, "inLanguage": {"name": "de"}, "description": [[]]},
]


@pytest.mark.parametrize("shape", ODD_SHAPES)
def test_odd_shapes_never_raise_and_give_plain_fields(shape) -> None:
    records, types = read_jsonld([json.dumps(shape)])
    for record in records:
        assert all(isinstance(name, str) and name for name in record["author"])
        for field in ("headline", "description", "datePublished", "url", "inLanguage"):
            assert isinstance(record[field], str)
    assert all(isinstance(t, str) for t in types)
    html = page_with_jsonld(json.dumps(shape))
    assert static_capture(html, "https://mdr.example/news/1")["titles"]
    article = extract_html(html, url="https://mdr.example/news/1")
    assert "Paragraph 5" in article["text"]


def test_an_author_in_a_list_of_lists_is_found() -> None:
    html = page_with_jsonld(json.dumps(ODD_SHAPES[0]))
    article = extract_html(html, url="https://mdr.example/news/1")
    assert article["authors"] == ["Ana B"]


def test_broken_deep_and_huge_structured_data_is_bounded() -> None:
    deep = "[" * 5000 + "]" * 5000
    many = json.dumps([{"@type": "Thing", "name": str(n)} for n in range(100_000)])
    records, types = read_jsonld(["{broken", deep, many, "null", '"a string"', "17"])
    assert records == [] and len(types) < 5000


def test_field_readers() -> None:
    assert text_of({"@value": " x "}) == "x"
    assert text_of([[], {}, "y"]) == "y"
    assert text_of(True) == "" and text_of(None) == ""
    assert names_of([["A"], {"name": "B"}, {"givenName": "C", "familyName": "D"}]) == [
        "A", "B", "C D",
    ]  # fmt: skip
    assert names_of({"name": {"nested": 1}}) == []


def test_browser_records_of_any_shape_are_made_plain() -> None:
    """The capture script copies fields as the page wrote them (headline an object, an
    author list of lists): the page item keeps plain strings only."""
    raw = [
        {"type": "NewsArticle", "headline": {"@value": "H"}, "author": [["Ana Berg"]],
         "datePublished": ["2025-01-01"], "url": None, "inLanguage": 5},
        "not a record",
        None,
    ]  # fmt: skip
    (record,) = clean_records(raw)
    assert record["headline"] == "H" and record["author"] == ["Ana Berg"]
    assert record["datePublished"] == "2025-01-01" and record["url"] == ""
    assert record["type"] == ["NewsArticle"]
    assert clean_records({"not": "a list"}) == []


def test_a_page_whose_only_author_is_in_json_ld() -> None:
    """Referenced by @id from a WordPress-style graph, or the page's main entity: found;
    a publisher in <meta name=author> beside JSON-LD's people is not an author."""
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "NewsArticle", "headline": "Water law postponed",
             "author": {"@id": "https://x.example/#/person/1"}},
            {"@type": "Person", "@id": "https://x.example/#/person/1", "name": "Timo Sheya"},
        ],
    }  # fmt: skip
    article = extract_html(page_with_jsonld(json.dumps(graph)), url="https://x.example/a")
    assert article["authors"] == ["Timo Sheya"]
    main_entity = {"@type": "WebPage", "mainEntity": {"@type": "NewsArticle",
                   "author": [{"@type": "Person", "name": "Nadja Zins"}]}}  # fmt: skip
    html = page_with_jsonld(json.dumps(main_entity)).replace(
        "<head>", '<head><meta name="author" content="Big Media Group">'
    )
    assert extract_html(html, url="https://x.example/b")["authors"] == ["Nadja Zins"]
    people_and_publisher = {
        "@type": "Article",
        "author": [
            {"@type": "Person", "name": "Ana Berg"},
            {"@type": "Organization", "name": "Big Media"},
        ],
    }
    records, _ = read_jsonld([json.dumps(people_and_publisher)])
    assert records[0]["author"] == ["Ana Berg"]
    # Line breaks inside strings, which browsers accept, are read.
    records, _ = read_jsonld(['{"@type": "Article", "headline": "a\nb", "author": "Ana Berg"}'])
    assert records[0]["author"] == ["Ana Berg"]
