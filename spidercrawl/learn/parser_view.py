"""A learned site's parser as a person would write it: per layout, the article's container
(an ordered list where the template drifts), what it leaves out, how the layout is served,
each selector with the evidence that chose it (:mod:`.parser`).

A site model is arrays and selectors; a person who checks or carries on a site's parser
wants to read it as the few selectors a hand-written one is, and see why each is there.
"""

from __future__ import annotations

from collections.abc import Iterator

from spidercrawl.learn.model import SiteModel
from spidercrawl.learn.parser import ParserPart
from spidercrawl.learn.rules import ExtractionRules


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
        rules = layout.extraction_rules()
        yield from _rule_lines(rules if isinstance(rules, ExtractionRules) else None)


def _rule_lines(rules: ExtractionRules | None) -> Iterator[str]:
    if rules is None or not rules.containers:
        yield "  container      (none found: this layout's pages are read by the arbiter)"
        return
    for index, part in enumerate(rules.containers):
        label = "container" if index == 0 else "else"
        yield f"  {label:<14} {part.css}  ({_evidence(part)})"
    for part in rules.summaries:
        yield f"  {'summary':<14} {part.css}  ({part.why}; {_evidence(part)})"
    for part in (p for p in rules.parts_ if p.kind == "kept"):
        yield f"  {'kept':<14} {part.css}  ({part.why}, kept by the vote; {_evidence(part)})"
    excluded = [p for p in rules.parts_ if p.kind in ("exclusion", "markup")]
    for index, part in enumerate(excluded or [None]):
        label = "excluded" if index == 0 else ""
        line = "(none)" if part is None else f"{part.css}  ({part.why}; {_evidence(part)})"
        yield f"  {label:<14} {line}"
    yield (
        "  never kept     figures, captions, asides, forms, embedded posts, lists of links, "
        "contact lines, date lines, bylines, one-link lines, copyright lines, comment "
        "counts, sign-up boxes, teaser cards, headings over links and readers' comments "
        "(by their markup)"
    )
    if rules.read_by_arbiter:
        yield f"  served         by the arbiter: {rules.read_by_arbiter}"
    elif rules.render_reason:
        yield f"  fast path      off: {rules.render_reason}"
    else:
        yield f"  served         by its parser (takes {rules.recall_:.0%} of the kept text)"


def _evidence(part: ParserPart) -> str:
    return (
        f"{part.pages} pages, vote keeps {part.kept_share:.0%}, repeated {part.repeated_share:.0%}"
    )
