"""The articles' Markdown on the dev datasets: sub-headlines kept as headings, tables and
code kept, the Markdown parsed back to the same words as ``text``, and its cost.

    python benchmarks/markdown_output.py [--datasets ../shared/datasets] [--dump FILE]

- Sub-headlines: of the sub-headlines Fundus's parsers read (``fundus-dev``,
  ``HOST/meta/ID.json`` ``subheads``), the share found as a Markdown heading line of
  ``extract_html``'s Markdown, as a heading of its ``html``, and as a heading line of
  trafilatura's Markdown (``output_format="markdown"``) of the same page.
- Parse-back: every page's Markdown rendered by markdown-it (CommonMark with tables);
  the rendered text must hold the same words, as many times, as ``text``.
- Tables and code: pages whose article HTML has a ``<table>`` / ``<pre>``, and whose
  Markdown has a table / a code fence.
- Cost: milliseconds a page of making the Markdown from the article's HTML.
``--dump FILE`` writes each page's text (JSON), to check that ``text`` did not change.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import lxml.html  # noqa: E402
from exceptions_over_datasets import dataset_pages  # noqa: E402
from markdown_it import MarkdownIt  # noqa: E402

from spidercrawl import extract_html  # noqa: E402
from spidercrawl.document.markdown import html_markdown  # noqa: E402

DEFAULT_DATASETS = REPO.parent / "shared" / "datasets"
HEADING_LINE = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def folded(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def markdown_headings(markdown: str) -> set[str]:
    return {
        folded(match.group(1).replace("\\", ""))
        for line in markdown.splitlines()
        if (match := HEADING_LINE.match(line))
    }


def html_headings(html: str) -> set[str]:
    if not html.strip():
        return set()
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    return {folded(h.text_content()) for h in root.iter("h1", "h2", "h3", "h4", "h5", "h6")}


def rendered_words(markdown: str, parser: MarkdownIt) -> Counter[str]:
    html = parser.render(markdown)
    if not html.strip():
        return Counter()
    return Counter(lxml.html.fragment_fromstring(html, create_parent="div").text_content().split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--no-trafilatura", action="store_true")
    args = parser.parse_args()
    markdown_it = MarkdownIt("commonmark").enable("table")
    texts: dict[str, str] = {}
    subheads = found_md = found_html = found_traf = 0
    pages = parse_back_failures = 0
    tables = Counter()
    md_seconds = 0.0
    failures: list[str] = []
    for dataset, name, raw in dataset_pages(args.datasets):
        url = name if name.startswith("http") else f"https://{name}"
        article = extract_html(raw, url=url)
        pages += 1
        texts[f"{dataset}/{name}"] = article["text"]
        started = time.perf_counter()
        markdown = html_markdown(article["html"])
        md_seconds += time.perf_counter() - started
        if markdown != article["markdown"]:
            markdown = article["markdown"]  # no HTML: the text's paragraphs
        if rendered_words(markdown, markdown_it) != Counter(article["text"].split()):
            parse_back_failures += 1
            failures.append(f"{dataset}/{name}")
        html = article["html"]
        tables["html table"] += "<table>" in html
        tables["markdown table"] += bool(re.search(r"^\| .* \|\n\|( --- \|)+$", markdown, re.M))
        tables["html pre"] += "<pre>" in html
        tables["markdown code"] += "\n```" in "\n" + markdown
        if dataset != "fundus-dev":
            continue
        host, page = name.split("/")
        meta_path = args.datasets / dataset / host / "meta" / page.replace(".html", ".json")
        wanted = [folded(s) for s in json.loads(meta_path.read_text("utf-8")).get("subheads", [])]
        wanted = [s for s in wanted if s]
        subheads += len(wanted)
        ours_md, ours_html = markdown_headings(markdown), html_headings(html)
        found_md += sum(s in ours_md for s in wanted)
        found_html += sum(s in ours_html for s in wanted)
        if not args.no_trafilatura and wanted:
            import trafilatura

            theirs = trafilatura.extract(raw, output_format="markdown", url=url) or ""
            found_traf += sum(s in markdown_headings(theirs) for s in wanted)
    print(f"{pages} pages")
    print(
        f"fundus-dev sub-headlines: {subheads}; as headings: ours (markdown) "
        f"{found_md / max(subheads, 1):.1%}, ours (html) {found_html / max(subheads, 1):.1%}, "
        f"trafilatura (markdown) {found_traf / max(subheads, 1):.1%}"
    )
    print(f"parse-back: {pages - parse_back_failures} of {pages} pages hold the same words")
    for failure in failures[:10]:
        print(f"  differs: {failure}")
    print(
        f"tables: {tables['html table']} pages with one in html, {tables['markdown table']} "
        f"in markdown; code: {tables['html pre']} pages with <pre>, "
        f"{tables['markdown code']} with a fence"
    )
    print(f"markdown from html: {1000 * md_seconds / max(pages, 1):.3f} ms a page")
    if args.dump:
        args.dump.write_text(json.dumps(texts, ensure_ascii=False), "utf-8")


if __name__ == "__main__":
    main()
