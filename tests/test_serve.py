"""The local snapshot server, over real HTTP."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from spidercrawl.runner import DEMO_SITE
from spidercrawl.serve import serving
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs
from tests.conftest import SHARED


def fetch(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, "", b""


def test_demo_site_is_served_like_a_live_site() -> None:
    snapshot = SiteSnapshot(DEMO_SITE)
    assert len(snapshot.page_ids) == 30
    with serving(DEMO_SITE) as server:
        base = server.base_url.rstrip("/")
        status, ctype, home = fetch(base + "/")
        assert status == 200 and b"/feed.xml" in home and b"/section/1" in home
        _, _, section = fetch(base + "/section/1")
        _, _, sitemap = fetch(base + "/sitemap.xml")
        _, _, feed = fetch(base + "/feed.xml")
        for page_id, path in snapshot.path_of.items():
            assert path.encode() in sitemap
            assert (page_id < "020") == (path.encode() in section)  # 20 a section
        assert feed.count(b"<item>") == 30
        path = snapshot.path_of["003"]
        status, ctype, body = fetch(base + path)
        assert status == 200 and ctype == "text/html"
        assert body == snapshot.page_bytes("003")  # served byte for byte
        assert fetch(base + "/robots.txt")[2].startswith(b"User-agent: *\nDisallow: /private/")
        assert fetch(base + "/static/style.css")[1] == "text/css"
        assert fetch(base + "/no/such/page")[0] == 404
        assert fetch(base + "/section/99")[0] == 404
        assert fetch(base + "/../../index.tsv")[0] == 404
        assert server.hits[path] == 1


def test_original_paths_are_used_when_unique(tmp_path) -> None:
    site = tmp_path / "s.example"
    (site / "pages").mkdir(parents=True)
    for page_id in ("000", "001", "002", "003"):
        (site / "pages" / f"{page_id}.html").write_bytes(b"<p>x</p>")
    (site / "index.tsv").write_text(
        "000\thttp://s.example/a/one.html\n001\thttp://s.example/same\n"
        "002\thttp://s.example/same\n003\t\n"
    )
    routes = SiteSnapshot(site).routes
    assert routes == {
        "/a/one.html": "000",
        "/pages/001.html": "001",
        "/pages/002.html": "002",
        "/pages/003.html": "003",
    }


@pytest.mark.skipif(not SHARED.exists(), reason="../shared is not here")
def test_dataset_folders_are_found() -> None:
    sites = find_site_dirs(SHARED / "datasets" / "cleanportaleval")
    assert {s.name for s in sites} == {
        "tv.msnbc.com",
        "washingtonpost.com",
        "blogs.wsj.com",
        "bbc.co.uk",
    }
    # cleanportaleval, dragnet, l3s-gn1, gtrends2017-dev, fundus-dev; trafilatura-eval-dev
    # is a snippet dataset (evaldata.json and html/), not site snapshots.
    assert len(find_site_dirs(SHARED / "datasets")) == 4 + 96 + 41 + 33 + 63
