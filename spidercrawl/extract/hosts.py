"""An archive's records, each read by its own site's model: the models folder by host,
and the filters corpus builders use (hosts, dates, language).

A crawl stores a site's model in ``MODELS_DIR/<site>/`` (the host without ``www.``); an
archive of thousands of hosts is read record by record, each by the model of its host
where one was learned (by a crawl or by ``python -m spidercrawl.learn archive``) and by
the arbiter elsewhere. Models are loaded once per host, and a host without one is looked
up once.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spidercrawl.archive import ArchivedPage
from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.store import ModelStore

logger = logging.getLogger(__name__)

MAX_CACHED_MODELS = 256  # hosts whose models are kept in memory at once


class HostModels:
    """The site model of each host in a models folder (None where there is none)."""

    def __init__(self, models_dir: Path | str) -> None:
        self.store = ModelStore(models_dir)
        self.models: dict[str, SiteModel | None] = {}

    def model_for(self, site: str) -> SiteModel | None:
        if site not in self.models:
            if len(self.models) >= MAX_CACHED_MODELS:  # bounded memory over many hosts
                self.models.pop(next(iter(self.models)))
            self.models[site] = self.store.load(site) if site else None
        return self.models[site]


def parse_hosts(value: str) -> frozenset[str]:
    """``--hosts``: a comma-separated list, or a file of one host a line (``#`` comments);
    each as a site (without ``www.``)."""
    path = Path(value)
    text = path.read_text("utf-8") if path.is_file() else value.replace(",", "\n")
    hosts = (line.split("#", 1)[0].strip().lower() for line in text.splitlines())
    return frozenset(host.removeprefix("www.") for host in hosts if host)


def parse_day(value: str) -> datetime:
    """``--since``/``--until``: an ISO 8601 date or time (UTC where no zone is given)."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError as error:
        raise ValueError(f"{value!r} is not an ISO 8601 date") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass
class ArchiveFilter:
    """Which records and articles a corpus builder keeps: ``hosts`` (empty: all),
    ``since``/``until`` (on the WARC-Date, or on the article's published date with
    ``by_published``: an article without one is left out then), ``lang`` (the item's
    language's primary tag, empty: all)."""

    hosts: frozenset[str] = frozenset()
    since: datetime | None = None
    until: datetime | None = None
    by_published: bool = False
    lang: frozenset[str] = frozenset()
    left_out: Counter[str] = field(default_factory=Counter)  # why, how many

    def keeps_record(self, page: ArchivedPage) -> bool:
        """Whether the record is read at all (host, and WARC-Date unless by published)."""
        if self.hosts and page.site not in self.hosts:
            self.left_out["host"] += 1
            return False
        if not self.by_published and not self._in_range(page.date):
            self.left_out["WARC-Date"] += 1
            return False
        return True

    def keeps_item(self, item: Mapping[str, Any]) -> bool:
        """Whether the article made of a kept record is written (published date, language)."""
        if self.by_published and not self._in_range(str(item.get("published") or "")):
            self.left_out["published date"] += 1
            return False
        if self.lang and str(item.get("lang") or "").lower().split("-")[0] not in self.lang:
            self.left_out["language"] += 1
            return False
        return True

    def _in_range(self, when: str) -> bool:
        if self.since is None and self.until is None:
            return True
        try:
            moment = parse_day(when)
        except ValueError:
            return False
        return (self.since is None or moment >= self.since) and (
            self.until is None or moment <= self.until
        )


@dataclass
class HostReport:
    """What became of one host's records."""

    records: int = 0
    by_rules: int = 0  # the site model's rules (the fast path)
    by_arbiter: int = 0  # read as a page of a site never seen, or its model doubted
    failed: int = 0
    has_model: bool = False
    blocked: Counter[str] = field(default_factory=Counter)  # bot walls, by kind: no article
    paywalled: int = 0  # articles with access "paywalled"
    reserved: int = 0  # articles with a reservation that applies
    reservations: Counter[str] = field(default_factory=Counter)  # ... by reservation

    def count_item(self, item: Mapping[str, Any]) -> None:
        """An article's paywall and reservations."""
        self.paywalled += item.get("access") == "paywalled"
        names = [str(name) for name in item.get("reserved") or ()]
        self.reserved += bool(names)
        self.reservations.update(names)

    def pushback(self) -> str:
        """Its walls, paywalls and reservations in a few words ("" where it met none)."""
        if not (self.blocked or self.paywalled or self.reserved):
            return ""
        walls = "; ".join(f"{kind}: {n}" for kind, n in sorted(self.blocked.items()))
        names = ", ".join(f"{name}: {n}" for name, n in sorted(self.reservations.items()))
        return (
            f"{self.blocked.total()} of {self.records} records blocked"
            + (f" ({walls})" if walls else "")
            + f", {self.paywalled} paywalled, {self.reserved} reserved"
            + (f" ({names})" if names else "")
        )


def host_table(reports: Mapping[str, HostReport], limit: int = 50) -> Iterable[str]:
    """The per-host report's lines, hosts with most records first."""
    yield f"{'host':<40} {'records':>8} {'model':>6} {'rules':>6} {'arbiter':>8} {'failed':>7}"
    ordered = sorted(reports.items(), key=lambda item: (-item[1].records, item[0]))
    for host, report in ordered[:limit]:
        yield (
            f"{host[:40]:<40} {report.records:>8} {'yes' if report.has_model else 'no':>6} "
            f"{report.by_rules:>6} {report.by_arbiter:>8} {report.failed:>7}"
        )
    if len(ordered) > limit:
        records = sum(report.records for _, report in ordered[limit:])
        yield f"... {len(ordered) - limit} more hosts, {records} records"


def pushback_lines(reports: Mapping[str, HostReport]) -> Iterable[str]:
    """A line for each host that met walls, paywalls or reservations, as a crawl's summary
    names them: ``walls.example: 2 of 3 records blocked (HTTP 403, Cloudflare challenge:
    1; DataDome captcha: 1), 0 paywalled, 1 reserved (noai: 1)``."""
    for host, report in sorted(reports.items()):
        if said := report.pushback():
            yield f"{host}: {said}"
