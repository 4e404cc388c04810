"""robots.txt fetched once per host: Scrapy's parser, keeping the file for discovery.

Scrapy's ``RobotsTxtMiddleware`` downloads each host's robots.txt before the first request
to it, parses it with ``ROBOTSTXT_PARSER`` and sends the ``robots_parsed`` signal. The
spider reads the sitemaps robots.txt names from there (:class:`RobotsWithSitemaps`) instead
of downloading the file a second time: on a site's first requests AutoThrottle spaces them
by its start delay, and the second download cost a small crawl of a learned site about
half a second of its two and a half (``benchmarks/multi_layout_crawl.py``, nytimes.com).

``ROBOTS_AGENTS`` (agent names, e.g. ``CCBot,GPTBot``; none by default) makes the crawl
obey those agents' groups too: a page robots.txt withholds from any of them is not
fetched, so a corpus builder skips what a site withholds from AI crawlers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.robotstxt import ProtegoRobotParser
from scrapy.utils.python import to_unicode

if TYPE_CHECKING:
    from scrapy import Spider

logger = logging.getLogger(__name__)


class RobotsWithSitemaps(ProtegoRobotParser):
    """Scrapy's default robots.txt parser (Protego), which also keeps the file's bytes, so
    that whoever receives it with ``robots_parsed`` can read its ``Sitemap:`` lines."""

    keeps_body = True  # what the spider looks for in ROBOTSTXT_PARSER

    def __init__(self, robotstxt_body: bytes, spider: Spider | None) -> None:
        super().__init__(robotstxt_body, spider)
        self.body = robotstxt_body
        settings = getattr(spider, "settings", None)
        agents = settings.getlist("ROBOTS_AGENTS") if settings is not None else []
        self.agents = [str(agent).strip() for agent in agents if str(agent).strip()]

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Allowed for the crawler's own agent and for every one of ``ROBOTS_AGENTS``."""
        if not super().allowed(url, user_agent):
            return False
        address = to_unicode(url)
        for agent in self.agents:
            if not self.rp.can_fetch(address, agent):
                logger.info("robots.txt withholds %s from %s (ROBOTS_AGENTS): not fetched",
                            address, agent)  # fmt: skip
                crawler = getattr(self.spider, "crawler", None)
                if crawler is not None and crawler.stats is not None:
                    crawler.stats.inc_value(f"spidercrawl/robots/withheld/{agent}")
                return False
        return True
