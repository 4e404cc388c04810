"""A crawl on one machine whose site answers its tdmrep.json late: the pages read before the
answer wait for it at the item step and carry ``tdm`` where it reserves their path (they
went without it: an opt-out leaked). A real ``scrapy crawl``, Chromium and HTTP server."""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from spidercrawl.serve import SnapshotRequestHandler, serving
from spidercrawl.spiders.news import TDMREP_PATH
from tests.conftest import run_crawl
from tests.test_tdm_on_redis import PAGES, SITE, build_site

HELD_SECONDS = 8.0  # after the last page was fetched: long past its item's making


class LateTdmrepHandler(SnapshotRequestHandler):
    """The site, answering its tdmrep.json only HELD_SECONDS after every page was fetched."""

    pages_fetched: ClassVar[threading.Event] = threading.Event()
    fetched: ClassVar[set[str]] = set()

    def _respond(self, send_body: bool) -> None:
        if self.path == TDMREP_PATH:
            self.pages_fetched.wait(120)
            time.sleep(HELD_SECONDS)
        else:
            name = self.path.rsplit("/", 1)[-1].removesuffix(".html")
            if name in PAGES:
                self.fetched.add(name)
                if self.fetched >= set(PAGES):
                    self.pages_fetched.set()
        super()._respond(send_body)


def test_pages_read_before_a_late_tdmrep_answer_carry_its_reservation(
    tmp_path, chromium_path
) -> None:
    LateTdmrepHandler.pages_fetched = threading.Event()
    LateTdmrepHandler.fetched = set()
    site = build_site(tmp_path)
    out = tmp_path / "articles.jsonl"
    extra = ["-a", "max_depth=0", "-s", f"MODELS_DIR={tmp_path / 'models'}"]
    extra += ["-s", "RESPECT_RESERVATIONS=False"]  # delivered, to see what each carries
    with serving(site, handler_class=LateTdmrepHandler) as server:
        result = run_crawl(SITE, server.base_url, out, *extra, pages=False)
    assert result.returncode == 0, result.log[-3000:]
    assert LateTdmrepHandler.pages_fetched.is_set()
    by_page = {a["url"].rsplit("/", 1)[-1].removesuffix(".html"): a for a in result.items}
    assert sorted(by_page) == sorted(PAGES), result.log[-3000:]
    assert by_page["tdm-listed"].get("reserved") == ["tdm"], result.log[-3000:]
    assert by_page["tdm-listed-too"].get("reserved") == ["tdm"]
    assert "reserved" not in by_page["plain"] and "reserved" not in by_page["plain-too"]
    assert "Traceback" not in result.log
