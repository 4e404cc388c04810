"""spidercrawl's reading of WARC archives as datatrove pipeline steps: a WARC reader that
loses no HTML page, and each document's HTML read by its host's site model, by the
arbiter where its host has none.

Corpus pipelines (FineWeb and its kind) run on datatrove: a WARC reader, an extractor
(trafilatura by default), filters, a writer, spread over many machines by its local, Slurm
or Ray executors. :class:`WarcReader` takes the reader's place, :class:`SiteModelExtractor`
the extractor's::

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter
    from spidercrawl.datatrove import SiteModelExtractor, WarcReader

    LocalPipelineExecutor(pipeline=[
        WarcReader("crawl/"),
        SiteModelExtractor(models="models/"),
        JsonlWriter("articles/"),
    ], tasks=4, workers=4, logging_dir="logs/").run()

datatrove's own reader takes a record for HTML by its ``WARC-Identified-Payload-Type``,
and where a WARC has none, by libmagic, which calls real article pages (a blank line
before the doctype, IE's conditional comments, early scripts)
``application/javascript``: they are lost. Ours reads records as ``python -m
spidercrawl.extract`` does (:mod:`spidercrawl.archive`): HTML by the HTTP Content-Type and
the markup, with the record's HTTP status and headers in the document's metadata, so that
the extractor judges the page as the crawl judged it live: a bot wall is dropped and
counted, an ``X-Robots-Tag`` or ``tdm-reservation`` header counts in ``reserved``.

A document's text becomes the article's text; the article item's other fields (title,
authors, dates, language, method, confidence, access, reserved...) go into its metadata.
Every document is an article or a counted drop, in the step's stats: ``blocked`` (and
``blocked/KIND``), ``empty``, ``failed`` (its extraction raised); beside ``by_rules``,
``by_arbiter``, ``paywalled``, ``reserved`` (and ``reserved/NAME``).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.readers import WarcReader as DatatroveWarcReader

from spidercrawl.archive import ArchivedPage, ReadCounts, ReadError, site_of_url, warc_pages
from spidercrawl.document import language
from spidercrawl.document.html import decode_html
from spidercrawl.document.response import ResponseHead
from spidercrawl.extract.api import BlockedPageError, extract_html
from spidercrawl.extract.hosts import HostModels

logger = logging.getLogger(__name__)

# The article item's fields kept in a document's metadata (text is the document's text).
METADATA_FIELDS = (
    "title", "description", "authors", "published", "modified", "lang", "canonical_url",
    "method", "method_note", "model_version", "confidence", "word_count", "access",
    "reserved", "site",
)  # fmt: skip
# Where the reader puts a record's HTTP status and headers (those the recognisers read).
STATUS_KEY, HEADERS_KEY = "http_status", "http_headers"


class WarcReader(DatatroveWarcReader):
    """datatrove's WARC reader, with its options, that makes every HTML page of a WARC a
    document whatever the WARC's headers: ``response`` and ``resource`` records, HTML by
    their HTTP Content-Type (or identified payload type), else by their markup; decoded
    as the crawl decodes pages. Redirects and HTTP errors other than a wall's are no
    pages; damaged gzip members are logged and reading resumes after them. Conversion
    records (WET text, a crawl's rendered DOM) are not read."""

    name = "🕷 Warc (spidercrawl)"

    def read_file(self, filepath: str) -> DocumentsPipeline:
        gzipped = filepath.lower().endswith(".gz")
        # warcio undoes a WARC's gzip member by member itself, and can then resume after
        # a damaged one; datatrove's own decompression would end the file there.
        compression = None if self.compression == "infer" and gzipped else self.compression
        counts = ReadCounts()
        with self.data_folder.open(filepath, "rb", compression=compression) as file:
            entries = warc_pages(file, filepath, gzipped and compression is None, counts)
            for number, entry in enumerate(entries):
                if isinstance(entry, ReadError):
                    self.stat_update("read_errors")
                    logger.warning("%s: skipped (%s)", entry.source, entry.reason)
                    continue
                with self.track_time():
                    document = self.get_document_from_dict(_record_data(entry), filepath, number)
                if document:
                    yield document
        self.stat_update("not_html", value=counts.skipped)
        self.stat_update("redirects_and_errors", value=counts.not_pages)


def _record_data(page: ArchivedPage) -> dict[str, Any]:
    """A record as datatrove's reader gives one (text, id, url, date), with its HTTP status
    and the headers the recognisers read."""
    kept = page.head.kept()
    return {
        "text": decode_html(page.body, page.content_type or None)[0],
        "id": page.record_id or page.source,
        "url": page.url,
        "date": page.date,
        "metadata": {STATUS_KEY: kept.status, HEADERS_KEY: [list(pair) for pair in kept.headers]},
    }


class SiteModelExtractor(PipelineStep):
    """Extracts each document's article with its host's site model from ``models`` (a
    folder as a crawl or ``python -m spidercrawl.learn archive`` writes it; None: the
    arbiter reads every page). ``raw_consensus`` False reads pages without a model by
    text density alone (quicker, less accurate). ``robots_agents``: whose robots
    directives count besides every crawler's (``ROBOTS_AGENTS`` by default)."""

    name = "spidercrawl site models"
    type = "🛢 - EXTRAC"

    def __init__(
        self,
        models: str | Path | None = "models/",
        raw_consensus: bool = True,
        robots_agents: Iterable[str] | None = None,
    ) -> None:
        super().__init__()
        self.models = str(models) if models is not None else None
        self.raw_consensus = raw_consensus
        self.robots_agents = list(robots_agents) if robots_agents is not None else None

    def run(
        self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1
    ) -> Iterator[Document]:
        # Made in the worker (a step is pickled to each task): models load once per host.
        host_models = HostModels(self.models) if self.models is not None else None
        # The language identifier's model (0.4 s, mostly LZMA, which releases the GIL)
        # loads while the first records are read and cut, as a crawl loads it at its start.
        language.load_in_background()
        frozen = False
        for document in data:
            self.stat_update("total")
            with self.track_time():
                article = self._article(document, host_models)
                if not frozen:
                    _freeze_long_lived()
                    frozen = True
            if article is None:
                continue
            yield article

    def _article(self, document: Document, host_models: HostModels | None) -> Document | None:
        url = str(document.metadata.get("url") or "")
        head = _head_of(document.metadata)  # a 200 without headers from another reader
        try:
            model = host_models.model_for(site_of_url(url)) if host_models else None
            item = extract_html(
                document.text, url, model, head=head, robots_agents=self.robots_agents,
                raw_consensus=self.raw_consensus,
                with_html=False,  # a document keeps the text; its clean HTML is not built
            )  # fmt: skip
        except BlockedPageError as blocked:  # a wall in the article's place: no article
            self.stat_update("blocked", f"blocked/{blocked.wall.key}")
            logger.info("%s", blocked)
            return None
        except Exception as error:  # one document's failure must not end the task
            self.stat_update("failed")
            logger.warning("%s: extraction failed (%s: %s)", url, type(error).__name__, error)
            return None
        text = str(item.get("text") or "")
        if not text.strip():
            self.stat_update("empty")
            return None
        self.stat_update("by_rules" if item.get("method") == "rules" else "by_arbiter")
        if item.get("access") == "paywalled":
            self.stat_update("paywalled")
        if reserved := item.get("reserved"):
            self.stat_update("reserved", *(f"reserved/{name}" for name in reserved))
        document.text = text
        document.metadata.update(_metadata(item))
        self.update_doc_stats(document)
        return document


def _freeze_long_lived() -> None:
    """Hide what the process holds after its first record (modules, the readers' imports,
    the pipeline) from the cycle collector: its full collections walked all of it a few
    times a hundred records. Frozen objects are still freed by
    reference counting; the garbage from before is collected first, so none of it is kept."""
    gc.collect()
    gc.freeze()


def _head_of(metadata: dict[str, Any]) -> ResponseHead:
    """The HTTP status and headers :class:`WarcReader` put in a document's metadata (taken
    out of it: the article's metadata replaces them)."""
    status = metadata.pop(STATUS_KEY, 200)
    headers = metadata.pop(HEADERS_KEY, None) or []
    pairs = [pair for pair in headers if isinstance(pair, list | tuple) and len(pair) == 2]
    return ResponseHead.of(status, pairs)


def _metadata(item: Any) -> dict[str, Any]:
    return {
        field: item.get(field) for field in METADATA_FIELDS if item.get(field) not in (None, "", [])
    }
