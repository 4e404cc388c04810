"""Consent dialogs: the cookie and consent boxes of the common CMPs, never article text.

A consent dialog (OneTrust, Didomi, Quantcast Choice, Sourcepoint, Usercentrics, Cookiebot,
TrustArc, the cookieconsent library, a site's own cookie banner) is on every page of a
site, over the article in the browser and often in the raw HTML too. Its text ("We value
your privacy...") is not the article's, and a model that learns it as a template is
harmed as much as an article that delivers it. Both readers drop these elements before
they read: the capture script in the browser (``CONSENT_CSS``, passed to ``capture.js``)
and :func:`~spidercrawl.document.density.remove_invisible` on any parsed HTML
(its ids and classes). Where a dialog hides the article until answered, what the DOM holds
is read, and a page the browser showed empty is read from its raw HTML.
"""

from __future__ import annotations

from lxml import etree

# Elements by id (exact), by id prefix, by class (whole class name), by class or id part.
_IDS = ("onetrust-consent-sdk", "onetrust-banner-sdk", "didomi-host", "didomi-notice",
        "usercentrics-root", "CybotCookiebotDialog", "truste-consent-track",
        "qc-cmp2-container", "cmpbox", "cookie-law-info-bar", "cookie-notice",
        "cookie-banner", "cookieConsent", "gdpr-consent-notice", "consent-banner")  # fmt: skip
_ID_PREFIXES = ("sp_message_container", "sp_message_iframe")
_CLASSES = ("qc-cmp2-container", "didomi-popup", "cc-window", "cc-banner", "ot-sdk-container",
            "cookie-banner", "cookie-consent", "cookie-notice", "cookiebanner",
            "consent-banner", "gdpr-banner", "fc-consent-root", "truste_box_overlay")  # fmt: skip

CONSENT_CSS = ", ".join(
    [f'[id="{i}"]' for i in _IDS]
    + [f'[id^="{prefix}"]' for prefix in _ID_PREFIXES]
    + [f".{name}" for name in _CLASSES]
)
# Every id and class attribute of a document, read in C; the dialogs are told apart from
# the others in Python by set lookups. This runs on every parsed page: an XPath testing
# each element against every id and class above was the fast path's largest cost.
_ID_AND_CLASS = etree.XPath("//@id | //@class")
_ID_SET = frozenset(_IDS)
_CLASS_SET = frozenset(_CLASSES)


def _is_dialog(attribute: str, value: str) -> bool:
    if attribute == "id":
        return value in _ID_SET or value.startswith(_ID_PREFIXES)
    return not _CLASS_SET.isdisjoint(value.split())


def remove_consent_dialogs(root: etree._Element) -> int:
    """Drop the consent dialogs from a parsed document (their tails kept); how many."""
    dialogs = [
        value.getparent() for value in _ID_AND_CLASS(root) if _is_dialog(value.attrname, value)
    ]
    dialogs = [element for element in dict.fromkeys(dialogs) if element.getparent() is not None]
    for element in dialogs:
        if element.getparent() is not None:  # not inside one dropped already
            element.drop_tree()
    return len(dialogs)


# The same attributes' values alone (no element behind each), and every name above.
_ID_AND_CLASS_VALUES = etree.XPath("//@id | //@class", smart_strings=False)
_NAMES = (*_IDS, *_ID_PREFIXES, *_CLASSES)


def may_hold_consent_dialogs(root: etree._Element) -> bool:
    """False where no id or class of the document holds a dialog's name: most pages, told
    without an element made for every id and class. True says only "maybe"."""
    values = " ".join(_ID_AND_CLASS_VALUES(root))
    return any(name in values for name in _NAMES)
