"""robots.txt fetched once per host: Scrapy's parser, keeping the file for discovery.

Scrapy's ``RobotsTxtMiddleware`` downloads each host's robots.txt before the first request
to it, parses it with ``ROBOTSTXT_PARSER`` and sends the ``robots_parsed`` signal. The
spider reads the sitemaps robots.txt names from there (:class:`RobotsWithSitemaps`) instead
of downloading the file a second time: on a site's first requests AutoThrottle spaces them
by its start delay, and the second download cost a small crawl of a learned site about
half a second of its two and a half (``benchmarks/multi_layout_crawl.py``, nytimes.com).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.robotstxt import ProtegoRobotParser

if TYPE_CHECKING:
    from scrapy import Spider


class RobotsWithSitemaps(ProtegoRobotParser):
    """Scrapy's default robots.txt parser (Protego), which also keeps the file's bytes, so
    that whoever receives it with ``robots_parsed`` can read its ``Sitemap:`` lines."""

    keeps_body = True  # what the spider looks for in ROBOTSTXT_PARSER

    def __init__(self, robotstxt_body: bytes, spider: Spider | None) -> None:
        super().__init__(robotstxt_body, spider)
        self.body = robotstxt_body
