"""The evaluation command on tiny handmade snapshots whose scores are known by hand."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spidercrawl.runner import PROJECT_ROOT

# page id -> (page body text, gold text or None for "no gold file")
PAGES = {
    "perfect": ("alpha beta gamma delta", "alpha beta gamma delta"),
    "half": ("alpha beta gamma delta", "alpha beta"),
    "disjoint": ("xray yankee", "alpha beta"),
    "empty": ("", "alpha beta"),
    "cjk": ("北京欢迎你", "北京欢迎"),
    "nogold": ("alpha", None),
}


def make_snapshot(root: Path) -> Path:
    site = root / "tiny" / "example.test"
    (site / "pages").mkdir(parents=True)
    (site / "gold").mkdir()
    lines = []
    for page_id, (body, gold) in PAGES.items():
        html = f"<html><head><meta charset='utf-8'></head><body><p>{body}</p></body></html>"
        (site / "pages" / f"{page_id}.html").write_text(html, "utf-8")
        if gold is not None:
            (site / "gold" / f"{page_id}.txt").write_text(gold, "utf-8")
        lines.append(f"{page_id}\thttp://example.test/{page_id}.html")
    (site / "index.tsv").write_text("\n".join(lines) + "\n", "utf-8")
    return root / "tiny"


def evaluate(dataset: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "spidercrawl.evaluate", str(dataset), "--out", str(out)]
    return subprocess.run(
        [*command, *extra], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("evaluate")
    out = root / "out"
    proc = evaluate(make_snapshot(root), out, "--methods", "fulltext,nosuch,unseen", "--jobs", "2",
        "--models", str(root / "no-models"),
    )  # fmt: skip
    return out, proc


def test_scores_known_by_hand(result: tuple[Path, subprocess.CompletedProcess]) -> None:
    out, proc = result
    assert proc.returncode == 0, proc.stderr
    rows = {row["page_id"]: row for row in csv.DictReader((out / "pages.csv").open())}
    assert float(rows["perfect"]["f1"]) == 1.0
    assert float(rows["half"]["precision"]) == 0.5
    assert float(rows["half"]["recall"]) == 1.0
    assert float(rows["cjk"]["precision"]) == 0.8  # four of five characters
    assert rows["disjoint"]["special_case"] == "no_overlap"
    assert rows["empty"]["special_case"] == "retrieved_empty"
    assert rows["nogold"]["special_case"] == "no_gold"


def test_summary_schema_and_means(result: tuple[Path, subprocess.CompletedProcess]) -> None:
    out, _ = result
    summary = json.loads((out / "summary.json").read_text())
    fulltext = summary["methods"]["fulltext"]
    assert fulltext["pages"] == 3  # the special cases stay out of the means
    assert fulltext["precision"] == pytest.approx((1 + 0.5 + 0.8) / 3, abs=1e-4)
    assert fulltext["special_cases"]["no_overlap"] == 1
    assert fulltext["special_cases"]["retrieved_empty"] == 1
    for key in ("recall", "f1", "f1_median", "cleaneval", "pages_per_s"):
        assert fulltext[key] is not None
    assert summary["sites"]["example.test"]["fulltext"]["pages"] == 3
    assert "nosuch" in summary["skipped"] and "unseen" in summary["skipped"]


def test_outputs_for_people(result: tuple[Path, subprocess.CompletedProcess]) -> None:
    out, proc = result
    assert "| fulltext |" in proc.stdout
    assert (out / "f1_distribution.png").stat().st_size > 1000
    assert "Skipping nosuch: unknown method" in proc.stderr
    assert "fulltext: 6/6 pages" in proc.stderr  # progress


def test_a_method_that_fails_is_reported_per_page(tmp_path: Path) -> None:
    dataset = make_snapshot(tmp_path)
    (dataset / "example.test" / "pages" / "perfect.html").write_bytes(b"")  # unreadable
    (dataset / "example.test" / "gold" / "half.txt").write_bytes("alpha béta".encode("cp1252"))
    out = tmp_path / "out"
    proc = evaluate(dataset, out, "--methods", "cetd", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    rows = {row["page_id"]: row for row in csv.DictReader((out / "pages.csv").open())}
    assert rows["perfect"]["special_case"] == "retrieved_empty"
    assert int(rows["half"]["gold_tokens"]) == 2


def test_no_snapshot_is_a_clear_error(tmp_path: Path) -> None:
    proc = evaluate(tmp_path, tmp_path / "out")
    assert proc.returncode == 2
    assert "No site snapshots" in proc.stderr


def test_rules_pages_are_reported_by_the_way_they_went() -> None:
    from spidercrawl.evaluate.report import (
        fast_path_shares,
        fast_path_shares_lines,
        rules_split,
        rules_split_table,
    )
    from spidercrawl.evaluate.runner import PageRecord

    def record(page: str, f1: float, note: str, seconds: float) -> PageRecord:
        return PageRecord("d", "s", page, "rules", f1=f1, note=note, seconds=seconds,
                          retrieved_tokens=5, gold_tokens=5,
                          fast_path=note == "fast path")  # fmt: skip

    records = [
        record("1", 1.0, "fast path", 0.002),
        record("2", 0.8, "fast path", 0.004),
        record("3", 0.5, "rendered: too short", 0.060),
        PageRecord("d", "s", "1", "learned", f1=0.1),  # another method: not counted
    ]
    split = rules_split(records)["d"]
    assert split["fast path"]["pages"] == 2 and split["fast path"]["f1"] == pytest.approx(0.9)
    assert split["fast path"]["ms_per_page"] == pytest.approx(3.0)
    assert split["rendered"]["pages"] == 1 and split["rendered"]["ms_per_page"] == 60.0
    table = rules_split_table({"d": split})
    assert "| d | fast path | 2 | 0.900 |" in table and "| 60.0 |" in table
    # Per site: the share of its pages the fast path took, and which sites fall short.
    records.append(PageRecord("d", "t", "1", "rules", f1=1.0, note="fast path", fast_path=True))
    # Decided by the record's field, not its note's words.
    records.append(PageRecord("d", "t", "2", "rules", f1=1.0, note="fast path, said a note"))
    shares = fast_path_shares(records)
    assert shares == {"d/s": pytest.approx(2 / 3, abs=1e-4), "d/t": 0.5}
    lines = fast_path_shares_lines(shares)
    assert "2 of 2" in lines and "- d/s: 67%" in lines and "- d/t: 50%" in lines


def test_learned_pages_are_split_by_how_the_chain_made_them() -> None:
    from spidercrawl.evaluate.report import SITE_MODEL, SITE_MODEL_RULES, learned_way
    from spidercrawl.evaluate.runner import PageRecord

    def way(**fields: object) -> str:
        return learned_way(PageRecord("d", "s", "1", "learned", **fields))

    assert way(way="learned", has_model=True, note="fold 1/4") == SITE_MODEL
    assert way(way="rules", has_model=True, note="rules") == SITE_MODEL_RULES
    assert way(way="learned+unseen", has_model=True) == "learned+unseen"
    assert way(way="density", has_model=True) == "not learned"
    assert way(way="unseen", has_model=False, note="no model") == "not learned"
    assert way(way="rules", has_model=True, plain=True) == "not learned"  # no render
    assert way(note="not rendered by the crawl") == "not learned"


def test_with_train_pages_every_method_is_scored_on_the_same_pages() -> None:
    from spidercrawl.evaluate.__main__ import same_pages_as_learned
    from spidercrawl.evaluate.runner import PageRecord

    records = [
        PageRecord("d", "s", "003", "learned", f1=0.9),
        PageRecord("d", "s", "003", "rules", f1=0.8),
        PageRecord("d", "s", "001", "trafilatura", f1=1.0),  # a training page: left out
        PageRecord("d", "s", "003", "trafilatura", f1=0.7),
        PageRecord("d", "t", "001", "trafilatura", f1=1.0),  # a site not learned: left out
    ]
    kept = same_pages_as_learned(records)
    assert [(r.site, r.page_id, r.method) for r in kept] == [
        ("s", "003", "learned"), ("s", "003", "rules"), ("s", "003", "trafilatura"),
    ]  # fmt: skip
    peers_only = [r for r in records if r.method == "trafilatura"]
    assert same_pages_as_learned(peers_only) == peers_only


ARTICLE = """<html lang="en"><head><title>Harbour council passes the budget</title>
<meta name="author" content="Ada Lovelace"><meta property="article:published_time"
content="2024-03-05T10:00:00Z"></head><body><nav><a href="/">Home</a> <a href="/news">News</a>
</nav><article><h1>Harbour council passes the budget</h1>{paragraphs}</article>
<footer>Copyright The Harbour Times</footer></body></html>"""


def test_trafilatura_making_whole_articles_gives_its_plain_text() -> None:
    """``trafilatura-metadata`` is only a speed reference: the text scored is the same."""
    from spidercrawl.evaluate.methods import page_extractor

    sentence = "The harbour council voted on the budget for the coming year after a long debate."
    html = ARTICLE.format(paragraphs="".join(f"<p>{sentence} Item {n}.</p>" for n in range(8)))
    plain = page_extractor("trafilatura")(html.encode())
    whole = page_extractor("trafilatura-metadata")(html.encode())
    assert "Item 7" in plain
    assert whole == plain


def test_learned_pages_are_reported_by_the_way_they_went_beside_peers_on_them() -> None:
    """The site model's own pages and each fallback apart, every other method of the run
    scored on exactly those pages, and each site's share of pages by its own model."""
    from spidercrawl.evaluate.report import SITE_MODEL, learned_split, learned_split_table
    from spidercrawl.evaluate.runner import PageRecord

    def record(site: str, page: str, method: str, f1: float, way: str = "") -> PageRecord:
        return PageRecord("d", site, page, method, f1=f1, way=way, has_model=bool(way))

    records = [
        record("s", "1", "learned", 1.0, "learned"),
        record("s", "2", "learned", 0.8, "learned"),
        record("s", "3", "learned", 0.2, "learned+unseen"),
        record("t", "1", "learned", 0.6, "learned"),
        record("s", "1", "trafilatura", 0.5),
        record("s", "2", "trafilatura", 0.0),
        record("s", "3", "trafilatura", 0.9),
        record("t", "1", "trafilatura", 0.9),
    ]
    records[5].special_case = "retrieved_empty"  # trafilatura found nothing on s/2
    split = learned_split(records)
    own = split["by_way"]["d"][SITE_MODEL]
    assert own["pages"] == 3 and own["share"] == 0.75
    assert own["f1"] == 0.8 and own["same_pages_f1"]["trafilatura"] == 0.7  # s/2 left out
    assert own["same_pages_f1_all_pages"]["trafilatura"] == 0.4667  # s/2 counted as 0
    fallback = split["by_way"]["d"]["learned+unseen"]
    assert fallback["pages"] == 1 and fallback["same_pages_f1"]["trafilatura"] == 0.9
    assert split["site_model_share_per_site"] == {"d/s": 0.6667, "d/t": 1.0}
    table = learned_split_table(split)
    # the table compares over the same pages: an empty extraction is not left out
    assert "| d | site model | 3 | 0.750 | 0.800 | 0.467 |" in table
    assert "- d/s: 67%" in table


def test_the_cold_start_without_a_browser_takes_the_article_the_three_agree_on() -> None:
    from spidercrawl.evaluate.methods import page_extractor

    sentence = "The harbour council voted on the budget for the coming year after a long debate."
    html = ARTICLE.format(paragraphs="".join(f"<p>{sentence} Item {n}.</p>" for n in range(8)))
    text = page_extractor("raw-consensus")(html.encode())
    assert "Item 0" in text and "Item 7" in text
    assert "Copyright" not in text


def test_extract_html_is_scored_in_the_convention_of_each_datasets_gold(tmp_path: Path) -> None:
    """``raw-consensus`` (``extract_html``, a page method that crawls nothing) follows the
    dataset's headline convention, read from the snapshot's own titles: against gold
    texts of the article body alone, its text is scored without the headline, as the site
    methods' is, and reads exactly the gold."""
    sentence = "The harbour council voted on the budget for the coming year after a long debate."
    paragraphs = [f"{sentence} Item {n}." for n in range(8)]
    for dataset, gold_headline in (("with", True), ("body", False)):
        site = tmp_path / "sets" / dataset / "harbour.example"
        (site / "pages").mkdir(parents=True)
        (site / "gold").mkdir()
        (site / "index.tsv").write_text("000\thttps://harbour.example/budget\n", "utf-8")
        html = ARTICLE.format(paragraphs="".join(f"<p>{p}</p>" for p in paragraphs))
        (site / "pages" / "000.html").write_text(html, "utf-8")
        gold = ["Harbour council passes the budget"] * gold_headline + paragraphs
        (site / "gold" / "000.txt").write_text("\n".join(gold), "utf-8")
    out = tmp_path / "out"
    proc = evaluate(tmp_path / "sets", out, "--methods", "raw-consensus", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert "body: our text scored without the headline" in proc.stderr
    rows = {r["dataset"]: r for r in csv.DictReader((out / "pages.csv").open())}
    assert float(rows["with"]["f1"]) == 1.0 and float(rows["body"]["f1"]) == 1.0


CHAOS = PROJECT_ROOT.parent / "shared" / "ziyan-spider" / "chaos"


@pytest.mark.skipif(not CHAOS.is_dir(), reason="needs ../shared/ziyan-spider")
def test_no_headline_scores_our_article_text_without_its_headline(tmp_path: Path) -> None:
    """``--no-headline`` scores the text a crawl writes with ARTICLE_HEADLINE_IN_TEXT off:
    the same article less its headline (a gold text that leaves headlines out)."""
    from spidercrawl.evaluate.site_methods import SiteJob, _score_with
    from spidercrawl.extract.unseen import DEFAULT_CROSS_SITE_MODEL
    from spidercrawl.text import word_count

    page = json.loads((CHAOS / "057.json").read_text("utf-8"))
    (tmp_path / "pages").mkdir()
    (tmp_path / "gold").mkdir()
    (tmp_path / "pages" / "057.html").write_text("<html><body><p>x</p></body></html>", "utf-8")
    gold = (CHAOS / "057.txt").read_text("utf-8-sig")
    (tmp_path / "gold" / "057.txt").write_text(gold, "utf-8")
    scored = {}
    for headline in (True, False):
        job = SiteJob("unseen", "chaos", "chaos", str(tmp_path), {"057": page}, ["057"])
        job.model_dir, job.headline_in_text = str(DEFAULT_CROSS_SITE_MODEL), headline
        (scored[headline],) = _score_with(job, None, ["057"], "")
    headline_words = word_count("REPASTS: BLANC MANGER")  # the page's visible headline
    assert scored[True].retrieved_tokens - scored[False].retrieved_tokens == headline_words
    assert scored[True].f1 != scored[False].f1
    assert "--no-headline" in evaluate(tmp_path, tmp_path / "out", "--help").stdout


def test_our_text_is_scored_in_the_convention_of_each_datasets_gold(tmp_path: Path) -> None:
    """``--headline auto`` (the default): with the headline where most gold texts open
    with the page's title (a date line may come first), without it where they give the
    article body only; ``in``/``out`` force it. A dataset with no titled page to tell
    keeps the product's default."""
    from spidercrawl.evaluate.__main__ import crawled_titles, headline_conventions
    from spidercrawl.evaluate.site_methods import SiteJob

    titles = ["Council passes harbour budget - Harbour Times", "Council passes harbour budget"]
    body = "The council passed its budget on Monday, after a long debate about the harbour."
    golds = {
        "cleaneval-like": f"Council passes harbour budget\n{body}",
        "dated": f"Monday, 3 May 2010\nCouncil passes harbour budget\n{body}",
        "body-only": f"{body}\nThe harbour master welcomed it.",
        "untitled": body,
    }
    jobs = []
    for dataset, gold in golds.items():
        site = tmp_path / dataset / "example.test"
        (site / "gold").mkdir(parents=True)
        pages = {}
        for number in range(4):
            (site / "gold" / f"{number}.txt").write_text(gold, "utf-8")
            pages[str(number)] = {"titles": [] if dataset == "untitled" else titles}
        jobs.append(SiteJob("unseen", dataset, "example.test", str(site), pages, list(pages)))
    auto = headline_conventions(crawled_titles(jobs), "auto")
    assert auto["cleaneval-like"].headline_in_text and auto["dated"].headline_in_text
    assert not auto["body-only"].headline_in_text
    assert auto["body-only"].summary()["gold_share_with_headline"] == 0.0
    assert auto["untitled"].headline_in_text and auto["untitled"].pages == 0
    forced = headline_conventions(crawled_titles(jobs), "out")
    assert not any(c.headline_in_text for c in forced.values())
    assert {c.chosen_by for c in forced.values()} == {"--headline"}


def test_our_speed_beside_each_peer_is_summed_over_the_pages_all_were_timed_on() -> None:
    from spidercrawl.evaluate.report import paired_speed, paired_speed_table
    from spidercrawl.evaluate.runner import PageRecord, PeerTiming

    # Page 3 of "d" has no peer timed: left out. The peer's own row is not used.
    ours = {("d", "1"): 0.010, ("d", "2"): 0.030, ("d", "3"): 0.500, ("e", "1"): 0.020}
    records = [PageRecord(d, "s", page, "unseen", seconds=s) for (d, page), s in ours.items()]
    records.append(PageRecord("d", "s", "1", "trafilatura", seconds=9.0))
    peers = {
        ("d", "1"): {"trafilatura": 0.020, "readability-lxml": 0.005},
        ("d", "2"): {"trafilatura": 0.060, "readability-lxml": 0.015},
        ("e", "1"): {"trafilatura": 0.010, "readability-lxml": 0.010},
    }
    timings = [
        PeerTiming(d, "s", page, method, seconds)
        for (d, page), by_peer in peers.items()
        for method, seconds in by_peer.items()
    ]
    speed = paired_speed(records, timings)
    assert speed["d"]["pages"] == 2 and speed["d"]["unseen_pages_per_s"] == 50.0
    assert speed["d"]["trafilatura_pages_per_s"] == 25.0
    assert speed["d"]["unseen_speed_vs_trafilatura"] == 2.0
    assert speed["d"]["unseen_speed_vs_readability-lxml"] == 0.5
    assert speed["e"]["unseen_speed_vs_trafilatura"] == 0.5
    assert speed["all"]["pages"] == 3 and speed["all"]["unseen_speed_vs_trafilatura"] == 1.5
    assert list(speed) == ["d", "e", "all"]
    table = paired_speed_table(speed)
    assert "| d | 2 | 50.0 | 100.0 | 25.0 | 0.50 | 2.00 |" in table


@pytest.mark.skipif(not CHAOS.is_dir(), reason="needs ../shared/ziyan-spider")
def test_unseen_times_both_peers_on_each_page_beside_our_extraction(tmp_path: Path) -> None:
    """The peers run on every page of an ``unseen`` job (for the consensus's grid); their
    own calls are kept so that our pages/s and theirs compare page by page."""
    from spidercrawl.evaluate.report import paired_speed
    from spidercrawl.evaluate.site_methods import SiteJob, choose_unseen_bonus, run_unseen
    from spidercrawl.extract.unseen import DEFAULT_CROSS_SITE_MODEL

    page = json.loads((CHAOS / "057.json").read_text("utf-8"))
    paragraphs = "".join(f"<p>{block['text']}</p>" for block in page["texts"])
    (tmp_path / "pages").mkdir()
    (tmp_path / "gold").mkdir()
    html = f"<html><body><article>{paragraphs}</article></body></html>"
    (tmp_path / "pages" / "057.html").write_text(html, "utf-8")
    (tmp_path / "gold" / "057.txt").write_text((CHAOS / "057.txt").read_text("utf-8-sig"))
    job = SiteJob("unseen", "chaos", "chaos", str(tmp_path), {"057": page}, ["057"])
    job.model_dir = str(DEFAULT_CROSS_SITE_MODEL)
    outcome = run_unseen(job)
    assert sorted(t.method for t in outcome.peer_timings) == ["readability-lxml", "trafilatura"]
    assert all(t.page_id == "057" and t.seconds > 0 for t in outcome.peer_timings)
    kept, _ = choose_unseen_bonus(outcome.records)
    (ours,) = [r for r in kept if r.method == "unseen"]
    speed = paired_speed(kept, outcome.peer_timings)["chaos"]
    trafilatura = next(t.seconds for t in outcome.peer_timings if t.method == "trafilatura")
    assert speed["pages"] == 1
    assert speed["unseen_speed_vs_trafilatura"] == round(trafilatura / ours.seconds, 3)


def test_a_page_read_from_its_raw_html_is_scored_as_the_crawl_extracts_it(tmp_path: Path) -> None:
    """A page the browser showed no text of comes to the evaluation as the crawl delivers
    it (``capture_mode`` "http", no blocks, the raw HTML as its page): every ``unseen``
    setting and the learned path score what the crawl's plain extraction gives, not an
    empty blocks' article outvoted by a peer."""
    from spidercrawl.evaluate.site_methods import SiteJob, _score_with, run_unseen
    from spidercrawl.extract.unseen import DEFAULT_CROSS_SITE_MODEL

    story = "The harbour closed at noon as the storm came in from the west. " * 6
    raw = (
        "<html><head><title>Storm closes the harbour\n<script src='/s.js'></script></head>"
        f"<body><div><a href='/'>Home</a></div><article><p>{story}</p></article></body></html>"
    )
    (tmp_path / "pages").mkdir()
    (tmp_path / "gold").mkdir()
    (tmp_path / "pages" / "001.html").write_text(raw, "utf-8")
    (tmp_path / "gold" / "001.txt").write_text(story, "utf-8")
    page = {
        "url": "http://127.0.0.1/001.html",
        "texts": [],
        "capture_mode": "http",
        "render_failed": "no text shown; its raw HTML has some",
        "rendered_html": raw,
        "raw_html": raw,
    }
    job = SiteJob("unseen", "d", "site", str(tmp_path), {"001": page}, ["001"])
    job.model_dir = str(DEFAULT_CROSS_SITE_MODEL)
    records = run_unseen(job).records
    assert len(records) > 2
    assert all(r.note == "raw HTML: density" and r.f1 > 0.9 for r in records)
    (learned,) = _score_with(job, None, ["001"], "")
    assert learned.note == "raw HTML: density" and learned.f1 > 0.9


def test_the_fast_path_is_scored_as_the_crawl_delivers_it_deck_included(tmp_path: Path) -> None:
    """The ``rules`` method scores the item a crawl's fast path makes of the raw HTML: its
    own metadata and deck read there (a deck shown above the learned container, which the
    parser does not cut), not the rendered page's fields without the deck."""
    import random

    from spidercrawl.evaluate.site_methods import SiteJob, _score_fast_path
    from spidercrawl.learn.consensus_labels import CONSENSUS_FIELD, ConsensusArticle
    from spidercrawl.learn.model import SiteModel
    from tests.test_fallbacks import NAV, PageBuilder, sentence

    body = [("div", "", ("page",)), ("article", "", ("story",)), ("div", "", ("story-body",))]

    def story(number: int) -> tuple[str, list[str]]:
        rng = random.Random(number)
        deck = f"deck{number} {sentence(rng, 20)}"
        return deck, [f"harbour{number} {sentence(rng, 30)}" for _ in range(4)]

    sidebar = "Most read this week: " + sentence(random.Random(99), 40)
    pages = []
    for number in range(8):  # the site's pages before it showed decks
        deck, paragraphs = story(number)
        page = PageBuilder()
        for name in ("News", "Sport", "Weather"):
            page.add(NAV, "a", name, {}, link=True)
        for paragraph in paragraphs:
            page.add(body, "p", paragraph, {"font-size": "18px"})
        page.add([("div", "", ("page",)), ("aside", "", ("sidebar",))], "p", sidebar, {})
        item = page.page(number, f"Harbour story {number}", deck)
        text = "\n\n".join(paragraphs)
        item[CONSENSUS_FIELD] = ConsensusArticle(text, 0.9, [text] * 3).as_field()
        pages.append(item)
    model = SiteModel().fit(pages)
    deck, paragraphs = story(40)
    raw = (
        f"<html><head><title>Harbour story 40</title><meta name='description' content='{deck}'>"
        "</head><body><div class='page'><a href='/n'>News</a><article class='story'>"
        f"<p>{deck}</p><div class='story-body'>"
        + "".join(f"<p>{paragraph}</p>" for paragraph in paragraphs)
        + f"</div></article><aside class='sidebar'><p>{sidebar}</p></aside></div></body></html>"
    )
    for folder, name, content in (
        ("pages", "040.html", raw),
        ("gold", "040.txt", "\n".join([deck, *paragraphs])),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(content, "utf-8")
    rendered = {"url": "http://127.0.0.1/040.html", "titles": ["Harbour story 40"], "texts": []}
    job = SiteJob("rules", "d", "site", str(tmp_path), {"040": rendered}, ["040"])
    job.headline_in_text = False
    (record,) = _score_fast_path(job, model, ["040"], "")
    assert record.fast_path, record.note
    assert record.f1 > 0.99, record


def tiny_site(root: Path, dataset: str, host: str, pages: int) -> Path:
    site = root / dataset / host
    (site / "pages").mkdir(parents=True)
    lines = []
    for n in range(pages):
        body = "".join(
            f"<p>Story {n} of {host}: the harbour council met on day {n} and voted.</p>"
            for _ in range(6)
        )
        html = f"<html><head><title>Story {n}</title></head><body><article>{body}</article>"
        (site / "pages" / f"{n:03d}.html").write_text(html + "</body></html>", "utf-8")
        lines.append(f"{n:03d}\thttp://{host}/story/{n}.html")
    (site / "index.tsv").write_text("\n".join(lines) + "\n", "utf-8")
    return site


def test_many_sites_are_crawled_in_one_run_and_split_back_by_site(tmp_path: Path) -> None:
    """One `scrapy crawl news -a sites=FILE` for the sites of a dataset, each site's page
    items in its own cache file, as a crawl of that site alone would give them; one host
    in two datasets (a site years apart) goes to two runs."""
    from spidercrawl.evaluate.crawl import _batches, crawl_snapshot, crawl_snapshots
    from spidercrawl.snapshot import SiteSnapshot

    sites = [
        tiny_site(tmp_path, "one", "a.test", 2),
        tiny_site(tmp_path, "one", "b.test", 1),
        tiny_site(tmp_path, "two", "a.test", 1),
    ]
    targets = [
        (SiteSnapshot(s), tmp_path / "cache" / s.parent.name / f"{s.name}.jsonl") for s in sites
    ]
    assert [len(batch) for batch in _batches(targets)] == [2, 1]
    crawl_snapshots(targets)
    assert targets[0][1].exists() and targets[1][1].exists()
    assert not targets[2][1].exists()  # a run of one site: crawled alone, as before
    first = crawl_snapshot(*targets[0])
    assert sorted(first) == ["000", "001"] and all(p["site"] == "a.test" for p in first.values())
    assert "Story 1 of a.test" in " ".join(first["001"]["texts"][0]["text"])
    assert list(crawl_snapshot(*targets[1])) == ["000"]


def test_collapses_are_pages_far_under_the_best_peer() -> None:
    from spidercrawl.evaluate.report import collapse_table, collapses
    from spidercrawl.evaluate.runner import PageRecord

    records = [
        PageRecord("d", "s", "1", "unseen", f1=0.2),  # 0.78 under trafilatura: collapsed
        PageRecord("d", "s", "1", "trafilatura", f1=0.98),
        PageRecord("d", "s", "1", "readability-lxml", f1=0.4),
        PageRecord("d", "s", "2", "unseen", f1=0.7),  # 0.25 under: not a collapse
        PageRecord("d", "s", "2", "trafilatura", f1=0.95),
        PageRecord("d", "s", "3", "unseen", special_case="error"),  # an error scores 0
        PageRecord("d", "s", "3", "readability-lxml", f1=0.5),
        PageRecord("d", "s", "4", "unseen", f1=0.1),  # no peer scored it: not counted
        PageRecord("d", "s", "5", "unseen", special_case="no_gold"),
        PageRecord("d", "s", "5", "trafilatura", special_case="no_gold"),
    ]
    shares = collapses(records)
    assert set(shares) == {"d"} and set(shares["d"]) == {"unseen"}
    row = shares["d"]["unseen"]
    assert row["pages"] == 3 and row["collapsed"] == ["s 1", "s 3"]
    assert row["share"] == pytest.approx(2 / 3, abs=1e-4)
    assert "| d | 66.7% (2 of 3) |" in collapse_table(shares)
    assert collapses([PageRecord("d", "s", "1", "unseen", f1=0.2)]) == {}


def test_learned_extracts_what_it_has_no_model_for_as_unseen_did_held_out() -> None:
    """``unseen`` runs first; the pages ``learned`` and ``rules`` extract as a site never
    seen then get unseen's setting for the site's dataset (its held-out cross-site model,
    the blocks' constants, the consensus's bonus and agreement), not the shipped constants,
    which were chosen with every dataset."""
    from spidercrawl.evaluate.__main__ import _never_seen_settings, _unseen_first
    from spidercrawl.evaluate.site_methods import SiteJob, _chain
    from spidercrawl.extract.unseen import DEFAULT_CROSS_SITE_MODEL

    assert _unseen_first(["learned", "rules", "unseen", "cetd"]) == [
        "unseen", "learned", "rules", "cetd"
    ]  # fmt: skip
    settings = {
        "d/site": ("d", str(DEFAULT_CROSS_SITE_MODEL), (0.15, 0.25, 0.35)),
        "e/other": ("e", None, None),
    }
    chosen = {"d": {"own_bonus": 0.3, "density_agreement": None}}
    never_seen = _never_seen_settings(settings, chosen)
    assert list(never_seen) == ["d/site"]  # a dataset without a choice keeps the shipped
    job = SiteJob("learned", "d", "site", "/nowhere", {}, [])
    shipped = _chain(job).settings
    job.extract_never_seen_as(never_seen["d/site"])
    chain = _chain(job)
    assert (chain.settings.own_bonus, chain.settings.density_agreement) == (0.3, None)
    assert (shipped.own_bonus, shipped.density_agreement) != (0.3, None)
    unseen = chain.cross_site
    assert (unseen.density_bonus, unseen.tolerance, unseen.relevance_bonus) == (0.15, 0.25, 0.35)


def test_a_snippet_dataset_is_scored_as_trafilaturas_benchmark(tmp_path: Path) -> None:
    """Three pages, scored by hand: page a keeps its snippet and leaves out the menu; page
    b keeps one of two; page c's article is the menu line, found where it must not be."""
    import gzip

    dataset = tmp_path / "snippets-dev"
    (dataset / "html").mkdir(parents=True)
    body = "<p>" + "The harbour council voted for the new quay after a long debate. " * 6
    pages = {
        "a": (f"<html><body><nav>Menu Home News</nav>{body}</p></body></html>",
              ["voted for the new quay"], ["Menu Home News"]),
        "b": (f"<html><body>{body}</p></body></html>",
              ["the new quay after", "never on the page"], []),
        "c": ("<html><body><p>Menu Home News</p></body></html>", [], ["Menu Home News"]),
    }  # fmt: skip
    evaldata = {}
    for name, (html, with_, without) in pages.items():
        (dataset / "html" / f"{name}.html.gz").write_bytes(gzip.compress(html.encode()))
        evaldata[f"https://x.example/{name}"] = {
            "file": f"{name}.html.gz", "with": with_, "without": without,
        }  # fmt: skip
    (dataset / "evaldata.json").write_text(json.dumps(evaldata), "utf-8")
    out = tmp_path / "out"
    from spidercrawl.evaluate.__main__ import main

    assert main([str(tmp_path), "--methods", "fulltext", "--jobs", "1", "--out", str(out)]) == 0
    row = json.loads((out / "summary.json").read_text())["snippet_datasets"]["snippets-dev"]
    # fulltext keeps everything: with-snippets 2 of 3 found, without-snippets 2 of 2 found.
    assert row["fulltext"]["pages"] == 3
    assert row["fulltext"]["recall"] == pytest.approx(2 / 3, abs=1e-3)
    assert row["fulltext"]["precision"] == pytest.approx(2 / 4, abs=1e-3)
    assert row["fulltext"]["accuracy"] == pytest.approx(2 / 5, abs=1e-3)
    assert "snippets-dev (snippets" in (out / "report.md").read_text()
