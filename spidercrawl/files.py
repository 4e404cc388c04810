"""Files: where the project's own lie, reading JSON Lines, and writing so that a crash never
leaves half of a file behind."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

# The checkout or installed tree: the shipped models (``models/``) and the demo site lie here.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(site: str) -> str:
    """A site name usable as a file or folder name."""
    return _UNSAFE_NAME.sub("_", site).strip("._") or "site"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) atomically: see :func:`write_bytes_atomically`."""
    write_bytes_atomically(path, text.encode("utf-8"))


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, then rename it
    over ``path``: readers see the old file or the new one, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    # mkstemp makes the file private (0600); keep the mode an ordinary file would have.
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    try:
        os.chmod(temporary, mode)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json_atomically(path: Path, data: object, indent: int = 1) -> None:
    write_atomically(path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def read_jsonl(path: Path | str) -> list[dict]:
    """The items of a JSON Lines file, as ``-O file.jsonl`` writes them.

    Split on newlines only: ``str.splitlines`` would also split on U+2028 and other
    separators that occur, unescaped, inside the text of real pages.
    """
    text = Path(path).read_text("utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]
