"""Selector steps: one element of a block's path as its tag, id and classes.

Extraction rules (:mod:`spidercrawl.learn.rules`) and the article container
(:mod:`spidercrawl.learn.container`) both generalise the paths of content blocks over
pages by merging them step by step: a merged step keeps the tag, the id where both have
the same one, and the classes both share.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")  # an element name XPath takes as it is


@dataclass(frozen=True)
class Step:
    """One element of a selector path: its tag, id ("" for any) and required classes."""

    name: str
    id: str = ""
    classes: frozenset[str] = frozenset()

    @classmethod
    def of(cls, element: Mapping[str, Any]) -> Step:
        """A step from the capture script's ``{name, id, classes}`` description; equal
        descriptions give one shared object (a site's blocks repeat a few hundred steps
        thousands of times: peak memory of learning 100 pages 257 -> 184 MiB)."""
        raw_classes = element.get("classes")
        classes = frozenset(str(c) for c in raw_classes if c) if raw_classes else frozenset()
        return _shared_step(
            str(element.get("name", "")).lower(), str(element.get("id") or ""), classes
        )

    def covers(self, other: Step) -> bool:
        """True when every element this step describes exactly also fits this step."""
        return (
            self.name == other.name
            and (not self.id or self.id == other.id)
            and self.classes <= other.classes
        )

    def merge(self, other: Step) -> Step | None:
        if self.name != other.name:
            return None
        return Step(self.name, self.id if self.id == other.id else "", self.classes & other.classes)

    def css(self) -> str:
        """``tag#id.class1.class2`` (classes sorted)."""
        return _css(self)

    def xpath(self) -> str:
        tests = [f"@id={_xpath_literal(self.id)}"] if self.id else []
        tests += [
            f"contains(concat(' ', normalize-space(@class), ' '), {_xpath_literal(f' {c} ')})"
            for c in sorted(self.classes)
        ]
        if _XML_NAME.fullmatch(self.name):
            return self.name + (f"[{' and '.join(tests)}]" if tests else "")
        # Broken markup names elements anything (``<scr"+"ipt>`` in a script's string gave
        # ``ipt"``, and news.bbc.co.uk's rules no longer compiled): matched by name instead.
        tests.insert(0, f"name()={_xpath_literal(self.name)}")
        return f"*[{' and '.join(tests)}]"


SelectorPath = tuple[Step, ...]


@functools.lru_cache(maxsize=65536)
def _css(step: Step) -> str:
    """A step's CSS, made once per step (every block of a page spells out its path)."""
    classes = "".join(f".{c}" for c in sorted(step.classes))
    return step.name + (f"#{step.id}" if step.id else "") + classes


@functools.lru_cache(maxsize=65536)
def _shared_step(name: str, element_id: str, classes: frozenset[str]) -> Step:
    return Step(name, element_id, classes)


def merge_paths(paths: Sequence[SelectorPath]) -> SelectorPath | None:
    """The one path covering all ``paths`` (same length, same tags), or None."""
    if not paths or len({tuple(step.name for step in path) for path in paths}) != 1:
        return None
    merged = list(paths[0])
    for path in paths[1:]:
        merged = [mine.merge(theirs) or mine for mine, theirs in zip(merged, path, strict=True)]
    return tuple(merged)


def path_css(path: SelectorPath) -> str:
    return " > ".join(["body", *(step.css() for step in path)])


def _xpath_literal(value: str) -> str:
    """``value`` as an XPath string literal, whatever quotes it holds."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ', "\'", '.join(f"'{p}'" for p in parts) + ")"
