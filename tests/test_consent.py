"""Consent dialogs of the common CMPs (OneTrust in the raw HTML, Didomi and Sourcepoint
drawn by scripts over the page, a site's own cookie banner in the article's column) are in
no article, no learned template and no Markdown: on the rendered pages a site is learned
from, and on the fast path's raw HTML after; the same page with its dialogs unrecognised
puts the banner's text in the article. Real Chromium, a real HTTP server, real ``scrapy
crawl`` runs."""

from __future__ import annotations

from pathlib import Path

from spidercrawl.extract.api import extract_html
from spidercrawl.learn.model import SiteModel
from spidercrawl.serve import serving
from tests.conftest import run_crawl

SITE = "consent.example"
ONETRUST = (
    '<div id="onetrust-consent-sdk"><div class="onetrust-pc-dark-filter"></div>'
    '<div id="onetrust-banner-sdk" class="otFlat" role="region" aria-label="Cookie banner">'
    '<div class="ot-sdk-container"><div id="onetrust-policy"><p id="onetrust-policy-text">'
    "We value your privacy. We and our 842 partners store and access information on your "
    "device, such as cookies, and process personal data for personalised advertising and "
    "content, measurement and audience research.</p></div><button id='onetrust-accept-btn-"
    "handler'>Accept All Cookies</button></div></div></div>"
)
SCRIPTED = """<script>
document.addEventListener('DOMContentLoaded', () => {
  const didomi = document.createElement('div');
  didomi.id = 'didomi-host';
  didomi.innerHTML = '<div class="didomi-popup"><p>With your agreement, we and our partners '
    + 'use cookies or similar technologies to store, access and process personal data like '
    + 'your visit on this website.</p><button>Agree and close</button></div>';
  document.body.appendChild(didomi);
  const sp = document.createElement('div');
  sp.id = 'sp_message_container_1032214';
  sp.innerHTML = '<p>Sourcepoint asks: do you consent to the processing of your data for '
    + 'the purposes of measurement and personalised ads on this site?</p>';
  document.body.appendChild(sp);
  document.body.style.overflow = 'hidden';
});
</script>"""
OWN_BANNER = (
    '<div class="cookie-banner"><p>This site uses cookies to give you the best experience. '
    "By continuing to browse you agree to our use of cookies.</p><a href='/privacy'>More</a>"
    "</div>"
)
CONSENT_WORDS = ("privacy", "cookies", "consent", "Agree and close", "Accept All")


def build_site(root: Path, pages: int = 12) -> Path:
    site = root / SITE
    (site / "pages").mkdir(parents=True)
    for n in range(pages):
        paragraphs = "".join(
            f"<p>Story {n}, paragraph {k}: the harbour council met on the quay{n} plan{k} "
            f"and residents of street{k} said the ferry{n} would change the town.</p>"
            for k in range(6)
        )
        (site / "pages" / f"story{n}.html").write_text(
            f"<html><head><title>Story {n}</title>{SCRIPTED}</head><body>{ONETRUST}"
            f"<nav><a href='/'>Home</a> <a href='/section/1'>News</a></nav><main><article>"
            f"<h1>Harbour story {n}</h1>{paragraphs}{OWN_BANNER}</article></main>"
            "<footer><p>The Harbour Gazette</p></footer></body></html>"
        )
    return site


def crawl(root: Path, base_url: str, name: str):
    out = root / name / "articles.jsonl"
    return run_crawl(
        SITE, base_url, out, "-a", "max_depth=0", "-s", f"MODELS_DIR={root / 'models'}",
        "-s", f"STATE_DIR={root / 'state'}", "-s", "INCREMENTAL_ENABLED=False", pages=False,
    )  # fmt: skip


def test_consent_dialogs_are_in_no_article_template_or_markdown(tmp_path, chromium_path):
    site = build_site(tmp_path)
    with serving(site) as server:
        learned = crawl(tmp_path, server.base_url, "learned")
        fast = crawl(tmp_path, server.base_url, "fast")
    for result in (learned, fast):
        assert result.returncode == 0, result.log[-3000:]
        assert len(result.items) == 12, result.log[-3000:]
        for item in result.items:
            assert "paragraph 5" in item["text"]
            for words in CONSENT_WORDS:
                assert words not in item["text"] and words not in item["markdown"], item["url"]
    assert {item["method"] for item in fast.items} == {"rules"}  # the fast path's raw HTML
    model = SiteModel.load(tmp_path / "models" / SITE)
    for layout in model.layout_models():
        for text in layout.template_texts_:
            assert not any(words.lower() in text.lower() for words in CONSENT_WORDS), text


# The dialogs' marks renamed: the same page, its dialogs known to no recogniser.
UNMARKED = (
    ("onetrust", "box-a"), ("otFlat", "flat"), ("ot-sdk-container", "inner"),
    ("cookie-banner", "box-b"), ("didomi", "box-c"), ("sp_message", "box-d"),
)  # fmt: skip


def test_without_removal_the_banner_is_in_the_article(tmp_path) -> None:
    """The control: read as the fast path reads raw HTML, a story page gives its article
    without the dialogs, and the same page whose dialogs are not recognised gives the
    banner's text with it (the assertions above could fail)."""
    site = build_site(tmp_path, pages=1)
    page = (site / "pages" / "story0.html").read_text()
    unmarked = page
    for mark, other in UNMARKED:
        unmarked = unmarked.replace(mark, other)
    url = f"http://{SITE}/pages/story0.html"
    removed, kept = extract_html(page, url)["text"], extract_html(unmarked, url)["text"]
    assert "paragraph 5" in removed and "paragraph 5" in kept
    assert not any(words in removed for words in CONSENT_WORDS), removed
    assert "This site uses cookies to give you the best experience" in kept, kept
