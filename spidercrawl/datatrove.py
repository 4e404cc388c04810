"""spidercrawl's extraction as a datatrove pipeline step: each document's HTML read by its
host's site model, by the arbiter where its host has none.

Corpus pipelines (FineWeb and its kind) run on datatrove: a WARC reader, an extractor
(trafilatura by default), filters, a writer, spread over many machines by its local, Slurm
or Ray executors. :class:`SiteModelExtractor` takes the extractor's place::

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from spidercrawl.datatrove import SiteModelExtractor

    LocalPipelineExecutor(pipeline=[
        WarcReader("crawl/"),
        SiteModelExtractor(models="models/"),
        JsonlWriter("articles/"),
    ], tasks=4, workers=4, logging_dir="logs/").run()

A document's text becomes the article's text; the article item's other fields (title,
authors, dates, language, method, confidence, access, reserved...) go into its metadata.
A document whose page gives no article text is dropped, and one whose extraction raised
is dropped and counted (``failed``, in the step's stats with ``by_rules``,
``by_arbiter`` and ``empty``): every document is an article or a counted drop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from spidercrawl.archive import site_of_url
from spidercrawl.extract.api import extract_html
from spidercrawl.extract.hosts import HostModels

logger = logging.getLogger(__name__)

# The article item's fields kept in a document's metadata (text is the document's text).
METADATA_FIELDS = (
    "title", "description", "authors", "published", "modified", "lang", "canonical_url",
    "method", "method_note", "model_version", "confidence", "word_count", "access",
    "reserved", "site",
)  # fmt: skip


class SiteModelExtractor(PipelineStep):
    """Extracts each document's article with its host's site model from ``models`` (a
    folder as a crawl or ``python -m spidercrawl.learn archive`` writes it; None: the
    arbiter reads every page). ``raw_consensus`` False reads pages without a model by
    text density alone (quicker, less accurate)."""

    name = "spidercrawl site models"
    type = "🛢 - EXTRAC"

    def __init__(self, models: str | Path | None = "models/", raw_consensus: bool = True) -> None:
        super().__init__()
        self.models = str(models) if models is not None else None
        self.raw_consensus = raw_consensus

    def run(
        self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1
    ) -> Iterator[Document]:
        # Made in the worker (a step is pickled to each task): models load once per host.
        host_models = HostModels(self.models) if self.models is not None else None
        for document in data:
            self.stat_update("total")
            with self.track_time():
                article = self._article(document, host_models)
            if article is None:
                continue
            yield article

    def _article(self, document: Document, host_models: HostModels | None) -> Document | None:
        url = str(document.metadata.get("url") or "")
        try:
            model = host_models.model_for(site_of_url(url)) if host_models else None
            item = extract_html(document.text, url, model, raw_consensus=self.raw_consensus)
        except Exception as error:  # one document's failure must not end the task
            self.stat_update("failed")
            logger.warning("%s: extraction failed (%s: %s)", url, type(error).__name__, error)
            return None
        text = str(item.get("text") or "")
        if not text.strip():
            self.stat_update("empty")
            return None
        self.stat_update("by_rules" if item.get("method") == "rules" else "by_arbiter")
        document.text = text
        document.metadata.update(_metadata(item))
        self.update_doc_stats(document)
        return document


def _metadata(item: Any) -> dict[str, Any]:
    return {
        field: item.get(field) for field in METADATA_FIELDS if item.get(field) not in (None, "", [])
    }
