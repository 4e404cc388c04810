"""The cross-site model: one SVM for sites that have no model of their own yet.

Each training site is auto-labeled on its own (clusters and relevance need one template),
then the blocks of all sites are pooled and a :class:`SiteModel` is trained on features
whose meaning carries from site to site (``CROSS_SITE_GROUPS``: text statistics, geometry,
link density, tag names and generic CSS; no ids or class names).

    python -m spidercrawl.learn.cross_site SITE_PAGES_DIR [...] --out models/_cross_site

where each SITE_PAGES_DIR holds one site's page items as ``*.json`` files, or a JSON Lines
file of page items (what ``scrapy crawl news -s LEARN_ENABLED=False -O pages.jsonl`` writes).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spidercrawl.learn.features import CROSS_SITE_GROUPS
from spidercrawl.learn.model import SiteModel
from spidercrawl.runner import read_jsonl

logger = logging.getLogger(__name__)


def load_site_pages(source: Path) -> list[dict[str, Any]]:
    """Page items of one site: a folder of ``*.json`` pages or a ``.jsonl`` file."""
    if source.is_dir():
        files = sorted(p for p in source.glob("*.json") if p.stem.isdigit())
        return [json.loads(p.read_text("utf-8")) for p in files]
    return read_jsonl(source)


def train_cross_site(
    sites: Mapping[str, Sequence[Mapping[str, Any]]], random_state: int = 0
) -> SiteModel:
    """Auto-label each site alone, pool the blocks, train on cross-site features."""
    all_blocks, all_labels, pages = [], [], 0
    for name, site_pages in sites.items():
        try:
            blocks, labels = SiteModel().auto_label(site_pages)
        except ValueError as error:
            logger.warning("Skipping %s: %s", name, error)
            continue
        logger.info("%s: %d pages, %d blocks, %d content", name, len(site_pages), len(blocks),
                    int(np.sum(labels)))  # fmt: skip
        all_blocks += blocks
        all_labels.append(labels)
        pages += len(site_pages)
    model = SiteModel(feature_groups=CROSS_SITE_GROUPS, random_state=random_state)
    return model.fit_labeled(all_blocks, np.concatenate(all_labels), pages=pages)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(prog="python -m spidercrawl.learn.cross_site")
    parser.add_argument("sources", nargs="+", type=Path, help="one per site")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    sites = {source.stem: load_site_pages(source) for source in args.sources}
    model = train_cross_site(sites)
    model.save(args.out)
    logger.info("Cross-site model of %d sites saved to %s", len(sites), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
