"""The language identifier's model, decompressed once per machine rather than once per
process.

py3langid ships its model LZMA-compressed; decompressing it is nearly all of the
identifier's load, which every process (a crawl, a datatrove task, an extraction run)
pays before its first article's language is known. The arrays it holds are kept
uncompressed in the user's cache folder (``$XDG_CACHE_HOME/spidercrawl``, else
``~/.cache/spidercrawl``; ``SPIDERCRAWL_CACHE_DIR`` overrides) under a name made from the
package's version and the shipped file's size and time, and later processes read them
from there. Where the folder cannot be written or read, the model loads as py3langid
loads it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import shutil
import tempfile
import threading
import time
from array import array
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

_PREFIX = "py3langid-model-"
_WRITING = ".writing-"  # a copy being written, renamed to its _PREFIX name when whole
ABANDONED_SECONDS = 3600.0  # a copy being written this long ago was abandoned
WRITER = "language-model-cache"  # the name of the thread that writes the cache
# The arrays py3langid's loader returns, by the names its model file gives them.
_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")
_TYPECODES = {2: "H", 4: "I", 8: "L"}  # unsigned integers by item size, as py3langid keeps them


def cache_dir() -> Path:
    """Where the decompressed model is kept."""
    if chosen := os.environ.get("SPIDERCRAWL_CACHE_DIR"):
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "spidercrawl"


def load_identifier() -> Any:
    """py3langid's identifier (probabilities normalised), from the cached arrays where
    they are kept, else from the shipped model (its arrays then kept for the next
    process by a thread of their own, :data:`WRITER`)."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    shipped = Path(MODEL_DIR) / MODEL_FILE
    cached = _cached_path(shipped)
    if cached is not None and cached.is_dir():
        try:
            return _identifier_of(LanguageIdentifier, _read(cached))
        except Exception as error:  # a damaged copy (a file cut short or gone): rewritten
            logger.info("Language model cache %s unreadable (%s): loading the shipped one",
                        cached, error)  # fmt: skip
            shutil.rmtree(cached, ignore_errors=True)
    identifier = LanguageIdentifier.from_model_file(shipped, norm_probs=True)
    if cached is not None:  # not waited for: the process waits for it at its end
        threading.Thread(target=_write, args=(cached, identifier), name=WRITER).start()
    return identifier


def _cached_path(shipped: Path) -> Path | None:
    """The cache folder for this package version and model file; None where unknown."""
    try:
        version = importlib.metadata.version("py3langid")
        stat = shipped.stat()
        folder = cache_dir()  # no home folder: RuntimeError
    except (OSError, RuntimeError, importlib.metadata.PackageNotFoundError):
        return None
    return folder / f"{_PREFIX}{version}-{stat.st_size}-{stat.st_mtime_ns}"


def _read(folder: Path) -> dict[str, Any]:
    """The arrays, one ``.npy`` file each, each read whole at once (where an ``.npz``
    archive is read in small pieces, each checked)."""
    import numpy as np

    return {name: np.load(folder / f"{name}.npy", allow_pickle=False) for name in _ARRAYS}


def _identifier_of(identifier_class: Any, arrays: dict[str, Any]) -> Any:
    """The identifier built from the arrays, in the types py3langid's own loader hands
    its constructor (the state tables as ``array`` objects, the rest as lists)."""

    def as_array(values: Any) -> array:
        table = array(_TYPECODES[values.dtype.itemsize])
        table.frombytes(values.tobytes())
        return table

    return identifier_class(
        arrays["ptc"], arrays["pc"], arrays["classes"].tolist(), as_array(arrays["nextmove"]),
        arrays["out_feat"].tolist(), norm_probs=True, tk_row=as_array(arrays["nextmove_row"]),
    )  # fmt: skip


def _write(folder: Path, identifier: Any) -> None:
    """Keep the identifier's arrays in ``folder`` (written in a folder of their own, then
    renamed, so that a process reading them never finds half of them), in place of the
    copies of other versions."""
    import numpy as np

    arrays = {
        "ptc": identifier.nb_ptc,
        "pc": identifier.nb_pc,
        "classes": np.array(identifier.nb_classes),
        "nextmove": np.frombuffer(identifier.tk_nextmove, dtype=_dtype(identifier.tk_nextmove)),
        "nextmove_row": np.frombuffer(identifier.tk_row, dtype=_dtype(identifier.tk_row)),
        "out_feat": np.asarray(identifier.tk_output, dtype=np.int32),
    }
    written = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        written = Path(tempfile.mkdtemp(dir=folder.parent, prefix=_WRITING))
        for name, values in arrays.items():
            np.save(written / f"{name}.npy", values, allow_pickle=False)
        os.rename(written, folder)  # where another process's copy came first, it stands
        written = None
        for stale in folder.parent.glob(f"{_PREFIX}*"):
            if stale != folder:
                shutil.rmtree(stale, ignore_errors=True)
        _remove_abandoned(folder.parent)
    except (OSError, TypeError, ValueError) as error:
        logger.info("Language model not cached in %s: %s", folder.parent, error)
    finally:
        if written is not None:
            shutil.rmtree(written, ignore_errors=True)


def _remove_abandoned(cache: Path) -> None:
    """Half-written copies older than ``ABANDONED_SECONDS``: a process killed while writing
    left them (a younger one may be another process's write under way)."""
    now = time.time()
    for left in cache.glob(f"{_WRITING}*"):
        with contextlib.suppress(OSError):
            if now - left.stat().st_mtime > ABANDONED_SECONDS:
                shutil.rmtree(left, ignore_errors=True)


def _dtype(table: array) -> str:
    return {"H": "uint16", "I": "uint32", "L": "uint64"}[table.typecode]
