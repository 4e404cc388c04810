"""Articles as Markdown: headings, nested lists, tables, quotes and code kept; layout tables
not made tables; special characters escaped; the Markdown renders to the article's words."""

from __future__ import annotations

import time
from collections import Counter

import lxml.html
from markdown_it import MarkdownIt

from spidercrawl import extract_html
from spidercrawl.document.html import parse_raw_html
from spidercrawl.document.markdown import escape_markdown, html_markdown
from spidercrawl.document.structure import element_paragraphs, paragraphs_html, paragraphs_text

LEAD = (
    "The harbour council approved the new quay on Tuesday after a debate that lasted well "
    "into the night, and work on the first phase is expected to begin in the spring. "
)
ARTICLE_PAGE = f"""<html><head><title>Quay approved</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<article><h1>Quay approved</h1>
<p>{LEAD * 3}</p>
<h2>What the plan holds</h2>
<p>{LEAD * 2}</p>
<ul><li>A new pier for the ferries<ul><li>with a waiting room</li><li>and a ticket office</li>
</ul></li><li>A cycle path along the water</li></ul>
<h3>The costs</h3>
<table><thead><tr><th>Phase</th><th>What is built, and when the council expects it</th></tr>
</thead><tbody>
<tr><td>First</td><td>The ferry pier and its waiting room, finished before summer 2027</td>
</tr><tr><td>Second</td><td>The cycle path along the water and new lights on the harbour wall</td>
</tr><tr><td>Third</td><td>A second slipway for the rowing club and the fishing boats, by 2029</td>
</tr></tbody></table>
<blockquote><p>"This is the biggest change to the harbour in a century," the mayor said.</p>
</blockquote>
<p>{LEAD * 2}</p>
<pre>quay = Quay(length=120)
    quay.open(year=2027)</pre>
<p>{LEAD * 2}</p>
</article><footer>Contact us | Privacy</footer></body></html>"""

PARSER = MarkdownIt("commonmark").enable("table")


def rendered_words(markdown: str) -> Counter[str]:
    html = PARSER.render(markdown)
    return Counter(lxml.html.fragment_fromstring(html, create_parent="div").text_content().split())


def markdown_of(html: str) -> tuple[str, str]:
    paragraphs = list(element_paragraphs(parse_raw_html(html)))
    return html_markdown(paragraphs_html(paragraphs)), paragraphs_text(paragraphs)


def test_an_article_keeps_its_structure_in_markdown() -> None:
    article = extract_html(ARTICLE_PAGE, url="https://harbour.example/news/quay")
    markdown = article["markdown"]
    assert "## What the plan holds" in markdown
    assert "### The costs" in markdown
    assert "- A new pier for the ferries\n  - with a waiting room\n  - and a ticket office" in (
        markdown
    )
    assert "| Phase | What is built, and when the council expects it |\n| --- | --- |\n" in markdown
    assert "| First | The ferry pier and its waiting room, finished" in markdown
    assert '> "This is the biggest change' in markdown
    assert "```\nquay = Quay(length=120)\n    quay.open(year=2027)\n```" in markdown
    assert "<table>" in article["html"] and "<pre>" in article["html"]
    assert rendered_words(markdown) == Counter(article["text"].split())
    # Text alone asked for (a datatrove document): the same item without its HTML forms.
    text_only = extract_html(ARTICLE_PAGE, url="https://harbour.example/news/quay", with_html=False)
    assert text_only["html"] == text_only["markdown"] == ""
    assert {k: v for k, v in text_only.items() if k not in ("html", "markdown", "crawled_at")} == {
        k: v for k, v in article.items() if k not in ("html", "markdown", "crawled_at")
    }


def test_a_layout_table_is_not_a_markdown_table() -> None:
    html = (
        "<div><table><tr><td><h2>Inside a layout table</h2><p>" + LEAD * 3 + "</p>"
        "<ul><li>one</li><li>two</li></ul></td></tr></table></div>"
    )
    markdown, text = markdown_of(html)
    assert "|" not in markdown
    assert "## Inside a layout table" in markdown and "- one\n- two" in markdown
    assert rendered_words(markdown) == Counter(text.split())


def test_special_characters_read_the_same() -> None:
    text = (
        "# not a heading * star _under_ `tick` [x](y) <b> 1. one | pipe &amp; \\ back "
        "+ plus - minus > quote"
    )
    for html in (
        f"<div><p>{lxml.html.escape(text) if hasattr(lxml.html, 'escape') else text}</p></div>",
        "<div><p># heading-like</p><p>1. list-like</p><p>- list-like</p><p>&gt; quote-like</p>"
        "<h2>Channel #</h2></div>",
        "<div><table><tr><th>a|b</th><th>*c*</th></tr><tr><td>_d_</td><td>e | f</td></tr>"
        "</table></div>",
    ):
        markdown, plain = markdown_of(html)
        assert rendered_words(markdown) == Counter(plain.split()), markdown
    assert escape_markdown("1. a") == "1\\. a"


def test_odd_tables_and_headings_are_bounded_and_kept() -> None:
    cells = "".join(
        "<tr>" + "".join(f"<td>r{r}c{c}</td>" for c in range(10)) + "</tr>" for r in range(1000)
    )
    started = time.perf_counter()
    markdown, text = markdown_of(f"<div><table>{cells}</table></div>")
    assert time.perf_counter() - started < 5
    assert markdown.count("\n") >= 1000 and rendered_words(markdown) == Counter(text.split())
    spans = (
        "<div><table><tr><th rowspan='2'>a</th><th colspan='2'>b</th></tr>"
        "<tr><td>c</td><td>d</td></tr><tr><td>e</td><td>f</td><td>g</td></tr></table>"
        "<h2><img src='x.png'></h2><p>after</p></div>"
    )
    markdown, text = markdown_of(spans)
    assert "| a | b |" in markdown and "#" not in markdown.replace("\\#", "")
    assert rendered_words(markdown) == Counter(text.split())


def test_deeply_nested_lists_are_bounded() -> None:
    nested = "<ul><li>x" * 3000 + "</li></ul>" * 3000
    markdown, text = markdown_of(f"<div>{nested}</div>")
    assert text.split().count("x") > 200  # as deep as the parser's tree goes
    assert rendered_words(markdown) == Counter(text.split())
    assert max(len(line) - len(line.lstrip()) for line in markdown.splitlines()) <= 12


def test_the_feed_carries_markdown_without_its_headline() -> None:
    from spidercrawl.extract.formats import ArticleFormats
    from spidercrawl.pipelines.jsonfeed import VERSION, feed_errors, feed_item

    article = {
        "url": "https://harbour.example/a/", "title": "Quay approved",
        "text": "Quay approved\n\nBody one.\n\nBody two.",
        "html": "<h1>Quay approved</h1>\n<h2>Sub</h2>\n<p>Body one.</p>",
        "markdown": "# Quay approved\n\n## Sub\n\nBody one.\n", "method": "rules",
    }  # fmt: skip
    item = feed_item(article)
    assert item["_spidercrawl"]["markdown"] == "## Sub\n\nBody one.\n"
    only = feed_item({k: v for k, v in article.items() if k not in ("text", "html")},
                     ArticleFormats.parse("markdown"))  # fmt: skip
    assert "content_html" not in only and only["content_text"].startswith("## Sub")
    assert feed_errors({"version": VERSION, "title": "h", "items": [item, only]}) == []


def test_a_crawl_keeps_the_content_forms_it_is_told(tmp_path, learned_demo) -> None:
    """ARTICLE_FORMATS=markdown: the site's article lines carry Markdown and no text or
    HTML; the feed stays valid; a wrong name is one error line."""
    import json
    import subprocess
    import sys

    from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT, read_jsonl
    from spidercrawl.serve import serving

    models, state = learned_demo.copy_to(tmp_path)
    command = [sys.executable, "-m", "scrapy", "crawl", "news",
               "-a", "site=harbourtimes.example", "-s", "ARTICLE_FORMATS=markdown",
               "-s", f"MODELS_DIR={models}", "-s", f"STATE_DIR={state}",
               "-s", "INCREMENTAL_ENABLED=False",
               "-s", f"ARTICLES_FILE={tmp_path / 'out' / '%(site)s.jsonl'}",
               "-s", f"JSONFEED_PATH={tmp_path / 'out' / '%(site)s.feed.json'}"]  # fmt: skip
    with serving(DEMO_SITE) as server:
        run = subprocess.run(
            [*command, "-a", f"base_url={server.base_url}"],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    lines = read_jsonl(tmp_path / "out" / "harbourtimes.example.jsonl")
    assert len(lines) == 30
    assert all("text" not in a and "html" not in a and a["markdown"] for a in lines)
    assert all(a["markdown"].startswith("# ") for a in lines)
    feed = json.loads((tmp_path / "out" / "harbourtimes.example.feed.json").read_text("utf-8"))
    assert len(feed["items"]) == 30
    assert all(e["content_text"] and "content_html" not in e for e in feed["items"])
    assert all(not e["content_text"].startswith("# ") for e in feed["items"])
    # A wrong name: one error line before the crawl starts (the crawl command's check).
    from scrapy.settings import Settings

    from spidercrawl.commands.crawl import _bad_choice

    problem = _bad_choice(Settings({"ARTICLE_FORMATS": ["text", "pdf"], "RENDER": "always",
                                    "LEARN_LABELS": "relevance"}))  # fmt: skip
    assert "ARTICLE_FORMATS" in problem and "pdf" in problem


def test_exported_items_lose_the_forms_left_out() -> None:
    from scrapy.utils.test import get_crawler

    from spidercrawl.pipelines.delivery import ArticleFormatsPipeline

    crawler = get_crawler(settings_dict={"ARTICLE_FORMATS": ["markdown", "text"]})
    pipeline = ArticleFormatsPipeline.from_crawler(crawler)
    item = pipeline.process_item({"method": "rules", "text": "t", "html": "h", "markdown": "m"})
    assert item == {"method": "rules", "text": "t", "markdown": "m"}


def test_clean_html_as_deep_as_a_page_may_be_is_written_whole() -> None:
    """libxml2 drops what lies deeper than 255 elements unless asked for huge trees."""
    html = "<div>" * 400 + "<p>The deep story.</p><p>Its second paragraph.</p>" + "</div>" * 400
    markdown = html_markdown(html)
    assert "The deep story." in markdown and "Its second paragraph." in markdown


def test_each_list_quote_and_table_of_a_page_stays_its_own() -> None:
    # Sections nested at different depths, each with a quote, a list and a table: a walk
    # that told them apart by their elements' addresses, which lxml reuses once an element
    # is left behind, took many of them for one another.
    sections = [
        "<div>" * (n % 5) + f"<p>Section {n}</p><blockquote><p>quote {n}</p></blockquote>"
        f"<ul><li>item {n}</li></ul><table><tr><td>cell {n}</td><td>next {n}</td></tr>"
        f"<tr><td>row {n}</td><td>end {n}</td></tr></table>" + "</div>" * (n % 5)
        for n in range(300)
    ]
    root = parse_raw_html(f"<html><body>{''.join(sections)}</body></html>")
    paragraphs = list(element_paragraphs(root.find("body")))
    owners: dict[tuple[str, int], set[str]] = {}
    for para in paragraphs:
        number = para.text.split()[-1]
        if para.quote or para.kind == "ul":
            owners.setdefault(("group", para.group), set()).add(number)
        if para.table:
            owners.setdefault(("table", para.table), set()).add(number)
    assert len(owners) == 3 * 300
    assert all(len(numbers) == 1 for numbers in owners.values())
    # Without the sections' own paragraphs, the quotes and lists follow one another: each
    # is still a quote or a list of its own in the article's clean HTML.
    html = paragraphs_html(p for p in paragraphs if not p.text.startswith("Section"))
    assert html.count("<blockquote>") == html.count("<ul>") == html.count("<table>") == 300
