"""A UTF-8 page that declares latin-1: the browser shows "fÃ¼r" for "für", and the articles
of a crawl read it as its bytes say (the raw HTML kept for the peers as well as the
browser's blocks). The reading back on its own, then a real ``scrapy crawl`` with Chromium
and an HTTP server that sends no charset (the page's declaration is all there is)."""

from __future__ import annotations

from spidercrawl.document.misread import misread_charset, reread_text, reread_value
from spidercrawl.serve import serving
from tests.conftest import run_crawl

GERMAN = "Für die Straße am Fluss gilt ab Mai ein neues Tempolimit, sagt die Behörde."
MIXED = "Café \u2013 “quoted” € 10 naïve 日本 ß"


def browser_read(text: str, charset: str) -> str:
    """``text``'s UTF-8 bytes as a browser shows them in ``charset`` (windows-1252's five
    undefined bytes as the control characters of their numbers)."""
    shown = []
    for byte in text.encode("utf-8"):
        try:
            shown.append(bytes([byte]).decode(charset))
        except UnicodeDecodeError:
            shown.append(chr(byte))
    return "".join(shown)


def test_text_read_in_a_single_byte_charset_is_read_again_as_utf8() -> None:
    for charset in ("windows-1252", "ISO-8859-15", "windows-1251", "KOI8-R"):
        shown = browser_read(MIXED, charset)
        assert shown != MIXED
        assert reread_text(shown, charset) == MIXED, charset
    assert reread_text(browser_read(GERMAN, "cp1252"), "iso-8859-1") == GERMAN  # as browsers


def test_characters_no_utf8_bytes_made_are_left_as_the_browser_showed_them() -> None:
    # "é" written as an entity is a true é in the browser's text: a lone byte of no UTF-8
    # character, kept; its mojibake neighbour is read again.
    assert reread_text("caf\u00e9 and " + browser_read("über", "cp1252"), "cp1252") == (
        "café and über"
    )
    # A no-break space (C2 A0) whose second byte the capture made a plain space.
    assert reread_text("10\u00c2 km", "cp1252") == "10 km"
    assert reread_text("plain ASCII", "cp1252") == "plain ASCII"


def test_only_a_utf8_page_read_in_a_single_byte_charset_is_read_again() -> None:
    assert misread_charset("windows-1252", "utf-8") == "windows-1252"
    assert misread_charset("UTF-8", "utf-8") is None  # read right
    assert misread_charset("windows-1252", "cp1252") is None  # the page is windows-1252
    assert misread_charset("windows-1252", None) is None  # raw bytes not known
    assert misread_charset("Shift_JIS", "utf-8") is None  # two bytes a character there
    assert misread_charset("no-such-charset", "utf-8") is None
    assert misread_charset(["windows-1252"], "utf-8") is None  # a hostile capture's value
    nested = {"texts": [{"text": browser_read(GERMAN, "cp1252"), "top": 3}], "n": None}
    assert reread_value(nested, "cp1252") == {"texts": [{"text": GERMAN, "top": 3}], "n": None}


SITE = "zeitung.example"
PAGES = {
    "tempo": [GERMAN, "Die Anwohner begrüßen die Maßnahme, die Händler sind skeptisch."],
    "bruecke": [
        "Die alte Brücke über die Isar wird für zwei Jahre gesperrt, teilte die Stadt mit.",
        "Fußgänger und Radfahrer können eine Behelfsbrücke nutzen, Autos müssen umfahren.",
    ],
    "schule": [
        "Die Grundschule erhält einen Anbau für zwölf Klassenzimmer und eine Mensa.",
        "Der Bau beginnt im Frühjahr; die Kosten schätzt die Gemeinde auf 4,5 Mio. Euro.",
    ],
}


def build_site(root):
    """Three stories, their bytes UTF-8, each declaring latin-1 in its markup."""
    site = root / SITE
    (site / "pages").mkdir(parents=True)
    filler = " Weitere Einzelheiten nannte die Verwaltung am Dienstag nicht."
    for name, paragraphs in PAGES.items():
        body = "".join(f"<p>{text}{filler * 3}</p>" for text in paragraphs)
        html = (
            '<html><head><meta http-equiv="Content-Type" content="text/html; '
            f'charset=iso-8859-1"><title>Nachrichten: {name}</title></head><body>'
            f"<nav><a href='/'>Startseite</a></nav><article><h1>Nachrichten: {name}</h1>"
            f"{body}</article><footer>Impressum · Datenschutz</footer></body></html>"
        )
        (site / "pages" / f"{name}.html").write_bytes(html.encode("utf-8"))
    return site


def test_a_crawl_reads_a_utf8_page_that_declares_latin1_as_utf8(tmp_path, chromium_path):
    site = build_site(tmp_path)
    out = tmp_path / "articles.jsonl"
    extra = ["-a", "max_depth=0", "-s", f"MODELS_DIR={tmp_path / 'models'}"]
    with serving(site) as server:
        result = run_crawl(SITE, server.base_url, out, *extra, pages=False)
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == len(PAGES), result.log[-3000:]
    for article in result.items:
        assert "Ã" not in article["text"] and "Ã" not in article["title"], article["text"]
    texts = " ".join(article["text"] for article in result.items)
    for paragraphs in PAGES.values():
        for paragraph in paragraphs:
            assert paragraph in texts, texts
    assert "its text read again as UTF-8" in result.log
    assert "Traceback" not in result.log
