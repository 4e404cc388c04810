"""What a Scrapy user trips over, end to end through ``scrapy crawl news``.

The site is a plain folder served by ``python -m http.server`` on 127.0.0.1 (a host with a
port, no sitemap, no feed): a home page, three section pages, an about page and five
article-shaped URLs.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from spidercrawl.pipelines.jsonfeed import feed_errors
from spidercrawl.runner import PROJECT_ROOT, read_jsonl
from tests.conftest import run_crawl

pytestmark = pytest.mark.browser
HOST = "portcopy.example"
ARTICLES = [f"/news/2024/05/harbour-council-story-number-{n}.html" for n in range(5)]
SECTIONS = [f"/section/{name}.html" for name in ("town", "sea", "sport")]
TOPICS = ["ferry timetable", "sea wall", "fish market", "lifeboat crew", "harbour lights"]


def article_page(number: int) -> str:
    topic = TOPICS[number]
    paragraphs = "".join(
        f"<p>Paragraph {n} on the {topic}: the council met on Tuesday and heard from residents "
        f"who said the {topic} mattered to the town, and the meeting ran late into the night.</p>"
        for n in range(5)
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Council debates the {topic} | Port Copy</title>"
        f"<meta name='description' content='The council met on Tuesday about the {topic}.'>"
        f"</head><body><nav><a href='/'>Home</a> <a href='{SECTIONS[0]}'>Town</a></nav>"
        f"<h1>Council debates the {topic}</h1><div class='story'>{paragraphs}</div>"
        f"<footer>Port Copy, a local paper.</footer></body></html>"
    )


def listing_page(title: str) -> str:
    links = "".join(
        f"<li><a href='{path}'>Council debates the {TOPICS[n]}</a></li>"
        for n, path in enumerate(ARTICLES)
    )
    nav = "".join(f"<a href='{path}'>{path.split('/')[-1][:-5]}</a> " for path in SECTIONS)
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"</head><body><nav>{nav}<a href='/about.html'>About</a></nav><h1>{title}</h1>"
        f"<ul>{links}</ul><footer>Port Copy, a local paper.</footer></body></html>"
    )


def make_site(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.html").write_text(listing_page("Port Copy"), "utf-8")
    (root / "about.html").write_text(
        "<html><head><title>About</title></head><body><p>Write to us.</p></body></html>", "utf-8"
    )
    for path in SECTIONS:
        (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (root / path.lstrip("/")).write_text(listing_page(path), "utf-8")
    for number, path in enumerate(ARTICLES):
        (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (root / path.lstrip("/")).write_text(article_page(number), "utf-8")
    return root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory) -> Iterator[str]:
    """``python -m http.server`` on the site folder: what a user serves a local copy with."""
    root = make_site(tmp_path_factory.mktemp("portcopy") / "site")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/"
    server.terminate()
    server.wait(timeout=10)


def crawl_without_output_option(base_url: str, tmp: Path, *settings: str) -> tuple[int, str]:
    """``scrapy crawl news`` with no -o/-O, as a scheduled run is written."""
    command = [
        sys.executable, "-m", "scrapy", "crawl", "news",
        "-a", f"site={HOST}", "-a", f"base_url={base_url}", "-a", "render=all",
        "-s", f"ARTICLES_FILE={tmp / 'default' / '%(site)s.jsonl'}",
        "-s", f"STATE_DIR={tmp / 'state'}", "-s", f"MODELS_DIR={tmp / 'models'}",
        "-s", f"JSONFEED_PATH={tmp / 'feeds' / '%(site)s.json'}",
        *settings,
    ]  # fmt: skip
    proc = subprocess.run(
        command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    return proc.returncode, proc.stderr


def test_links_are_followed_on_a_host_with_a_port(http_server, tmp_path) -> None:
    site_output = PROJECT_ROOT / "output" / HOST
    result = run_crawl(HOST, http_server, tmp_path / "pages.jsonl")
    assert result.returncode == 0, result.log[-3000:]
    paths = sorted(item["url"].removeprefix(http_server.rstrip("/")) for item in result.items)
    assert paths == sorted(ARTICLES)  # found by links alone: no sitemap, no feed here
    assert {item["discovered_by"] for item in result.items} == {"link"}
    # -O names where the items go: the default articles file is not written besides, and a
    # crawl of page items writes no feed either (nothing into the project's folder).
    assert not site_output.exists()


@pytest.fixture(scope="module")
def scheduled_runs(http_server, tmp_path_factory) -> tuple[Path, list[tuple[int, str]]]:
    """The same crawl twice (learning on, every page rendered), with no -o/-O."""
    tmp = tmp_path_factory.mktemp("scheduled")
    runs = [crawl_without_output_option(http_server, tmp) for _ in range(2)]
    return tmp, runs


def test_the_default_file_holds_articles_only(scheduled_runs) -> None:
    tmp, runs = scheduled_runs
    for returncode, log in runs:
        assert returncode == 0, log[-3000:]
    items = read_jsonl(tmp / "default" / f"{HOST}.jsonl")
    assert all(item.get("method") for item in items)
    # Home, sections and the about page were rendered (render=all) but are not articles.
    assert sorted(item["url"].split(":", 2)[2].split("/", 1)[1] for item in items) == sorted(
        path.lstrip("/") for path in ARTICLES
    )
    first_log = runs[0][1]
    assert "Not an article (listing)" in first_log and "Not an article (other)" in first_log
    assert "'spidercrawl/pages/kind/article': 5" in first_log


def test_a_run_with_nothing_new_still_writes_the_feed(scheduled_runs) -> None:
    tmp, runs = scheduled_runs
    second_log = runs[1][1]
    assert "0 new, 0 changed, 0 unchanged, 0 duplicates, 5 not modified (HTTP 304)" in second_log
    assert "JSON Feed with 5 items (0 new or changed in this crawl) written to" in second_log
    feed = json.loads((tmp / "feeds" / f"{HOST}.json").read_text("utf-8"))
    assert len(feed["items"]) == 5 and not feed_errors(feed)


def test_page_items_without_output_file_are_explained(http_server, tmp_path) -> None:
    returncode, log = crawl_without_output_option(
        http_server, tmp_path, "-s", "LEARN_ENABLED=False", "-s", "CLOSESPIDER_ITEMCOUNT=1"
    )
    assert returncode == 0, log[-3000:]
    assert "takes articles only: name a file for the page items with -O" in log
    assert not (tmp_path / "default" / f"{HOST}.jsonl").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "which site? scrapy crawl news -a site=HOST"),
        (["-a", "site=x.example", "-a", "max_pages=ten"], "max_pages= takes a whole number"),
        (["-a", "site=x.example", "-a", "render=some"], "render= takes one of articles, all"),
        (
            ["-a", "site=x.example", "-s", "WARC_DIR=/proc/spidercrawl-warc"],
            "WARC_DIR /proc/spidercrawl-warc is not a writable folder",
        ),
        (
            ["-a", "site=x.example", "-a", "maxpages=3"],
            "unknown argument -a maxpages=...; the arguments are site, sites, base_url, max_pages",
        ),
    ],
)
def test_a_wrong_argument_is_one_line_and_exit_status_2(arguments, message) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "news", *arguments],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "never retrieved" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and message in errors[0]


def test_a_crawl_in_which_every_request_failed_exits_1(tmp_path) -> None:
    """A site that is down (nothing listens on its port): one error line, status 1, so a
    scheduled crawl's failure is noticed."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "news", "-a", "site=down.example",
         "-a", f"base_url=http://127.0.0.1:{port}/", "-s", "RETRY_TIMES=0",
         "-s", f"STATE_DIR={tmp_path / 'state'}", "-s", f"ARTICLES_FILE={tmp_path / 'a.jsonl'}",
         "-s", f"JSONFEED_PATH={tmp_path / 'feeds' / '%(site)s.json'}"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if "scrapy crawl news: error:" in line]
    assert len(errors) == 1 and "no page could be fetched" in errors[0]
