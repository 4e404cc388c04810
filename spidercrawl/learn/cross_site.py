"""The cross-site model: one SVM for sites that have no model of their own yet.

Each training site is learned on its own (clusters and relevance need one template) and its
blocks are labeled with what its own model extracts (:func:`site_labels`); then the blocks
of all sites are pooled (at most ``MAX_BLOCKS_PER_SITE`` per site, so that big sites do not
drown small ones) and a :class:`SiteModel` is trained on features whose meaning carries from
site to site (``CROSS_SITE_GROUPS``: text statistics, geometry, link and text density, tag
names, generic CSS, and the id/class words used by at least ``MIN_SITES_PER_WORD`` sites,
such as comment, sidebar, entry or post; no whole ids or class names).

    python -m spidercrawl.learn.cross_site SITE_PAGES [...] --out models/_cross_site

where each SITE_PAGES is one site's page items: a folder of ``*.json`` files, or a JSON
Lines file (what ``scrapy crawl news -s LEARN_ENABLED=False -O pages.jsonl`` writes, or the
evaluation command's crawl cache).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spidercrawl.document.blocks import Block
from spidercrawl.files import read_jsonl
from spidercrawl.learn.features import CROSS_SITE_GROUPS, step_words
from spidercrawl.learn.model import SiteModel

logger = logging.getLogger(__name__)

MAX_BLOCKS_PER_SITE = 3000
MIN_SITES_PER_WORD = 5
# The SVM's C: pooled sites disagree, and full tag paths one site uses would otherwise get
# large weights; 0.1 regularizes them (measured with held-out-site models, ``unseen`` mean
# of datasets: C 1 0.941, 0.2 0.943, 0.1 0.944, 0.05 0.943, bonus and tolerance halved).
CROSS_SITE_C = 0.1

LabeledSite = tuple[list[Block], np.ndarray]


def load_site_pages(source: Path) -> list[dict[str, Any]]:
    """Page items of one site: a folder of ``*.json`` pages or a ``.jsonl`` file."""
    if source.is_dir():
        files = sorted(p for p in source.glob("*.json") if p.stem.isdigit())
        return [json.loads(p.read_text("utf-8")) for p in files]
    return read_jsonl(source)


def site_labels(pages: Sequence[Mapping[str, Any]], random_state: int = 0) -> LabeledSite:
    """One site's blocks, labeled with what a model learned on the site extracts from them
    (the article with its nested blocks, gaps and continuation, not the bare clusters:
    what the cross-site model should find is what a learned site gives).

    Raises ``ValueError`` when the site cannot be learned."""
    # One model per site as the cross-site model was trained (its labels; layouts apart).
    return SiteModel(random_state=random_state, layouts=False).fit_extract(pages)


def sample_site(site: LabeledSite, max_blocks: int, random_state: int = 0) -> LabeledSite:
    """At most ``max_blocks`` of a labeled site's blocks, a seeded sample in page order."""
    blocks, labels = site
    if len(blocks) <= max_blocks:
        return list(blocks), np.asarray(labels, dtype=bool)
    chosen = sorted(random.Random(random_state).sample(range(len(blocks)), max_blocks))
    return [blocks[i] for i in chosen], np.asarray(labels, dtype=bool)[chosen]


def common_class_words(sites: Mapping[str, LabeledSite], min_sites: int) -> frozenset[str]:
    """The id/class words found on at least ``min_sites`` of the sites."""
    sites_of: dict[str, set[str]] = defaultdict(set)
    for name, (blocks, _) in sites.items():
        for step in {step for block in blocks for step in block.selector}:
            for word in step_words(step):
                sites_of[word].add(name)
    return frozenset(word for word, names in sites_of.items() if len(names) >= min_sites)


def train_cross_site_labeled(
    sites: Mapping[str, LabeledSite],
    random_state: int = 0,
    max_blocks_per_site: int = MAX_BLOCKS_PER_SITE,
    min_sites_per_word: int = MIN_SITES_PER_WORD,
    C: float = CROSS_SITE_C,  # noqa: N803 (scikit-learn's name)
) -> SiteModel:
    """Pool labeled sites (a seeded sample of each big one) and train on cross-site features."""
    if not sites:
        raise ValueError("no labeled site to train a cross-site model on")
    sites = {
        name: sample_site(site, max_blocks_per_site, random_state) for name, site in sites.items()
    }
    all_blocks = [block for blocks, _ in sites.values() for block in blocks]
    all_labels = [labels for _, labels in sites.values()]
    words = common_class_words(sites, min(min_sites_per_word, len(sites)))
    model = SiteModel(
        feature_groups=CROSS_SITE_GROUPS, class_words=words, C=C, random_state=random_state
    )
    pages = sum(len({b.page for b in blocks}) for blocks, _ in sites.values())
    model.fit_labeled(all_blocks, np.concatenate(all_labels), pages=pages)
    model.training_["sites"] = len(sites)
    model.training_["class_words"] = len(words)
    return model


def label_sites(
    sites: Mapping[str, Sequence[Mapping[str, Any]]], random_state: int = 0
) -> dict[str, LabeledSite]:
    """:func:`site_labels` of each site; a site that cannot be learned is logged and left out."""
    labeled = {}
    for name, pages in sites.items():
        try:
            labeled[name] = site_labels(pages, random_state)
        except ValueError as error:
            logger.warning("Skipping %s: %s", name, error)
            continue
        blocks, labels = labeled[name]
        logger.info("%s: %d pages, %d blocks, %d content", name, len(pages), len(blocks),
                    int(np.sum(labels)))  # fmt: skip
    return labeled


def train_cross_site(
    sites: Mapping[str, Sequence[Mapping[str, Any]]], random_state: int = 0
) -> SiteModel:
    """Label each site with its own model, pool the blocks, train on cross-site features."""
    return train_cross_site_labeled(label_sites(sites, random_state), random_state)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(prog="python -m spidercrawl.learn.cross_site")
    parser.add_argument("sources", nargs="+", type=Path, help="one per site")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    sites = {
        f"{source.parent.name}/{source.stem}": load_site_pages(source) for source in args.sources
    }
    model = train_cross_site(sites)
    model.save(args.out)
    logger.info("Cross-site model of %d sites saved to %s", model.training_["sites"], args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
