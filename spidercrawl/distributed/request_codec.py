"""Requests in the shared Redis queue as JSON, never as pickles.

scrapy-redis pickles queued requests by default, so anyone who can write to the queue runs
code on every worker that takes a request. This is its ``SCHEDULER_SERIALIZER`` instead
(a module with ``dumps`` and ``loads``): ``Request.to_dict`` as JSON, bytes as base64. On
the way in, a ``meta`` value that is not plain data (a browser page method, an object)
is left out; the middleware that set it sets it again. On the way out, only a plain
:class:`scrapy.Request` is made (no ``_class``, which Scrapy would import and call),
its callbacks named as spider methods are, and anything else is a
:class:`BadQueuedRequestError` the scheduler skips with one log line.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from typing import Any

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 2**20  # a request carries at most a page's raw HTML in its meta
_METHOD_NAME = re.compile(r"[a-z][a-z0-9_]{0,99}\Z")  # a spider method, never a dunder
_BYTES, _PAIRS = "$bytes", "$pairs"
_LEFT_OUT: set[str] = set()  # meta keys already said to be left out


class BadQueuedRequestError(ValueError):
    """A queued entry that is not a request this project wrote."""


class _NotPlainError(Exception):
    """A value that is not plain data."""


def dumps(request: dict[str, Any]) -> bytes:
    """``Request.to_dict``'s dict as JSON bytes; meta values that are not plain data are
    left out (each key said once in the log)."""
    encoded: dict[str, Any] = {}
    for key, value in request.items():
        if key == "meta":
            encoded[key] = _plain_meta(value or {})
        else:
            try:
                encoded[key] = _encode(value)
            except _NotPlainError:  # cb_kwargs or the like: as meta, left out
                _say_left_out(key)
    return json.dumps(encoded, separators=(",", ":")).encode("utf-8")


def loads(data: bytes | str) -> dict[str, Any]:
    """The dict ``request_from_dict`` makes a plain ``Request`` of; ``BadQueuedRequestError``
    for anything this project did not write."""
    if len(data) > MAX_REQUEST_BYTES:
        raise BadQueuedRequestError(f"{len(data)} bytes, more than a queued request may have")
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise BadQueuedRequestError(
            f"not JSON (an older pickled entry, or not ours): {error}"
        ) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
        raise BadQueuedRequestError("not a request: no url")
    if "_class" in raw:
        raise BadQueuedRequestError(f"a request class is named ({str(raw['_class'])[:80]!r})")
    for name in ("callback", "errback"):
        value = raw.get(name)
        if value is not None and not (isinstance(value, str) and _METHOD_NAME.match(value)):
            raise BadQueuedRequestError(
                f"its {name} is not a spider method name: {str(value)[:80]!r}"
            )
    try:
        request = {key: _decode(value) for key, value in raw.items()}
    except (TypeError, ValueError, binascii.Error, RecursionError) as error:
        raise BadQueuedRequestError(f"a field is damaged: {error}") from error
    if not isinstance(request.get("meta", {}), dict):
        raise BadQueuedRequestError("its meta is not a mapping")
    return request


def _plain_meta(meta: dict[str, Any]) -> dict[str, Any]:
    plain = {}
    for key, value in meta.items():
        try:
            plain[str(key)] = _encode(value)
        except _NotPlainError:
            _say_left_out(str(key))
    return plain


def _say_left_out(key: str) -> None:
    if key not in _LEFT_OUT:
        _LEFT_OUT.add(key)
        logger.debug("Queued requests leave out %r: not plain data", key)


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return {_BYTES: base64.b64encode(value).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {_PAIRS: [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise _NotPlainError(type(value).__name__)


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if _BYTES in value:
        if len(value) != 1 or not isinstance(value[_BYTES], str):
            raise ValueError("odd bytes")
        return base64.b64decode(value[_BYTES], validate=True)
    if _PAIRS in value:
        pairs = value[_PAIRS]
        if len(value) != 1 or not isinstance(pairs, list):
            raise ValueError("odd pairs")
        decoded = {}
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ValueError("odd pair")
            key = _decode(pair[0])
            if not isinstance(key, (str, bytes, int, float)):
                raise ValueError("a key that is not a string")
            decoded[key] = _decode(pair[1])
        return decoded
    return {key: _decode(item) for key, item in value.items()}
