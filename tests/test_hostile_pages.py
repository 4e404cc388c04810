"""Long rendered crawls end by themselves: hostile page scripts, a context renewed with
pages in flight, a server that never answers; one SIGTERM ends a stuck crawl.

Real Chromium, real HTTP servers on 127.0.0.1 and real ``scrapy crawl`` runs."""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

from spidercrawl.runner import PROJECT_ROOT, read_jsonl
from spidercrawl.serve import SnapshotRequestHandler, serving
from spidercrawl.snapshot import SiteSnapshot
from tests.conftest import run_crawl

ARTICLE = "".join(
    f"<p>Paragraph {n} of the harbour story: the council voted on the new quay, and "
    f"residents who live near the water said the plan would change the town.</p>"
    for n in range(8)
)
# What a page's script may do to the browser that renders it. The reloading script waits
# for the document to be parsed, the navigating one for its load; one that navigates while
# it is parsed stops the parser ("redirects").
SHOWN = "document.addEventListener('DOMContentLoaded', () => setTimeout(() => {}, {}));"
SCRIPTS = {
    "plain": "",
    "busy": "while (true) {}",
    "dialogs": "alert('a'); confirm('b'); prompt('c');",
    "windows": "for (let i = 0; i < 50; i++) window.open('/p' + i);",
    # Right after the page's load, not on a timer after its parse: a render can load and
    # be read within a timer's wait, its page closed before the script navigates.
    "navigates": "window.addEventListener('load', () => setTimeout(() => {"
    " location.href = '/elsewhere'; }, 0));",
    # At the document's parse, before its load event, which a late script holds back:
    # after the aborted navigation Playwright gets no load event for the page.
    "early": "document.addEventListener('DOMContentLoaded', () => {"
    " location.href = '/elsewhere-early'; });",
    # Its head's late script holds its load past the load wait (HEADS): its loading is
    # stopped by the capture's wait, and Playwright gets no load event for it.
    "late": "",
    "reloads": SHOWN.format("location.reload()", 30),
    "redirects": "location.replace('/moved');",
    "elements": "for (let i = 0; i < 300000; i++) { const d = document.createElement('div');"
    " d.textContent = 'x' + i; document.body.appendChild(d); }",
    "string": "let s = 'x'; while (true) { s = s + s; }",
    "polls": "setInterval(() => fetch('/poll?' + Math.random()), 20);",
    "empties": "document.addEventListener('DOMContentLoaded', () => {"
    " document.body.innerHTML = ''; });",
    "history": "for (let i = 0; i < 1000; i++) history.pushState({}, '', '/p' + i);",
    "prints": "window.print();",
    "refreshes": "",  # its head's meta refresh reloads it (HEADS)
    "leaves": "",  # its head's meta refresh leads off the site (HEADS)
}
# What a page's head says besides its title.
HEADS = {
    "refreshes": '<meta http-equiv="refresh" content="30; url=/pages/refreshes.html">',
    "leaves": '<meta http-equiv="refresh" content="5; url=http://elsewhere.invalid/landing">',
    "early": '<script async src="/files/slow.js"></script>',  # holds its load event 1.5 s
    "late": '<script async src="/files/slow.js"></script>',
}
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


class HostileHandler(SnapshotRequestHandler):
    """The snapshot server, plus a page that never answers, one that is an image and a
    script that comes late."""

    def _respond(self, send_body: bool) -> None:
        if self.path == "/pages/never.html":
            time.sleep(60)  # accepts the connection, never answers (a daemon thread)
        elif self.path == "/pages/image.html":
            self._send(200, PNG, "image/png", send_body)
        elif self.path == "/files/slow.js":
            time.sleep(1.5)
            self._send(200, b"// late", "text/javascript", send_body)
        else:
            super()._respond(send_body)


def build_hostile_site(root: Path) -> Path:
    site = root / "hostile.example"
    pages = site / "pages"
    pages.mkdir(parents=True)
    for name, script in SCRIPTS.items():
        (pages / f"{name}.html").write_text(
            f"<html><head><title>The harbour vote</title>{HEADS.get(name, '')}</head>"
            f"<body><article>"
            f"<h1>The harbour vote ({name})</h1>{ARTICLE}</article>"
            f"<script>{script}</script></body></html>"
        )
    files = site / "files"
    files.mkdir()
    locs = [f"/pages/{name}.html" for name in SCRIPTS] + ["/pages/never.html", "/pages/image.html"]
    (files / "sitemap.xml").write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
        + "</urlset>"
    )
    return site


def build_plain_site(root: Path, pages: int = 6) -> Path:
    """A second site of plain article pages, listed in its sitemap."""
    site = root / "plain.example"
    (site / "pages").mkdir(parents=True)
    for n in range(pages):
        (site / "pages" / f"story{n}.html").write_text(
            f"<html><head><title>Story {n}</title></head><body><article><h1>Story {n}</h1>"
            f"{ARTICLE}</article></body></html>"
        )
    return site


def crawl_sites(sites_file: Path, out: Path, *settings: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(out),
               "-a", f"sites={sites_file}", "-a", "render=all", "-a", "max_depth=0",
               "-s", "LEARN_ENABLED=False", "-s", f"STATE_DIR={out.parent / 'state'}",
               "-s", "LOG_LEVEL=INFO"]  # fmt: skip
    for setting in settings:
        command += ["-s", setting]
    return subprocess.Popen(
        command, cwd=PROJECT_ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )


def test_hostile_pages_and_renewals_with_pages_in_flight_end_with_every_page(
    tmp_path, chromium_path
) -> None:
    """Two sites in one run, the context renewed every 3 pages with two pages in flight:
    every page of both ends as a page item within its bound, under the URL fetched."""
    hostile = build_hostile_site(tmp_path)
    plain = build_plain_site(tmp_path)
    with ExitStack() as stack:
        bad = stack.enter_context(serving(hostile, handler_class=HostileHandler))
        other = stack.enter_context(serving(plain))
        sites = tmp_path / "sites.txt"
        sites.write_text(f"hostile.example {bad.base_url}\nplain.example {other.base_url}\n")
        started = time.monotonic()
        proc = crawl_sites(
            sites, tmp_path / "pages.jsonl",
            "RENDER_PAGES_PER_CONTEXT=3", "RENDER_TIMEOUT=10", "RENDER_LOAD_WAIT=1",
            "DOWNLOAD_TIMEOUT=5", "RETRY_TIMES=0", "RENDER_SLOW_LOG=8",
        )  # fmt: skip
        _, log = proc.communicate(timeout=280)
        seconds = time.monotonic() - started
    assert proc.returncode == 0, log[-3000:]
    items = read_jsonl(tmp_path / "pages.jsonl")
    paths = {(item["site"], urlsplit(item["url"]).path): item for item in items}
    plain_paths = set(SiteSnapshot(plain).path_of.values())
    assert {path for site, path in paths if site == "plain.example"} >= plain_paths
    hostile_pages = {path for site, path in paths if site == "hostile.example"}
    assert {f"/pages/{name}.html" for name in SCRIPTS} <= hostile_pages
    # Scripts that navigate, reload or write the address bar change nothing that is read;
    # nor does a meta refresh that reloads the page (to Scrapy a redirect to the URL just
    # fetched, a duplicate request dropped without a word) or leaves the site (to Scrapy a
    # request to the other host).
    read_as_fetched = (
        "navigates", "early", "late", "reloads", "history", "windows", "dialogs", "prints",
    )  # fmt: skip
    for name in (*read_as_fetched, "plain", "refreshes", "leaves"):
        item = paths[("hostile.example", f"/pages/{name}.html")]
        assert not item.get("render_failed"), (name, item.get("render_failed"))
        text = " ".join("".join(block["text"]) for block in item["texts"])
        assert "Paragraph 7 of the harbour story" in text, name
    assert not any("/p999" in item["url"] or "/elsewhere" in item["url"] for item in items)
    assert re.search(r"navigates.html: its script navigated to \S+/elsewhere: not followed", log)
    assert re.search(r"early.html: its script navigated to \S+/elsewhere-early: not followed", log)
    assert "leaves.html: its meta refresh leads off the site to http://elsewhere.invalid" in log
    assert not re.search(r"(GET|Rendering \S+:) http://elsewhere\.invalid", log)
    # A script that navigates while the page is parsed stops the parser: the render fails
    # at once, not at its bound, and the page is read from its raw HTML.
    redirects = paths[("hostile.example", "/pages/redirects.html")]
    assert "before its document was parsed" in redirects["render_failed"]
    assert "Paragraph 7" in redirects["rendered_html"]
    assert not re.search(r"redirects\.html.*(Timeout|stopped \(no render)", log)
    # A render held to its bound (10 s) is logged as slow at 8 s; one that fails at once
    # is not, even when the suite's load slows the browser for a few seconds.
    assert not re.search(r"Still rendering \S+/redirects\.html", log)
    # A script that never yields: read from its raw HTML within the render's bound.
    busy = paths[("hostile.example", "/pages/busy.html")]
    assert busy["render_failed"] and busy["capture_mode"] == "http"
    assert "Paragraph 7" in busy["rendered_html"]
    # A body emptied by its script: read from its raw HTML.
    assert paths[("hostile.example", "/pages/empties.html")]["render_failed"].startswith("no text")
    # Long waits are named while they last.
    assert re.search(r"Still rendering \S+/busy.html after \d+ s: waiting for", log)
    # Counted, not dropped: a server that never answers and an image in a page's place.
    assert re.search(r"Page failed: \S+/pages/never.html \(", log)
    assert re.search(r"Page failed: \S+/pages/image.html \(", log)
    contexts = int(re.search(r"'playwright/context_count': (\d+),", log).group(1))
    assert contexts >= len(items) // 3
    assert "Traceback" not in log
    assert "DeprecationWarning" not in log  # our middlewares call Scrapy's as it asks
    assert seconds < 240, seconds


def test_one_sigterm_ends_a_stuck_crawl_with_every_page(tmp_path, chromium_path) -> None:
    """A page whose script never yields, its render bound far off (RENDER_TIMEOUT=300):
    one SIGTERM stops the renders in flight at once and their pages are read from their
    raw HTML; the crawl ends within seconds, no page lost."""
    hostile = build_hostile_site(tmp_path)
    for name in SCRIPTS:
        if name not in ("busy", "plain", "string"):
            (hostile / "pages" / f"{name}.html").unlink()
    (hostile / "files" / "sitemap.xml").unlink()
    with serving(hostile) as server:
        sites = tmp_path / "sites.txt"
        sites.write_text(f"hostile.example {server.base_url}\n")
        proc = crawl_sites(sites, tmp_path / "pages.jsonl", "RENDER_TIMEOUT=300",
                           "RENDER_SLOW_LOG=2")  # fmt: skip
        lines: list[str] = []
        deadline = time.monotonic() + 120
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if re.search(r"Still rendering \S+/busy.html", line):
                break
            assert time.monotonic() < deadline, "".join(lines[-50:])
        stopped_at = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=60)
        seconds = time.monotonic() - stopped_at
    log = "".join(lines) + rest
    assert proc.returncode == 0, log[-3000:]
    assert seconds < 20, seconds
    assert "The crawl is stopping: " in log
    items = read_jsonl(tmp_path / "pages.jsonl")
    by_path = {urlsplit(item["url"]).path: item for item in items}
    assert {"/pages/busy.html", "/pages/plain.html", "/pages/string.html"} <= set(by_path)
    assert "the crawl is closing" in by_path["/pages/busy.html"]["render_failed"]
    assert json.dumps(items)  # plain JSON throughout


def build_learnable_site(root: Path, pages: int = 8) -> Path:
    """A site of article pages that differ (a model can be learned from them: near-duplicate
    pages teach nothing), in one template of navigation, article and footer."""
    site = root / "harbour.example"
    (site / "pages").mkdir(parents=True)
    rng = random.Random(7)
    words = [f"word{n}" for n in range(300)]
    for n in range(pages):
        body = "".join(
            f"<p>{' '.join(rng.choice(words) for _ in range(40)).capitalize()}.</p>"
            for _ in range(6)
        )
        (site / "pages" / f"story{n}.html").write_text(
            f"<html><head><title>Story {n}</title></head><body>"
            f"<nav><a href='/'>News</a> <a href='/'>Sport</a></nav><article>"
            f"<h1>Story {n} of the harbour</h1>{body}</article>"
            f"<footer><p>The Harbour Times</p></footer></body></html>"
        )
    return site


def test_a_page_its_script_empties_is_read_from_its_raw_html_with_learning_on(
    tmp_path, chromium_path
) -> None:
    """Learning on (the default), the site's model learned: a page whose script empties its
    body after load is not judged on its empty DOM and dropped; its article is read from
    its raw HTML, as with learning off."""
    site = build_learnable_site(tmp_path)
    (site / "pages" / "zz-empties.html").write_text(
        f"<html><head><title>The harbour vote</title></head><body>"
        f"<nav><a href='/'>News</a> <a href='/'>Sport</a></nav><article>"
        f"<h1>The harbour vote (empties)</h1>{ARTICLE}</article>"
        f"<footer><p>The Harbour Times</p></footer>"
        f"<script>{SCRIPTS['empties']}</script></body></html>"
    )
    (site / "pages" / "zz-blanked.html").write_text(  # a line of text left in its place
        f"<html><head><title>The quay vote</title></head><body><article>"
        f"<h1>The quay vote (blanked)</h1>{ARTICLE}</article><script>"
        "document.addEventListener('DOMContentLoaded', () => {"
        " document.body.innerHTML = '<p>Loading comments</p>'; });</script></body></html>"
    )
    with serving(site) as server:
        out = tmp_path / "articles.jsonl"
        result = run_crawl(
            "harbour.example", server.base_url, out, "-a", "render=all",
            "-s", f"MODELS_DIR={tmp_path / 'models'}", "-s", "LEARN_MIN_PAGES=5",
            pages=False, timeout=200,
        )  # fmt: skip
    assert result.returncode == 0, result.log[-3000:]
    assert "learned a model from" in result.log
    by_path = {urlsplit(item["url"]).path: item for item in result.items}
    assert "/pages/zz-empties.html" in by_path, sorted(by_path)
    emptied = by_path["/pages/zz-empties.html"]
    assert "Paragraph 7 of the harbour story" in emptied["text"]
    assert "raw HTML" in emptied["method_note"], emptied["method_note"]
    blanked = by_path["/pages/zz-blanked.html"]  # judged on its raw HTML, not dropped
    assert "Paragraph 7 of the harbour story" in blanked["text"]
    assert "Loading comments" not in blanked["text"]
    assert {f"/pages/story{n}.html" for n in range(8)} <= set(by_path)
