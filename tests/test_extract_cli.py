"""Extraction without a crawl (``spidercrawl.extract_html``, ``python -m spidercrawl.extract``),
and the small things a user sees: dates with zone names, the feed schema, titles in Chinese,
escaping in the local server."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import urllib.request
import warnings
from pathlib import Path

import jsonschema
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

import spidercrawl
from spidercrawl.document.blocks import page_blocks
from spidercrawl.extract.metadata import SiteTitles, clean_title, parse_date
from spidercrawl.extract.titles import headline_candidates
from spidercrawl.pipelines.jsonfeed import SCHEMA_FILE, feed_validator
from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT
from spidercrawl.serve import serving
from spidercrawl.snapshot import SiteSnapshot
from spidercrawl.text import word_count
from tests.test_fallbacks import PageBuilder

DEMO_PAGE = DEMO_SITE / "pages" / "003.html"


def demo_gold_opening() -> str:
    return (DEMO_SITE / "gold" / "003.txt").read_text("utf-8").splitlines()[1][:60]


def test_extract_html_without_a_model_gives_the_article_item() -> None:
    article = spidercrawl.extract_html(DEMO_PAGE.read_bytes(), url="https://harbourtimes.example/a")
    assert article["method"] == "raw-consensus" and "no site model" in article["method_note"]
    assert "today's markup (json-ld): trafilatura's reading" in article["method_note"]
    assert demo_gold_opening() in article["text"]
    assert article["title"] and article["authors"] and article["published"].startswith("2026")
    assert article["word_count"] > 100


def test_without_the_headline_in_text_the_title_alone_carries_it() -> None:
    """ARTICLE_HEADLINE_IN_TEXT off: the text leaves out the headline, even where the
    extraction took the article's own heading, and its words are counted as the text's."""
    from spidercrawl.text import word_count

    paragraph = "<p>The harbour council voted on Tuesday to close the old quay for repairs.</p>"
    page = (
        "<html><head><title>Storm closes harbour | Harbour Times</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav><div class='story'>"
        f"<h1>Storm closes harbour</h1>{paragraph * 6}</div><footer>Copyright</footer>"
        "</body></html>"
    ).encode()
    url = "https://harbourtimes.example/2026/03/storm"
    whole = spidercrawl.extract_html(page, url=url)
    body = spidercrawl.extract_html(page, url=url, headline_in_text=False)
    assert whole["title"] == body["title"] == "Storm closes harbour"
    assert whole["text"].startswith("Storm closes harbour\n\nThe harbour council")
    assert body["text"].startswith("The harbour council") and "<h1>" not in body["html"]
    assert body["word_count"] == word_count(body["text"]) == whole["word_count"] - 3


def test_a_blog_post_title_under_the_blogs_h1_leads_the_text() -> None:
    """A post whose title is an ``<h3>`` above its body, under an ``<h1>`` of the blog's
    name, and a ``<title>`` that names the blog otherwise than its host: the ``<h3>``
    names the title, so it is the headline and the text starts with it; an ``<h3>`` that
    names no title (a sidebar's) is none."""
    paragraph = "<p>The harbour council voted on Tuesday to close the old quay for repairs.</p>"
    page = (
        "<html><head><title>Pat's Notes: Storm closes the old quay</title></head><body>"
        "<h1>Pat's Notes</h1><div class='entry'><h3>Storm closes the old quay</h3>"
        f"<div class='entry-body'>{paragraph * 6}</div><a href='/share'>Share</a></div>"
        "<div class='side'><h3>Archives</h3><p>March</p></div></body></html>"
    ).encode()
    article = spidercrawl.extract_html(page, url="https://harbour.example/2026/03/storm")
    assert article["title"] == "Storm closes the old quay"
    assert article["text"].startswith("Storm closes the old quay\n\nThe harbour council")
    assert "Archives" not in article["text"]


def test_extract_html_decodes_a_declared_charset() -> None:
    page = (
        "<html><head><meta charset='windows-1252'><title>Caf\u00e9 opens</title></head><body>"
        + "<p>The caf\u00e9 on the quay opened on Monday with a queue down the street.</p>" * 8
        + "</body></html>"
    ).encode("windows-1252")
    article = spidercrawl.extract_html(page)
    assert "caf\u00e9 on the quay" in article["text"]


def write_warc(path: Path, records: list[tuple[str, str, bytes]]) -> None:
    with path.open("wb") as file:
        writer = WARCWriter(file, gzip=True)
        for url, content_type, body in records:
            headers = StatusAndHeaders("200 OK", [("Content-Type", content_type)], "HTTP/1.1")
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), http_headers=headers
            )
            writer.write_record(record)


def test_the_cli_extracts_a_warc_and_reports_bad_records(tmp_path) -> None:
    html = DEMO_PAGE.read_bytes()
    warc = tmp_path / "crawl.warc.gz"
    write_warc(
        warc,
        [
            ("https://harbourtimes.example/one", "text/html; charset=utf-8", html),
            ("https://harbourtimes.example/logo.png", "image/png", b"\x89PNG\r\n" * 20),
            ("https://harbourtimes.example/two", "text/html", html),
            ("https://harbourtimes.example/three", "text/html", html),
        ],
    )
    data = warc.read_bytes()
    members = [i for i in range(len(data)) if data.startswith(b"\x1f\x8b\x08", i)]
    assert len(members) == 4
    # Damage the third record's compressed bytes (a gzip error inside one member).
    middle = (members[2] + members[3]) // 2
    damaged = data[:middle] + b"\x00garbage\x00" * 4 + data[middle + 40 :]
    warc.write_bytes(damaged)
    plain = tmp_path / "page.html"
    plain.write_bytes(html)
    out = tmp_path / "articles.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "spidercrawl.extract", str(warc), str(plain), "-o", str(out)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    urls = [item["url"] for item in items]
    # The damaged record is lost alone: the record after it is read again.
    assert urls == [
        "https://harbourtimes.example/one",
        "https://harbourtimes.example/three",
        plain.resolve().as_uri(),
    ]
    assert all(demo_gold_opening() in item["text"] for item in items)
    assert f"{warc}@{members[2]}: skipped" in proc.stderr
    assert "3 articles extracted" in proc.stderr and "1 records skipped (not HTML), 1 errors" in (
        proc.stderr
    )


def test_the_cli_says_when_a_model_folder_is_wrong(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "spidercrawl.extract", "--model", str(tmp_path), str(DEMO_PAGE)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "error: no model in" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_zone_abbreviations_parse_without_warnings() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eastern = parse_date("Mon, 12 May 2014 10:00:00 EDT")
        unknown = parse_date("12 May 2014 10:00 XYZT")
    assert eastern is not None and eastern.utcoffset().total_seconds() == -4 * 3600
    assert unknown is not None and unknown.tzinfo is None
    assert not caught


def test_the_shipped_feed_schema_is_a_valid_schema() -> None:
    schema = json.loads((PROJECT_ROOT / "spidercrawl" / "pipelines" / SCHEMA_FILE).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert feed_validator() is not None


def test_chinese_titles_are_cleaned_and_picked_as_headlines() -> None:
    titles = SiteTitles()
    for headline in ("习近平：三中全会作出顶层设计", "专家：定调养老金改革", "外媒评三中全会"):
        titles.observe({"titles": [f"{headline}_新闻_腾讯网"]})
    assert clean_title("刘奇葆：学习宣传贯彻精神热潮_新闻_腾讯网", titles.names()) == (
        "刘奇葆：学习宣传贯彻精神热潮"
    )
    page = PageBuilder()
    page.add([("div", "nav", ())], "div", "首页 新闻 体育", {}, link=True)
    headline = "男子坠深洞9天吃垃圾喝雨水每天呼救终获救"
    page.add([("div", "main", ())], "h1", headline, {"font-size": "28px", "font-weight": "700"})
    page.add([("div", "main", ())], "p", "据报道，" * 40, {})
    item = page.page(0, headline, "")
    assert headline_candidates(item, page_blocks(item, densities=False))[0] == headline
    assert word_count("男子坠深洞 9天") == 7 and word_count("two words") == 2


def test_the_local_server_escapes_titles_once(tmp_path) -> None:
    site = tmp_path / "quote.example"
    (site / "pages").mkdir(parents=True)
    (site / "pages" / "a.html").write_text(
        "<html><head><title>The club&#x27;s new boat</title></head><body>x</body></html>"
    )
    (site / "index.tsv").write_text("a\thttps://quote.example/2024/05/the-clubs-new-boat\n")
    assert SiteSnapshot(site).page_title("a") == "The club's new boat"
    with serving(site) as server:
        home = urllib.request.urlopen(server.base_url, timeout=10).read()
        feed = urllib.request.urlopen(server.base_url + "feed.xml", timeout=10).read()
    assert b"&amp;#x27;" not in home and b"club&#x27;s new boat" in home
    assert b"&amp;#x27;" not in feed and b"club's new boat" in feed


@pytest.mark.parametrize("html", [b"", b"\xff\xfe\x00garbage", b"<p>" * 5000])
def test_extract_html_takes_bad_input(html: bytes) -> None:
    article = spidercrawl.extract_html(html, url="https://x.example/a")
    assert article["method"] == "density"


def test_the_local_server_serves_paths_that_start_with_two_slashes(tmp_path) -> None:
    site = tmp_path / "slashes.example"
    (site / "pages").mkdir(parents=True)
    (site / "pages" / "a.html").write_text("<html><body><p>Found.</p></body></html>")
    (site / "index.tsv").write_text("a\thttp://www.slashes.example//politics/2012/11/story\n")
    with serving(site) as server:
        body = urllib.request.urlopen(server.base_url + "/politics/2012/11/story", timeout=10)
        assert b"Found." in body.read()


def test_headline_candidates_skip_no_title_that_scoring_every_block_would_keep() -> None:
    """Words are counted only in blocks whose style could make a headline; the candidates
    are those of scoring every block (``title_score``) less the same penalties."""
    from spidercrawl.extract.titles import body_font_size, link_share, title_score

    builder = PageBuilder()
    builder.add(
        [("div", "main", ())], "h1", "Council passes the harbour budget", {"font-size": "32px"}
    )
    builder.add([("div", "main", ())], "h2", "What the vote means", {"font-size": "24px"})
    builder.add(
        [("div", "main", ())], "p", "A paragraph of the article. " * 6, {"font-size": "16px"}
    )
    builder.add([("nav", "", ())], "a", "Home news sport", {"font-size": "20px"}, link=True)
    builder.add([("div", "main", ())], "h2", "x", {"font-size": "40px"})  # one word: not a title
    page = builder.page(1, "Council passes the harbour budget", "The harbour budget")
    blocks = page_blocks(page, densities=False)
    size = body_font_size(page)
    every = [
        (title_score(b, size) - (link_share(b) > 0.5) - b.top / b.page_height, b.text)
        for b in blocks
    ]
    expected = [text for score, text in sorted(every, key=lambda pair: -pair[0]) if score > 0]
    assert headline_candidates(page, blocks) == expected
    assert expected[:2] == ["Council passes the harbour budget", "What the vote means"]
