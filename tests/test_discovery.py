"""Article discovery on real Scrapy responses: sitemaps, feeds, article detection."""

from __future__ import annotations

import gzip

import pytest
from scrapy.http import HtmlResponse, TextResponse, XmlResponse

from spidercrawl import discovery


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://npr.org/2013/08/09/210604942/obamas-challenge", True),
        ("https://site.example/news/council-approves-new-sea-wall-plan", True),
        ("https://news.bbc.co.uk/2/hi/middle_east/7185602.stm", True),
        ("https://site.example/20130809/story.html", True),
        ("https://site.example/", False),
        ("https://site.example/tag/politics-and-power-in-town", False),
        ("https://site.example/about/", False),
        ("https://site.example/sports/", False),
    ],
)
def test_article_url_shape(url: str, expected: bool) -> None:
    assert discovery.looks_like_article_url(url) is expected


def html_response(url: str, head: str) -> HtmlResponse:
    body = f"<html><head>{head}</head><body><p>x</p></body></html>"
    return HtmlResponse(url=url, body=body.encode(), encoding="utf-8")


def test_page_metadata_overrides_url_shape() -> None:
    og_article = html_response(
        "https://s.example/about/", '<meta property="og:type" content="article">'
    )
    og_website = html_response(
        "https://s.example/2020/01/02/some-long-article-slug",
        '<meta property="og:type" content="website">',
    )
    jsonld = html_response(
        "https://s.example/x",
        '<script type="application/ld+json">{"@graph":[{"@type":"BlogPosting"}]}</script>',
    )
    bare = html_response("https://s.example/2020/01/02/some-long-article-slug", "")
    assert discovery.is_article(og_article) is True
    assert discovery.is_article(og_website) is False
    assert discovery.is_article(jsonld) is True
    assert discovery.is_article(bare) is True  # no metadata: the URL decides


def test_feed_links_rss_and_atom() -> None:
    rss = XmlResponse(
        url="https://s.example/feed.xml",
        body=b"<rss version='2.0'><channel><item><link>https://s.example/a/1</link></item>"
        b"<item><link> /a/2 </link></item></channel></rss>",
    )
    atom = XmlResponse(
        url="https://s.example/atom.xml",
        body=b"<feed xmlns='http://www.w3.org/2005/Atom'><entry>"
        b"<link rel='alternate' href='https://s.example/b/1'/>"
        b"<link rel='replies' href='https://s.example/b/1#comments'/></entry></feed>",
    )
    assert discovery.feed_entry_urls(rss) == ["https://s.example/a/1", "https://s.example/a/2"]
    assert discovery.feed_entry_urls(atom) == ["https://s.example/b/1"]
    page = html_response(
        "https://s.example/",
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
        '<link rel="alternate" type="application/atom+xml" href="https://s.example/atom.xml">',
    )
    assert discovery.feed_urls(page) == ["https://s.example/feed.xml", "https://s.example/atom.xml"]


URLSET = (
    b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    b'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
    b"<url><loc>https://s.example/a/1</loc><news:news><news:title>T</news:title></news:news>"
    b"</url></urlset>"
)


def test_sitemaps_index_news_and_gzip() -> None:
    index = XmlResponse(
        url="https://s.example/sitemap.xml",
        body=b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<sitemap><loc>https://s.example/news.xml.gz</loc></sitemap></sitemapindex>",
    )
    content = discovery.read_sitemap(index)
    assert content is not None and content.sitemaps == ["https://s.example/news.xml.gz"]

    gz = TextResponse(url="https://s.example/news.xml.gz", body=gzip.compress(URLSET))
    news = discovery.read_sitemap(gz)
    assert news is not None
    assert news.urls == ["https://s.example/a/1"] and news.is_news


def test_garbage_is_not_a_sitemap() -> None:
    garbage = TextResponse(url="https://s.example/sitemap.xml", body=b"<html>404 not found</html>")
    assert discovery.read_sitemap(garbage) is None
    broken_gzip = TextResponse(url="https://s.example/s.xml.gz", body=b"\x1f\x8bnot really")
    assert discovery.read_sitemap(broken_gzip) is None


def test_links_of_a_parsed_page_are_made_absolute_and_filtered() -> None:
    from spidercrawl.discovery import absolute_links

    hrefs = [
        "/city/2026/03/02/story/", "story-2/#comments", "#top", "mailto:a@b.example",
        "javascript:void(0)", "/files/report.PDF", "https://other.example/x",
        "/city/2026/03/02/story/", "http://[broken/", "  /about/  ",
    ]  # fmt: skip
    assert absolute_links("http://127.0.0.1:8000/city/2026/03/01/", hrefs) == [
        "http://127.0.0.1:8000/city/2026/03/02/story/",
        "http://127.0.0.1:8000/city/2026/03/01/story-2/",
        "https://other.example/x",
        "http://127.0.0.1:8000/about/",
    ]
