"""The multi-page dev sets as one WARC collection, learned per host from half of each
host's records and extracted on the other half; and warcio beside fastwarc reading it.

    python benchmarks/archive_collection.py write DATASETS... --out DIR
    python benchmarks/archive_collection.py score DIR/test-gold.jsonl ARTICLES.jsonl...
    python benchmarks/archive_collection.py readers WARC...

``write``: every host of the site datasets (``HOST/pages/ID.html``, ``HOST/gold/ID.txt``,
``HOST/index.tsv``) with at least ``--min-pages`` pages, the first half of its pages by ID
to ``learn.warc.gz``, the rest to ``test.warc.gz``, and the test records' gold to
``test-gold.jsonl``. Then learn and extract with the product's own commands:

    python -m spidercrawl.learn archive DIR/learn.warc.gz --models DIR/models
    python -m spidercrawl.extract --models DIR/models DIR/test.warc.gz -o DIR/ours.jsonl
    python -m spidercrawl.extract DIR/test.warc.gz -o DIR/arbiter.jsonl

``score``: F1 over all test pages (a missing or empty article scores 0) of each articles
file, per host and overall, the headline left out where the gold has none (as
``spidercrawl.evaluate``'s convention, per dataset). ``readers``: records and seconds of
warcio and fastwarc over the same files (HTML response records, their payload read).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from warcio.statusandheaders import StatusAndHeaders  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

from spidercrawl.archive import site_of_url  # noqa: E402
from spidercrawl.evaluate.metrics import score_text  # noqa: E402
from spidercrawl.snapshot import SiteSnapshot, find_site_dirs  # noqa: E402


def write(datasets: list[Path], out: Path, min_pages: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    gold_lines = []
    hosts = pages = 0
    with (out / "learn.warc.gz").open("wb") as learn, (out / "test.warc.gz").open("wb") as test:
        writers = WARCWriter(learn, gzip=True), WARCWriter(test, gzip=True)
        for dataset in datasets:
            for site in find_site_dirs(dataset):
                snapshot = SiteSnapshot(site)
                ids = sorted(snapshot.page_ids)
                if len(ids) < min_pages:
                    continue
                hosts += 1
                half = len(ids) // 2
                paths: set[str] = set()
                for number, page_id in enumerate(ids):
                    url = _url(snapshot, page_id, paths)
                    writer = writers[0] if number < half else writers[1]
                    _record(writer, url, snapshot.page_bytes(page_id))
                    pages += 1
                    gold = site / "gold" / f"{page_id}.txt"
                    if number >= half and gold.exists():
                        gold_lines.append({"url": url, "dataset": dataset.name,
                                           "host": site.name, "gold": str(gold)})  # fmt: skip
    with (out / "test-gold.jsonl").open("w", encoding="utf-8") as handle:
        for line in gold_lines:
            handle.write(json.dumps(line) + "\n")
    print(f"{hosts} hosts, {pages} records; {len(gold_lines)} test records with gold in {out}")


def _url(snapshot: SiteSnapshot, page_id: str, paths: set[str]) -> str:
    """The page's original URL where it is on the snapshot's host and its path is the
    host's only one, else one made up on the host (a record per page, as the archive has)."""
    url = snapshot.original_urls.get(page_id, "")
    parts = urlsplit(url)
    if site_of_url(url) == snapshot.host.removeprefix("www.") and parts.path not in paths:
        paths.add(parts.path)
        return url
    return f"https://{snapshot.host}/archived/{page_id}.html"


def _record(writer: WARCWriter, url: str, body: bytes) -> None:
    headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], "HTTP/1.1")
    writer.write_record(
        writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers)
    )


def score(gold_file: Path, articles: list[Path]) -> None:
    golds = [json.loads(line) for line in gold_file.read_text("utf-8").splitlines()]
    for path in articles:
        items = {}
        for line in path.read_text("utf-8").splitlines():
            item = json.loads(line)
            items[item.get("url")] = item
        per_host: dict[str, list[float]] = defaultdict(list)
        per_dataset: dict[str, list[float]] = defaultdict(list)
        for entry in golds:
            item = items.get(entry["url"]) or {}
            gold = Path(entry["gold"]).read_text("utf-8")
            text = str(item.get("text") or "")
            title = str(item.get("title") or "")
            if title and text.startswith(title) and not gold.lstrip().startswith(title[:40]):
                text = text[len(title) :].lstrip()
            f1 = score_text(text, gold, with_difflib=False).f1 if text else 0.0
            per_host[f"{entry['dataset']}/{entry['host']}"].append(f1)
            per_dataset[entry["dataset"]].append(f1)
        every = [f for values in per_dataset.values() for f in values]
        print(f"{path.name}: F1 over all {len(every)} test pages {sum(every) / len(every):.4f}")
        for dataset, values in sorted(per_dataset.items()):
            print(f"  {dataset:<20} {len(values):>5} pages  F1 {sum(values) / len(values):.4f}")


def readers(files: list[Path]) -> None:
    from fastwarc.warc import ArchiveIterator as FastIterator
    from fastwarc.warc import WarcRecordType
    from warcio.archiveiterator import ArchiveIterator

    for name in ("warcio", "fastwarc"):
        started, records, payload = time.perf_counter(), 0, 0
        for path in files:
            with path.open("rb") as stream:
                if name == "warcio":
                    for record in ArchiveIterator(stream):
                        if record.rec_type == "response":
                            payload += len(record.content_stream().read())
                            records += 1
                else:
                    for record in FastIterator(stream, record_types=WarcRecordType.response):
                        payload += len(record.reader.read())
                        records += 1
        seconds = time.perf_counter() - started
        print(f"{name}: {records} response records, {payload / 2**20:.1f} MiB in {seconds:.2f} s"
              f" ({records / seconds:.0f} records/s)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    writing = commands.add_parser("write")
    writing.add_argument("datasets", nargs="+", type=Path)
    writing.add_argument("--out", type=Path, required=True)
    writing.add_argument("--min-pages", type=int, default=4)
    scoring = commands.add_parser("score")
    scoring.add_argument("gold", type=Path)
    scoring.add_argument("articles", nargs="+", type=Path)
    reading = commands.add_parser("readers")
    reading.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        write(args.datasets, args.out, args.min_pages)
    elif args.command == "score":
        score(args.gold, args.articles)
    else:
        readers(args.files)


if __name__ == "__main__":
    main()
