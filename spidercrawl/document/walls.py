"""Bot walls: a page answered by a challenge or a block instead of the article.

Sites behind Cloudflare, AWS WAF, Akamai, DataDome or PerimeterX answer a crawler with a
403, 429 or 503, or with a 200 whose body is an interstitial ("Just a moment...", a
captcha, "Please enable JavaScript and disable any ad blocker"). Such a page is never an
article, never a page a model learns from, and a crawl must say so: a site of nothing but
walls otherwise reads as a site without articles.

:func:`recognise_wall` names the wall from the status, the headers and the HTML. A 403,
429 or 503 is a wall whatever its body says (its kind is the vendor's where the body or
headers name one). A 200 is one only where a vendor's challenge marks stand in a page
with little text (``MAX_WALL_WORDS``): protected sites load the same vendors' scripts on
their real articles, which are long.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

WALL_STATUSES = (403, 429, 503)
# A 200 with a vendor's challenge marks is a wall only with fewer visible words than this.
MAX_WALL_WORDS = 250
# Only the head of a huge page is searched: an interstitial is small.
SCANNED_CHARS = 300_000

# (kind, marks in the HTML): the first kind whose marks match names the wall. The vendors'
# scripts and flags also stand on the real pages they protect, so a 200 is named a wall by
# the marks of the challenge page itself only (``_CHALLENGE_MARKS``); any mark names a
# 403, 429 or 503's vendor.
_VENDOR_MARKS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("Cloudflare challenge", r"/cdn-cgi/challenge-platform/|cf_chl_opt|cloudflare"),
        ("AWS WAF challenge", r"awswaf|AwsWafIntegration|aws-waf-token"),
        ("DataDome captcha", r"captcha-delivery\.com|datadome"),
        ("PerimeterX captcha", r"px-captcha|_pxAppId|perimeterx"),
        ("Akamai block", r"edgesuite|akamai"),
    )
)  # fmt: skip
_CHALLENGE_MARKS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("Cloudflare challenge", r"<title>\s*(just a moment\.\.\.|attention required! \| "
         r"cloudflare)|cf_chl_opt|cf-browser-verification|enable javascript and cookies to "
         r"continue|checking (your browser|if the site connection is secure)"),
        ("AWS WAF challenge", r"gokuProps|AwsWafIntegration\.(checkForceRefresh|getToken)"),
        ("DataDome captcha", r"captcha-delivery\.com"),
        ("PerimeterX captcha", r"<div[^>]*id=.px-captcha|press (&amp;|&) hold to confirm"),
        ("Akamai block", r"<title>\s*access denied\s*</title>[\s\S]{0,3000}?(reference"
         r"(\s|&#32;)*(#|&#35;)|edgesuite)"),
        ("JavaScript wall", r"please enable (javascript|js) and disable any ad ?blocker|"
         r"verifying you are (a )?human"),
    )
)  # fmt: skip
# Words each challenge's marks cannot match without (lower case): most pages hold none,
# and a search for them in the lowered page is a fraction of the patterns' own searches.
_CHALLENGE_WORDS: dict[str, tuple[str, ...]] = {
    "Cloudflare challenge": ("just a moment...", "attention required! | cloudflare",
                             "cf_chl_opt", "cf-browser-verification",
                             "enable javascript and cookies to continue",
                             "checking your browser", "checking if the site connection"),
    "AWS WAF challenge": ("gokuprops", "awswafintegration."),
    "DataDome captcha": ("captcha-delivery.com",),
    "PerimeterX captcha": ("px-captcha", "hold to confirm"),
    "Akamai block": ("access denied",),
    "JavaScript wall": ("please enable javascript", "please enable js", "verifying you are"),
}  # fmt: skip
_HEADER_MARKS = (
    ("cf-mitigated", "Cloudflare challenge"),
    ("x-amzn-waf-action", "AWS WAF challenge"),
    ("x-datadome", "DataDome captcha"),
)
HEADER_NAMES = tuple(name for name, _ in _HEADER_MARKS)  # the headers that name a wall
# Tag names are case-blind in ASCII only, as a browser reads them: a long s or a capital
# dotted I makes no ``<script>`` (and no name outside the table below).
_INVISIBLE_START = re.compile(r"<(script|style|noscript|template)\b", re.IGNORECASE | re.ASCII)
# Each one's end tag, searched in the page as it is: positions in a lowered copy are not
# the page's where lower case lengthens a letter (a capital dotted I), and the copy costs.
_INVISIBLE_END = {
    name: re.compile(f"</{name}", re.IGNORECASE | re.ASCII)
    for name in ("script", "style", "noscript", "template")
}
_TAG = re.compile(r"<[^<>]*>")  # not "[^>]*": linear on "<a<a<a..." never closed


@dataclass(frozen=True)
class Wall:
    """What stood in the article's place: its kind and the HTTP status it came with."""

    kind: str  # "HTTP 403", "Cloudflare challenge", ...
    status: int

    @property
    def key(self) -> str:
        """The kind as a stats key: ``cloudflare_challenge``, ``http_403``."""
        return re.sub(r"[^a-z0-9]+", "_", self.kind.lower()).strip("_")

    def describe(self) -> str:
        """ "HTTP 403, Cloudflare challenge"; a challenge sent as a 200 by its kind alone."""
        if self.kind.startswith("HTTP") or self.status not in WALL_STATUSES:
            return self.kind
        return f"HTTP {self.status}, {self.kind}"


def recognise_wall(status: int, headers: Mapping[str, str], html: str) -> Wall | None:
    """The wall a response is, None for a page (see the module doc). ``headers``: names
    in any case."""
    head = html[:SCANNED_CHARS] if html else ""
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    if status in WALL_STATUSES:
        kind = _kind_of(head, lowered, _CHALLENGE_MARKS) or _kind_of(head, {}, _VENDOR_MARKS)
        return Wall(kind or f"HTTP {status}", status)
    if status >= 300:
        return None
    if lowered.get("cf-mitigated", "").lower() == "challenge":
        return Wall("Cloudflare challenge", status)
    lowered_head = head.lower()
    marks = tuple(
        (kind, pattern)
        for kind, pattern in _CHALLENGE_MARKS
        if any(word in lowered_head for word in _CHALLENGE_WORDS[kind])
    )  # the patterns a page could match: for most pages, none
    kind = _kind_of(head, {}, marks) if marks else None
    if kind is None or visible_words(head) >= MAX_WALL_WORDS:
        return None
    return Wall(kind, status)


def _kind_of(
    head: str, headers: Mapping[str, str], marks: tuple[tuple[str, re.Pattern[str]], ...]
) -> str | None:
    for name, kind in _HEADER_MARKS:
        if name in headers:
            return kind
    for kind, pattern in marks:
        if pattern.search(head):
            return kind
    return None


def visible_words(html: str) -> int:
    """The words of ``html``'s text outside scripts and styles."""
    return len(visible_text(html).split())


def visible_text(html: str) -> str:
    """``html``'s text outside scripts and styles, a line per run between tags (a quick
    read, no parse; linear: an element never closed hides the rest of the page)."""
    parts, position = [], 0
    while (start := _INVISIBLE_START.search(html, position)) is not None:
        parts.append(html[position : start.start()])
        end = _INVISIBLE_END[start.group(1).lower()].search(html, start.end())
        if end is None:
            position = len(html)
            break
        position = end.start() + 1
    parts.append(html[position:])
    return _TAG.sub("\n", " ".join(parts))
