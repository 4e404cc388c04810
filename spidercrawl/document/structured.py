"""JSON-LD read in every shape schema.org allows, into plain article records.

Structured data on the web is written by hand and by a thousand plug-ins: ``author`` is a
string, an object, a list of either, a list holding a list (a 2025 mdr.de page), an
object whose ``name`` is itself a list; ``headline`` may be an object with ``@value``;
``@type`` a list; ``@graph`` nests; blocks are broken JSON. A reader that expects one
shape raises on the others. Here each field is read by what it is, a value of a shape
that says nothing is skipped, and nesting and counts are bounded, so no page can make
reading its structured data raise or run long.

Both capture paths use it: the browser's capture script sends the article objects it
found (:func:`clean_records` makes them plain), and pages read without a browser are
read from their ``<script type="application/ld+json">`` texts (:func:`read_jsonld`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from spidercrawl.document.access import free_flag

ARTICLE_TYPE = re.compile(r"Article|BlogPosting|NewsArticle|Report|Posting|WebPage")
MAX_DEPTH = 8  # nesting of lists, objects and @graph read
MAX_NODES = 2000  # objects visited per page
MAX_NAMES = 20  # names kept per author field
MAX_CHARS = 2000  # characters kept per text field
TEXT_KEYS = ("@value", "name", "text", "headline", "@id")
RECORD_TEXT_FIELDS = (
    "headline", "description", "datePublished", "dateModified", "url", "inLanguage",
)  # fmt: skip


def text_of(value: Any, depth: int = 0) -> str:
    """The first text a value holds: a string, a number, an object's ``@value`` or
    ``name``, a list's first such; '' for anything else."""
    if depth > MAX_DEPTH:
        return ""
    if isinstance(value, str):
        return value.strip()[:MAX_CHARS]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict):
        for key in TEXT_KEYS:
            text = text_of(value.get(key), depth + 1)
            if text:
                return text
        return ""
    if isinstance(value, list):
        for item in value[:MAX_NAMES]:
            text = text_of(item, depth + 1)
            if text:
                return text
    return ""


def names_of(value: Any, depth: int = 0, nodes: dict[str, dict] | None = None) -> list[str]:
    """People's names in an ``author``-like field of any shape (strings, objects with a
    ``name`` or ``givenName``/``familyName``, lists of these however nested, and
    references ``{"@id": ...}`` to a node of the page's graph, given ``nodes`` by id).
    An organisation named beside people is left out (a publisher added as an author)."""
    if depth > MAX_DEPTH or value is None:
        return []
    if isinstance(value, list) and nodes is not None:
        items = [_resolved(item, nodes) for item in value[: MAX_NAMES * 2]]
        people = [i for i in items if not (isinstance(i, dict) and _is_organisation(i))]
        if people and len(people) < len(items):
            value = people
    if isinstance(value, str):
        name = value.strip()[:MAX_CHARS]
        return [name] if name else []
    if isinstance(value, list):
        names: list[str] = []
        for item in value[: MAX_NAMES * 2]:
            names += names_of(item, depth + 1, nodes)
            if len(names) >= MAX_NAMES:
                break
        return names[:MAX_NAMES]
    if isinstance(value, dict):
        value = _resolved(value, nodes)
        name = text_of(value.get("name"), depth + 1)
        if not name:
            parts = [text_of(value.get(k), depth + 1) for k in ("givenName", "familyName")]
            name = " ".join(p for p in parts if p)
        return [name] if name else []
    return []


def _resolved(value: Any, nodes: dict[str, dict] | None) -> Any:
    """A reference ``{"@id": ...}`` (nothing else) replaced by the node it names."""
    if nodes and isinstance(value, dict) and "name" not in value:
        ref = value.get("@id")
        if isinstance(ref, str) and ref in nodes:
            return nodes[ref]
    return value


def _is_organisation(node: dict) -> bool:
    return any("Organization" in t or "Organisation" in t for t in types_of(node))


def types_of(node: dict) -> list[str]:
    """A node's ``@type`` as a list of strings (a string, or a list of strings)."""
    raw = node.get("@type")
    values = raw if isinstance(raw, list) else [raw]
    return [v.strip()[:200] for v in values[:MAX_NAMES] if isinstance(v, str) and v.strip()]


def article_record(
    node: dict, types: list[str], nodes: dict[str, dict] | None = None
) -> dict[str, Any]:
    """The fields the extraction reads from an article-like object, all plain; ``nodes``
    (the page's graph by ``@id``) resolves references to its authors."""
    return {
        "type": types,
        "headline": text_of(node.get("headline")) or text_of(node.get("name")),
        "description": text_of(node.get("description")),
        "datePublished": text_of(node.get("datePublished")),
        "dateModified": text_of(node.get("dateModified")),
        "author": names_of(node.get("author"), nodes=nodes),
        "url": text_of(node.get("url")),
        "inLanguage": text_of(node.get("inLanguage")),
        "isAccessibleForFree": _accessible_for_free(node),
    }


def _accessible_for_free(node: dict) -> bool | None:
    """The article's ``isAccessibleForFree``, or its parts' (``hasPart``): False where any
    says not free, True where one says free, None where none says."""
    parts = node.get("hasPart")
    parts = parts[:MAX_NAMES] if isinstance(parts, list) else [parts]
    flags = [free_flag(node.get("isAccessibleForFree"))] + [
        free_flag(part.get("isAccessibleForFree")) for part in parts if isinstance(part, dict)
    ]
    if False in flags:
        return False
    return True if True in flags else None


def read_jsonld(scripts: Iterable[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Article-like records from JSON-LD script texts, and every ``@type`` seen. Broken
    JSON is skipped (as on many real pages); raw line breaks inside strings, which many
    pages have and browsers accept, are read. References between the page's nodes
    (``"author": {"@id": ...}``, as WordPress's SEO plug-ins write) are followed."""
    roots: list[Any] = []
    for script in scripts:
        try:
            roots.append(json.loads(script, strict=False))
        except (ValueError, RecursionError):
            continue
    nodes = _graph_nodes(roots)
    by_id = {n["@id"]: n for n in nodes if isinstance(n.get("@id"), str) and "name" in n}
    records: list[dict[str, Any]] = []
    types_seen: list[str] = []
    for node in nodes:
        types = types_of(node)
        types_seen += types
        if any(ARTICLE_TYPE.search(t) for t in types):
            records.append(article_record(node, types, by_id))
    return records, types_seen


def _graph_nodes(roots: list[Any]) -> list[dict]:
    """Every object of the scripts, in document order (lists, ``@graph`` and nesting
    followed to MAX_DEPTH, at most MAX_NODES visited)."""
    stack: list[tuple[Any, int]] = [(root, 0) for root in reversed(roots)]
    found: list[dict] = []
    visited = 0
    while stack and visited < MAX_NODES:
        node, depth = stack.pop()
        visited += 1
        if depth > MAX_DEPTH:
            continue
        if isinstance(node, list):
            stack.extend((item, depth + 1) for item in reversed(node[:MAX_NODES]))
            continue
        if not isinstance(node, dict):
            continue
        for key in ("@graph", "mainEntity"):  # a page's article may be its main entity
            if key in node:
                stack.append((node[key], depth + 1))
        found.append(node)
    return found


def clean_records(records: Any) -> list[dict[str, Any]]:
    """The browser capture's article records made plain (each field a string, ``author``
    and ``type`` lists of strings); anything that is not a record is dropped."""
    if not isinstance(records, list):
        return []
    cleaned = []
    for record in records[:MAX_NAMES]:
        if not isinstance(record, dict):
            continue
        plain: dict[str, Any] = {field: text_of(record.get(field)) for field in RECORD_TEXT_FIELDS}
        plain["author"] = names_of(record.get("author"))
        plain["type"] = types_of({"@type": record.get("type")})
        parts = record.get("partsFree")
        parts = parts if isinstance(parts, list) else []
        plain["isAccessibleForFree"] = _accessible_for_free({
            "isAccessibleForFree": record.get("isAccessibleForFree"),
            "hasPart": [{"isAccessibleForFree": flag} for flag in parts[:MAX_NAMES]],
        })  # fmt: skip
        cleaned.append(plain)
    return cleaned


def clean_types(types: Any) -> list[str]:
    """The capture's ``jsonld_types`` as a list of strings."""
    if not isinstance(types, list):
        return []
    return [t.strip()[:200] for t in types[:MAX_NODES] if isinstance(t, str) and t.strip()]
