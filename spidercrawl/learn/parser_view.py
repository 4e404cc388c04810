"""A learned site's parser as a person would write it: per layout, the article's container,
its paragraph, subheadline and list selectors, its exclusions, and each decided template
role with the evidence it was decided on (:mod:`.roles`).

A site model is arrays and selectors; a person who checks or carries on a site's parser
wants to read it as the few selectors a hand-written one is, and see why each is there.
"""

from __future__ import annotations

from collections.abc import Iterator

from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.roles import RoleRecord
from spidercrawl.learn.rules import ExtractionRules
from spidercrawl.learn.selectors import path_css

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
LISTS = ("li", "ul", "ol", "dd", "dt")


def parser_lines(model: SiteModel, site: str = "") -> Iterator[str]:
    """The model's parser, a line at a time."""
    layouts = model.layout_models()
    created = getattr(model, "created_", "?")
    pages = model.training_.get("pages", "?")
    plural = "s" if len(layouts) > 1 else ""
    yield (
        f"{site or 'site'}: model {getattr(model, 'version_', '?')} of {created}, "
        f"{pages} training pages, {len(layouts)} layout{plural}"
    )
    for number, layout in enumerate(layouts, 1):
        yield ""
        yield f"layout {number} ({layout.training_.get('pages', '?')} pages)"
        container = layout.container_
        yield f"  container      {path_css(container) if container else '(none learned)'}"
        rules = layout.extraction_rules()
        yield from _rule_lines(rules if isinstance(rules, ExtractionRules) else None)
        roles = layout.role_decisions()
        if roles is None:
            yield "  roles          not decided (learned without a page-level reading)"
            continue
        decided = [r for r in roles.records if r.decision != "model"]
        yield f"  roles          {len(roles.records)} seen, {len(decided)} decided by the records"
        yield "    decision  pages  model  reading  repeated  role"
        for record in sorted(roles.records, key=_shown_first)[:40]:
            yield "    " + _record_line(record)
        if len(roles.records) > 40:
            yield f"    ... {len(roles.records) - 40} more roles of less text"


def _rule_lines(rules: ExtractionRules | None) -> Iterator[str]:
    if rules is None or not getattr(rules, "rules_", None):
        yield "  paragraphs     (no rules: this layout's pages are read by the model)"
        return
    kinds: dict[str, list[str]] = {"paragraphs": [], "subheadlines": [], "lists": []}
    for rule, stats in zip(rules.rules_, rules.rule_stats_, strict=True):
        tag = rule.steps[-1].name if rule.steps else ""
        kind = "subheadlines" if tag in HEADINGS else "lists" if tag in LISTS else "paragraphs"
        kinds[kind].append(
            f"{rule.css}  (precision {stats['precision']:.2f}, recall {stats['recall']:.2f})"
        )
    for kind, lines in kinds.items():
        for index, line in enumerate(lines or ["(none)"]):
            yield f"  {kind if index == 0 else '':<14} {line}"
    exclusions = [rule.css for rule in getattr(rules, "exclusions_", ())]
    for index, css in enumerate(exclusions or ["(none)"]):
        yield f"  {'excluded' if index == 0 else '':<14} {css}"
    if not rules.usable:
        yield "  fast path      off: the rules cover too little of the training articles"
    elif rules.render_reason:
        yield f"  fast path      off: {rules.render_reason}"


def _shown_first(record: RoleRecord) -> tuple[int, int]:
    """Decided roles first, then roles by their text."""
    return (record.decision == "model", -record.chars)


def _record_line(record: RoleRecord) -> str:
    shown = "kept" if record.decision == "model" and 2 * record.model_pages > record.pages \
        else "left" if record.decision == "model" else record.decision  # fmt: skip
    reading = f"{record.reading_pages}/{record.read_pages}"
    line = f"{shown:<9} {record.pages:>5}  {record.model_pages:>5}  {reading:>7}  "\
        f"{record.repeated:>8.0%}  {record.role}"  # fmt: skip
    return line + (f"  ({record.why})" if record.why else "")
