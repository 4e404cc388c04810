"""``scrapy crawl``, with the spider's arguments checked before anything starts.

Scrapy creates the spider inside the running reactor, so a wrong argument (no ``-a site``,
``-a max_pages=ten``) surfaced as an asyncio "Task exception was never retrieved"
traceback around the message. Here the arguments are checked first: a wrong one prints a
single line, ``scrapy crawl news: error: ...``, and the command exits with status 2, as
command-line tools do for usage errors. A crawl in which every request failed (the site
down, a wrong address) exits with status 1 and one such line, so cron notices.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from spidercrawl.capture.warc import unwritable
from spidercrawl.distributed import RedisUnavailableError, checked_redis_client, key_prefix
from spidercrawl.document.reservations import respected_reservations
from spidercrawl.extract.breadth import RENDER_MODES
from spidercrawl.extract.formats import ArticleFormats
from spidercrawl.learn.consensus_labels import LABEL_SOURCES
from spidercrawl.spiders.news import NewsSpider

USAGE_ERROR = 2


def _bad_choice(settings: Any) -> str:
    """The first setting of a few values that holds another ("" when none does)."""
    choices = {"RENDER": RENDER_MODES, "LEARN_LABELS": LABEL_SOURCES}
    for name, allowed in choices.items():
        value = str(settings.get(name)).lower()
        if value not in allowed:
            return f"-s {name}={settings.get(name)}: takes one of {', '.join(allowed)}"
    try:
        ArticleFormats.parse(settings.getlist("ARTICLE_FORMATS"))
    except ValueError as error:
        return f"-s ARTICLE_FORMATS={','.join(settings.getlist('ARTICLE_FORMATS'))}: {error}"
    try:
        respected_reservations(settings.get("RESPECT_RESERVATIONS"))
    except ValueError as error:
        return f"-s RESPECT_RESERVATIONS={settings.get('RESPECT_RESERVATIONS')}: {error}"
    return ""


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args and args[0] == NewsSpider.name:
            try:
                NewsSpider.check_arguments(self.settings, **opts.spargs)
            except (TypeError, ValueError) as error:
                sys.stderr.write(f"scrapy crawl {NewsSpider.name}: error: {error}\n")
                self.exitcode = USAGE_ERROR
                return
            problem = _bad_choice(self.settings)
            if problem:
                sys.stderr.write(f"scrapy crawl {NewsSpider.name}: error: {problem}\n")
                self.exitcode = USAGE_ERROR
                return
            if self.settings.get("WARC_DIR"):  # one line now, not a failure at start-up
                problem = unwritable(Path(self.settings.get("WARC_DIR")))
                if problem:
                    sys.stderr.write(f"scrapy crawl {NewsSpider.name}: error: {problem}\n")
                    self.exitcode = USAGE_ERROR
                    return
            if self.settings.get("REDIS_URL"):  # not a traceback from inside the engine
                try:
                    checked_redis_client(self.settings.get("REDIS_URL"), key_prefix(self.settings))
                except RedisUnavailableError as error:
                    sys.stderr.write(f"scrapy crawl {NewsSpider.name}: error: {error}\n")
                    self.exitcode = 1
                    return
        super().run(args, opts)
        spider = getattr(self.crawler, "spider", None)
        why = spider.nothing_fetched() if isinstance(spider, NewsSpider) else ""
        if why and not self.exitcode:
            sys.stderr.write(f"scrapy crawl {NewsSpider.name}: error: {why}\n")
            self.exitcode = 1

    def _create_crawler(self, name: str) -> Any:
        """The crawler, kept: once the crawl is over, its spider says whether any page
        came at all."""
        self.crawler = super()._create_crawler(name)
        return self.crawler
