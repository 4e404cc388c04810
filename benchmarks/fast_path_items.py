"""The fast path's whole cost per page, from raw HTML to the finished article item.

    python benchmarks/fast_path_items.py [--repeat 10]

A real crawl of the demo site (served on 127.0.0.1) learns its model. Then, in one process
and on the same pages, each page's raw HTML goes through what the crawl does after the
download, in the crawl's own functions and order: the fast-path middleware (parse, page
metadata, rules, check), the page item, the learning pipeline (the extraction chain: the
fast path's article and its independent check; the article item's metadata, headline and
assembly), the incremental pipeline (content
hash) and the JSON Feed pipeline (feed entry). Writing files is left out. trafilatura's
``bare_extraction`` with its metadata runs on the same pages in the same run. Prints
pages/s and milliseconds per page of each stage.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.capture.static import static_capture  # noqa: E402
from spidercrawl.document.html import parse_raw_html  # noqa: E402
from spidercrawl.document.page import first_description  # noqa: E402
from spidercrawl.extract.chain import ExtractionChain  # noqa: E402
from spidercrawl.extract.item import article_item  # noqa: E402
from spidercrawl.extract.readers import Peers  # noqa: E402
from spidercrawl.learn.model import SiteModel  # noqa: E402
from spidercrawl.learn.rules import FastPathArticle  # noqa: E402
from spidercrawl.memory import content_hash  # noqa: E402
from spidercrawl.pipelines.jsonfeed import feed_item  # noqa: E402
from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT, crawl_command  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot  # noqa: E402

SITE = "harbourtimes.example"


def learn_model(folder: Path) -> SiteModel:
    """The demo's model, learned by a real crawl (rendered, LEARN_MIN_PAGES pages)."""
    import subprocess

    with serving(DEMO_SITE) as server:
        command = crawl_command(
            SITE,
            server.base_url,
            folder / "articles.jsonl",
            spider_args={"max_pages": 10},
            settings={
                "MODELS_DIR": folder / "models",
                "STATE_DIR": folder / "state",
                "JSONFEED_PATH": folder / "feed.json",
                "LOG_LEVEL": "WARNING",
            },
        )
        subprocess.run(command, cwd=PROJECT_ROOT, check=True, capture_output=True)
    return SiteModel.load(folder / "models" / SITE)


class Stopwatch:
    """Seconds per named stage, summed over pages."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] += now - self.last
        self.last = now


CHAIN = ExtractionChain(peers=Peers())  # as the crawl's pipeline, default settings


def ours(
    pages: list[tuple[str, str]], model: SiteModel, watch: Stopwatch, doubted: list[str]
) -> int:
    """The fast path on ``pages``: how many passed the rules' check (the URLs of those the
    chain's independent check then doubted go to ``doubted``)."""
    rules, accepted, chain = model.rules_, 0, CHAIN
    for html, url in pages:
        watch.last = time.perf_counter()
        document = parse_raw_html(html)
        watch.lap("parse")
        capture = static_capture(document, url)
        watch.lap("page metadata (raw HTML)")
        result = rules.extract(document)
        watch.lap("rules")
        verdict = rules.check(result, first_description(capture))
        watch.lap("check")
        if not verdict.ok:
            continue
        accepted += 1
        capture["fast_path_article"] = FastPathArticle(result, model.version_)
        page = {**capture, "url": url, "site": SITE, "rendered_html": html}
        result = chain.extract(page, model)
        watch.lap("the chain (the check: the page's prose, else text density's reading)")
        if result.method != "rules":
            doubted.append(url)
        article = article_item(page, result.extraction, result.method, model, result.note)
        watch.lap("article item (metadata, headline, assembly)")
        content_hash(article["title"], article["text"])
        feed_item(dict(article))
        watch.lap("pipelines (incremental, feed entry)")
    return accepted


def trafilatura_run(pages: list[tuple[str, str]], watch: Stopwatch) -> None:
    import trafilatura

    for html, url in pages:
        watch.last = time.perf_counter()
        trafilatura.bare_extraction(html, url=url, with_metadata=True)
        watch.lap("trafilatura bare_extraction, with metadata")


def _edition(html: str, number: int) -> str:
    """The page with a sentence of its own in its first paragraph of text."""
    return html.replace("<p>", f"<p>Edition {number} of this page, printed for the test. ", 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="passes over the 30 pages")
    args = parser.parse_args()
    snapshot = SiteSnapshot(DEMO_SITE)
    pages = [
        (snapshot.page_bytes(i).decode("utf-8"), f"https://{SITE}{snapshot.path_of[i]}")
        for i in snapshot.page_ids
    ]
    with tempfile.TemporaryDirectory() as folder:
        model = learn_model(Path(folder))
    ours(pages, model, Stopwatch(), [])  # warm-up: imports, caches
    trafilatura_run(pages, Stopwatch())
    mine, theirs = Stopwatch(), Stopwatch()
    accepted, doubted = 0, []
    for edition in range(args.repeat):  # interleaved, so both see the same machine
        # Each pass has texts of its own, as a crawl does: nothing computed for one page
        # (a cache of tokens, say) may serve the next pass's copy of it.
        edition_pages = [(_edition(html, edition), url) for html, url in pages]
        accepted += ours(edition_pages, model, mine, doubted)
        trafilatura_run(edition_pages, theirs)
    count = len(pages) * args.repeat
    print(
        f"{count} pages ({accepted} passed the rules' check, {len(doubted)} of them doubted "
        "by text density and decided by the raw-HTML consensus), one process"
    )
    print("| stage | ms per page |\n|---|---|")
    for stage, seconds in [*mine.seconds.items(), *theirs.seconds.items()]:
        print(f"| {stage} | {1000 * seconds / count:.2f} |")
    ours_total, theirs_total = sum(mine.seconds.values()), sum(theirs.seconds.values())
    print(f"\nspidercrawl fast path: {count / ours_total:.1f} pages/s")
    print(f"trafilatura with metadata: {count / theirs_total:.1f} pages/s")
    print(f"ratio: {theirs_total / ours_total:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
