"""A learned model as a file that cannot run code: arrays plus JSON in one ``.npz``.

Pickle (and joblib) runs whatever a file says while loading it, so a model folder copied
from elsewhere, or a model another worker published in Redis, could run code on every
machine that loads it. Here a model's numpy arrays are stored as arrays and everything
else as JSON (kept in the same ``.npz`` as bytes); the file is read with
``allow_pickle=False``. Objects come back only as one of the classes the caller allows
(made without calling any of their methods, their attributes set from the JSON), so a
file can give data, never code. Sizes are checked before anything is read, and the
caller checks that the parts it got fit together.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from spidercrawl.files import write_bytes_atomically

FILE_FORMAT = "spidercrawl-model/1"
STATE_KEY = "state"  # the JSON, as a uint8 array beside the model's own arrays
MAX_FILE_BYTES = 64 * 2**20  # a site model is well under 1 MB, the cross-site one 0.2 MB
MAX_UNPACKED_BYTES = 256 * 2**20  # what the arrays may take once unpacked (zip bombs)
_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Array element types a model file may hold: numbers and booleans only (no objects).
_KINDS = frozenset("biuf")
_DTYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64}


class ModelFileError(ValueError):
    """A model file that is not one, is too large, or holds something not allowed."""


def dump_bytes(value: Any, allowed: Mapping[str, type]) -> bytes:
    """``value`` (objects of the ``allowed`` classes, by name, and plain data) as the
    bytes of a model file."""
    arrays: dict[str, np.ndarray] = {}
    state = {"format": FILE_FORMAT, "value": _encode(value, allowed, arrays)}
    arrays[STATE_KEY] = np.frombuffer(json.dumps(state).encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def load_bytes(data: bytes, allowed: Mapping[str, type]) -> Any:
    """The value a model file holds; :class:`ModelFileError` for anything else."""
    if len(data) > MAX_FILE_BYTES:
        raise ModelFileError(f"{len(data)} bytes, more than a model file may have")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
        if unpacked > MAX_UNPACKED_BYTES:
            raise ModelFileError(f"unpacks to {unpacked} bytes, more than a model may have")
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
    except ModelFileError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError) as error:
        raise ModelFileError(f"not a model file ({type(error).__name__}: {error})") from error
    raw = arrays.pop(STATE_KEY, None)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise ModelFileError("no model state in the file")
    try:
        state = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ModelFileError(f"its state is not JSON ({error})") from error
    if not isinstance(state, dict) or state.get("format") != FILE_FORMAT:
        raise ModelFileError(f"not a {FILE_FORMAT} file")
    for name, array in arrays.items():
        if array.dtype.kind not in _KINDS:
            raise ModelFileError(f"array {name} holds {array.dtype}, not numbers")
    try:
        return _decode(state.get("value"), allowed, arrays)
    except RecursionError as error:
        raise ModelFileError("its state is nested too deeply") from error


def dump(path: Path, value: Any, allowed: Mapping[str, type]) -> None:
    """Write ``value`` to ``path`` atomically (a reader never sees half a model)."""
    write_bytes_atomically(path, dump_bytes(value, allowed))


def load(path: Path, allowed: Mapping[str, type]) -> Any:
    """The value of the model file at ``path`` (its size checked before it is read)."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ModelFileError(f"{path}: {size} bytes, more than a model file may have")
    return load_bytes(path.read_bytes(), allowed)


def _encode(value: Any, allowed: Mapping[str, type], arrays: dict[str, np.ndarray]) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _KINDS:
            raise ModelFileError(f"cannot store an array of {value.dtype}")
        name = f"a{len(arrays)}"
        arrays[name] = value
        return {"$array": name}
    if isinstance(value, list):
        return [_encode(item, allowed, arrays) for item in value]
    if isinstance(value, tuple):
        return {"$tuple": [_encode(item, allowed, arrays) for item in value]}
    if isinstance(value, (set, frozenset)):
        items = [_encode(item, allowed, arrays) for item in value]
        items.sort(key=lambda item: json.dumps(item, sort_keys=True))  # the same bytes each time
        return {"$frozenset" if isinstance(value, frozenset) else "$set": items}
    if isinstance(value, dict):
        return {"$dict": [[_encode(k, allowed, arrays), _encode(v, allowed, arrays)]
                          for k, v in value.items()]}  # fmt: skip
    if isinstance(value, type) and value in _DTYPES.values():
        return {"$dtype": np.dtype(value).name}
    name = type(value).__name__
    if allowed.get(name) is not type(value):
        raise ModelFileError(f"cannot store an object of {type(value).__qualname__}")
    return {
        "$object": name,
        "attributes": {k: _encode(v, allowed, arrays) for k, v in vars(value).items()},
    }


def _decode(value: Any, allowed: Mapping[str, type], arrays: Mapping[str, np.ndarray]) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_decode(item, allowed, arrays) for item in value]
    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise ModelFileError(f"unexpected value in the state: {str(value)[:80]}")
    if "$array" in value:
        array = arrays.get(value["$array"]) if isinstance(value["$array"], str) else None
        if array is None:
            raise ModelFileError(f"the state names a missing array {value['$array']!r}")
        return array
    if "$tuple" in value:
        return tuple(_decode(item, allowed, arrays) for item in _items(value["$tuple"]))
    if "$frozenset" in value:
        return frozenset(_decode(item, allowed, arrays) for item in _items(value["$frozenset"]))
    if "$set" in value:
        return {_decode(item, allowed, arrays) for item in _items(value["$set"])}
    if "$dict" in value:
        pairs = _items(value["$dict"])
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
            raise ModelFileError("a dict in the state is not a list of pairs")
        return {_decode(k, allowed, arrays): _decode(v, allowed, arrays) for k, v in pairs}
    if "$dtype" in value:
        if value["$dtype"] not in _DTYPES:
            raise ModelFileError(f"unknown number type {value['$dtype']!r}")
        return _DTYPES[value["$dtype"]]
    if "$object" in value:
        return _decode_object(value, allowed, arrays)
    raise ModelFileError(f"unexpected value in the state: {str(value)[:80]}")


def _items(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ModelFileError("a collection in the state is not a list")
    return value


def _decode_object(
    value: dict[str, Any], allowed: Mapping[str, type], arrays: Mapping[str, np.ndarray]
) -> Any:
    """An object of an allowed class, made without running any of its code (no
    ``__init__``, no ``__setstate__``): its attributes are set one by one."""
    cls = allowed.get(value["$object"]) if isinstance(value["$object"], str) else None
    attributes = value.get("attributes")
    if cls is None:
        raise ModelFileError(
            f"the state holds an object of a class not allowed: {value['$object']!r}"
        )
    if not isinstance(attributes, dict):
        raise ModelFileError(f"the state's {cls.__name__} has no attributes")
    instance = object.__new__(cls)
    for name, item in attributes.items():
        if not isinstance(name, str) or not _ATTRIBUTE.match(name) or name.startswith("__"):
            raise ModelFileError(f"the state's {cls.__name__} has an odd attribute {name!r}")
        object.__setattr__(instance, name, _decode(item, allowed, arrays))
    return instance
