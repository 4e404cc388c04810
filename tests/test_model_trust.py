"""A model folder is data from outside: loading it runs no code, and what it says steers
no file operation outside it.

Every hostile folder here once ran code or touched files elsewhere: a pickled
``model.joblib`` ran ``os.system`` on load (the store, the extract CLI, a model published
in Redis), and a ``model.json`` whose version was a path made the store delete that path.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from spidercrawl.files import PROJECT_ROOT
from spidercrawl.learn import model_file
from spidercrawl.learn.model import LearningError, SiteModel
from spidercrawl.learn.store import ModelStore
from tests.test_fallbacks import post_page


class Payload:
    """Unpickling this runs a shell command that leaves a file behind."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def fitted() -> SiteModel:
    return SiteModel().fit([post_page(n) for n in range(10)])


def test_a_saved_model_loads_and_extracts_as_it_did(tmp_path, fitted) -> None:
    fitted.save(tmp_path / "site")
    loaded = SiteModel.load(tmp_path / "site")
    assert not (tmp_path / "site" / "model.joblib").exists()
    for number in (50, 51, 52):
        page = post_page(number)
        assert loaded.extract(page).text == fitted.extract(page).text
        assert np.array_equal(loaded.decision([]), fitted.decision([]))
    with zipfile.ZipFile(tmp_path / "site" / "model.npz") as archive:
        assert all(name.endswith(".npy") for name in archive.namelist())


READ_WITH_SAVED_MODELS = """
import json, sys
from scrapy.utils.misc import load_object
from spidercrawl import settings
from spidercrawl.learn.model import SiteModel

for table in ("EXTENSIONS", "DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES"):
    for path in getattr(settings, table):
        load_object(path)
load_object("spidercrawl.spiders.news.NewsSpider")
page = json.loads(open(sys.argv[1]).read())
texts = [SiteModel.load(folder).extract(page).text for folder in sys.argv[2:]]
learning = sorted(name for name in sys.modules if name.split(".")[0] == "sklearn")
print(json.dumps({"texts": texts, "learning": learning}))
"""


def test_a_crawl_reads_with_saved_models_without_the_learning_libraries(tmp_path, fitted) -> None:
    """A crawl process loads its components and reads pages with saved models (a site's and
    the cross-site one) without importing scikit-learn, which only learning needs."""
    fitted.save(tmp_path / "site")
    page = post_page(60)
    (tmp_path / "page.json").write_text(json.dumps(page))
    result = subprocess.run(
        [sys.executable, "-c", READ_WITH_SAVED_MODELS, str(tmp_path / "page.json"),
         str(tmp_path / "site"), str(PROJECT_ROOT / "models" / "_cross_site")],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    read = json.loads(result.stdout.splitlines()[-1])
    assert read["learning"] == []
    assert read["texts"][0] == fitted.extract(page).text and read["texts"][0]
    assert (
        read["texts"][1]
        == SiteModel.load(PROJECT_ROOT / "models" / "_cross_site").extract(page).text
    )


def test_a_pickled_model_folder_is_never_loaded(tmp_path, caplog) -> None:
    marker = tmp_path / "pwned"
    folder = tmp_path / "models" / "evil.example"
    folder.mkdir(parents=True)
    (folder / "model.joblib").write_bytes(pickle.dumps(Payload(marker)))
    (folder / "model.json").write_text('{"version": "20260101T000000Z"}')
    store = ModelStore(tmp_path / "models")
    assert store.load("evil.example") is None
    assert store.load("evil.example") is None
    assert not marker.exists()
    assert caplog.text.count("older pickled format") == 1  # said once


def test_the_extract_cli_does_not_run_a_pickled_model(tmp_path) -> None:
    marker = tmp_path / "pwned"
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "model.joblib").write_bytes(pickle.dumps(Payload(marker)))
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>" + "A quiet harbour story. " * 30 + "</p></body></html>")
    result = subprocess.run(
        [sys.executable, "-m", "spidercrawl.extract", "--model", str(folder), str(page)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert not marker.exists()
    assert result.returncode != 0 and "no model in" in result.stderr


@pytest.mark.parametrize(
    "damage",
    ["pickle in an array", "a class not allowed", "not a zip", "a zip bomb", "deep nesting"],
)
def test_a_hostile_model_npz_is_refused_with_a_reason(tmp_path, fitted, damage) -> None:
    marker = tmp_path / "pwned"
    folder = tmp_path / "site"
    fitted.save(folder)
    target = folder / "model.npz"
    if damage == "pickle in an array":
        buffer = io.BytesIO()
        np.save(buffer, np.array([Payload(marker)], dtype=object), allow_pickle=True)
        with zipfile.ZipFile(target, "a") as archive:
            archive.writestr("extra.npy", buffer.getvalue())
    elif damage == "a class not allowed":
        state = {
            "format": model_file.FILE_FORMAT,
            "value": {"$object": "Popen", "attributes": {"args": "touch " + str(marker)}},
        }
        _write_state(target, state)
    elif damage == "not a zip":
        target.write_bytes(b"\x93NUMPY not really")
    elif damage == "a zip bomb":
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("a0.npy", b"\0" * (300 * 2**20))
    else:
        _write_state(target, {}, raw=_deep(100_000))
    started = time.perf_counter()
    with pytest.raises(LearningError):
        SiteModel.load(folder)
    assert time.perf_counter() - started < 30
    assert not marker.exists()
    assert ModelStore(tmp_path).load("site") is None  # the store learns the site anew


def test_a_model_whose_parts_do_not_fit_is_refused(tmp_path, fitted) -> None:
    import copy

    damaged = copy.deepcopy(fitted)
    damaged.weights_.coef = np.zeros(3)
    damaged.save(tmp_path / "site")
    with pytest.raises(LearningError, match="classifier weights"):
        SiteModel.load(tmp_path / "site")


def _groups_a_string(model: SiteModel) -> None:
    model.vectorizer_.groups = "textgeometry"  # "text" in it, as a substring


def _a_zero_scale(model: SiteModel) -> None:
    model.vectorizer_.scale_ = np.zeros_like(model.vectorizer_.scale_)


def _a_weight_not_a_number(model: SiteModel) -> None:
    model.weights_.coef = np.full_like(model.weights_.coef, np.nan)


def _means_too_few(model: SiteModel) -> None:
    model.vectorizer_.mean_ = model.vectorizer_.mean_[:-1]


def _no_vocabulary(model: SiteModel) -> None:
    del model.vectorizer_.vocabulary_


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_groups_a_string, "feature groups"),
        (_a_zero_scale, "a scale of zero"),
        (_a_weight_not_a_number, "classifier weights"),
        (_means_too_few, "means of another shape"),
        (_no_vocabulary, "vocabulary_"),
    ],
)
def test_a_model_whose_features_are_damaged_is_refused_when_loaded(
    tmp_path, fitted, damage, reason
) -> None:
    """A model file is data from outside: features that would fail or mislead on every
    page (a zero scale divides, a group name as a string matches by its letters) are
    refused when the model is loaded, with the reason."""
    import copy

    damaged = copy.deepcopy(fitted)
    damage(damaged)
    damaged.save(tmp_path / "site")
    with pytest.raises(LearningError, match=reason):
        SiteModel.load(tmp_path / "site")


@pytest.mark.parametrize("version", ["the victim's path", "../../victim", "[1]", 5])
def test_a_version_in_model_json_names_no_folder_outside(tmp_path, fitted, version) -> None:
    victim = tmp_path / "victim"
    (victim / "keep").mkdir(parents=True)
    store = ModelStore(tmp_path / "models")
    folder = store.save("news.example", fitted)
    meta = json.loads((folder / "model.json").read_text())
    if version == "[1]":
        (folder / "model.json").write_text("[1]")
    else:
        version = str(victim) if version == "the victim's path" else version
        (folder / "model.json").write_text(json.dumps({**meta, "version": version}))
    archived = store.archive("news.example")
    assert archived == folder / "versions" / "unknown"
    assert (victim / "keep").is_dir()
    assert store.versions("news.example") == ["unknown"]


def _deep(depth: int) -> bytes:
    return ("[" * depth + "]" * depth).encode()


def _write_state(target: Path, state: dict, raw: bytes | None = None) -> None:
    data = raw if raw is not None else json.dumps(state).encode()
    buffer = io.BytesIO()
    np.savez(buffer, state=np.frombuffer(data, dtype=np.uint8))
    target.write_bytes(buffer.getvalue())
