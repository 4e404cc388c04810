"""Accuracy of article titles, dates and authors.

    python benchmarks/metadata_accuracy.py                      # demo site + L3S-GN1
    python benchmarks/metadata_accuracy.py --crawl-cache /work/evalcache/crawl

Demo site: the real ``scrapy crawl news`` writes articles; each is compared with
``demo/<site>/metadata.json`` (the generator's truth; some pages have broken metadata on
purpose: a ``<title>`` that is the site's name, navigation in the author field, a garbage
date). Authors and dates count as right when equal, *empty* when left out, *wrong*
otherwise (the product must never be wrong with confidence).

L3S-GN1 (``../shared/datasets/l3s-gn1``): its gold text starts with the annotated headline
(``x-nc-sel1``), so the first gold line is the headline. Pages are crawled (cached like the
evaluation command's) and each article title is compared with it, next to the raw
``<title>`` and og:title. Comparison is over lower-cased word tokens; the gold replaced every
character outside Latin-1 with ``?``, so tokens holding ``?`` are left out on both sides.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spidercrawl.evaluate.crawl import crawl_snapshot  # noqa: E402
from spidercrawl.extract.item import article_item  # noqa: E402
from spidercrawl.extract.metadata import SiteTitles  # noqa: E402
from spidercrawl.runner import DEMO_SITE, PROJECT_ROOT, crawl_command, read_jsonl  # noqa: E402
from spidercrawl.serve import serving  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs  # noqa: E402

L3S = REPO.parent / "shared" / "datasets" / "l3s-gn1"


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[\w?']+", text.lower()) if "?" not in t]


def title_verdict(found: str, gold: str) -> str:
    found_tokens, gold_tokens = tokens(found), tokens(gold)
    if not found_tokens:
        return "empty"
    if found_tokens == gold_tokens:
        return "exact"
    common = sum((Counter(found_tokens) & Counter(gold_tokens)).values())
    f1 = 2 * common / (len(found_tokens) + len(gold_tokens))
    return "close" if f1 >= 0.8 else "wrong"


def verdict(found: object, truth: object) -> str:
    if not found:
        return "empty"
    return "right" if found == truth else "wrong"


def demo() -> None:
    import subprocess

    truth = json.loads((DEMO_SITE / "metadata.json").read_text("utf-8"))
    snapshot = SiteSnapshot(DEMO_SITE)
    page_of = {path: page_id for page_id, path in snapshot.path_of.items()}
    with tempfile.TemporaryDirectory() as tmp, serving(DEMO_SITE) as server:
        out = Path(tmp) / "articles.jsonl"
        command = crawl_command(
            snapshot.host,
            server.base_url,
            out,
            settings={"MODELS_DIR": f"{tmp}/models", "STATE_DIR": f"{tmp}/state"},
        )
        subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, check=True)
        articles = read_jsonl(out)
    counts: dict[str, Counter] = {"title": Counter(), "published": Counter(), "authors": Counter()}
    for article in articles:
        expected = truth[page_of["/" + article["url"].split("/", 3)[3]]]
        counts["title"][title_verdict(article["title"], expected["title"])] += 1
        counts["published"][verdict(article["published"], expected["published"])] += 1
        counts["authors"][verdict(article["authors"], expected["authors"])] += 1
    print(f"demo site: {len(articles)} articles (scrapy crawl news)")
    for field, counter in counts.items():
        if field == "authors":  # an empty list is right where the page names nobody
            empty_right = sum(1 for v in truth.values() if not v["authors"])
            counter["right"] += min(counter["empty"], empty_right)
            counter["empty"] -= min(counter["empty"], empty_right)
        print(f"  {field:>9}: " + ", ".join(f"{k} {counter[k]}" for k in sorted(counter)))


def l3s(cache: Path) -> None:
    totals: dict[str, Counter] = {"ours": Counter(), "<title>": Counter(), "og:title": Counter()}
    pages = 0
    for site_dir in find_site_dirs(L3S):
        snapshot = SiteSnapshot(site_dir)
        crawled = crawl_snapshot(snapshot, cache / "l3s-gn1" / f"{snapshot.host}.jsonl")
        site_titles = SiteTitles()  # as the pipeline learns the site's name from its pages
        for page in crawled.values():
            site_titles.observe(page)
        for page_id, page in crawled.items():
            gold_lines = snapshot.gold_path(page_id).read_text("utf-8").splitlines()
            if not gold_lines:
                continue
            pages += 1
            headline = gold_lines[0]
            ours = article_item(page, None, "none", None, "", site_titles.names())["title"]
            titles = page.get("titles") or []
            totals["ours"][title_verdict(ours, headline)] += 1
            totals["<title>"][title_verdict(titles[0] if titles else "", headline)] += 1
            og = (page.get("og") or {}).get("og:title") or ""
            totals["og:title"][title_verdict(og if isinstance(og, str) else "", headline)] += 1
    print(f"L3S-GN1 titles against the annotated headline: {pages} pages")
    for name, counter in totals.items():
        exact = counter["exact"] / max(pages, 1)
        close = (counter["exact"] + counter["close"]) / max(pages, 1)
        print(
            f"  {name:>9}: exact {exact:.1%}, exact or close {close:.1%} "
            f"(empty {counter['empty']}, wrong {counter['wrong']})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--crawl-cache", type=Path, default=Path(tempfile.gettempdir()) / "sc-crawl"
    )
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args()
    if not args.skip_demo:
        demo()
    if L3S.is_dir():
        l3s(args.crawl_cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
