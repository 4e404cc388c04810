"""Raw HTML is parsed into the tree Chromium builds, so rules learned from the browser's DOM
hold on a plain fetch of the same page."""

from __future__ import annotations

import time

import pytest

from spidercrawl.document.density import DensityExtractor, shows_text
from spidercrawl.document.html import (
    LEXBOR_QUICK_TAGS,
    MAX_ATTRIBUTES,
    MAX_DEPTH,
    UnusableDocumentError,
    close_runaway_title,
    lexbor_hazard,
    parse_html,
    parse_raw_html,
    within_size,
    without_attribute_floods,
    without_script_bodies,
)
from spidercrawl.learn.rules import ExtractionRules, RuleExtraction, raw_document

# A 2008 newspaper template (guardian.co.uk's wire stories, simplified): a table without
# tbody, paragraphs inside a <font> inside an unclosed <P>, a stray <div> inside a table.
# libxml2 nests the story's paragraphs inside the first <P>; a browser does not.
OLD_TEMPLATE = """<html><head><title>Plane's engines failed {n}</title>
<meta name="description" content="The two engines failed to respond, story {n}"></head>
<BODY><CENTER><TABLE WIDTH=760><TR><TD><A HREF="/">Home</A> | <A HREF="/uk">UK</A></TD></TR>
<div>Advertisement</div>
<TR><TD VALIGN=top><FONT SIZE=5><B>Plane's engines failed {n}</B></FONT>
<P><FONT SIZE=2>Press Association<BR><B>Friday January 18, 2008</B></FONT><P>
<FONT SIZE=2><P>The two engines on the plane failed to respond to demands for more thrust,
story {n} says, as the aircraft was just 600ft up and two miles from touch down.</P>
<P>The flight had been normal until that point but the Boeing descended rapidly and struck
the ground some 1,000ft short of the runway, the report said of story {n}.</P>
<P>The report was released shortly after the captain spoke of the teamwork of his crew in
story {n}, which the investigators praised.</P>
<P>Investigators will now examine the engines, the fuel system and the flight computers of
the aircraft in story {n} before a full report next year.</P>
<P>The airline said it was cooperating fully with the investigation and that its fleet of
the same type would keep flying, story {n} adds.</P>
<P>Passengers described a sudden drop before the aircraft hit the grass and slid to a halt
short of the runway, according to story {n}.</P></FONT>
</TD></TR><TR><TD><FONT SIZE=1>Copyright Press Association 2008</FONT></TD></TR></TABLE>
</CENTER></BODY></html>"""

# Each text-holding element's path from <body> and its own text, in document order
# (outside <noscript>, whose content a browser running scripts keeps as text, and which
# every extractor here removes with the other invisible elements).
PATHS_JS = """() => {
  const rows = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('noscript')) continue;
    const own = Array.from(el.childNodes).filter(n => n.nodeType === 3)
      .map(n => n.textContent).join(' ').split(/\\s+/).filter(Boolean).join(' ');
    if (!own) continue;
    const steps = [];
    for (let e = el; e && e !== document.body; e = e.parentElement) steps.unshift(e.localName);
    rows.push([steps.join(' > '), own]);
  }
  return rows;
}"""


def lxml_paths(markup: str) -> list[list[str]]:
    root = parse_raw_html(markup)
    body = root.find("body")
    rows = []
    for element in body.iter():
        if element is body or not isinstance(element.tag, str):
            continue
        if element.tag == "noscript" or any(a.tag == "noscript" for a in element.iterancestors()):
            continue
        own = " ".join(" ".join([element.text or ""] + [c.tail or "" for c in element]).split())
        if own:
            steps = [
                e.tag
                for e in reversed(list(element.iterancestors()))
                if e.tag not in ("html", "body")
            ]
            rows.append([" > ".join([*steps, element.tag]), own])
    return rows


def browser_item(page, markup: str) -> dict:
    """The page item a crawl would make: the browser's DOM, its paragraphs as blocks with
    the browser's selector paths, and the raw HTML as served."""
    page.set_content(markup)
    blocks = [
        {
            "selector": [{"name": step, "id": "", "classes": []} for step in path.split(" > ")],
            "text": [text],
        }
        for path, text in page.evaluate(PATHS_JS)
    ]
    return {
        "rendered_html": page.content(),
        "raw_html": markup,
        "descriptions": [page.evaluate("document.querySelector('meta[name=description]').content")],
        "texts": blocks,
    }


def test_raw_html_is_parsed_into_the_tree_the_browser_builds(browser_page) -> None:
    for markup in (
        OLD_TEMPLATE.format(n=1),
        "<table><tr><td>cell</td></tr></table><p>one<div>block</div>two",
        "<p><b>bold <i>both</b> italic</i> plain</p><ul><li>a<li>b</ul>",
        # A tracking pixel's <noscript> in <head>: with scripts on (as crawled) it holds
        # text, and the head goes on; parsed with scripts off, its <img> would end the
        # head and move the noscript's text and the canonical link into the body.
        "<html><head><noscript><img src='p.gif'><p>Enable JavaScript</p></noscript>"
        "<link rel='canonical' href='/a'></head><body><p>story</p><noscript><p>no js</p>"
        "</noscript></body></html>",
    ):
        browser_page.set_content(markup)
        assert lxml_paths(markup) == browser_page.evaluate(PATHS_JS), markup


def test_rules_learned_from_the_browsers_dom_hold_on_the_raw_html(browser_page) -> None:
    pages = [browser_item(browser_page, OLD_TEMPLATE.format(n=n)) for n in range(4)]
    story = [
        (number, index)
        for number, page in enumerate(pages)
        for index, block in enumerate(page["texts"])
        if "story" in block["text"][0]
    ]
    rules = ExtractionRules().fit(pages, story)
    assert rules.usable
    # Before raw HTML was parsed as a browser does, the rules held on none of the four and
    # the layout was rendered directly ("scripts draw it").
    assert rules.raw_html_ == {"pages": 4, "held": 4} and rules.render_reason == ""
    fetched = rules.extract(raw_document(OLD_TEMPLATE.format(n=9)))
    assert rules.check(fetched).ok
    assert fetched.text.count("story 9") >= 5 and "Copyright" not in fetched.text


def test_raw_html_with_nothing_to_parse_is_refused_with_a_reason() -> None:
    for empty in ("", "   \n", b"\xef\xbb\xbf  "):
        with pytest.raises(UnusableDocumentError):
            parse_raw_html(empty)
        assert isinstance(raw_document(empty), RuleExtraction)
    # Bytes in a declared charset and NUL bytes read as a browser reads them.
    root = parse_raw_html(
        "<p>caf\u00e9\x00 au lait</p>".encode("cp1252"), "text/html; charset=cp1252"
    )
    assert root.find("body/p").text == "café au lait"


# A page saved with its <title> never closed (3 of the datasets' pages): the title takes the
# rest of the document as its text.
RUNAWAY_TITLE = (
    "<html><head><title>Storm closes the harbour\n<script src='/s.js'></script></head>"
    "<body><p>The harbour closed at noon as the storm came in.</p></body></html>"
)


def test_a_title_never_closed_is_closed_where_its_first_tag_begins(browser_page) -> None:
    browser_page.set_content(RUNAWAY_TITLE)
    assert browser_page.evaluate("() => document.body.innerText.trim()") == ""
    for parse in (parse_html, parse_raw_html):
        root = parse(RUNAWAY_TITLE)
        assert root.findtext("head/title").strip() == "Storm closes the harbour"
        assert root.find("body/p").text.startswith("The harbour closed at noon")
    assert shows_text(RUNAWAY_TITLE)
    assert "closed at noon" in DensityExtractor.product().extract(RUNAWAY_TITLE).text
    for unchanged in ("<title>A</title><p>b</p>", "<p>no title</p>", "<title>only text"):
        assert close_runaway_title(unchanged) is unchanged
    assert not shows_text("<html><head><title>Empty</title></head><body> </body></html>")
    assert not shows_text("<script>document.write('x')</script>")


def test_deep_markup_of_few_tags_goes_to_lexbor_uncounted_and_keeps_its_text() -> None:
    """Markup of at most ``LEXBOR_QUICK_TAGS`` tags skips the depth count; nested 9,000
    deep it still becomes a tree no deeper than a browser's, its text kept."""
    html = "<html><body>" + "<div>" * 9000 + "deep text" + "</body></html>"
    assert html.count("<") <= LEXBOR_QUICK_TAGS
    root = parse_raw_html(html)
    (text,) = root.xpath("//text()[contains(., 'deep text')]")
    assert len(list(text.getparent().iterancestors())) < MAX_DEPTH


def test_a_list_lexbor_builds_in_square_time_is_parsed_as_it_is_in_bounded_time() -> None:
    """A list of 50,000 options: lexbor builds it in time growing with the square of its
    length (17 s of CPU here; 70 s for 100,000). libxml2 parses it as it is instead, and
    the story around it stays; a country list of 250 options is built as ever. The bound
    is on this process's CPU time."""
    options = "<form><select>" + "<option>a choice" * 50_000 + "</select></form>"
    html = f"<html><body><p>The harbour council met today.</p>{options}</body></html>"
    assert lexbor_hazard(html) == "50000 options in its lists"
    started = time.process_time()
    root = parse_raw_html(html)
    assert time.process_time() - started < 2.0
    assert "The harbour council met today." in root.text_content()
    assert lexbor_hazard("<select>" + "<option>Country</option>" * 250 + "</select>") == ""


@pytest.mark.parametrize("value", ['"x<y"', "'x>y'", "x", None, "<"])
def test_a_tag_of_50000_attributes_is_cut_after_its_first_and_parsed_in_bounded_time(
    value: str | None,
) -> None:
    """libxml2 and lexbor compare each attribute with those before it (50,000: 20 s of
    CPU in libxml2). The tag is cut after its first ``MAX_ATTRIBUTES``, whatever its values
    hold (names that begin with ``<`` too: both parsers take them as names), so its class
    stays and the story is found; a script's text that reads like such a tag is left as it
    is. The bound is on this process's CPU time."""
    attributes = " ".join(
        f"<a{n}" if value == "<" else f"a{n}" if value is None else f"a{n}={value}"
        for n in range(50_000)
    )
    script = "<script>if (a<b " + "c " * 3_000 + ") {}</script>"
    html = (
        f'<html><body><div class="story" {attributes}><p>The harbour council met today.</p>'
        f"</div>{script}</body></html>"
    )
    started = time.process_time()
    bounded = without_attribute_floods(html)
    for parse in (parse_html, parse_raw_html):
        root = parse(html)
        (story,) = root.xpath("//div[@class='story']")
        assert len(story.attrib) == MAX_ATTRIBUTES
        assert story.text_content() == "The harbour council met today."
    assert time.process_time() - started < 2.0
    assert script in bounded and len(bounded) < len(html) / 10
    assert without_attribute_floods(script) is script


def test_tags_of_names_that_begin_with_a_tag_are_searched_in_linear_time() -> None:
    """``<div <a <a <a ...>``: a search for 2,000 attributes from every ``<`` read each tag
    again from each of its ``<`` (19 s of CPU for this page of 1 MB). No tag of it holds
    more than ``MAX_ATTRIBUTES`` attributes, so nothing is cut."""
    block = "<div " + " ".join("<a" for _ in range(MAX_ATTRIBUTES - 1)) + ">x</div>"
    html = "<html><body>" + block * (1_000_000 // len(block)) + "</body></html>"
    started = time.process_time()
    assert without_attribute_floods(html) is html
    assert time.process_time() - started < 1.0


def test_each_page_is_flattened_by_its_own_depth_though_one_parser_reads_them_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The parser used again page after page flattens a page nested deeper than libxml2
    reads, and not the page after it: the depth check reads that page's errors alone."""
    deep = "<html><body>" + "<div>" * 3000 + "deep text" + "</div>" * 3000 + "</body></html>"
    shallow = "<html><body><div><p>shallow text</p></div></body></html>"
    for page, flattened in ((deep, True), (shallow, False), (deep, True), (shallow, False)):
        caplog.clear()
        with caplog.at_level("INFO", logger="spidercrawl.document.html"):
            root = parse_html(page)
        assert ("nested deeper" in caplog.text) is flattened
        assert max(len(list(element.iterancestors())) for element in root.iter()) < MAX_DEPTH
        assert ("deep text" if flattened else "shallow text") in root.text_content()


def test_scripts_styles_and_svg_are_left_out_of_the_raw_tree_but_json_ld_stays() -> None:
    """What no reader of the raw tree looks at is removed before libxml2 reads it again;
    JSON-LD (the article's metadata) stays, and nested SVG and templates (inner ones
    removed before their ancestors) leave the page's text whole."""
    from spidercrawl.capture.static import static_capture

    nested = "<svg><svg><script>var a;</script><style>p{}</style></svg></svg>" * 50
    markup = (
        "<html><head><script>track()</script><style>body{}</style>"
        '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Floods"}'
        "</script></head><body><template><svg><script>x()</script></svg></template>"
        f"<p>The river rose in the night.</p>{nested}<p>By morning it had fallen.</p>"
        "</body></html>"
    )
    root = parse_raw_html(markup)
    assert not root.xpath("//style | //svg | //template | //script[not(@type)]")
    assert root.xpath("//p/text()") == ["The river rose in the night.", "By morning it had fallen."]
    assert static_capture(root, "http://127.0.0.1/floods")["jsonld_types"] == ["NewsArticle"]


def test_script_and_style_bodies_are_left_out_json_ld_kept_in_one_pass() -> None:
    """The content of scripts and styles goes, whatever the case of their tags; JSON-LD
    stays; an element never closed keeps the rest as it was; a page of thousands of
    unclosed ``<script`` openings is read in one bounded pass."""
    markup = (
        '<head><SCRIPT src="a.js">var state = {"x": 1};</Script >'
        '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
        "<style>p { color: red }</style></head><body><p>The river rose.</p>"
        "<script>never closed <p>kept as it was</p>"
    )
    assert without_script_bodies(markup) == (
        '<head><SCRIPT src="a.js"></Script >'
        '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
        "<style></style></head><body><p>The river rose.</p>"
        "<script>never closed <p>kept as it was</p>"
    )
    hostile = "<script " + "a" * 3000 + "<script" * 200_000
    started = time.process_time()
    assert without_script_bodies(hostile) == hostile
    assert time.process_time() - started < 5


def test_a_page_over_a_readers_size_is_read_without_its_scripts_where_that_fits() -> None:
    """Under the size, the page as it is; over it by its inline state alone, the page
    without that state; over it by its text, nothing (the reader does not read it)."""
    story = "<body><p>The river rose.</p></body>"
    state = f"<script>{'x' * 500}</script>"
    assert within_size(story, 100) == story
    assert within_size(state + story, 100) == "<script></script>" + story
    assert within_size(f"<p>{'y' * 500}</p>" + state, 100) is None


def test_a_raw_page_parsed_twice_is_built_once_and_each_tree_is_its_own(monkeypatch) -> None:
    from spidercrawl.document import html as html_module

    built = []

    class Counted(html_module.LexborHTMLParser):
        def __init__(self, *args, **kwargs) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(html_module, "LexborHTMLParser", Counted)
    page = OLD_TEMPLATE.format(n=7)
    first = parse_raw_html(page)
    first.find(".//body").clear()  # a reader changes its tree
    second = parse_raw_html(page)
    assert len(built) == 1
    assert "600ft up" in second.text_content()
    assert "600ft up" not in first.text_content()
    parse_raw_html(OLD_TEMPLATE.format(n=8))
    assert len(built) == 2
