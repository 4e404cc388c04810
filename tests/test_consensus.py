"""Sites never seen: the medoid of our blocks' article and the peers' (real trafilatura and
readability-lxml on real HTML, the shipped cross-site model), and the evaluation's
leave-one-dataset-out choice of its constant."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from spidercrawl.document.captured import Page
from spidercrawl.evaluate.runner import PageRecord
from spidercrawl.evaluate.site_methods import (
    UNSEEN_BONUS_GRID,
    choose_unseen_bonus,
    unseen_grid,
    unseen_variant,
)
from spidercrawl.extract.chain import ExtractionChain
from spidercrawl.extract.cold_start import cold_start_extraction
from spidercrawl.extract.decision import SETTINGS, UNFAMILIAR, PageFacts, decide, medoid
from spidercrawl.extract.readers import (
    BLOCKS,
    CLASSIFIER,
    CONTAINER,
    DENSITY,
    PEER_MAX_CHARS,
    SITE_BLOCKS,
    SITE_DENSITY,
    NoReadingError,
    PageReadings,
    PeerExtraction,
    Peers,
    resiliparse_reader,
)
from spidercrawl.extract.unseen import UnseenExtractor
from spidercrawl.text import tokenize
from tests.test_fallbacks import NAV, PageBuilder, sentence

STORY = [("div", "main", ()), ("div", "", ("story",))]
UNSEEN = UnseenExtractor.load()
PEERS = Peers()
OWN = "blocks"
TEXT = {"font-size": "16px"}


def test_the_medoid_is_the_candidate_the_others_agree_with() -> None:
    story = "the harbour wall will be rebuilt in spring says the council " * 5
    candidates = {
        OWN: "subscribe now to our newsletter and win a prize " * 5,  # went wrong
        "trafilatura": story + "share this",
        "readability": "by ana silva " + story,
    }
    chosen, agreement = medoid(words(candidates), {OWN: 0.1})
    assert chosen in ("trafilatura", "readability") and 0.4 < agreement < 0.6  # 1 and 0
    # A small bonus decides between near-equals, not against two that agree.
    tie = {OWN: story, "trafilatura": story, "readability": story}
    assert medoid(words(tie), {OWN: 0.1})[0] == OWN
    empty = {OWN: "", "trafilatura": story, "readability": story}
    assert medoid(words(empty), {})[0] != OWN


def words(texts: dict[str, str]) -> dict[str, list[str]]:
    return {name: tokenize(text) for name, text in texts.items()}


def story_page(seed: int) -> tuple[dict, list[str]]:
    rng = random.Random(seed)
    page = PageBuilder()
    page.add(NAV, "a", "Home News Sport Weather", TEXT, link=True)
    paragraphs = [sentence(rng, 40) for _ in range(6)]
    for paragraph in paragraphs:
        page.add(STORY, "p", paragraph, TEXT)
    page.add([("div", "footer", ())], "p", "Copyright the Harbour Times.", TEXT)
    item = page.page(seed, "A story", "")
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    item["raw_html"] = (
        "<html><head><title>A story</title></head><body><nav><a href='/'>Home</a> "
        f"<a href='/n'>News</a></nav><article><h1>A story</h1>{body}</article>"
        "<footer>Copyright the Harbour Times.</footer></body></html>"
    )
    return item, paragraphs


def test_the_readability_peer_gives_readabilitys_text_and_leaves_its_cleaner_alone() -> None:
    import lxml.html
    import readability.readability as readability_module
    from readability import Document

    from spidercrawl.extract.readers import PEER_FACTORIES

    item, paragraphs = story_page(3)
    raw = (
        item["raw_html"]
        .replace("<a href='/n'>", "<a href='javascript:open()' onclick='go()'>")
        .replace("<article>", "<article onmouseover='x()'>")
    )
    shipped, shipped_clean = readability_module.html_cleaner, readability_module.clean
    text = PEER_FACTORIES["readability"]()(raw)
    assert readability_module.html_cleaner is shipped and shipped.javascript
    assert readability_module.clean is shipped_clean
    own = lxml.html.fromstring(Document(raw).summary(html_partial=True)).text_content()
    assert "".join(text.split()) == "".join(own.split())  # ours puts paragraphs on lines
    assert all(paragraph in text for paragraph in paragraphs)


def test_the_readability_peers_clean_gives_readabilitys_own_text() -> None:
    """The whitespace clean-up our readability reader swaps in changes no text: each of
    readability's steps where it matches, where it does not, and together."""
    from readability.readability import clean

    from spidercrawl.extract.readers import readability_clean

    texts = [
        "", "plain words", "  padded\t", "two  spaces", "a\ttab", " \n line \r\n break \n",
        "\u00a0\u2003no-break\u00a0 ", "x" + " " * 300 + "y", "\n" * 260 + "z",
        "a\u00a0" * 200 + "\u00a0" * 256 + "b", "tab \t\t and  \n\n spaces\x0b\x0c",
    ]  # fmt: skip
    for text in texts:
        assert readability_clean(text) == clean(text), repr(text)


def test_the_in_place_cleaner_cleans_as_lxmls_cleaner_cleans_a_copy() -> None:
    """The cleaner our readability reader swaps in leaves the tree it cleans as lxml's
    ``clean_html`` leaves its copy, and gives markup to lxml's own."""
    import lxml.html
    from readability.cleaners import html_cleaner

    from spidercrawl.extract.readers import InPlaceCleaner

    raw = (
        "<html><head><style>p{}</style><script>x()</script></head><body><!-- note -->"
        "<p onclick='go()'>Kept <a href='javascript:open()'>text</a></p>"
        "<?pi here?><link rel='stylesheet' href='a.css'><p>More</p></body></html>"
    )
    tree = lxml.html.document_fromstring(raw)
    expected = lxml.html.tostring(html_cleaner.clean_html(tree))
    assert lxml.html.tostring(tree) != expected  # lxml cleaned a copy
    cleaned = InPlaceCleaner(html_cleaner).clean_html(tree)
    assert cleaned is tree and lxml.html.tostring(tree) == expected
    assert InPlaceCleaner(html_cleaner).clean_html(raw) == html_cleaner.clean_html(raw)


def test_the_readability_peer_puts_cells_and_nested_items_on_lines_of_their_own() -> None:
    """Table cells and a list inside a list item are not glued to their neighbours' words,
    and a control character in a paragraph (text lxml reads but will not write) costs the
    article nothing."""
    from spidercrawl.extract.readers import PEER_FACTORIES
    from tests.test_markdown import ARTICLE_PAGE

    raw = ARTICLE_PAGE.replace("the mayor said.", "the mayor \x02said.")
    lines = [line.strip() for line in PEER_FACTORIES["readability"]()(raw).splitlines()]
    assert {"Phase", "First", "A new pier for the ferries", "with a waiting room"} <= set(lines)
    assert any(line.startswith('"This is the biggest change') for line in lines)


def test_trafilaturas_list_items_and_table_rows_are_the_pages_lists_and_tables() -> None:
    """trafilatura writes a list item as ``- text`` and a table row as ``| a | b |`` with a
    ``|---|`` rule under the first: the delivered article's clean HTML and Markdown have
    the page's list and table (they had paragraphs of dashes and pipes), and no text of
    it is a rule."""
    from spidercrawl import extract_html

    story = "".join(f"<p>{sentence(random.Random(n), 40)}</p>" for n in range(3))
    page = (
        "<html><head><meta name='viewport' content='width=device-width'></head><body>"
        f"<article><h1>Ferry fares</h1>{story}<ul><li>Fares rise in May</li>"
        "<li>Season tickets <a href='/t'>stay</a> as they are</li></ul>"
        "<table><tr><th>Route</th><th>Fare</th></tr><tr><td>Harbour to isle</td>"
        f"<td>4 EUR</td></tr></table>{story}</article></body></html>"
    )
    item = extract_html(page.encode(), url="https://example.org/fares")
    assert item["method_note"].endswith("trafilatura's reading"), item["method_note"]
    html = " ".join(item["html"].split())
    assert "<ul> <li>Fares rise in May</li> <li>Season tickets stay as they are</li> </ul>" in html
    assert (
        "<tr><th>Route</th><th>Fare</th></tr> <tr><td>Harbour to isle</td><td>4 EUR</td></tr>"
        in html
    )
    assert "- Fares rise in May" in item["markdown"] and "\\- " not in item["markdown"]
    assert "| Harbour to isle | 4 EUR |" in item["markdown"]
    assert "---" not in item["text"] and "|-" not in item["html"]


def test_a_rows_cells_are_those_of_the_row_that_holds_them_all_found_in_bounded_time() -> None:
    """A name that stands in two tables takes the cells of the row that holds all of the
    line's cells; a table of one word in every cell is matched row by row in bounded time
    (each line looks from the row the line before took)."""
    from spidercrawl.document.structure import lines_html

    first = "<table><tr><td>Harbour</td><td>4 EUR</td></tr></table>"
    second = (
        "<table><tr><th>Route</th><th>Fare</th></tr><tr><td>Harbour</td><td>5 EUR</td></tr></table>"
    )
    page = f"<html><body>{first}<p>Fares</p>{second}</body></html>"
    html = lines_html(["| Route | Fare |", "| Harbour | 5 EUR |"], page)
    assert html.count("<table>") == 1 and "4 EUR" not in html
    assert "<tr><th>Route</th><th>Fare</th></tr>" in html
    assert "<tr><td>Harbour</td><td>5 EUR</td></tr>" in html
    rows = 20_000
    page = (
        "<html><body><table>"
        + "<tr><td>Yes</td><td>Yes</td></tr>" * rows
        + "</table></body></html>"
    )
    started = time.perf_counter()
    html = lines_html(["| Yes | Yes |"] * rows, page)
    assert html.count("<tr>") == rows and "<p>" not in html
    assert time.perf_counter() - started < 30


def test_a_list_item_of_a_heading_and_a_paragraph_on_one_line_is_one_item() -> None:
    """trafilatura writes an item holding a heading and a paragraph on one line: it is one
    item of the page's list; among thousands of items that begin alike, in bounded time."""
    from spidercrawl.document.structure import lines_html

    items = "".join(
        f"<li><h3>Plan {n}</h3><p>Fares for route {n} stay as they are.</p></li>" for n in range(3)
    )
    page = f"<html><body><p>Fares</p><ul>{items}</ul></body></html>"
    lines = ["Fares", *(f"- Plan {n} Fares for route {n} stay as they are." for n in range(3))]
    html = " ".join(lines_html(lines, page).split())
    assert html == (
        "<p>Fares</p> <ul> <li>Plan 0 Fares for route 0 stay as they are.</li> "
        "<li>Plan 1 Fares for route 1 stay as they are.</li> "
        "<li>Plan 2 Fares for route 2 stay as they are.</li> </ul>"
    )
    alike = "".join(f"<li><h3>Plan</h3><p>Route {n}</p></li>" for n in range(5000))
    started = time.perf_counter()
    html = lines_html(["- Plan Route 4999"] * 5000, f"<html><body><ul>{alike}</ul></body></html>")
    assert html.count("<p>") == 5000  # past the places looked at: a paragraph each
    assert time.perf_counter() - started < 30


def chain(**settings: object) -> ExtractionChain:
    """The crawl's chain for sites never seen, the peers real, ``settings`` changed."""
    return ExtractionChain(UNSEEN, PEERS, settings=replace(SETTINGS, **settings))


def test_the_crawl_extracts_a_site_never_seen_by_consensus() -> None:
    assert set(PEERS.names()) == {"trafilatura", "readability", "trafilatura-recall", "resiliparse"}
    page, paragraphs = story_page(3)
    page["texts"] = page["texts"][:1] + page["texts"][-1:]  # our blocks went wrong
    result = chain(density_agreement=None).extract(page, None)
    assert result.method == "unseen" and result.note.startswith("consensus of 3 extractors")
    assert all(paragraph in result.extraction.text for paragraph in paragraphs)
    assert "Copyright" not in result.extraction.text and 0.4 < result.extraction.confidence <= 1


def test_without_raw_html_our_blocks_decide_alone() -> None:
    page, paragraphs = story_page(4)
    del page["raw_html"]
    result = chain().extract(page, None)
    assert result.note == "" and paragraphs[0] in result.extraction.text


def test_each_dataset_gets_the_constant_chosen_on_the_others() -> None:
    records = []
    best = {"a": 0.0, "b": 0.3, "c": 0.3}  # the bonus each dataset likes best
    for dataset, liked in best.items():
        for bonus in UNSEEN_BONUS_GRID:
            record = PageRecord(dataset, "site", "000", unseen_variant(bonus))
            record.f1 = 1.0 - abs(bonus - liked)
            records.append(record)
    kept, choice = choose_unseen_bonus(records)
    # "a" is scored with what "b" and "c" like, never with its own favourite.
    assert choice["a"] == {
        "own_bonus": 0.3, "density_agreement": None, "modern_lead": None, "chosen_on": ["b", "c"]
    }  # fmt: skip
    assert choice["b"]["own_bonus"] in (0.0, 0.05, 0.1, 0.2, 0.3)
    assert [r.method for r in kept] == ["unseen"] * 3
    assert {r.dataset: r.f1 for r in kept}["a"] == 0.7


def test_of_settings_as_good_on_the_other_datasets_the_fastest_is_chosen() -> None:
    """One standard error: pages scoring 0.9 and 1.0 give a mean's error of 0.05/sqrt(n)."""
    records = []
    # On "b" and "c", skipping the peers where text density agrees costs 0.005 F1 (under
    # one standard error, 0.05 / sqrt(20) / sqrt(2) = 0.008) and halves the time; on "a" it
    # would cost 0.1, but "a" does not choose for itself.
    for dataset, cost in (("a", 0.1), ("b", 0.005), ("c", 0.005)):
        for agreement, seconds in ((None, 0.04), (0.9, 0.02)):
            for page in range(20):
                record = PageRecord(dataset, "site", f"{page:03}", unseen_variant(0.1, agreement))
                record.f1 = (0.9 if page % 2 else 1.0) - (cost if agreement else 0.0)
                record.seconds = seconds
                records.append(record)
    kept, choice = choose_unseen_bonus(records)
    assert choice["a"]["density_agreement"] == 0.9 and choice["a"]["own_bonus"] == 0.1
    assert round(sum(r.f1 for r in kept if r.dataset == "a") / 20, 3) == 0.85  # as it is
    # Costing 0.1 on "a", it is beyond one standard error for "b" (chosen on "a" and "c").
    assert choice["b"]["density_agreement"] is None


def test_every_bonus_of_the_grid_is_reported_with_its_speed() -> None:
    records = []
    for bonus, seconds in ((0.0, 0.05), (0.1, 0.02)):
        for f1 in (0.9, 0.7):
            record = PageRecord("a", "site", "000", unseen_variant(bonus))
            record.f1, record.seconds = f1, seconds
            records.append(record)
    grid = unseen_grid(records)
    assert grid == {
        "0": {"a": {"f1": 0.8, "pages_per_s": 20.0}},
        "0.1": {"a": {"f1": 0.8, "pages_per_s": 50.0}},
    }


def counting_calls(peers: Peers) -> dict[str, int]:
    """Count each peer's runs (the real peers still run)."""
    calls = {name: 0 for name in ("trafilatura", "readability")}

    def counted(name: str, extract: Callable[[str], str]) -> Callable[[str], str]:
        def run(html: str) -> str:
            calls[name] += 1
            return extract(html)

        return run

    peers.extractors = {
        name: counted(name, run) if name in calls else run for name, run in peers.extractors.items()
    }
    return calls


def learned_decision(
    page: dict, own: dict[str, object], peers: Peers = PEERS, sure: bool = False
) -> tuple[object, object]:
    """The decision on a learned site's rendered page whose site readers give ``own``
    (reader name -> its article), the peers real: the decision and the readings."""
    raw = page["raw_html"]
    readers = {name: (lambda found=found: found) for name, found in own.items()}
    readers[CLASSIFIER] = readers.get(CLASSIFIER, lambda: PeerExtraction.of_text("", 0, "m"))
    readers[DENSITY] = lambda: cold_start_extraction(page)
    for name in peers.names():
        readers[name] = lambda name=name: peers.read(name, raw)
    readings = PageReadings(readers)
    facts = PageFacts(
        plain=False, peers_read=True, familiarity=lambda: 1.0, enough_chars=lambda: 20,
        sure=lambda extraction: sure,
    )  # fmt: skip
    return decide(readings, facts), readings


def test_a_site_models_article_stands_unless_both_peers_contradict_it() -> None:
    page, paragraphs = story_page(5)
    right = PeerExtraction.of_text("\n".join(["A story", *paragraphs]), 0.8, "model")
    kept, readings = learned_decision(page, {CLASSIFIER: right})
    assert kept.source == CLASSIFIER and kept.why == "" and kept.method == "learned"
    wrong = PeerExtraction.of_text("Home News Sport\nCopyright the Harbour Times.", 0.8, "m")
    taken, readings = learned_decision(page, {CLASSIFIER: wrong})
    assert taken.method == "learned+consensus" and paragraphs[2] in readings[taken.source].text
    assert taken.why.startswith("consensus of 3 extractors")


def test_the_slower_peer_runs_only_where_the_quicker_one_disagrees() -> None:
    peers = Peers()
    calls = counting_calls(peers)
    page, paragraphs = story_page(5)
    right = PeerExtraction.of_text("\n".join(["A story", *paragraphs]), 0.8, "model")
    kept, _ = learned_decision(page, {CLASSIFIER: right}, peers)
    assert kept.source == CLASSIFIER and kept.why == ""
    assert calls == {"trafilatura": 0, "readability": 1}
    wrong = PeerExtraction.of_text("Home News Sport\nCopyright the Harbour Times.", 0.8, "m")
    taken, _ = learned_decision(page, {CLASSIFIER: wrong}, peers)
    assert taken.source != CLASSIFIER
    assert calls == {"trafilatura": 1, "readability": 2}


def test_a_site_never_seen_skips_the_slower_peer_where_the_quicker_one_agrees() -> None:
    peers = Peers()
    calls = counting_calls(peers)
    voting = ExtractionChain(UNSEEN, peers, settings=replace(SETTINGS, density_agreement=None))
    page, paragraphs = story_page(6)
    result = voting.extract(page, None)
    assert all(paragraph in result.extraction.text for paragraph in paragraphs)
    assert result.note.startswith("consensus: the blocks' text, readability agreeing")
    assert calls == {"trafilatura": 0, "readability": 1} and result.extraction.confidence > 0.9
    # Where our blocks went wrong, both peers run and outvote them.
    page["texts"] = page["texts"][:1] + page["texts"][-1:]  # the menu and the footer
    result = voting.extract(page, None)
    assert calls == {"trafilatura": 1, "readability": 2}
    assert result.note.startswith("consensus of 3 extractors")
    assert paragraphs[2] in result.extraction.text


def test_no_peer_runs_where_text_density_agrees_with_our_blocks() -> None:
    peers = Peers()
    calls = counting_calls(peers)
    gated = ExtractionChain(UNSEEN, peers)
    assert gated.settings.density_agreement is not None
    page, paragraphs = story_page(7)
    result = gated.extract(page, None)
    assert all(paragraph in result.extraction.text for paragraph in paragraphs)
    assert result.note.startswith("consensus: the blocks' text, text density agreeing")
    assert calls == {"trafilatura": 0, "readability": 0}
    # Blocks gone wrong disagree with text density on the same render: the peers vote.
    page["texts"] = page["texts"][:1] + page["texts"][-1:]  # the menu and the footer
    result = gated.extract(page, None)
    assert calls["readability"] == 1 and paragraphs[2] in result.extraction.text


def test_text_densitys_last_resort_is_confirmed_and_the_containers_is_not() -> None:
    """Where a site model fell back to text density (it and the cross-site extractor found
    nothing), the peers may overrule it as they may the model's own article; the
    container's fallback article stands as it is."""
    page, paragraphs = story_page(5)
    wrong = PeerExtraction.of_text("Home News Sport\nCopyright the Harbour Times.", 0.5, "d")
    confirmed, readings = learned_decision(page, {SITE_DENSITY: wrong})
    assert confirmed.method == "learned+consensus"
    assert paragraphs[2] in readings[confirmed.source].text
    assert confirmed.why.startswith("consensus of 3 extractors")
    kept, _ = learned_decision(page, {CONTAINER: wrong, SITE_DENSITY: wrong})
    assert kept.source == CONTAINER and kept.method == "learned+container"
    assert "consensus" not in kept.why


def test_a_page_of_no_known_layout_gets_a_never_seen_pages_vote() -> None:
    """A learned site's page of no known layout (``learned+unseen``: our blocks less the
    site's template) is voted on as a never-seen site's page is, the peers consulted even
    where text density agrees with it; it keeps its method and reason, by which the crawl
    collects pages of no known layout into a new layout."""
    peers = Peers()
    calls = counting_calls(peers)
    page, paragraphs = story_page(5)
    wrong = PeerExtraction.of_text("Home News Sport\nCopyright the Harbour Times.", 0.5, "u")
    raw = page["raw_html"]
    readers = {
        SITE_BLOCKS: lambda: wrong, CLASSIFIER: lambda: wrong,
        DENSITY: lambda: cold_start_extraction(page),
        **{name: (lambda name=name: peers.read(name, raw)) for name in peers.names()},
    }  # fmt: skip
    facts = PageFacts(plain=False, peers_read=True, familiarity=lambda: 0.05)
    readings = PageReadings(readers)
    voted = decide(readings, facts)
    assert voted.method == "learned+unseen" and voted.of_no_layout
    assert f"only 5% of the page's text {UNFAMILIAR}" in voted.why
    assert paragraphs[2] in readings[voted.source].text and voted.why.startswith("consensus of 3")
    assert calls == {"trafilatura": 1, "readability": 1}
    right = PeerExtraction.of_text("\n".join(["A story", *paragraphs]), 0.5, "u")
    readings = PageReadings({**readers, SITE_BLOCKS: lambda: right})
    kept = decide(readings, facts)
    assert kept.source == SITE_BLOCKS and kept.method == "learned+unseen"
    # Text density's agreement does not spare the peers there: the quicker one checks.
    assert "readability agreeing" in kept.why and calls["readability"] == 2


def test_an_article_the_site_model_is_sure_of_is_not_checked() -> None:
    """The peers check a site model's article only where the model is unsure of it: sure,
    no peer runs and the article stands even against both; unsure, they overrule it."""
    peers = Peers()
    calls = counting_calls(peers)
    page, paragraphs = story_page(5)
    short = PeerExtraction.of_text(paragraphs[0], 0.9, "model")
    kept, _ = learned_decision(page, {CLASSIFIER: short}, peers, sure=True)
    assert kept.source == CLASSIFIER and kept.method == "learned" and kept.why == ""
    assert calls == {"trafilatura": 0, "readability": 0}
    checked, readings = learned_decision(page, {CLASSIFIER: short}, peers)
    assert checked.method == "learned+consensus"
    assert paragraphs[3] in readings[checked.source].text
    assert calls == {"trafilatura": 1, "readability": 1}


def test_a_sure_article_our_blocks_do_not_bear_out_is_checked() -> None:
    """A layout learned from a site's first pages can be sure of the wrong part of a page
    (a blog's sidebar): where our cross-site blocks share under half of its words, the
    peers check it as they check an unsure article; where the blocks bear it out, no peer
    runs."""
    peers = Peers()
    calls = counting_calls(peers)
    page, paragraphs = story_page(5)
    story = PeerExtraction.of_text("\n".join(paragraphs), 0.9, "blocks")
    sidebar = PeerExtraction.of_text(
        "Recent posts\nArchives\nAbout the author, who writes on harbours and ferries.",
        0.9, "model",
    )  # fmt: skip
    own = {CLASSIFIER: sidebar, BLOCKS: story}
    checked, readings = learned_decision(page, own, peers, sure=True)
    assert checked.method == "learned+consensus", checked
    assert paragraphs[3] in readings[checked.source].text
    assert calls == {"trafilatura": 1, "readability": 1}
    same = PeerExtraction.of_text("\n".join(["A story", *paragraphs]), 0.9, "model")
    kept, _ = learned_decision(page, {CLASSIFIER: same, BLOCKS: story}, peers, sure=True)
    assert kept.source == CLASSIFIER and kept.method == "learned"
    assert calls == {"trafilatura": 1, "readability": 1}


def test_sure_means_paragraphs_beyond_the_margin_and_a_model_of_three_pages() -> None:
    from spidercrawl.document.blocks import Block, Extraction
    from spidercrawl.extract.article import is_sure

    def block(text: str) -> Block:
        return Block(0, 0, text, 0, 0, 100, 20, "p", ("p",), ("p",), (), {}, 0, 0, 1, 1000, 1000)

    paragraph, caption = sentence(random.Random(1), 40), "A caption"
    assert len(paragraph) >= 150 > len(caption)
    blocks = [block(paragraph), block(caption), block(paragraph)]
    sure = Extraction.of_blocks(blocks, [1.2, -3, 1.0])
    assert sure.paragraph_margin == pytest.approx(1.1)  # the caption's margin does not count
    assert Extraction.of_blocks([block(caption)], [2.0]).paragraph_margin == 0.0

    class Model:
        def __init__(self, pages: int) -> None:
            self.training_ = {"pages": pages}

    assert is_sure(Model(3), sure) and not is_sure(Model(2), sure)
    unsure = Extraction.of_blocks([block(paragraph), block(paragraph)], [1.2, 0.4])
    assert not is_sure(Model(10), unsure)


def test_a_page_over_the_peers_size_limit_is_not_given_to_them(caplog) -> None:
    caplog.set_level("INFO")
    page = Page({"url": "http://x.example/huge", "texts": [{}],
                 "raw_html": "<p>word </p>" * (PEER_MAX_CHARS // 10)})  # fmt: skip
    assert chain()._peer_input(page) == ("", "raw HTML over the peers' size")
    assert "more than the peers read" in caplog.text
    short = Page({"texts": [{}], "raw_html": "<p>a short page</p>"})
    assert chain()._peer_input(short) == ("<p>a short page</p>", "")


def test_a_page_over_the_peers_size_in_its_inline_scripts_is_read_by_them() -> None:
    """A page of today carrying its application's state inline (megabytes of script) is
    read by the peers without that script's content: the article is trafilatura's, not
    text density's reading of the whole page alone."""
    from spidercrawl.extract.api import extract_html

    story = "".join(f"<p>{sentence(random.Random(n), 30)}</p>" for n in range(6))
    state = '{"products": [' + ", ".join(['{"sku": "A1", "size": 9}'] * 200_000) + "]}"
    html = (
        '<html><head><meta name="viewport" content="width=device-width">'
        f"<script>window.__STATE__ = {state};</script></head><body>"
        '<nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>'
        f"<article><h1>Harbour plans</h1>{story}</article></body></html>"
    )
    assert len(html) > PEER_MAX_CHARS
    item = extract_html(html)
    assert "trafilatura's reading" in item["method_note"], item["method_note"]
    assert sentence(random.Random(5), 30) in item["text"] and "sku" not in item["text"]


def test_past_the_pages_time_budget_our_article_stands_and_says_so() -> None:
    voting = replace(SETTINGS, density_agreement=None)  # the peers would vote
    page, paragraphs = story_page(4)
    within = ExtractionChain(UNSEEN, PEERS, time_budget=60, settings=voting).extract(page, None)
    spent = ExtractionChain(UNSEEN, PEERS, time_budget=0, settings=voting).extract(page, None)
    assert "time budget" not in within.note
    assert spent.method == "unseen" and paragraphs[0] in spent.extraction.text
    assert "time budget was spent (0 s): the peers not asked" in spent.note


def test_an_older_page_with_a_viewport_keeps_our_blocks_by_its_date() -> None:
    """An older page that carries a viewport: trafilatura's reading strays (a teaser list
    here), our blocks and readability agree on the story. Dated 2012, it is read as older
    markup and our blocks stand; undated, it is read as today's: trafilatura's reading,
    unless readability and resiliparse agree against it (as here). With trafilatura's
    lead as a setting, the medoid keeps our blocks either way."""
    page, paragraphs = story_page(8)
    page["raw_html"] = page["raw_html"].replace(
        "<head>", '<head><meta name="viewport" content="width=device-width">'
    )
    peers = Peers()
    teasers = " ".join(f"More stories from the harbour, number {n}." for n in range(6))
    peers.extractors = {**peers.extractors, "trafilatura": lambda html: teasers}
    undated = ExtractionChain(UNSEEN, peers).extract(page, None)
    assert "today's markup (viewport): readability's and resiliparse's" in undated.note
    assert all(paragraph in undated.extraction.text for paragraph in paragraphs)
    unwitnessed = replace(SETTINGS, witness_agreement=None)
    alone = ExtractionChain(UNSEEN, peers, settings=unwitnessed).extract(page, None)
    assert "trafilatura's reading" in alone.note and alone.extraction.text == teasers
    dated = ExtractionChain(UNSEEN, peers).extract(
        {**page, "og": {"article:published_time": "2012-05-01T10:00:00"}}, None
    )
    assert dated.method == "unseen" and "trafilatura" not in dated.note, dated.note
    assert all(paragraph in dated.extraction.text for paragraph in paragraphs)
    lead = replace(SETTINGS, modern_rendered_lead=0.4)
    with_lead = ExtractionChain(UNSEEN, peers, settings=lead).extract(page, None)
    assert with_lead.note.startswith("consensus on today's markup (viewport): blocks's text")
    assert all(paragraph in with_lead.extraction.text for paragraph in paragraphs)


def test_each_decision_is_charged_the_readings_it_stands_on_though_made_before() -> None:
    """The evaluation's grid runs many settings on one page's readings: a setting that
    only reads an agreement another setting measured still costs both readings and the
    measure, as a crawl that decides once would pay them."""
    slow = "the harbour wall will be rebuilt in spring says the council " * 200

    def read() -> PeerExtraction:
        deadline = time.thread_time() + 0.02
        while time.thread_time() < deadline:
            pass
        return PeerExtraction.of_text(slow, 0.0, "a")

    readings = PageReadings({"a": read, "b": read})
    first = readings.agreement("a", "b")
    assert readings.cost() >= 0.04
    readings.start_decision()
    assert readings.cost() == 0.0
    assert readings.agreement("b", "a") == first
    assert readings.cost() >= 0.04 and readings.asked == {"a", "b"}
    readings.start_decision()
    assert readings.words("a") and readings.cost() >= 0.02 and readings.asked == {"a"}


def raw_decision(
    shown: str,
    description: str,
    texts: dict[str, str],
    plain: bool = True,
    head: str = "",
    published: str = "",
) -> tuple[object, dict[str, int]]:
    """The decision on a page of older markup that shows ``shown`` and describes itself
    as ``description``, its readers giving ``texts`` (``plain`` False: a rendered page):
    the decision and how often each reader was asked."""
    asked = dict.fromkeys(texts, 0)

    def reader(name: str) -> Callable[[], PeerExtraction]:
        def read() -> PeerExtraction:
            asked[name] += 1
            return PeerExtraction.of_text(texts[name], 0.5, name)

        return read

    readings = PageReadings({name: reader(name) for name in texts})
    raw = f"<html><head><title>Quay</title>{head}</head><body>{shown}</body></html>"
    facts = PageFacts(
        plain=plain, raw_html=raw, peers_read=True, descriptions=(description,),
        published=lambda: published,
    )  # fmt: skip
    return decide(readings, facts), asked


def test_agreeing_readers_that_leave_out_the_description_shown_as_prose_give_way() -> None:
    """Text density and readability agree on a teaser list; the page shows its own
    description as the story's opening, which only trafilatura's reading holds: its
    reading is taken. A description the page does not show (a summary for the metadata)
    changes nothing, and where the agreeing reading holds it trafilatura is not asked."""
    rng = random.Random(7)
    story = [sentence(rng, 30) for _ in range(5)]
    teasers = "\n".join(sentence(rng, 25) for _ in range(4))
    texts = {DENSITY: teasers, "readability": teasers, "trafilatura": "\n".join(story)}
    shown = "".join(f"{line}<br><br>" for line in story) + teasers
    taken, _ = raw_decision(shown, story[0], texts)
    assert taken.source == "trafilatura" and taken.method == "raw-consensus"
    assert "leaves out the description the page shows as its prose" in taken.why
    unshown, _ = raw_decision(shown, sentence(rng, 20), texts)
    assert unshown.source == DENSITY and unshown.why.endswith("density's reading")
    held = {**texts, DENSITY: "\n".join(story), "readability": "\n".join(story)}
    kept, asked = raw_decision(shown, story[0], held)
    assert kept.source == DENSITY and asked["trafilatura"] == 0
    rendered, _ = raw_decision(shown, story[0], {**texts, OWN: teasers}, plain=False)
    assert rendered.source == "trafilatura" and rendered.method == "unseen"
    assert rendered.why.startswith("consensus: the blocks' text, text density agreeing")


def test_a_page_dated_before_todays_web_is_read_as_older_markup_whatever_its_markers() -> None:
    """A 2012 page with a viewport (a responsive blog of its day): where our blocks and text
    density agree on its story, their reading stands on the rendered page and text
    density's on the raw one; the same page dated 2024, or undated, is read as today's
    markup (trafilatura's reading), and so is a page of 2007 served with lazy images (a
    marker only today's tools write). The date is asked only of pages that carry a
    marker."""
    rng = random.Random(11)
    story = "\n".join(sentence(rng, 30) for _ in range(5))
    teaser = "\n".join(sentence(rng, 25) for _ in range(3))
    viewport = '<meta name="viewport" content="width=device-width">'
    texts = {DENSITY: story, "readability": story, "trafilatura": teaser}
    rendered = {**texts, OWN: story}
    for published in ("2012-03-04", "2012"):
        old, _ = raw_decision(story, "", texts, head=viewport, published=published)
        assert old.source == DENSITY and "older markup (published 2012" in old.why, old.why
        old_rendered, _ = raw_decision(story, "", rendered, False, viewport, published)
        assert old_rendered.source == OWN, old_rendered.why
    for published in ("2024-05-06", ""):
        today, _ = raw_decision(story, "", texts, head=viewport, published=published)
        assert today.source == "trafilatura" and "today's markup" in today.why
    lazy = viewport + '<img loading="lazy" src="a.jpg">'  # made with today's tools
    served, _ = raw_decision(story, "", texts, head=lazy, published="2007-07-09")
    assert served.source == "trafilatura", served.why
    asked: list[str] = []
    facts = PageFacts(
        plain=True, raw_html="<p>no marker</p>", published=lambda: asked.append("x") or ""
    )
    assert not facts.markup.modern and not SETTINGS.reads_as_today(facts.markup)
    assert SETTINGS.describe(facts.markup) == "older markup" and not asked


def test_an_article_is_delivered_without_soft_hyphens_and_zero_width_spaces() -> None:
    """A page that breaks its words with ``&shy;`` and zero-width spaces, read by our own
    readers (older markup): its article, title and HTML hold the words whole, as a corpus
    wants them."""
    from spidercrawl.extract.api import extract_html

    item, paragraphs = story_page(6)
    broken = item["raw_html"].replace("A story<", "A be&shy;loved story<")
    first = paragraphs[0].split()
    rest = " ".join(first[2:])
    broken = broken.replace(paragraphs[0], f"{first[0]}&shy;{first[1]} &#8203;{rest}")
    article = extract_html(broken, "https://harbourtimes.example/b")
    assert "older markup" in article["method_note"] or "consensus" in article["method_note"]
    assert f"{first[0]}{first[1]} {rest}" in article["text"], article["text"]
    for field in ("text", "html", "markdown", "title"):
        assert "\u00ad" not in article[field] and "\u200b" not in article[field], field
    assert article["title"] == "A beloved story"


def test_extract_html_reads_a_page_of_2012_with_a_viewport_as_older_markup() -> None:
    """The date reaches the decision on every way in that reads raw HTML (``extract_html``,
    and through it the extract command and the datatrove step): a page of 2012 whose only
    marker is a viewport is read as older markup, the same page dated 2024 as today's."""
    from spidercrawl.extract.api import extract_html

    item, paragraphs = story_page(5)

    def page(published: str) -> str:
        head = (
            '<head><meta name="viewport" content="width=device-width">'
            f'<meta property="article:published_time" content="{published}">'
        )
        return item["raw_html"].replace("<head>", head)

    older = extract_html(page("2012-05-01T10:00:00"), "https://harbourtimes.example/a")
    assert "older markup (published 2012; its only marker a viewport)" in older["method_note"]
    assert older["published"].startswith("2012") and paragraphs[0] in older["text"]
    today = extract_html(page("2024-05-01T10:00:00"), "https://harbourtimes.example/a")
    assert "today's markup (viewport)" in today["method_note"], today["method_note"]


def test_readability_and_resiliparse_agreeing_outvote_trafilatura_on_todays_markup() -> None:
    """A page of today's markup whose trafilatura reading holds two of the story's five
    paragraphs and a box of teasers, where readability's and resiliparse's hold the story:
    two readers against one, readability's reading is delivered, raw or rendered. Where
    resiliparse agrees with trafilatura, trafilatura's reading stands and readability is
    not asked, nor resiliparse where text density agrees with it; where readability and
    resiliparse disagree, or agree on a fragment of trafilatura's (the story, where
    trafilatura's holds the comments too), it stands."""
    rng = random.Random(13)
    paragraphs = [sentence(rng, 30) for _ in range(5)]
    story = "\n".join(paragraphs)
    teasers = "\n".join(sentence(rng, 25) for _ in range(3))
    viewport = '<meta name="viewport" content="width=device-width">'
    texts = {
        DENSITY: story, "readability": story, "resiliparse": story,
        "trafilatura": "\n".join([*paragraphs[:2], teasers]),
    }  # fmt: skip
    outvoted, _ = raw_decision(story, "", texts, head=viewport)
    assert outvoted.source == "readability" and outvoted.method == "raw-consensus"
    assert "readability's and resiliparse's readings agree (1.00)" in outvoted.why
    rendered, _ = raw_decision(story, "", {**texts, OWN: story}, plain=False, head=viewport)
    assert rendered.source == "readability" and rendered.method == "unseen", rendered.why
    witnessed, asked = raw_decision(story, "", {**texts, "resiliparse": texts["trafilatura"]},
                                    head=viewport)  # fmt: skip
    assert witnessed.source == "trafilatura" and asked["readability"] == 0
    borne, asked = raw_decision(story, "", {**texts, DENSITY: texts["trafilatura"]},
                                head=viewport)  # fmt: skip
    assert borne.source == "trafilatura" and asked["resiliparse"] == asked["readability"] == 0
    split, _ = raw_decision(story, "", {**texts, "resiliparse": teasers}, head=viewport)
    assert split.source == "trafilatura", split.why
    comments = "\n".join(sentence(rng, 20) for _ in range(12))
    fragment, _ = raw_decision(story, "", {**texts, "trafilatura": f"{story}\n{comments}"},
                               head=viewport)  # fmt: skip
    assert fragment.source == "trafilatura", fragment.why
    older, _ = raw_decision(story, "", texts)  # no marker: the older web's decision
    assert older.source == DENSITY


def test_resiliparse_reads_the_story_of_a_page_and_deep_markup_in_bounded_time() -> None:
    """The witness reads a real page's story; markup nested 20,000 deep (its reading's
    time grows with the square of the depth: 12 s of CPU unflattened) is flattened first,
    and a list of 50,000 options it declines. The bound is on this process's CPU time."""
    item, paragraphs = story_page(2)
    read = resiliparse_reader()
    text = read(item["raw_html"])
    assert all(paragraph in text for paragraph in paragraphs) and "Copyright" not in text
    deep = f"<html><body>{'<div>' * 20_000}<p>{paragraphs[0]}</p>{'</div>' * 20_000}</body></html>"
    started = time.process_time()
    assert paragraphs[0] in read(deep)
    assert time.process_time() - started < 2.0
    options = f"<html><body><p>{paragraphs[0]}</p><select>{'<option>x' * 50_000}</body></html>"
    started = time.process_time()
    with pytest.raises(NoReadingError, match="50000 options in its lists"):
        read(options)  # its tree builder takes 17 s of CPU there: declined, one voice less
    assert time.process_time() - started < 2.0
