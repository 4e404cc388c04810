"""The language identifier's model: decompressed once, read from the cache afterwards,
the same identifier either way, and loaded as shipped where the cache fails."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

from spidercrawl.document import language_model

TEXTS = (
    "The council met on Tuesday to discuss the new budget for the city's schools and parks.",
    "Der Stadtrat hat am Dienstag über den neuen Haushalt für Schulen und Parks beraten.",
    "Le conseil municipal s'est réuni mardi pour discuter du nouveau budget des écoles.",
)


@pytest.fixture(scope="module")
def shipped() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_DIR / MODEL_FILE, norm_probs=True)


def written() -> None:
    """Wait for the cache's writer."""
    for thread in threading.enumerate():
        if thread.name == language_model.WRITER:
            thread.join()


def same_identifier(first: LanguageIdentifier, second: LanguageIdentifier) -> bool:
    arrays = all(
        getattr(first, name).dtype == getattr(second, name).dtype
        and np.array_equal(getattr(first, name), getattr(second, name))
        for name in ("nb_ptc", "nb_pc")
    )
    tables = all(
        getattr(first, name) == getattr(second, name)
        for name in ("nb_classes", "tk_output", "tk_nextmove", "tk_row")
    )
    return (
        arrays
        and tables
        and [first.classify(t) for t in TEXTS] == [second.classify(t) for t in TEXTS]
    )


def test_the_model_is_read_from_the_cache_after_its_first_load(
    shipped, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("SPIDERCRAWL_CACHE_DIR", str(tmp_path))
    (tmp_path / "py3langid-model-0.1-1-1").mkdir()  # another version's copy
    first = language_model.load_identifier()
    written()
    (kept,) = tmp_path.iterdir()  # nothing half-written left, the other version gone
    assert kept.name.startswith("py3langid-model-") and len(list(kept.glob("*.npy"))) == 6

    def not_shipped(*args, **kwargs):
        raise AssertionError("the shipped model was decompressed again")

    monkeypatch.setattr(LanguageIdentifier, "from_model_file", not_shipped)
    cached = language_model.load_identifier()
    assert same_identifier(first, shipped) and same_identifier(cached, shipped)


def test_a_damaged_cache_is_replaced(shipped, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SPIDERCRAWL_CACHE_DIR", str(tmp_path))
    language_model.load_identifier()
    written()
    cached = next(tmp_path.glob("py3langid-model-*/nextmove.npy"))
    cached.write_bytes(cached.read_bytes()[:1000])  # cut short
    assert same_identifier(language_model.load_identifier(), shipped)
    written()
    assert same_identifier(language_model.load_identifier(), shipped)
    assert cached.stat().st_size > 1000


def test_a_cache_folder_that_cannot_be_made_loads_the_shipped_model(
    shipped, tmp_path: Path, monkeypatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("SPIDERCRAWL_CACHE_DIR", str(blocked / "cache"))
    assert same_identifier(language_model.load_identifier(), shipped)
    written()


def test_a_copy_abandoned_half_written_is_removed(tmp_path: Path, monkeypatch) -> None:
    """A process killed while writing leaves its folder: the next write removes it (an hour
    old), not another process's write under way (a young one)."""
    import os

    monkeypatch.setenv("SPIDERCRAWL_CACHE_DIR", str(tmp_path))
    abandoned, under_way = tmp_path / ".writing-old", tmp_path / ".writing-new"
    for folder in (abandoned, under_way):
        folder.mkdir()
        (folder / "ptc.npy").write_bytes(b"cut short")
    hours_ago = os.stat(abandoned).st_mtime - 2 * language_model.ABANDONED_SECONDS
    os.utime(abandoned, (hours_ago, hours_ago))
    language_model.load_identifier()
    written()
    assert not abandoned.exists() and under_way.exists()
