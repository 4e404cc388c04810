"""Bad pages on the fast path: bounded, sent to the browser with a reason, never lost.

A copy of the demo gets seven more article pages: 10 MB of HTML in a hidden element, 10 MB
of application state in an inline script, 50,000 elements, markup cut off in the middle of
a tag, a page that declares UTF-8 but is sent in windows-1252, a million tags never closed
(``<a<a<a...``, which a tag pattern must not read to the end from every ``<``) and a tag of
50,000 attributes (which every HTML parser reads in time growing with the square of their
number). The site is
learned from a crawl of the demo; the crawl of the copy takes the fast path.
"""

from __future__ import annotations

import shutil

import pytest

from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import serving
from tests.conftest import SITE, crawl_articles

BASE = f"https://{SITE}/city/2026/05/"
BAD_PAGES = {
    "900": f"{BASE}01/a-very-large-page-of-the-harbour-times/",
    "901": f"{BASE}02/a-page-of-fifty-thousand-elements/",
    "902": f"{BASE}03/a-page-whose-markup-is-cut-off/",
    "903": f"{BASE}04/a-page-whose-charset-lies-about-itself/",
    "904": f"{BASE}05/a-page-of-a-million-tags-never-closed/",
    "905": f"{BASE}06/a-page-of-ten-megabytes-of-inline-state/",
    "906": f"{BASE}07/a-page-of-a-tag-of-fifty-thousand-attributes/",
}
LIE = "Café crème at the naïve façade: the jetty\u2019s reopening."


def _bad_pages(template: str) -> dict[str, bytes]:
    article = template.index("<article")
    first_paragraph = template.index("<p>", article)
    big = template.replace("</body>", f"<div hidden>{'x' * 10_500_000}</div></body>")
    state = template.replace("</body>", f'<script type="application/json">"{"x" * 10_500_000}"'
                             "</script></body>")  # fmt: skip
    many = template.replace(
        "</body>", '<div style="display:none">' + "<span></span>" * 50_000 + "</div></body>"
    )
    cut = template[: template.index("</article>") - 40] + '<p class="unfinished'
    lie = template[:first_paragraph] + f"<p>{LIE}</p>" + template[first_paragraph:]
    unclosed = template + "<a" * 1_000_000  # 2 MB, and no ">" after them
    flood = " ".join(f'data-n{n}="<{n}>"' for n in range(50_000))
    flooded = lie.replace("</body>", f'<div class="promo" {flood}></div></body>')
    return {
        "900": big.encode("utf-8"),
        "901": many.encode("utf-8"),
        "902": cut.encode("utf-8"),
        "903": lie.encode("cp1252"),  # while its <meta charset> says utf-8
        "904": unclosed.encode("utf-8"),
        "905": state.encode("utf-8"),
        "906": flooded.encode("cp1252"),  # and its charset lies too
    }


@pytest.fixture(scope="module")
def bad_crawl(tmp_path_factory, learned_demo):
    root = tmp_path_factory.mktemp("bad-input")
    site = root / SITE
    shutil.copytree(DEMO_SITE, site)
    template = (site / "pages" / "001.html").read_text("utf-8")
    for page_id, body in _bad_pages(template).items():
        (site / "pages" / f"{page_id}.html").write_bytes(body)
    with (site / "index.tsv").open("a", encoding="utf-8") as index:
        index.writelines(f"{page_id}\t{url}\n" for page_id, url in BAD_PAGES.items())
    models, state = learned_demo.copy_to(root)  # learned from the demo as it is
    settings = ("INCREMENTAL_ENABLED=False", f"STATE_DIR={state}")
    with serving(site) as server:
        fast = crawl_articles(server.base_url, root / "fast.jsonl", models, *settings)
    return learned_demo.result, fast, server.base_url


def _local(url: str, base_url: str) -> str:
    return base_url.rstrip("/") + url.split(SITE, 1)[1]


def test_each_bad_page_is_bounded_and_rendered_with_its_reason(bad_crawl) -> None:
    learning, fast, base_url = bad_crawl
    assert learning.returncode == 0 and fast.returncode == 0, fast.log[-3000:]
    log = fast.log
    big, many = _local(BAD_PAGES["900"], base_url), _local(BAD_PAGES["901"], base_url)
    assert (
        f"rendering {big} instead (10.0 MB of HTML, above FAST_PATH_MAX_BYTES (4.0 MB) even "
        "without its scripts and styles)" in log
    )
    assert f"rendering {many} instead (more than 25000 elements (FAST_PATH_MAX_ELEMENTS))" in log
    notes = {item["url"]: item.get("method_note") or "" for item in fast.items}
    for url in (big, many):  # the browser had them
        assert notes[url].startswith("rendered: the fast path failed"), notes[url]
    assert len(fast.items) == 37  # the demo's 30 and the 7 bad pages: none lost


def test_a_page_of_megabytes_of_inline_state_is_read_without_it(bad_crawl) -> None:
    """Over FAST_PATH_MAX_BYTES only by its inline script: the fast path reads the page
    without its scripts' content, by the site's rules, and no browser is needed."""
    _, fast, base_url = bad_crawl
    url = _local(BAD_PAGES["905"], base_url)
    assert f"{url} read without its scripts' and styles' content (10.0 MB of HTML" in fast.log
    article = next(item for item in fast.items if item["url"] == url)
    assert article["method"] == "rules" and article["word_count"] > 50
    assert "xxxx" not in article["text"]


def test_a_lying_charset_is_read_by_its_bytes(bad_crawl) -> None:
    _, fast, base_url = bad_crawl
    url = _local(BAD_PAGES["903"], base_url)
    assert f"{url} declares utf-8 but its bytes are cp1252: read as cp1252" in fast.log
    article = next(item for item in fast.items if item["url"] == url)
    assert article["method"] == "rules" and LIE in article["text"]


def test_cut_off_markup_still_gives_its_article(bad_crawl) -> None:
    _, fast, base_url = bad_crawl
    url = _local(BAD_PAGES["902"], base_url)
    article = next(item for item in fast.items if item["url"] == url)
    assert article["word_count"] > 50


def test_a_page_of_tags_never_closed_gives_its_article(bad_crawl) -> None:
    _, fast, base_url = bad_crawl
    url = _local(BAD_PAGES["904"], base_url)
    article = next(item for item in fast.items if item["url"] == url)
    assert article["word_count"] > 50


def test_a_tag_of_fifty_thousand_attributes_is_cut_and_its_page_read_by_the_rules(
    bad_crawl,
) -> None:
    """Cut as the response arrives, before the spider's selectors or the fast path parse
    it, in its bytes: the page, which also declares UTF-8 in windows-1252, is read by its
    bytes and by the site's rules like any other."""
    _, fast, base_url = bad_crawl
    url = _local(BAD_PAGES["906"], base_url)
    cut = f"{url}: start tags of more than 2000 attributes cut before the page is parsed"
    assert cut in fast.log
    assert f"{url} declares utf-8 but its bytes are cp1252: read as cp1252" in fast.log
    article = next(item for item in fast.items if item["url"] == url)
    assert article["method"] == "rules" and article["word_count"] > 50
    assert LIE in article["text"]
