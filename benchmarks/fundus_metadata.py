"""Titles, authors and dates of ``fundus-dev``'s news pages against the publishers' parsers,
ours (``extract_html``) beside trafilatura's (``bare_extraction``, same pages, same run).

    python benchmarks/fundus_metadata.py [--datasets ../shared/datasets] [--show]

Gold: ``HOST/meta/ID.json`` (title, authors, published), what Fundus's hand-written parser
for the publisher reads. A field is *right*, *empty* (nothing found) or *wrong*:

- title: the same words, lower-cased (punctuation apart);
- date: the same day as the gold's publishing date;
- authors: the same set of names (lower-cased words; the gold's order and "and" apart).
  Pages whose gold has no author count as right where we give none.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from spidercrawl import extract_html  # noqa: E402

DEFAULT_DATASETS = REPO.parent / "shared" / "datasets"


def words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", text.lower()))


def title_verdict(found: str, gold: str) -> str:
    if not found:
        return "empty"
    return "right" if words(found) == words(gold) else "wrong"


def date_verdict(found: str, gold: str) -> str:
    if not found:
        return "empty"
    return "right" if found[:10] == gold[:10] else "wrong"


def author_verdict(found: list[str], gold: list[str]) -> str:
    wanted = {words(name) for name in gold if words(name)}
    got = {words(name) for name in found if words(name)}
    if not got:
        return "right" if not wanted else "empty"
    return "right" if got == wanted else "wrong"


def trafilatura_metadata(raw: bytes, url: str) -> tuple[str, list[str], str]:
    import trafilatura

    document = trafilatura.bare_extraction(raw, url=url, with_metadata=True)
    if document is None:
        return "", [], ""
    data = document.as_dict() if hasattr(document, "as_dict") else dict(document)
    authors = [a.strip() for a in re.split(r";", data.get("author") or "") if a.strip()]
    return data.get("title") or "", authors, data.get("date") or ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--show", action="store_true", help="print each wrong or empty author")
    args = parser.parse_args()
    root = args.datasets / "fundus-dev"
    ours: Counter[tuple[str, str]] = Counter()
    theirs: Counter[tuple[str, str]] = Counter()
    pages = 0
    for meta_path in sorted(root.glob("*/meta/*.json")):
        host, page_id = meta_path.parts[-3], meta_path.stem
        gold = json.loads(meta_path.read_text("utf-8"))
        raw = (root / host / "pages" / f"{page_id}.html").read_bytes()
        url = f"https://{host}/{page_id}"
        for line in (root / host / "index.tsv").read_text("utf-8").splitlines():
            parts = line.split("\t")
            if parts[0] == page_id and len(parts) > 1 and parts[1].strip():
                url = parts[1].strip()
        pages += 1
        article = extract_html(raw, url=url)
        title, authors, date = trafilatura_metadata(raw, url)
        for counter, found in (
            (ours, (article["title"], article["authors"], article["published"])),
            (theirs, (title, authors, date)),
        ):
            counter["title", title_verdict(found[0], gold.get("title") or "")] += 1
            counter["authors", author_verdict(found[1], gold.get("authors") or [])] += 1
            counter["date", date_verdict(found[2], str(gold.get("published") or ""))] += 1
        verdict = author_verdict(article["authors"], gold.get("authors") or [])
        if args.show and verdict != "right":
            print(f"  {host}/{page_id}: ours {article['authors']} gold {gold.get('authors')}")
    print(f"fundus-dev: {pages} pages (right / empty / wrong)")
    for field in ("title", "authors", "date"):
        print(
            f"  {field:8s} ours {ours[field, 'right']:3d} / {ours[field, 'empty']:3d} / "
            f"{ours[field, 'wrong']:3d}   trafilatura {theirs[field, 'right']:3d} / "
            f"{theirs[field, 'empty']:3d} / {theirs[field, 'wrong']:3d}"
        )


if __name__ == "__main__":
    main()
