"""Aggregate page records into ``summary.json``, ``pages.csv``, text tables and plots."""

from __future__ import annotations

import csv
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from spidercrawl.evaluate.methods import PEERS
from spidercrawl.evaluate.metrics import SPECIAL_CASES
from spidercrawl.evaluate.runner import PageRecord, PeerTiming
from spidercrawl.files import write_json_atomically

if TYPE_CHECKING:
    from spidercrawl.evaluate.site_methods import CurveRow

# Beyond the four cases of seed 002: the method raised, or the page has no gold text.
ALL_CASES = (*SPECIAL_CASES, "error", "no_gold")
# What a special case counts as in ``f1_all_pages`` (the mean that leaves nothing out).
_CASE_F1 = {"both_empty": 1.0}


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _page_f1(record: PageRecord) -> float:
    """A page's F1 as ``f1_all_pages`` counts it (an error or a special case scores 0)."""
    return _CASE_F1.get(record.special_case, 0.0) if record.special_case else record.f1


def aggregate(records: Iterable[PageRecord]) -> dict[str, object]:
    """Means over ordinary pages; special cases counted apart (seed 002)."""
    records = list(records)
    scored = [r for r in records if not r.special_case]
    with_gold = [r for r in records if r.special_case != "no_gold"]
    timed = [r for r in with_gold if not r.error]
    seconds = sum(r.seconds for r in timed)
    cases = Counter(r.special_case for r in records if r.special_case)
    return {
        "pages": len(scored),
        "precision": _mean([r.precision for r in scored]),
        "recall": _mean([r.recall for r in scored]),
        "f1": _mean([r.f1 for r in scored]),
        "f1_median": round(statistics.median(r.f1 for r in scored), 4) if scored else None,
        "cleaneval": _mean([r.cleaneval for r in scored]),
        "f1_difflib": _mean([r.f1_difflib for r in scored]),
        "f1_all_pages": _mean([_page_f1(r) for r in with_gold]),
        "pages_per_s": round(len(timed) / seconds, 2) if seconds else None,
        "special_cases": {case: cases.get(case, 0) for case in ALL_CASES},
    }


def summarize(
    records: list[PageRecord], skipped: Mapping[str, str], run: Mapping[str, object]
) -> dict[str, object]:
    """The ``summary.json`` document: per method, per dataset, per site."""
    datasets = {r.dataset for r in records}
    by_method: dict[str, list[PageRecord]] = defaultdict(list)
    by_dataset: dict[str, dict[str, list[PageRecord]]] = defaultdict(lambda: defaultdict(list))
    by_site: dict[str, dict[str, list[PageRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        site_key = record.site if len(datasets) == 1 else f"{record.dataset}/{record.site}"
        by_method[record.method].append(record)
        by_dataset[record.dataset][record.method].append(record)
        by_site[site_key][record.method].append(record)

    def nested(groups: Mapping[str, Mapping[str, list[PageRecord]]]) -> dict:
        return {
            key: {method: aggregate(rows) for method, rows in sorted(methods.items())}
            for key, methods in sorted(groups.items())
        }

    return {
        "methods": {method: aggregate(rows) for method, rows in by_method.items()},
        "datasets": nested(by_dataset),
        "sites": nested(by_site),
        "skipped": dict(skipped),
        "run": dict(run),
    }


def write_summary(path: Path, summary: Mapping[str, object]) -> None:
    write_json_atomically(path, summary, indent=2)


def write_pages_csv(path: Path, records: Iterable[PageRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=PageRecord.columns())
        writer.writeheader()
        for record in records:
            row = record.as_dict()
            row.update({k: round(v, 4) for k, v in row.items() if isinstance(v, float)})
            writer.writerow(row)


def _fmt(value: object, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def method_table(title: str, rows: Mapping[str, Mapping[str, object]]) -> str:
    """Rows: methods; columns: P, R, F1 mean and median, CleanEval, special cases, pages/s."""
    header = [
        "method", "pages", "P", "R", "F1", "F1 med", "CleanEval", "F1 all",
        "r-empty", "g-empty", "both-empty", "no-overlap", "errors", "pages/s",
    ]  # fmt: skip
    lines = [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    ranked = sorted(rows.items(), key=lambda item: -(item[1].get("f1") or 0.0))
    for method, agg in ranked:
        cases = agg["special_cases"]
        cells = [
            method, agg["pages"], agg["precision"], agg["recall"], agg["f1"], agg["f1_median"],
            agg["cleaneval"], agg["f1_all_pages"], cases["retrieved_empty"], cases["gold_empty"],
            cases["both_empty"], cases["no_overlap"], cases["error"], agg["pages_per_s"],
        ]  # fmt: skip
        lines.append("| " + " | ".join(_fmt(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def rules_split(records: Iterable[PageRecord]) -> dict[str, dict[str, dict[str, object]]]:
    """``rules`` by the way each page went, per dataset: the fast path (the rules passed
    their check on the raw HTML) or rendered (they did not: the page is the model's). A
    mean over both hides which way a site's pages go and what each costs."""
    groups: dict[str, dict[str, list[PageRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        if record.method == "rules":
            way = "fast path" if record.fast_path else "rendered"
            groups[record.dataset][way].append(record)
    split: dict[str, dict[str, dict[str, object]]] = {}
    for dataset, ways in sorted(groups.items()):
        split[dataset] = {}
        for way, rows in sorted(ways.items()):
            agg = aggregate(rows)
            seconds = [r.seconds for r in rows if r.seconds]
            agg["ms_per_page"] = 1000 * statistics.fmean(seconds) if seconds else None
            agg.update(_disagreement(rows))
            split[dataset][way] = agg
    return split


# Gold-free: a fast-path article that agrees with the rendered never-seen consensus's
# article of the same page under this word F1 is counted as a disagreement.
AGREEMENT_LINE = 0.8


def _disagreement(rows: list[PageRecord]) -> dict[str, object]:
    """Of the pages with an agreement measured, the share under ``AGREEMENT_LINE``: of the
    articles delivered, and of the rules' own before the chain's independent check."""
    measured = [r for r in rows if r.unseen_agreement >= 0]
    if not measured:
        return {"disagree": None, "disagree_unchecked": None}
    return {
        "disagree": sum(r.unseen_agreement < AGREEMENT_LINE for r in measured) / len(measured),
        "disagree_unchecked": sum(r.unchecked_agreement < AGREEMENT_LINE for r in measured)
        / len(measured),
    }


def rules_split_table(split: Mapping[str, Mapping[str, Mapping[str, object]]]) -> str:
    lines = [
        "## rules: fast-path pages and rendered pages apart",
        "",
        "| dataset | way | pages | F1 | F1 all | ms/page | disagree | disagree unchecked |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dataset, ways in split.items():
        for way, agg in ways.items():
            cells = [_fmt(c) for c in (dataset, way, agg["pages"], agg["f1"], agg["f1_all_pages"])]
            cells.append(_fmt(agg.get("ms_per_page"), 1))
            cells += [_fmt(agg.get("disagree")), _fmt(agg.get("disagree_unchecked"))]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


TARGET_FAST_PATH_SHARE = 0.8  # goal: of a learned site's pages, by the fast path


def _site_shares(pairs: Iterable[tuple[PageRecord, bool]]) -> dict[str, float]:
    """Per site ("dataset/site"), the share of its pages whose flag is true."""
    sites: dict[str, list[bool]] = defaultdict(list)
    for record, flag in pairs:
        sites[f"{record.dataset}/{record.site}"].append(flag)
    return {site: round(sum(flags) / len(flags), 4) for site, flags in sorted(sites.items())}


def _sites_below(shares: Mapping[str, float], target: float, by: str, key: str) -> list[str]:
    """Report lines naming the sites with under ``target`` of their pages ``by`` a way
    (every site's share is in summary.json under ``key``)."""
    below = {site: share for site, share in shares.items() if share < target}
    lines = [
        f"Sites with under {target:.0%} of their pages by {by}: {len(below)} of {len(shares)} "
        f"(every site's share: `{key}` in summary.json)" + ("" if not below else ":"),
    ]
    lines += [f"- {site}: {share:.0%}" for site, share in sorted(below.items(), key=lambda x: x[1])]
    return lines


def fast_path_shares(records: Iterable[PageRecord]) -> dict[str, float]:
    """Each site's share of its ``rules`` pages that the fast path took ("dataset/site")."""
    return _site_shares((r, r.fast_path) for r in records if r.method == "rules")


def fast_path_shares_lines(shares: Mapping[str, float]) -> str:
    """The sites whose fast path took under ``TARGET_FAST_PATH_SHARE`` of their pages."""
    lines = _sites_below(shares, TARGET_FAST_PATH_SHARE, "the fast path", "rules_fast_path_share")
    return "\n".join(lines) + "\n"


SITE_MODEL = "site model"  # a learned page whose text is the site model's own
# ... by its extraction rules, on a page of no known layout where they hold on the DOM
SITE_MODEL_RULES = "site model's rules"
OWN_WAYS = frozenset({SITE_MODEL, SITE_MODEL_RULES})
TARGET_SITE_MODEL_SHARE = 0.9  # goal: of a learned site's pages, by its own model


def learned_way(record: PageRecord) -> str:
    """How a ``learned`` page was extracted: by the site model itself, or which fallback
    (``learned+consensus``: the peers' check replaced its text; ``learned+unseen``: a
    layout it does not know; ``learned+container``, ``learned+density-fallback``: it found
    almost nothing), or ``not learned`` (no model, not rendered). A page of no known
    layout whose text the site's extraction rules give is the site model's own (its
    rules), counted apart."""
    if not record.has_model or record.plain or not record.way:
        return "not learned"
    if record.way in ("learned", "unseen"):
        return SITE_MODEL
    if record.way == "rules":
        return SITE_MODEL_RULES
    return record.way if record.way.startswith("learned+") else "not learned"


def learned_split(records: Iterable[PageRecord]) -> dict[str, object]:
    """``learned`` by the way each page went, per dataset, beside every other method of the
    run on the *same* pages (is the site model better than the peers where it is used?),
    and each site's share of pages by its own model."""
    records = list(records)
    learned = [r for r in records if r.method == "learned"]
    if not learned:
        return {}
    by_page: dict[tuple[str, str, str], dict[str, PageRecord]] = defaultdict(dict)
    for record in records:
        by_page[(record.dataset, record.site, record.page_id)][record.method] = record
    others = sorted({r.method for r in records} - {"learned"})
    ways: dict[str, dict[str, list[PageRecord]]] = defaultdict(lambda: defaultdict(list))
    way_of = [(record, learned_way(record)) for record in learned]
    for record, way in way_of:
        ways[record.dataset][way].append(record)
    split: dict[str, dict[str, dict[str, object]]] = {}
    for dataset, groups in sorted(ways.items()):
        total = sum(len(rows) for rows in groups.values())
        split[dataset] = {}
        for way, rows in sorted(groups.items(), key=lambda item: -len(item[1])):
            keys = [(r.dataset, r.site, r.page_id) for r in rows]
            same_pages = {
                method: aggregate(by_page[key][method] for key in keys if method in by_page[key])
                for method in others
            }
            own = aggregate(rows)
            split[dataset][way] = {
                "pages": len(rows),
                "share": round(len(rows) / total, 4),
                "f1": own["f1"],
                "f1_all_pages": own["f1_all_pages"],
                "same_pages_f1": {m: agg["f1"] for m, agg in same_pages.items()},
                # the comparison: each method over all these pages, its empty ones as 0 (the
                # ordinary-page mean leaves each method's own special cases out, so it
                # compares different pages where a peer returns nothing)
                "same_pages_f1_all_pages": {
                    m: agg["f1_all_pages"] for m, agg in same_pages.items()
                },
            }
    shares = _site_shares((record, way in OWN_WAYS) for record, way in way_of)
    return {"by_way": split, "site_model_share_per_site": shares}


def learned_split_table(split: Mapping[str, object]) -> str:
    by_way: Mapping[str, Mapping[str, Mapping[str, object]]] = split["by_way"]  # type: ignore[assignment]
    shares: Mapping[str, float] = split["site_model_share_per_site"]  # type: ignore[assignment]
    others = sorted(
        {m for ways in by_way.values() for w in ways.values() for m in w["same_pages_f1"]}
    )
    header = ["dataset", "way", "pages", "share", "F1 learned", *(f"F1 {m}" for m in others)]
    lines = [
        "## learned: by the site model itself or by a fallback, every method on the same pages",
        "",
        "F1 over all of a way's pages, an empty extraction scoring 0 (`same_pages_f1` in",
        "summary.json has the means over each method's ordinary pages).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for dataset, ways in by_way.items():
        for way, row in ways.items():
            same: Mapping[str, object] = row["same_pages_f1_all_pages"]  # type: ignore[assignment]
            cells = [dataset, way, row["pages"], row["share"], row["f1_all_pages"]]
            cells += [same.get(m) for m in others]
            lines.append("| " + " | ".join(_fmt(c) for c in cells) + " |")
    lines.append("")
    lines += _sites_below(shares, TARGET_SITE_MODEL_SHARE, "their own model", "learned_by_way")
    return "\n".join(lines) + "\n"


def paired_speed(
    records: Iterable[PageRecord], timings: Iterable[PeerTiming]
) -> dict[str, dict[str, object]]:
    """Per dataset and over all: ``unseen``'s pages/s beside each peer's, the peer's call
    timed in the same process right after our extraction of the same page
    (:class:`PeerTiming`), over the pages where ours and every peer were timed. The peers'
    own rows time them in other workers at other moments; on this 2-core machine a worker's
    CPU time per page moves with what the other worker runs meanwhile."""
    by_page: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for timing in timings:
        by_page[(timing.dataset, timing.site, timing.page_id)][timing.method] = timing.seconds
    peers = sorted({method for page in by_page.values() for method in page})
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    pages: Counter[str] = Counter()
    for record in records:
        key = (record.dataset, record.site, record.page_id)
        timed = record.method == "unseen" and not record.error and record.seconds > 0
        if not timed or record.special_case == "no_gold" or set(by_page.get(key, {})) != set(peers):
            continue
        for group in (record.dataset, "all"):
            pages[group] += 1
            totals[group]["unseen"] += record.seconds
            for method, seconds in by_page[key].items():
                totals[group][method] += seconds
    result: dict[str, dict[str, object]] = {}
    for group in sorted(totals, key=lambda name: (name == "all", name)):
        n = pages[group]
        row: dict[str, object] = {"pages": n}
        for method, seconds in totals[group].items():
            row[f"{method}_pages_per_s"] = round(n / seconds, 2) if seconds else None
        for method in peers:
            ours, theirs = totals[group]["unseen"], totals[group][method]
            row[f"unseen_speed_vs_{method}"] = round(theirs / ours, 3) if ours else None
        result[group] = row
    return result


def paired_speed_table(speed: Mapping[str, Mapping[str, object]]) -> str:
    """:func:`paired_speed` as a table: pages/s of ours and of each peer, and our speed as a
    multiple of each peer's."""
    prefix = "unseen_speed_vs_"
    peers = [key[len(prefix) :] for key in next(iter(speed.values()), {}) if key.startswith(prefix)]
    lines = [
        "## unseen beside the peers: timed page by page in the same process\n",
        "| dataset | pages | unseen pages/s | "
        + " | ".join(f"{p} pages/s" for p in peers)
        + " | "
        + " | ".join(f"unseen / {p}" for p in peers)
        + " |",
        "|---|---|---|" + "---|" * (2 * len(peers)),
    ]
    for dataset, row in speed.items():
        cells = [dataset, str(row["pages"]), _fmt(row.get("unseen_pages_per_s"), 1)]
        cells += [_fmt(row.get(f"{p}_pages_per_s"), 1) for p in peers]
        cells += [_fmt(row.get(f"unseen_speed_vs_{p}"), 2) for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# A page collapses where our article scores this much (F1) under the best peer's.
COLLAPSE_MARGIN = 0.3


def collapses(records: Iterable[PageRecord]) -> dict[str, dict[str, object]]:
    """Per dataset and per method of ours: the share of pages where our article scores more
    than ``COLLAPSE_MARGIN`` under the best peer's on the same page (a mean hides these),
    over the pages both were scored on, and the pages themselves."""
    scores: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for record in records:
        if record.special_case != "no_gold":
            scores[(record.dataset, record.site, record.page_id)][record.method] = _page_f1(record)
    result: dict[str, dict[str, object]] = defaultdict(dict)
    for (dataset, site, page_id), by_method in sorted(scores.items()):
        peers = [f1 for method, f1 in by_method.items() if method in PEERS]
        if not peers:
            continue
        for method, f1 in by_method.items():
            if method in PEERS:
                continue
            row = result[dataset].setdefault(method, {"pages": 0, "collapsed": []})
            row["pages"] += 1
            if f1 < max(peers) - COLLAPSE_MARGIN:
                row["collapsed"].append(f"{site} {page_id}")
    for rows in result.values():
        for row in rows.values():
            row["share"] = round(len(row["collapsed"]) / row["pages"], 4) if row["pages"] else None
    return dict(result)


def collapse_table(shares: Mapping[str, Mapping[str, Mapping[str, object]]]) -> str:
    """:func:`collapses` as a table: per dataset, each method's share of collapsed pages."""
    methods = sorted({method for rows in shares.values() for method in rows})
    lines = [
        f"## Collapses: pages where ours scores more than {COLLAPSE_MARGIN} under the best "
        "peer's\n",
        "| dataset | " + " | ".join(methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    for dataset, rows in shares.items():
        cells = []
        for method in methods:
            row = rows.get(method)
            cells.append(
                f"{row['share']:.1%} ({len(row['collapsed'])} of {row['pages']})" if row else ""
            )
        lines.append(f"| {dataset} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def dataset_table(summary: Mapping[str, object], measure: str = "f1") -> str:
    """The paper's Table 4 shape: one row per method, one column per dataset, plus the mean."""
    datasets: Mapping[str, Mapping[str, Mapping[str, object]]] = summary["datasets"]  # type: ignore[assignment]
    names = sorted(datasets)
    methods = sorted({m for rows in datasets.values() for m in rows})
    lines = [
        f"## {measure} by dataset",
        "",
        "| method | " + " | ".join(names) + " | mean |",
        "|" + "---|" * (len(names) + 2),
    ]
    table = []
    for method in methods:
        values = [datasets[d].get(method, {}).get(measure) for d in names]
        present = [v for v in values if v is not None]
        mean = statistics.fmean(present) if len(present) == len(names) else None
        table.append((mean if mean is not None else -1.0, method, values, mean))
    for _, method, values, mean in sorted(table, key=lambda row: -row[0]):
        lines.append(f"| {method} | " + " | ".join(_fmt(v) for v in values) + f" | {_fmt(mean)} |")
    return "\n".join(lines) + "\n"


def plot_f1_distribution(path: Path, records: list[PageRecord]) -> None:
    """Per-page F1 per method, one panel per dataset (box plots, as seed 002 shows)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = sorted({r.dataset for r in records})
    methods = sorted({r.method for r in records})
    figure, axes = plt.subplots(
        1, len(datasets), figsize=(max(6, 1.1 * len(methods)) * len(datasets), 5), squeeze=False
    )
    for axis, dataset in zip(axes[0], datasets, strict=True):
        series = [
            [r.f1 for r in records if r.dataset == dataset and r.method == m and not r.special_case]
            for m in methods
        ]
        axis.boxplot(series, showmeans=True)
        axis.set_xticks(range(1, len(methods) + 1), methods, rotation=30, ha="right")
        axis.set_ylim(0, 1.02)
        axis.set_title(f"{dataset}: per-page F1")
        axis.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_learning_curve(path: Path, rows: Sequence[CurveRow]) -> None:
    """F1 of the learned method against the number of training pages, one line per
    dataset and largest size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for row in rows if len(row.f1) > 1]
    if not rows:
        return
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for row in rows:
        points = sorted(row.f1.items())
        label = f"{row.dataset}, {row.sites} sites of {row.up_to + 1}+ pages"
        axis.plot([n for n, _ in points], [f1 for _, f1 in points], marker="o", label=label)
    axis.set_xlabel("training pages per site")
    axis.set_ylabel("mean F1 on the same held-out pages")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def curve_table(rows: Sequence[CurveRow]) -> str:
    """The learning curve of ``learned``: per dataset and group of sites (those with more
    pages than the row's largest size), mean F1 on the same test pages per training size."""
    sizes = sorted({n for row in rows for n in row.f1})
    head = " | ".join(f"N={n}" for n in sizes)
    lines = [
        "## learned: F1 against training pages (same sites and test pages in a row)",
        "",
        f"| dataset | sites (pages) | {head} |",
        "|---|---|" + "---|" * len(sizes),
    ]
    for row in rows:
        cells = " | ".join(_fmt(row.f1.get(n)) for n in sizes)
        lines.append(f"| {row.dataset} | {row.sites} ({row.up_to + 1}+) | {cells} |")
    return "\n".join(lines) + "\n"
