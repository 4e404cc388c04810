"""Bot walls: challenges and blocks in the article's place are recognised, counted per site
with their kind, never delivered or learned from; 429 and 503 wait out Retry-After; a
crawl of nothing but walls exits 1 and says why. Real Chromium, a real HTTP server on
127.0.0.1, real ``scrapy crawl`` runs; the walls' pages are shaped like the vendors'."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from spidercrawl.capture.retry_after import retry_after_seconds
from spidercrawl.document.walls import recognise_wall
from spidercrawl.serve import SnapshotRequestHandler, serving
from tests.conftest import run_crawl

STORY = "".join(
    f"<p>Paragraph {n} of the harbour story: the council voted on the new quay, and "
    f"residents who live near the water said the plan would change the town.</p>"
    for n in range(8)
)
CLOUDFLARE = (
    "<!DOCTYPE html><html lang='en-US'><head><title>Just a moment...</title>"
    "<meta http-equiv='refresh' content='390'></head><body><div class='main-wrapper'>"
    "<div class='main-content'><h1 class='zone-name-title h1'>news.example</h1>"
    "<h2 class='h2' id='challenge-running'>Checking if the site connection is secure</h2>"
    "<noscript><div class='h2'>Enable JavaScript and cookies to continue</div></noscript>"
    "</div></div><script>(function(){window._cf_chl_opt={cvId: '2',cType: 'managed'};"
    "var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/h/g/orchestrate"
    "/managed/v1';document.getElementsByTagName('head')[0].appendChild(a);})();</script>"
    "</body></html>"
)
AWS_WAF = (
    "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title></title>"
    "<script>window.awsWafCookieDomainList = [];window.gokuProps = {'key':'AQIDAHjcYu'};"
    "</script><script src='https://de5282c3ca0c.2f8e3d4d.eu-west-1.token.awswaf.com/"
    "de5282c3ca0c/526cf06acb0d/challenge.js'></script></head><body>"
    "<div id='challenge-container'></div><noscript><h1>JavaScript is disabled</h1>In order "
    "to continue, we need to verify that you're not a robot.</noscript></body></html>"
)
DATADOME = (
    "<html><head><title>news.example</title><style>#cmsg{animation: A 1.5s;}</style></head>"
    "<body style='margin:0'><p id='cmsg'>Please enable JS and disable any ad blocker</p>"
    "<script>var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'2211F522B61E269B869FA6EAFFB5E1',"
    "'t':'fe','s':13461,'e':'d1b','host':'geo.captcha-delivery.com'}</script>"
    "<script src='https://ct.captcha-delivery.com/c.js'></script></body></html>"
)
AKAMAI = (
    "<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n \n"
    'You don\'t have permission to access "http&#58;&#47;&#47;news&#46;example&#47;" on '
    "this server.<P>\nReference&#32;&#35;18&#46;2b3c1002&#46;1700000000&#46;5a6b7c8d\n"
    "<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;2b3c1002</P>\n"
    "</BODY>\n</HTML>\n"
)
PERIMETERX = (
    "<html lang='en'><head><title>Access to this page has been denied</title></head><body>"
    "<div class='px-captcha-container'><div class='px-captcha-message'>Press &amp; Hold to "
    "confirm you are a human (and not a bot).</div><div id='px-captcha'></div></div>"
    "<script>window._pxAppId = 'PXu6b0qd2S';</script></body></html>"
)


def test_the_vendors_walls_are_named_and_articles_are_not_walls() -> None:
    assert recognise_wall(403, {"Server": "cloudflare"}, CLOUDFLARE).describe() == (
        "HTTP 403, Cloudflare challenge"
    )
    assert recognise_wall(200, {}, CLOUDFLARE).kind == "Cloudflare challenge"
    assert recognise_wall(202, {}, AWS_WAF).kind == "AWS WAF challenge"
    assert recognise_wall(200, {}, DATADOME).kind == "DataDome captcha"
    assert recognise_wall(403, {}, AKAMAI).kind == "Akamai block"
    assert recognise_wall(200, {}, PERIMETERX).kind == "PerimeterX captcha"
    assert recognise_wall(429, {}, "").describe() == "HTTP 429"
    # A protected site's real article loads the same vendors' scripts: not a wall.
    article = (
        "<html><head><title>The harbour vote</title><script src='https://js.datadome.co/tags.js'>"
        "</script><script src='/cdn-cgi/challenge-platform/scripts/jsd/main.js'></script>"
        f"</head><body><article><h1>The harbour vote</h1>{STORY * 2}</article></body></html>"
    )
    assert recognise_wall(200, {}, article) is None
    assert recognise_wall(404, {}, CLOUDFLARE) is None  # a missing page is no wall


def test_retry_after_is_read_as_seconds_or_a_date() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert retry_after_seconds("soon") is None and retry_after_seconds("") is None


class WallHandler(SnapshotRequestHandler):
    """The snapshot server, with some pages answered by walls: ``/pages/limited.html`` is
    rate-limited once (429, Retry-After: 1), then served."""

    limited_hits = 0
    lock = threading.Lock()

    def _respond(self, send_body: bool) -> None:
        walls = {
            "/pages/challenge.html": (403, CLOUDFLARE, {"Server": "cloudflare"}),
            "/pages/waf.html": (200, AWS_WAF, {}),
            "/pages/captcha.html": (200, DATADOME, {}),
            "/pages/busy.html": (503, "<h1>Service Unavailable</h1>", {"Retry-After": "1"}),
        }
        if self.path == "/pages/limited.html":
            with WallHandler.lock:
                WallHandler.limited_hits += 1
                first = WallHandler.limited_hits == 1
            if first:
                walls[self.path] = (429, "<h1>Too Many Requests</h1>", {"Retry-After": "1"})
        if self.path not in walls:
            super()._respond(send_body)
            return
        status, body, headers = walls[self.path]
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(data)


def build_site(root: Path, stories: int, walls: tuple[str, ...]) -> Path:
    site = root / "walled.example"
    pages = site / "pages"
    pages.mkdir(parents=True)
    for n in range(stories):
        (pages / f"story{n}.html").write_text(
            f"<html><head><title>Story {n}</title></head><body><article><h1>Story {n}</h1>"
            f"{STORY}</article></body></html>"
        )
    for name in walls:  # listed in the sitemap; the handler answers them
        (pages / f"{name}.html").write_text(
            f"<html><head><title>{name}</title></head><body><article><h1>{name}</h1>{STORY}"
            "</article></body></html>"
        )
    return site


def crawl(site: Path, out: Path, *settings: str, render: str = "all"):
    extra = ["-a", f"render={render}", "-a", "max_depth=0", "-s", "WALL_RETRY_AFTER_MAX=2"]
    for setting in settings:
        extra += ["-s", setting]
    with serving(site, handler_class=WallHandler) as server:
        return run_crawl("walled.example", server.base_url, out, *extra)


@pytest.fixture
def fresh_limit() -> None:
    WallHandler.limited_hits = 0


def test_walls_are_counted_never_delivered_and_429_waits(tmp_path, chromium_path, fresh_limit):
    site = build_site(tmp_path, 3, ("challenge", "waf", "captcha", "busy", "limited"))
    result = crawl(site, tmp_path / "pages.jsonl", "LEARN_ENABLED=False")
    assert result.returncode == 0, result.log[-3000:]
    urls = sorted(i["url"].rsplit("/", 1)[-1] for i in result.items if "/pages/" in i["url"])
    assert urls == ["limited.html", "story0.html", "story1.html", "story2.html"], result.log[-3000:]
    assert "HTTP 429 on" in result.log and "Retry-After: 1" in result.log
    for line in (
        "challenge.html (HTTP 403, Cloudflare challenge)",
        "waf.html (AWS WAF challenge)",
        "captcha.html (DataDome captcha)",
        "busy.html (HTTP 503)",
    ):
        assert f"Page blocked: http://127.0.0.1:{_port(result.log)}/pages/{line}" in result.log
    assert (
        "walled.example: 4 of 9 pages blocked (HTTP 403, HTTP 503, AWS WAF challenge, "
        "Cloudflare challenge, DataDome captcha)"
    ) in result.log
    assert "Not an article" not in result.log


def test_a_crawl_of_nothing_but_walls_exits_1_and_learns_nothing(tmp_path, chromium_path):
    site = build_site(tmp_path, 0, ("challenge", "waf", "captcha"))
    models = tmp_path / "models"
    out = tmp_path / "articles.jsonl"
    result = crawl(site, out, f"MODELS_DIR={models}", "LEARN_MIN_PAGES_AT_END=1", render="articles")
    assert result.returncode == 1, result.log[-3000:]
    assert not result.items
    assert "walled.example: 3 of 3 pages blocked" in result.log
    assert "every page was blocked (3 pages: HTTP 403" in result.log
    assert not list(models.glob("*/model.npz"))


def _port(log: str) -> str:
    marker = "Page blocked: http://127.0.0.1:"
    start = log.index(marker) + len(marker)
    return log[start : log.index("/", start)]


def test_hostile_markup_is_read_in_bounded_time() -> None:
    """Tags never closed, unclosed scripts: the quick readers stay linear (a quadratic one
    takes minutes on these 2 MB)."""
    import time

    from spidercrawl.document.access import page_prompts
    from spidercrawl.document.walls import visible_words

    for hostile in ("<a" * 1_000_000, "<" * 2_000_000, "<script " * 250_000):
        started = time.monotonic()
        visible_words(hostile)
        page_prompts([], hostile)
        recognise_wall(200, {}, "<title>Just a moment...</title>" + hostile)
        assert time.monotonic() - started < 10.0
    # A tag name with letters that match "script" only outside ASCII is no script: the
    # text after it is read (and reading it raises nothing).
    for name in ("\u017fcript", "scr\u0130pt", "\u017ftyle"):
        page = f"<{name}>var a;</{name}><p>Subscribers only</p>"
        assert page_prompts([], page) == ["Subscribers only"], name
