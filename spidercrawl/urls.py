"""URL identity: which URLs name the same article.

``article_key`` maps the variants of an article's URL (``www.`` or not, http or https,
tracking parameters, fragments, AMP versions, trailing slashes) to one key, for
deduplication across crawls. ``courlan`` does the normalisation (lower-cased host, sorted
query, known tracking parameters dropped); the AMP and ``www`` rules are ours.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import courlan

_AMP_PATH = re.compile(r"(/amp)+/?$|\.amp(?=\.html?$|$)", re.IGNORECASE)
_AMP_PARAMETERS = frozenset({"amp", "outputtype", "_gl", "output"})


def article_key(url: str) -> str:
    """One key for every variant of an article's URL ('' for what is not a web URL)."""
    if not url or not url.lower().startswith(("http://", "https://")):
        return ""
    try:
        raw = urlsplit(url)
    except ValueError:  # a malformed URL (broken IPv6 literal...): no key, no dedup
        return ""
    query = urlencode(
        [(k, v) for k, v in parse_qsl(raw.query, keep_blank_values=True)
         if k.lower() not in _AMP_PARAMETERS]
    )  # fmt: skip
    url = urlunsplit(raw._replace(query=query))
    try:
        normalized = courlan.normalize_url(url, strict=False)
    except (ValueError, AttributeError):
        normalized = url
    parts = urlsplit(normalized)
    host = (parts.hostname or "").removeprefix("www.").removeprefix("amp.")
    if parts.port and parts.port not in (80, 443):
        host = f"{host}:{parts.port}"
    path = _AMP_PATH.sub("", parts.path).rstrip("/") or "/"
    return urlunsplit(("", host, path, parts.query, ""))[2:]
