"""Where site models live: ``MODELS_DIR/<site>/``, older versions under ``versions/``.

A site folder holds the model in use (``model.npz``, arrays and JSON that cannot run
code, + ``model.json``, readable). When a site is learned again (its template changed),
the model in use moves to ``versions/<its version>/`` first, so nothing learned is ever
overwritten; only the newest ``keep_versions`` old versions are kept. A version is read
from ``model.json``, a file from outside: only a UTC time (``20261127T071000Z``) is used
as a folder name. A folder of the older pickled format (``model.joblib``) is never
loaded: the site is learned anew, said once.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from pathlib import Path

from spidercrawl.files import safe_name
from spidercrawl.learn.model import (
    META_FILE,
    MODEL_FILE,
    PICKLED_MODEL_FILE,
    VERSION_PATTERN,
    SiteModel,
)

__all__ = ["ModelStore", "safe_name"]

logger = logging.getLogger(__name__)

VERSIONS = "versions"
_WARNED: set[Path] = set()


class ModelStore:
    """Loads, saves and archives the site models of one models folder."""

    def __init__(self, models_dir: Path | str, keep_versions: int = 5) -> None:
        self.models_dir = Path(models_dir)
        self.keep_versions = keep_versions

    def folder(self, site: str) -> Path:
        """``MODELS_DIR/<site>``, with the site name made safe as a folder name."""
        return self.models_dir / safe_name(site)

    def load(self, site: str) -> SiteModel | None:
        """The site's model in use, or None (none saved, or unreadable: then learn anew)."""
        folder = self.folder(site)
        if not SiteModel.exists(folder):
            if (folder / PICKLED_MODEL_FILE).is_file() and folder not in _WARNED:
                _WARNED.add(folder)
                logger.warning(
                    "%s: %s holds a model in the older pickled format, which is not loaded "
                    "(a pickle can run code); the site is learned anew", site, folder,
                )  # fmt: skip
            return None
        try:
            return SiteModel.load(folder)
        except Exception as error:  # a broken or old model file: learn again
            logger.warning(
                "%s: cannot load the model in %s (%s); learning anew", site, folder, error
            )
            return None

    def save(self, site: str, model: SiteModel) -> Path:
        """Make ``model`` the site's model in use; the previous one becomes a version."""
        self.archive(site)
        return model.save(self.folder(site))

    def files(self, site: str) -> dict[str, bytes]:
        """The model in use as file contents by name (to publish it to other machines)."""
        folder = self.folder(site)
        return {
            n: (folder / n).read_bytes() for n in (MODEL_FILE, META_FILE) if (folder / n).is_file()
        }

    def install(self, site: str, files: dict[str, bytes]) -> SiteModel | None:
        """Make a model published by another machine the site's model in use; None if its
        files do not load (the current model, if any, stays)."""
        folder = self.folder(site)
        missing = [name for name in (MODEL_FILE, META_FILE) if not files.get(name)]
        try:
            if missing:
                raise ValueError(f"no {' or '.join(missing)}")
            meta = json.loads(files[META_FILE])
            version = _valid_version(meta.get("version") if isinstance(meta, dict) else "")
        except ValueError as error:  # JSONDecodeError and UnicodeDecodeError among them
            logger.warning("%s: the published model is damaged (%s): not installed", site, error)
            return None
        if version and _version_of(folder) == version:  # installed already (a neighbour)
            return self.load(site)
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        for name in (MODEL_FILE, META_FILE):
            (staging / name).write_bytes(files[name])
        try:
            SiteModel.load(staging)
        except Exception as error:  # a broken publication must not replace a good model
            logger.warning("%s: the published model does not load (%s): not installed", site, error)
            shutil.rmtree(staging, ignore_errors=True)
            return None
        self.archive(site)
        folder.mkdir(parents=True, exist_ok=True)
        for name in (MODEL_FILE, META_FILE):
            (staging / name).replace(folder / name)
        shutil.rmtree(staging, ignore_errors=True)
        return self.load(site)

    def archive(self, site: str) -> Path | None:
        """Move the model in use (if any) to ``versions/<version>/``; returns where."""
        folder = self.folder(site)
        if not (folder / MODEL_FILE).is_file():
            return None
        version = _version_of(folder) or "unknown"
        target = folder / VERSIONS / version
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in (MODEL_FILE, META_FILE):
            if (folder / name).exists():
                (folder / name).replace(target / name)
        self._prune(folder / VERSIONS)
        return target

    def versions(self, site: str) -> list[str]:
        """The archived versions of a site, oldest first."""
        root = self.folder(site) / VERSIONS
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def _prune(self, root: Path) -> None:
        old = sorted(p for p in root.iterdir() if p.is_dir())
        for folder in old[: max(0, len(old) - self.keep_versions)]:
            shutil.rmtree(folder, ignore_errors=True)


def _version_of(folder: Path) -> str:
    """The version ``model.json`` names, where it is a UTC time (it names a folder under
    ``versions/``); "" otherwise."""
    try:
        version = json.loads((folder / META_FILE).read_text("utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return ""
    return _valid_version(version)


def _valid_version(version: object) -> str:
    """``version`` where it is a UTC time as models are versioned, else ""."""
    return version if isinstance(version, str) and VERSION_PATTERN.match(version) else ""
