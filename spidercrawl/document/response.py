"""A response's HTTP status and headers, and what they say besides its HTML.

The crawl reads them off a live response, the archive readers off a WARC record's HTTP
headers; both hand them to the same recognisers here, so that an archived page is judged
as the crawl judged it live: the bot wall it is (:mod:`~spidercrawl.document.walls`) and
what its site reserves of its text (:mod:`~spidercrawl.document.reservations`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from spidercrawl.document.reservations import page_reservations
from spidercrawl.document.walls import HEADER_NAMES, Wall, recognise_wall

# The headers the recognisers read (lower case): what an archive must keep of a record
# for its page to be judged again, besides its Content-Type.
RECOGNISED_HEADERS = frozenset({"x-robots-tag", "tdm-reservation", *HEADER_NAMES})


@dataclass(frozen=True)
class ResponseHead:
    """A response's status and headers, in the order sent (a header may repeat:
    ``X-Robots-Tag`` often does). A page read from a file has none: a 200."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, status: object, headers: Iterable[tuple[object, object]]) -> ResponseHead:
        """From any status and (name, value) pairs; a status that is no number is a 200
        (what a page that was served at all most likely was)."""
        try:
            number = int(str(status).strip()[:3])
        except ValueError:
            number = 200
        return cls(number, tuple((str(name), str(value)) for name, value in headers))

    def values(self, name: str) -> list[str]:
        """Every value of header ``name`` (any case)."""
        wanted = name.lower()
        return [value for key, value in self.headers if key.lower() == wanted]

    def first(self, name: str) -> str:
        """The first value of header ``name`` ("" when it was not sent)."""
        return next(iter(self.values(name)), "")

    def wall(self, html: str) -> Wall | None:
        """The bot wall this response is, with ``html`` its body; None for a page."""
        first: dict[str, str] = {}
        for name, value in self.headers:
            first.setdefault(name.lower(), value)
        return recognise_wall(self.status, first, html)

    def reservations(
        self, meta: Mapping[str, object], by_site: bool = False, agents: Iterable[str] = ()
    ) -> list[str]:
        """What the page reserves of its text: its robots meta tags (``meta``, as the
        capture reads them) and ``X-Robots-Tag`` headers for every crawler or for one of
        ``agents`` (``ROBOTS_AGENTS``), its ``tdm-reservation`` header or meta tag, and
        ``by_site`` (the site's tdmrep.json reserves its path)."""
        return page_reservations(
            meta, self.values("X-Robots-Tag"), self.first("tdm-reservation"), by_site, agents
        )

    def kept(self) -> ResponseHead:
        """Only what the recognisers read, and the Content-Type (an archive's own copy)."""
        wanted = RECOGNISED_HEADERS | {"content-type"}
        return ResponseHead(
            self.status, tuple((n, v) for n, v in self.headers if n.lower() in wanted)
        )
