"""UTF-8 pages a browser read in a single-byte charset, read again as UTF-8.

A page whose bytes are UTF-8 but which declares latin-1 (or another single-byte charset)
in its markup, with no charset in its HTTP header, is shown by a browser as mojibake:
"für" becomes "fÃ¼r". The plain fetch before the render knows the bytes are UTF-8
(:func:`~spidercrawl.document.html.decode_html`); everything the browser gave back (its
blocks, titles, structured data, DOM) is then undone here: each run of non-ASCII
characters is turned back into the bytes the browser read and decoded as UTF-8, a byte
that is no part of a UTF-8 character kept as the browser showed it (a character a page
wrote as an entity, say).
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Mapping
from typing import Any

# A UTF-8 character of two bytes or more, read in a single-byte charset, is characters
# none of which is ASCII: runs of them are what is read again.
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# More bytes undefined than this: not a charset of 8 bits (windows-1252 leaves 5,
# ISO-8859-8 36, ISO-2022 all 128).
_MOST_UNDEFINED = 96
# A byte of no UTF-8 character, as ``surrogateescape`` decodes it (U+DC80-U+DCFF).
_ESCAPED_BYTE = 0xDC00
# A UTF-8 no-break space's lead byte, alone before a space: its second byte, the browser's
# no-break space, became that space in the captured text.
_NBSP_LEAD = "\udcc2"


@functools.lru_cache(maxsize=32)
def _byte_table(charset: str) -> Mapping[str, int] | None:
    """Character -> the byte a browser read it from, in single-byte ``charset``; None for a
    charset Python lacks or one that reads some characters from more than one byte. As the
    browsers do, latin-1 and ASCII are read as windows-1252, and a byte from 128 to 159
    the charset leaves undefined as the control character of its number."""
    try:
        codec = codecs.lookup(charset)
    except LookupError:
        return None
    if codec.name in ("latin-1", "iso8859-1", "ascii"):
        codec = codecs.lookup("cp1252")
    every_byte = bytes(range(256))
    for order in (every_byte, every_byte[::-1]):  # pairs of bytes one character: not ours
        if len(codec.decode(order, "replace")[0]) != 256:
            return None
    table: dict[str, int] = {}
    undefined = 0
    for byte in range(256):
        try:
            table.setdefault(codec.decode(bytes([byte]))[0], byte)
        except UnicodeDecodeError:
            undefined += 1
            if 0x80 <= byte <= 0x9F:  # read as the control character of its number
                table.setdefault(chr(byte), byte)
    # A charset of 7 bits (ISO-2022) reads no byte above 127: nothing of UTF-8's to undo.
    return table if undefined < _MOST_UNDEFINED else None


def misread_charset(browser_charset: object, raw_encoding: object) -> str | None:
    """The charset to undo where the browser read the page in a single-byte charset and its
    raw bytes were UTF-8 (``raw_encoding``, as the plain fetch decoded them), else None."""
    if not isinstance(browser_charset, str) or raw_encoding not in ("utf-8", "utf8"):
        return None
    try:
        if codecs.lookup(browser_charset).name == "utf-8":
            return None
    except LookupError:
        return None
    return browser_charset if _byte_table(browser_charset) is not None else None


def reread_text(text: str, charset: str) -> str:
    """``text`` a browser read in ``charset`` from UTF-8 bytes, as the bytes say."""
    table = _byte_table(charset)
    if table is None or text.isascii():
        return text

    def reread(run: re.Match[str]) -> str:
        chars = run.group()
        if any(char not in table for char in chars):
            return chars  # not what a single-byte read gives: left as it is
        decoded = bytes(table[char] for char in chars).decode("utf-8", "surrogateescape")
        out, position = [], 0
        for char in decoded:
            if _ESCAPED_BYTE <= ord(char) <= _ESCAPED_BYTE + 0xFF:  # no UTF-8 character's
                lone_space_lead = char == _NBSP_LEAD and position == len(chars) - 1
                if not (lone_space_lead and run.string[run.end() : run.end() + 1].isspace()):
                    out.append(chars[position])  # as the browser showed it
                position += 1
            else:
                out.append(char)
                position += len(char.encode("utf-8"))
        return "".join(out)

    return _NON_ASCII_RUN.sub(reread, text)


def reread_value(value: Any, charset: str) -> Any:
    """:func:`reread_text` of every string in ``value`` (strings, lists, dicts' keys and
    values; anything else as it is)."""
    if isinstance(value, str):
        return reread_text(value, charset)
    if isinstance(value, list):
        return [reread_value(item, charset) for item in value]
    if isinstance(value, dict):
        return {reread_value(k, charset): reread_value(v, charset) for k, v in value.items()}
    return value
