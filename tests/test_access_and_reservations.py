"""Paywalls and opt-outs: a paywalled article says so and loses its prompt; a site's
reservations (robots meta noai, TDMRep header and tdmrep.json) are recorded, and the AI
and TDM ones skipped by default; a directive named for an agent counts only for one of
ROBOTS_AGENTS, which also obeys the AI crawlers' robots.txt groups. Real Chromium, a real
HTTP server on 127.0.0.1, real ``scrapy crawl`` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spidercrawl import settings
from spidercrawl.document.access import article_access, page_prompts, without_prompts
from spidercrawl.document.reservations import (
    TdmPolicy,
    page_reservations,
    respected_reservations,
    robots_directives,
)
from spidercrawl.serve import SnapshotRequestHandler, serving
from tests.conftest import run_crawl

SITE = "press.example"


def story(name: str) -> str:
    """Six paragraphs of a story of its own (near-duplicates are kept out of the feed)."""
    words = [f"{name}{n}" for n in range(12)]
    return "".join(
        f"<p>Paragraph {n} of the harbour story: the council voted on {words[n]} quay, and "
        f"residents who live near {words[n + 6]} said the plan would change the town.</p>"
        for n in range(6)
    )


PROMPT = "Subscribe to continue reading. Already a subscriber? Sign in"
METERED = "You have reached your free article limit. Subscribe to keep reading."


def jsonld(free: bool, part: bool = False) -> str:
    record = {"@context": "https://schema.org", "@type": "NewsArticle", "headline": "Story"}
    if part:
        record["hasPart"] = {
            "@type": "WebPageElement", "isAccessibleForFree": "False", "cssSelector": ".paywall"
        }  # fmt: skip
    else:
        record["isAccessibleForFree"] = free
    return f'<script type="application/ld+json">{json.dumps(record)}</script>'


PAGES = {
    "locked": (jsonld(False, part=True), f"<div class='paywall'><p>{PROMPT}</p></div>"),
    "declared-free": (jsonld(True), ""),
    "metered": ("", f"<aside class='meter'><p>{METERED}</p></aside>"),
    "plain": ("", ""),
    "noai": ('<meta name="robots" content="index, follow, noai, noimageai">', ""),
    "noindex": ('<meta name="robots" content="noindex">', ""),
    "googlebot": ("", ""),  # X-Robots-Tag: googlebot: noindex
    "gptbot": ('<meta name="GPTBot" content="noai">', ""),
    "tdm-header": ("", ""),
    "tdm-listed": ("", ""),
    "private": ("", ""),
    "robots-none": ('<meta name="robots" content="none">', ""),  # noindex, nofollow
    # A script empties the page in the browser: it is read from its kept raw HTML, and
    # the tdm-reservation header of its plain fetch still counts.
    "blanked-tdm": (
        "<script>addEventListener('DOMContentLoaded', () => "
        "{ document.body.innerHTML = '<p>Loading</p>'; });</script>",
        story("blanked") + story("emptied"),
    ),
}


class PressHandler(SnapshotRequestHandler):
    """The snapshot server; ``/pages/tdm-header.html`` and ``/pages/blanked-tdm.html``
    carry a tdm-reservation header,
    ``/pages/googlebot.html`` a noindex for Google's crawler alone."""

    def end_headers(self) -> None:
        if self.path in ("/pages/tdm-header.html", "/pages/blanked-tdm.html"):
            self.send_header("tdm-reservation", "1")
        if self.path == "/pages/googlebot.html":
            self.send_header("X-Robots-Tag", "googlebot: noindex")
        super().end_headers()


def build_site(root: Path) -> Path:
    site = root / SITE
    (site / "pages").mkdir(parents=True)
    for name, (head, tail) in PAGES.items():
        (site / "pages" / f"{name}.html").write_text(
            f"<html><head><title>The {name} story</title>{head}</head><body><article>"
            f"<h1>The {name} story</h1>{story(name)}{tail}</article></body></html>"
        )
    files = site / "files"
    (files / ".well-known").mkdir(parents=True)
    (files / ".well-known" / "tdmrep.json").write_text(
        json.dumps([{"location": "/pages/tdm-listed*", "tdm-reservation": 1}])
    )
    (files / "robots.txt").write_text(
        "User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /pages/private\n"
    )
    return site


def crawl(root: Path, name: str, *settings: str):
    extra = ["-a", "max_depth=0", "-s", f"MODELS_DIR={root / name / 'models'}"]
    for setting in settings:
        extra += ["-s", setting]
    with serving(root / SITE, handler_class=PressHandler) as server:
        result = run_crawl(SITE, server.base_url, root / name / "articles.jsonl", *extra,
                           pages=False)  # fmt: skip
    by_page = {item["url"].rsplit("/", 1)[-1].removesuffix(".html"): item for item in result.items}
    return result, by_page


def test_paywalls_and_reservations_are_recorded_and_skipped_on_request(tmp_path, chromium_path):
    build_site(tmp_path)
    result, items = crawl(tmp_path, "all", "RESPECT_RESERVATIONS=False")
    assert result.returncode == 0, result.log[-3000:]
    assert sorted(items) == sorted(PAGES), result.log[-3000:]
    assert items["locked"]["access"] == "paywalled"
    assert items["metered"]["access"] == "paywalled"
    assert items["declared-free"]["access"] == "free"
    assert "access" not in items["plain"]
    for item in items.values():
        assert "Subscribe to" not in item["text"] and "Subscribe to" not in item["markdown"]
        assert "Paragraph 5 of the harbour story" in item["text"]
    assert items["noai"]["reserved"] == ["noai", "noimageai"]
    assert items["tdm-header"]["reserved"] == ["tdm"]
    assert items["tdm-listed"]["reserved"] == ["tdm"]
    assert items["noindex"]["reserved"] == ["noindex"]
    assert items["robots-none"]["reserved"] == ["noindex"]
    assert items["blanked-tdm"]["reserved"] == ["tdm"]
    assert "Paragraph 5 of the harbour story" in items["blanked-tdm"]["text"]
    assert "the browser showed" in result.log  # read from the kept raw HTML
    # Directives for one agent (Google's in a header, GPTBot's in a meta tag): not for us.
    for name in ("plain", "googlebot", "gptbot"):
        assert "reserved" not in items[name], items[name].get("reserved")
    feed = json.loads(next((tmp_path / "all").glob("articles-feeds/*.json")).read_text())
    by_url = {entry["url"].rsplit("/", 1)[-1]: entry for entry in feed["items"]}
    assert by_url["locked.html"]["_spidercrawl"]["access"] == "paywalled"
    assert by_url["noai.html"]["_spidercrawl"]["reserved"] == ["noai", "noimageai"]

    # True: the AI and TDM reservations keep an article back, noindex does not; with
    # GPTBot among ROBOTS_AGENTS, its meta tag counts.
    result, items = crawl(
        tmp_path, "skipping", "SKIP_PAYWALLED=True", "ROBOTS_AGENTS=CCBot,GPTBot",
        "RESPECT_RESERVATIONS=True",
    )  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    delivered = ["declared-free", "googlebot", "noindex", "plain", "robots-none"]
    assert sorted(items) == delivered, result.log[-3000:]
    assert items["noindex"]["reserved"] == ["noindex"] and "reserved" not in items["googlebot"]
    assert "paywalled (not delivered: SKIP_PAYWALLED)" in result.log
    assert "robots.txt withholds" in result.log and "private.html from GPTBot" in result.log
    summary = next(line for line in result.log.splitlines() if f"{SITE}: " in line and
                   "articles:" in line)  # fmt: skip
    assert "2 paywalled (not delivered: SKIP_PAYWALLED)" in summary
    assert "5 reserved by the site (not delivered: RESPECT_RESERVATIONS)" in summary
    dropped = [line for line in result.log.splitlines() if "Dropped: " in line]
    assert "'markdown':" not in result.log  # a dropped item in one line, not the item
    assert any("noai (RESPECT_RESERVATIONS): " in line and "gptbot" in line for line in dropped), (
        dropped
    )


def test_the_readers_of_access_and_reservations() -> None:
    text, prompts = without_prompts(f"First paragraph.\n\n{METERED}\n\nLast paragraph.")
    assert text == "First paragraph.\n\nLast paragraph." and prompts == [METERED]
    long = "Subscribe to continue reading " + "the council's long argument " * 20
    assert without_prompts(long)[1] == []  # an article's own long paragraph stays
    assert article_access([{"isAccessibleForFree": None}], []) == ""
    assert article_access([{"isAccessibleForFree": True}], [PROMPT]) == "paywalled"
    # A newsletter's modal on a free blog is taken out of the text but is no paywall.
    modal = "Subscribe now to keep reading and get access to the full archive."
    assert without_prompts(modal)[1] == [modal] and article_access([], [modal]) == ""
    # Only the lines with a prompt's words are searched first: in any case, across spaces
    # and tags, with letters that lower case does not give (long s, capital dotted I).
    page = "<p>Free reading for members</p><div>ALREADY  A\tSUBSCRIBER?  LOG IN</div>"
    assert page_prompts([], page) == ["ALREADY A SUBSCRIBER? LOG IN"]
    assert page_prompts(["Become a member", "\u017fubscribers only"], "") == [
        "\u017fubscribers only"
    ]
    assert without_prompts("Story.\n\nFOR SUBSCR\u0130BERS ONLY")[1] == [
        "FOR SUBSCR\u0130BERS ONLY"
    ]
    assert page_prompts([], "<p>Free to read, unlimited, no subscription</p>") == []
    # A script's end is found where it is in a page whose letters lower case lengthens
    # (a Turkish capital dotted I is two characters lowered): the prompt after it whole.
    turkish = "<p>\u0130stanbul \u0130zmir</p>" * 20 + "<script>var a;</script>"
    assert page_prompts([], turkish + "<div>Subscribers only</div>") == ["Subscribers only"]
    # An agent named before directives owns them, up to the next agent.
    header = "googlebot: noindex, GPTBot: noai, nofollow"
    assert robots_directives(header) == set()
    assert robots_directives(header, ["gptbot"]) == {"noai"}
    assert robots_directives(header, ["Googlebot", "GPTBot"]) == {"noai", "noindex"}
    assert robots_directives("noai, unavailable_after: 25 Jun 2010 15:00:00 PST") == {"noai"}
    assert robots_directives("noindex", ["GPTBot"], agent="googlebot") == set()
    assert robots_directives("none") == {"noindex"}  # noindex, nofollow
    assert robots_directives("googlebot: none") == set()
    assert page_reservations({"tdm-reservation": "1"}, [], "", False) == ["tdm"]
    assert page_reservations({"robots": "index"}, ["noai"], "0", False) == ["noai"]
    meta = {"robots": "index", "robots:gptbot": "noai", "robots:googlebot": "noindex"}
    assert page_reservations(meta, [], "", False) == []
    assert page_reservations(meta, [], "", False, ["GPTBot"]) == ["noai"]
    # RESPECT_RESERVATIONS: none by default; True the AI and TDM ones, not noindex.
    assert respected_reservations(settings.RESPECT_RESERVATIONS) == frozenset()
    ai = respected_reservations(True)
    assert ai == respected_reservations("True") == {"noai", "noimageai", "tdm"}
    assert respected_reservations(False) == respected_reservations("False") == frozenset()
    assert respected_reservations("noindex, noai") == {"noindex", "noai"}
    with pytest.raises(ValueError, match="not 'noia'"):
        respected_reservations("noai,noia")
    policy = TdmPolicy.parse('[{"location": "/news/*", "tdm-reservation": 1}, {"x": 1}, 3]')
    assert policy.reserves("/news/a.html") and not policy.reserves("/sport/a.html")
    for malformed in ("{", '{"location": "/"}', "[" * 100_000, '[{"location": 5}]'):
        assert TdmPolicy.parse(malformed).rules == ()
