"""Corpus-ready output: article metadata, URL identity, JSON Feed, incremental re-crawls."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from spidercrawl.document.language import confirmed_language, language
from spidercrawl.extract.metadata import (
    SiteTitles,
    article_metadata,
    best_title,
    clean_authors,
    clean_title,
    parse_date,
)
from spidercrawl.extract.titles import lead_with_headline, without_headline
from spidercrawl.memory import content_hash
from spidercrawl.pipelines.jsonfeed import VERSION, feed_errors, feed_item
from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import serving
from spidercrawl.snapshot import SiteSnapshot
from spidercrawl.urls import article_key
from tests.conftest import SITE, crawl_articles

# --- metadata ------------------------------------------------------------------------------


def test_titles_lose_the_site_name_but_keep_their_own_punctuation() -> None:
    names = {"theharbourtimes", "harbourtimes"}
    assert clean_title("Storm hits coast | The Harbour Times", names) == "Storm hits coast"
    assert clean_title("The Harbour Times - Storm: what next", names) == "Storm: what next"
    assert clean_title("The Harbour Times", names) == ""  # a title that is the site's name
    assert clean_title("Patriots: Coach never better", names) == "Patriots: Coach never better"


def test_a_sites_name_is_learned_from_its_titles() -> None:
    titles = SiteTitles()
    for title in ("Zoo news | UK | Guardian Unlimited", "Bears | Guardian Unlimited", "Hi | X"):
        titles.observe({"titles": [title]})
    assert "guardianunlimited" in titles.names()
    assert "bears" not in titles.names()


def test_the_visible_headline_wins_over_a_rewritten_metadata_title() -> None:
    headlines = ["Storm hits the north coast overnight", "Most read"]
    assert best_title(["News: Storm hits the north coast overnight"], headlines) == headlines[0]
    assert best_title(["Completely different"], headlines) == "Completely different"
    assert best_title([], headlines) == headlines[0]


def test_the_article_text_starts_with_its_headline_once() -> None:
    text, html = lead_with_headline("First paragraph.", "<p>First paragraph.</p>", "Storm & rain")
    assert text == "Storm & rain\n\nFirst paragraph."
    assert html == "<h1>Storm &amp; rain</h1>\n<p>First paragraph.</p>"
    already = "Storm  & Rain\n\nFirst paragraph."
    assert lead_with_headline(already, "", "Storm & rain") == (already, "")
    assert lead_with_headline("", "", "Storm & rain") == ("", "")  # no article, no headline
    dated = "5 April 2013\n\nStorm & rain\n\nFirst paragraph."  # after a date line: there
    assert lead_with_headline(dated, "", "Storm & rain") == (dated, "")
    # A lead sentence that repeats a short headline's words is not the headline.
    lead = "The new ferry pier opens in May, the mayor said on Tuesday."
    assert lead_with_headline(lead, "", "New ferry pier")[0] == f"New ferry pier\n\n{lead}"


def test_a_feed_item_shows_its_headline_once_as_its_title() -> None:
    text, html = lead_with_headline("First paragraph.", "<p>First paragraph.</p>", "Storm & rain")
    item = feed_item({"url": "https://harbour.example/a/", "title": "Storm & rain",
        "text": text, "html": html})  # fmt: skip
    assert item["title"] == "Storm & rain"
    assert item["content_text"] == "First paragraph."
    assert item["content_html"] == "<p>First paragraph.</p>"
    # The article's own heading, spaced and cased otherwise, goes too.
    own = without_headline("Storm  & RAIN\n\nBody.", "<h2>Storm &amp; RAIN</h2>\n<p>Body.</p>",
        "Storm & rain")  # fmt: skip
    assert own == ("Body.", "<p>Body.</p>")
    assert without_headline("Storms ahead\n\nBody.", "", "Storm & rain")[0].startswith("Storms")
    only = ("Storm & rain", "<h1>Storm &amp; rain</h1>")  # nothing else: it stays the content
    assert without_headline(*only, "Storm & rain") == only
    # After a date line and share links, as bbc.co.uk's story pages have it: it goes too.
    dated = without_headline(
        "5 April 2013\n\nShare this page\n\nStorm & rain\n\nBody.",
        "<p>5 April 2013</p>\n<h3>Share this page</h3>\n<h1>Storm &amp; rain</h1>\n<p>Body.</p>",
        "Storm & rain",
    )
    assert dated == (
        "5 April 2013\n\nShare this page\n\nBody.",
        "<p>5 April 2013</p>\n<h3>Share this page</h3>\n<p>Body.</p>",
    )
    late = "Intro.\n\nMore.\n\nAnd more.\n\nStorm & rain\n\nBody."  # not an opening line
    assert without_headline(late, "", "Storm & rain")[0] == late


def test_authors_without_navigation_urls_or_site_names() -> None:
    names = {"theharbourtimes"}
    assert clean_authors(["By Ana Silva and Tom Reed"], names) == ["Ana Silva", "Tom Reed"]
    assert clean_authors(["Home | News | Sport | Contact us | Subscribe"], names) == []
    assert clean_authors(["https://x.example/ana", "The Harbour Times"], names) == []
    assert clean_authors([["Ana Silva", "ana silva"], "Staff 2026"], names) == ["Ana Silva"]


def test_garbage_dates_are_left_empty() -> None:
    assert parse_date("2026-03-08T08:30:00+00:00").isoformat() == "2026-03-08T08:30:00+00:00"
    for garbage in ("Updated recently", "2026-13-45", "3026-01-01", "0000-00-00", "1970-01-01"):
        assert parse_date(garbage) is None
    page = {
        "url": "https://harbour.example/city/2026/03/08/storm/",
        "og": {"article:published_time": "not a date", "article:modified_time": "2020-01-01"},
        "time_datetimes": ["2026-03-08T08:30:00Z"],
        "canonical_url": "/city/2026/03/08/storm/?utm_source=x",
    }
    metadata = article_metadata(page)
    assert metadata.published == "2026-03-08T08:30:00+00:00"
    assert metadata.modified == ""  # a modification before publication is broken
    assert metadata.canonical_url.startswith("https://harbour.example/city/2026/03/08/storm/")
    # No metadata at all: the date in the URL (htmldate), as a day without a time.
    assert article_metadata({"url": page["url"]}).published == "2026-03-08"


def test_htmldate_reads_the_url_first_and_the_page_where_the_url_has_no_date() -> None:
    html = (
        "<html><head><meta name='date' content='2025-11-02'></head><body><p>Storm.</p>"
        "</body></html>"
    )
    dated_url = "https://harbour.example/city/2026/03/08/storm/"
    assert article_metadata({"url": dated_url, "rendered_html": html}).published == "2026-03-08"
    plain_url = "https://harbour.example/city/storm/"
    assert article_metadata({"url": plain_url, "rendered_html": html}).published == "2025-11-02"
    assert article_metadata({"url": plain_url, "rendered_html": "<html></html>"}).published == ""


def test_a_pages_date_is_read_by_htmldate_once_however_often_it_is_asked(monkeypatch) -> None:
    import htmldate

    real, asked = htmldate.find_date, []

    def counted(document, **options):
        asked.append(document)
        return real(document, **options)

    monkeypatch.setattr(htmldate, "find_date", counted)
    html = "<html><head><meta name='date' content='2025-11-02'></head><body>x</body></html>"
    page = {"url": "https://harbour.example/city/storm/", "rendered_html": html}
    assert [article_metadata(page).published for _ in range(3)] == ["2025-11-02"] * 3
    assert len(asked) == 2  # the URL alone, then the page: once each
    other = {"url": "https://harbour.example/city/flood/", "rendered_html": html}
    assert article_metadata(other).published == "2025-11-02"
    assert len(asked) == 4  # another page (its URL) is read anew


def test_the_text_corrects_a_templates_language() -> None:
    french = "Le conseil municipal a voté hier soir le budget du port et des écoles. " * 3
    assert language("en", french) == "fr"
    assert language("fr-CA", french) == "fr-CA"
    assert language("en", "Too short") == "en"
    assert language("not a tag!", "") == ""


def test_a_site_whose_declared_language_held_is_trusted_unchecked() -> None:
    french = "Le gouvernement a annoncé mardi une série de mesures pour soutenir les " * 3
    english = "The government announced on Tuesday a series of measures to support the " * 3
    assert confirmed_language([("en", english)] * 3) == "en"
    assert confirmed_language([("en", english)] * 2) == ""  # too few pages to say
    assert confirmed_language([("en", english)] * 5 + [("en", french)]) == ""  # one wrong
    assert confirmed_language([("en-GB", english)] * 3 + [("fr", french)]) == ""  # two
    # Trusted: a page declaring the confirmed language is not checked; others still are.
    assert language("en", french, confirmed="en") == "en"
    assert language("de", french, confirmed="en") == "fr"


# --- URLs and hashes -----------------------------------------------------------------------


def test_url_variants_of_one_article_share_a_key() -> None:
    key = article_key("https://example.com/news/a-story")
    for variant in (
        "http://www.example.com/news/a-story/",
        "https://example.com/news/a-story/?utm_source=tw&fbclid=abc#comments",
        "https://amp.example.com/news/a-story/amp/",
        "https://example.com/news/a-story?amp=1",
    ):
        assert article_key(variant) == key, variant
    assert article_key("https://example.com/news/a-story?id=2") != key
    assert article_key("not a url") == "" and article_key("http://[::1") == ""
    assert content_hash("T", "Some  text") == content_hash("t", "some text")


# --- JSON Feed -----------------------------------------------------------------------------


def test_feed_items_follow_the_json_feed_spec() -> None:
    article = {
        "url": "https://harbour.example/a/",
        "title": "A",
        "text": "Body",
        "html": "<p>Body</p>",
        "published": "2026-03-08",  # a day alone: no date_published (it needs a time)
        "authors": ["Ana Silva"],
        "lang": "en",
        "method": "rules",
    }
    item = feed_item(article)
    assert "date_published" not in item and item["_spidercrawl"]["published"] == "2026-03-08"
    document = {"version": VERSION, "title": "harbour.example", "items": [item]}
    assert feed_errors(document) == []
    assert feed_errors({"version": VERSION, "title": "x", "items": [{"id": "a"}]})  # no content
    broken = dict(item, date_published="8 March 2026")
    assert feed_errors({"version": VERSION, "title": "x", "items": [broken]})


# --- incremental crawls, end to end ---------------------------------------------------------


@pytest.fixture(scope="module")
def recrawls(tmp_path_factory, chromium_path):
    root = tmp_path_factory.mktemp("incremental")
    settings = (
        f"MODELS_DIR={root / 'models'}",
        f"STATE_DIR={root / 'state'}",
        f"JSONFEED_PATH={root / 'feeds' / '%(site)s.json'}",
    )
    changed = root / "changed"
    shutil.copytree(DEMO_SITE, changed)
    page = changed / "pages" / "012.html"
    page.write_text(page.read_text("utf-8").replace("<h2>", "<p>A late correction.</p><h2>", 1))
    with serving(DEMO_SITE) as server:
        first = crawl_articles(server.base_url, root / "first.jsonl", root / "models", *settings)
        # Every page fetched whole again: the memory judges each article unchanged.
        second = crawl_articles(
            server.base_url, root / "second.jsonl", root / "models", *settings,
            "CONDITIONAL_FETCH=False",
        )  # fmt: skip
        server.snapshot = SiteSnapshot(changed)
        server.not_modified = 0
        # Pages asked for conditionally: only the changed one is fetched whole.
        third = crawl_articles(server.base_url, root / "third.jsonl", root / "models", *settings)
        third.not_modified = server.not_modified  # type: ignore[attr-defined]
        # Nothing changed since: every page is answered 304.
        fourth = crawl_articles(server.base_url, root / "fourth.jsonl", root / "models", *settings)
    return root, first, second, third, fourth


def test_a_second_crawl_of_an_unchanged_site_yields_nothing_new(recrawls) -> None:
    _, first, second, _, _ = recrawls
    assert first.returncode == 0 and second.returncode == 0, second.log[-3000:]
    assert len(first.items) == 30 and {i["update"] for i in first.items} == {"new"}
    assert second.items == []
    assert "0 new, 0 changed, 30 unchanged" in second.log


def test_a_changed_page_yields_one_updated_item(recrawls) -> None:
    _, _, _, third, _ = recrawls
    assert third.returncode == 0, third.log[-3000:]
    assert [item["update"] for item in third.items] == ["changed"]
    assert "A late correction." in third.items[0]["text"]
    # The 29 unchanged pages were not fetched whole, rendered or extracted: HTTP 304.
    assert third.not_modified == 29
    assert "1 changed, 0 unchanged, 0 duplicates, 29 not modified (HTTP 304)" in third.log


def test_a_site_that_answers_every_page_304_is_no_error(recrawls) -> None:
    fourth = recrawls[4]
    assert fourth.returncode == 0 and fourth.items == [], fourth.log[-3000:]
    assert "0 new, 0 changed, 0 unchanged, 0 duplicates, 30 not modified (HTTP 304)" in (fourth.log)
    assert "could be rendered" not in fourth.log and "ERROR" not in fourth.log
    # The 304s set the crawl's pace (Scrapy's AutoThrottle lowers the delay on 200s only).
    lowered = re.search(r"'spidercrawl/throttle/not_modified_lowered_delay': (\d+)", fourth.log)
    assert lowered and int(lowered.group(1)) >= 10, fourth.log[-3000:]


def test_the_json_feed_is_valid_and_holds_every_article(recrawls) -> None:
    root = recrawls[0]
    document = json.loads((root / "feeds" / f"{SITE}.json").read_text("utf-8"))
    assert feed_errors(document) == []
    assert len(document["items"]) == 30
    assert all(item["date_published"].endswith("+00:00") for item in document["items"])
    corrected = [i for i in document["items"] if "A late correction." in i["content_text"]]
    assert len(corrected) == 1 and corrected[0]["_spidercrawl"]["update"] == "changed"


def test_an_interrupted_crawl_resumes_without_losing_or_repeating_articles(
    tmp_path, chromium_path
) -> None:
    settings = (f"STATE_DIR={tmp_path / 'state'}", "LOG_LEVEL=INFO")
    with serving(DEMO_SITE) as server:
        # Scrapy's CloseSpider extension stops the crawl early, as an interruption would.
        stopped = crawl_articles(
            server.base_url, tmp_path / "stopped.jsonl", tmp_path / "models", *settings,
            "CLOSESPIDER_ITEMCOUNT=12",
        )  # fmt: skip
        resumed = crawl_articles(
            server.base_url, tmp_path / "resumed.jsonl", tmp_path / "models", *settings
        )
    assert "closespider_itemcount" in stopped.log
    assert 12 <= len(stopped.items) < 30
    urls = [item["url"] for item in stopped.items + resumed.items]
    assert len(urls) == len(set(urls)) == 30


def test_the_language_model_loaded_in_a_thread_is_the_one_used() -> None:
    """A crawl loads the identifier in a thread when it opens; a page asking meanwhile
    waits for that load rather than making a second identifier."""
    from spidercrawl.document import language as languages

    languages._loaded.clear()
    thread = languages.load_in_background()
    first = languages._identifier()  # asked while (or after) the thread loads it
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert languages._identifier() is first and languages._loaded == [first]
    assert language("en", "C'est une phrase en français, écrite pour ce test. " * 4) == "fr"


@pytest.mark.parametrize(
    "damage",
    ['{"items": 5}', '{"items": [{"id": ["x"]}, {"id": 7}, "x"]}', "[1]", '{"version": 1}'],
)
def test_a_damaged_feed_file_is_set_aside_and_the_articles_still_make_the_feed(
    tmp_path, damage
) -> None:
    from spidercrawl.pipelines.jsonfeed import write_site_feed

    feed, articles = tmp_path / "feed.json", tmp_path / "articles.jsonl"
    feed.write_text(damage)
    article = {"url": "https://x.example/a", "title": "A story", "text": "A story\n\nText."}
    articles.write_text(json.dumps(article) + "\n")
    write_site_feed("x.example", feed, {}, articles, 10, "https://x.example/")
    items = json.loads(feed.read_text())["items"]
    assert [item["id"] for item in items] == ["https://x.example/a"]
