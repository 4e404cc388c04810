"""Sites files, and the crawl's memory surviving a process killed at any moment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spidercrawl.memory import SiteMemory, article_identity, page_digest
from spidercrawl.pipelines.articles_file import ArticlesFile, last_lines, repair_last_line
from spidercrawl.sites import SiteSpec, read_sites_file, sites_from_arguments


def test_a_sites_file_names_hosts_and_local_copies(tmp_path: Path) -> None:
    sites = tmp_path / "sites.txt"
    sites.write_text(
        "# news\nnpr.org\n\nwww.bbc.co.uk   # the same as bbc.co.uk\n"
        "harbour.example http://127.0.0.1:8000\nnpr.org\n",
        "utf-8",
    )
    specs = read_sites_file(sites)
    assert [s.name for s in specs] == ["npr.org", "bbc.co.uk", "harbour.example"]
    assert specs[1].base_url == "https://www.bbc.co.uk/" and not specs[1].is_local_copy
    assert specs[2].base_url == "http://127.0.0.1:8000/" and specs[2].is_local_copy
    assert specs[2].line() == "harbour.example http://127.0.0.1:8000/"
    both = sites_from_arguments(site="a.example, b.example", sites=str(sites))
    assert [s.name for s in both][-2:] == ["a.example", "b.example"]


@pytest.mark.parametrize(
    ("content", "logged"),
    [
        ("npr.org http://x/ extra\n", "line 1 skipped: a site line is HOST or HOST BASE_URL"),
        ("\n# nothing\n", ""),
        ("a.example ftp://x/\n", "line 1 skipped: base_url must be an http(s) URL"),
        ("\xff\xfe.example\n", "line 1 skipped: not a site's host name"),
    ],
)
def test_a_sites_file_without_a_good_line_is_an_error_naming_the_bad_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str, logged: str
) -> None:
    sites = tmp_path / "sites.txt"
    sites.write_text(content, "latin-1")
    with pytest.raises(ValueError, match="names no site"):
        read_sites_file(sites)
    assert logged in caplog.text


def test_bad_lines_of_a_sites_file_are_skipped_and_the_rest_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sites = tmp_path / "sites.txt"
    sites.write_text(
        "npr.org\nnot a site line\nhttps://www.bbc.co.uk/news/world-12345\nnpr.org\n", "utf-8"
    )
    assert [s.name for s in read_sites_file(sites)] == ["npr.org", "bbc.co.uk"]
    assert "line 2 skipped" in caplog.text
    assert "line 3: bbc.co.uk is crawled from its home page" in caplog.text
    assert "line 4: npr.org is named again: crawled once" in caplog.text


def test_base_url_goes_with_one_site_only() -> None:
    with pytest.raises(ValueError, match="exactly one -a site="):
        sites_from_arguments(site="a.example,b.example", base_url="http://127.0.0.1:1/")
    assert sites_from_arguments(site="a.example") == [SiteSpec.parse("a.example")]


def _article(number: int) -> dict:
    return {
        "url": f"http://127.0.0.1:8000/news/2026/story-{number}/",
        "title": f"Story {number}",
        "text": f"Text of story {number}.",
        "crawled_at": "2026-11-24T10:00:00+00:00",
    }


def test_a_killed_crawl_is_recovered_from_the_articles_file(tmp_path: Path) -> None:
    """Killed after writing an article but before journaling it, and in the middle of
    writing the next: the first is known as delivered, the half line is removed."""
    state, articles = tmp_path / "state" / "site.json", tmp_path / "articles.jsonl"
    memory = SiteMemory.load(state, articles)
    writer = ArticlesFile(articles)
    for number in range(3):  # delivered and journaled
        identity = article_identity(_article(number))
        memory.record(identity, "now", writer.append(_article(number)))
    writer.append(_article(3))  # written; the kill came before its journal line
    with articles.open("ab") as file:  # and the next was cut in the middle
        file.write(json.dumps(_article(4)).encode()[:25])
    with memory.journal_path.open("ab") as file:  # the journal's own last line, cut too
        file.write(b'{"key": "127.0.0.1:8000/news/2026/sto')
    writer.close()

    again = SiteMemory.load(state, articles)
    assert again.recovered == 1
    assert [again.judge(article_identity(_article(n)))[0] for n in range(5)] == [
        "unchanged", "unchanged", "unchanged", "unchanged", "new",
    ]  # fmt: skip
    assert articles.read_bytes().endswith(b"\n")
    assert [a["title"] for a in last_lines(articles, 10)] == [f"Story {n}" for n in range(4)]
    assert memory.journal_path.read_bytes().endswith(b"\n")
    again.save("now")  # the snapshot covers everything; the journal starts afresh
    assert not again.journal_path.exists()
    assert len(SiteMemory.load(state, articles).articles) == 4


def test_a_changed_article_is_an_update_and_its_old_text_no_duplicate(tmp_path: Path) -> None:
    memory = SiteMemory.load(tmp_path / "site.json")
    first = article_identity(_article(1))
    memory.record(first, "then", None)
    changed = article_identity({**_article(1), "text": "Corrected text."})
    assert memory.judge(changed)[0] == "changed"
    memory.record(changed, "now", None)
    copy = article_identity({**_article(2), "title": "Story 1", "text": "Corrected text."})
    assert memory.judge(copy) == ("duplicate", changed.key)
    reloaded = SiteMemory.load(tmp_path / "site.json")  # from the journal alone
    assert reloaded.articles[first.key]["first_seen"] == "then"
    assert reloaded.judge(changed)[0] == "unchanged"


def test_the_same_page_extracted_another_way_is_no_update(tmp_path: Path) -> None:
    """A page the server sends unchanged is not delivered again when this crawl cut it
    differently (the fast path's rules after the classifier, a relearned model)."""
    memory = SiteMemory.load(tmp_path / "site.json")
    delivered = article_identity({**_article(1), "page_digest": page_digest("<p>v1</p>")})
    memory.record(delivered, "then", None)
    recut = {
        **_article(1),
        "text": "Story one, cut shorter.",
        "page_digest": page_digest("<p>v1</p>"),
    }
    assert memory.judge(article_identity(recut))[0] == "unchanged"
    edited = {**recut, "page_digest": page_digest("<p>v2</p>")}  # the page itself changed
    assert memory.judge(article_identity(edited))[0] == "changed"
    assert memory.judge(article_identity({**recut, "page_digest": ""}))[0] == "changed"
    reloaded = SiteMemory.load(tmp_path / "site.json")  # the page's digest is in the journal
    assert reloaded.judge(article_identity(recut))[0] == "unchanged"


def test_last_lines_reads_a_large_file_from_its_end(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as file:
        for number in range(3000):  # about 2.5 MB: several blocks read backwards
            file.write(json.dumps({"n": number, "pad": "x" * 800}) + "\n")
    assert [line["n"] for line in last_lines(path, 3)] == [2997, 2998, 2999]
    assert len(list(last_lines(path, 2000))) == 2000
    with path.open("ab") as file:
        file.write(b'{"n": 3000, "pad"')
    repair_last_line(path)
    assert [line["n"] for line in last_lines(path, 1)] == [2999]


@pytest.mark.parametrize(
    "damage",
    [
        '{"key": "x", "url": "u"}',  # no hash: once stopped every later article of the site
        '{"key": "y", "url": "u", "hash": 5, "first_seen": "a", "last_seen": "b"}',
        '{"key": "z", "url": "u", "hash": "h", "first_seen": "a", "last_seen": "b", "offset": "9"}',
        '{"key": "w", "url": "u", "hash": "h", "first_seen": "a", "last_seen": "b", '
        '"page": "p", "validators": 5}',
        "[1]",
    ],
)
def test_a_damaged_journal_line_is_skipped_and_nothing_else_lost(tmp_path: Path, damage) -> None:
    memory = SiteMemory.load(tmp_path / "site.json")
    memory.record(article_identity(_article(1)), "then", None, ("page-1", {"etag": '"1"'}))
    with memory.journal_path.open("a") as file:
        file.write(damage + "\n")
    memory.record(article_identity(_article(2)), "then", None)

    again = SiteMemory.load(tmp_path / "site.json")
    assert again.judge(article_identity(_article(1)))[0] == "unchanged"
    assert again.judge(article_identity(_article(2)))[0] == "unchanged"
    assert again.judge(article_identity(_article(3)))[0] == "new"
    assert all(isinstance(v, dict) for v in again.validators.values())
    again.record(article_identity(_article(3)), "now", None)  # delivering goes on
    again.save("now")
    assert len(SiteMemory.load(tmp_path / "site.json").articles) >= 3


def test_a_damaged_state_file_keeps_its_good_records(tmp_path: Path) -> None:
    from spidercrawl.memory import read_validators

    state = tmp_path / "site.json"
    good = {"url": "u", "hash": "h", "first_seen": "a", "last_seen": "b"}
    state.write_text(json.dumps({
        "articles": {"good": good, "bad": {"url": "u"}, "worse": 7},
        "validators": 5,
    }))  # fmt: skip
    memory = SiteMemory.load(state)
    assert list(memory.articles) == ["good"] and memory.validators == {}
    assert read_validators(tmp_path, "site") == {}
    state.write_text(json.dumps({"articles": [1], "validators": {"p": {"etag": 5}, "q": {}}}))
    memory = SiteMemory.load(state)
    assert memory.articles == {} and memory.validators == {"q": {}}


def _delivery(tmp_path: Path):
    from scrapy.settings import Settings
    from scrapy.utils.reactor import install_reactor, is_reactor_installed
    from scrapy.utils.test import get_crawler

    from spidercrawl.pipelines.delivery import DeliveryPipeline
    from spidercrawl.spiders.news import NewsSpider

    settings = Settings()
    settings.setmodule("spidercrawl.settings")
    settings.setdict({
        "STATE_DIR": str(tmp_path / "state"),
        "ARTICLES_FILE": str(tmp_path / "%(site)s.jsonl"),
        "REDIS_URL": "",
    })  # fmt: skip
    if not is_reactor_installed():  # no crawl runs it: the pipeline is driven by hand here
        install_reactor(settings["TWISTED_REACTOR"])
    crawler = get_crawler(NewsSpider, settings.copy_to_dict())
    crawler.spider = NewsSpider(site="harbour.example")
    return DeliveryPipeline.from_crawler(crawler), crawler


def test_an_empty_article_is_counted_not_delivered(tmp_path: Path) -> None:
    from scrapy.exceptions import DropItem

    pipeline, crawler = _delivery(tmp_path)
    article = {**_article(1), "site": "harbour.example", "method": "density"}
    with pytest.raises(DropItem, match="no article text"):
        pipeline.process_item({**article, "text": " \n "})
    pipeline.process_item(dict(article))
    pipeline.close_spider()
    assert len(list(last_lines(tmp_path / "harbour.example.jsonl", 10))) == 1
    assert crawler.stats.get_value("spidercrawl/site/harbour.example/empty") == 1


def test_a_torn_last_line_is_cut_when_the_crawl_starts(tmp_path: Path) -> None:
    path = tmp_path / "harbour.example.jsonl"
    path.write_text(json.dumps(_article(1)) + "\n" + json.dumps(_article(2))[:30])
    pipeline, _ = _delivery(tmp_path)
    pipeline.open_spider()  # no article comes in this crawl
    assert path.read_text().endswith("\n")
    assert [a["title"] for a in last_lines(path, 10)] == ["Story 1"]
