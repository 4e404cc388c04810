"""Which sites a run crawls: ``-a site=a.com,b.com``, ``-a sites=FILE``, or a Redis queue.

A sites file has one site per line: ``HOST``, or ``HOST BASE_URL`` for a site fetched from
somewhere else (a local copy served by ``python -m spidercrawl.serve``), as ``-a base_url``
does for a single site. Blank lines and ``#`` comments are skipped. The same lines are what
``python -m spidercrawl.enqueue`` pushes to Redis.

A :class:`Ledger` remembers which pages of each site a run claimed, so that each is fetched
once and ``max_pages`` holds per site: in memory here, in Redis for a distributed crawl.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

# Labels of letters (any script: IDNs), digits and hyphens, joined by dots.
_HOST_NAME = re.compile(r"[\w-]+(\.[\w-]+)*")


@dataclass(frozen=True)
class SiteSpec:
    """A site to crawl: its name (a host name; models and files go by it) and where from."""

    name: str
    base_url: str  # ends with "/"

    @classmethod
    def parse(cls, name: str, base_url: str = "") -> SiteSpec:
        """A site from its name and, for a local copy, its base URL (ValueError if wrong)."""
        name = name.strip().lower()
        if "://" in name:
            name = urlsplit(name).hostname or ""
        host = name.strip("/")
        name = host.removeprefix("www.")
        if not _HOST_NAME.fullmatch(name):
            raise ValueError(f"not a site's host name: {name!r}")
        url = (base_url.strip() or f"https://{host}/").rstrip("/") + "/"
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        return cls(name, url)

    @property
    def base_host(self) -> str:
        return urlsplit(self.base_url).hostname or ""

    @property
    def is_local_copy(self) -> bool:
        return self.base_host.removeprefix("www.") != self.name

    def line(self) -> str:
        """The site as a line of a sites file."""
        default = self.base_url in (f"https://{self.name}/", f"https://www.{self.name}/")
        return self.name if default else f"{self.name} {self.base_url}"


def parse_site_line(line: str) -> SiteSpec | None:
    """A line of a sites file: None for blank lines and comments."""
    line = line.split("#", 1)[0].strip()
    if not line:
        return None
    fields = line.split()
    if len(fields) > 2:
        raise ValueError(f"a site line is HOST or HOST BASE_URL, got {line!r}")
    return SiteSpec.parse(fields[0], fields[1] if len(fields) == 2 else "")


def read_sites_file(path: str | Path) -> list[SiteSpec]:
    """The sites of a sites file, in order, each once. A bad line is logged with its number
    and skipped, so that one typo does not stop a run of hundreds of sites; a repeated site
    and a URL whose path is left out are logged too. ValueError only when the file cannot
    be read or names no site at all."""
    try:
        text = Path(path).read_bytes().decode("utf-8", "replace")
    except OSError as error:
        raise ValueError(f"cannot read the sites file {path}: {error.strerror or error}") from None
    sites: dict[str, SiteSpec] = {}
    skipped = 0
    for number, line in enumerate(text.splitlines(), 1):
        try:
            spec = parse_site_line(line)
        except ValueError as error:
            _log_once(logging.ERROR, "%s line %d skipped: %s", path, number, error)
            skipped += 1
            continue
        if spec is None:
            continue
        first = line.split("#", 1)[0].split()[0]
        if "://" in first and urlsplit(first).path.strip("/"):
            _log_once(
                logging.WARNING, "%s line %d: %s is crawled from its home page (the path of %s "
                "is left out; for a local copy write HOST BASE_URL)", path, number, spec.name,
                first,
            )  # fmt: skip
        if spec.name in sites:
            _log_once(
                logging.WARNING, "%s line %d: %s is named again: crawled once", path, number,
                spec.name,
            )  # fmt: skip
            continue
        sites[spec.name] = spec
    if not sites:
        raise ValueError(
            f"the sites file {path} names no site"
            + (f" ({skipped} bad lines, logged above)" if skipped else "")
        )
    return list(sites.values())


_LOGGED: set[tuple[object, ...]] = set()


def _log_once(level: int, message: str, *arguments: object) -> None:
    """The arguments are checked before the crawl and read again by the spider: one line."""
    key = (message, *map(str, arguments))
    if key not in _LOGGED:
        _LOGGED.add(key)
        logger.log(level, message, *arguments)


def sites_from_arguments(site: str = "", sites: str = "", base_url: str = "") -> list[SiteSpec]:
    """The sites named by the spider's arguments ([] when none is named)."""
    specs = read_sites_file(sites) if sites else []
    names = [name for name in site.split(",") if name.strip()]
    if base_url and len(names) != 1:
        raise ValueError("-a base_url= goes with exactly one -a site=; in a sites file, "
                         "write HOST BASE_URL per line")  # fmt: skip
    specs += [SiteSpec.parse(name, base_url) for name in names]
    unique: dict[str, SiteSpec] = {}
    for spec in specs:
        unique.setdefault(spec.name, spec)
    return list(unique.values())


class Ledger:
    """Which pages of each site were sent to the browser or fetched plainly: each once."""

    def claim_render(self, site: str, key: str, max_pages: int) -> bool:
        raise NotImplementedError

    def claim_visit(self, site: str, key: str, max_pages: int) -> bool:
        raise NotImplementedError


class LocalLedger(Ledger):
    """The ledger of a run on one machine, in memory."""

    def __init__(self) -> None:
        self.scheduled: dict[str, set[str]] = {}
        self.visited: dict[str, set[str]] = {}

    def claim_render(self, site: str, key: str, max_pages: int) -> bool:
        scheduled = self.scheduled.setdefault(site, set())
        if key in scheduled or (max_pages and len(scheduled) >= max_pages):
            return False
        scheduled.add(key)
        return True

    def claim_visit(self, site: str, key: str, max_pages: int) -> bool:
        scheduled = self.scheduled.setdefault(site, set())
        visited = self.visited.setdefault(site, set())
        if key in visited or key in scheduled or (max_pages and len(scheduled) >= max_pages):
            return False
        visited.add(key)
        return True
