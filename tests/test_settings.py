"""The render add-on turns RENDER_* settings into scrapy-playwright's, and the page item
keeps the field names of the ziyan-spider data."""

from __future__ import annotations

import inspect
import json
from types import SimpleNamespace

import pytest
from scrapy.settings import Settings
from scrapy.utils.misc import is_generator_with_return_value

from spidercrawl import settings as project_settings
from spidercrawl.capture.browser import (
    IMAGES_OFF,
    PLAYWRIGHT_HANDLER,
    RenderAddon,
    SubresourceFilter,
)
from spidercrawl.items import PageItem
from spidercrawl.spiders.news import NewsSpider
from tests.conftest import SHARED


def addon_settings(**overrides: object) -> Settings:
    settings = Settings()
    settings.setmodule(project_settings, priority="project")
    for name, value in overrides.items():
        settings.set(name, value, priority="cmdline")
    RenderAddon().update_settings(settings)
    return settings


def test_addon_configures_the_browser_from_render_settings() -> None:
    settings = addon_settings(
        RENDER_SCHEMES=["http"], RENDER_CONCURRENCY=3, RENDER_TIMEOUT=7,
        RENDER_BROWSER_PATH="/no/such/chromium",
    )  # fmt: skip
    assert settings.getdict("DOWNLOAD_HANDLERS")["http"] == PLAYWRIGHT_HANDLER
    assert "https" not in settings.getdict("DOWNLOAD_HANDLERS")  # one browser, not two
    assert settings.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT") == 3
    assert settings.getfloat("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT") == 7000
    launch = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["executable_path"] == "/no/such/chromium"
    assert "--disable-background-networking" in launch["args"]
    # No context at start-up: Chromium starts with the first page to render.
    assert settings.getdict("PLAYWRIGHT_CONTEXTS") == {}


def test_resource_blocking_can_be_turned_off() -> None:
    assert isinstance(addon_settings().get("PLAYWRIGHT_ABORT_REQUEST"), SubresourceFilter)
    off = addon_settings(RENDER_BLOCK_RESOURCES=False)
    assert off.get("PLAYWRIGHT_ABORT_REQUEST") is None
    assert IMAGES_OFF not in off.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")["args"]


def test_images_are_switched_off_in_the_browser_not_aborted() -> None:
    """An aborted image can hold a page's load event back for ever in Chromium."""
    settings = addon_settings(RENDER_BLOCKED_RESOURCE_TYPES=["image", "font"])
    assert IMAGES_OFF in settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")["args"]
    aborts = settings.get("PLAYWRIGHT_ABORT_REQUEST")
    assert aborts.blocked_types == frozenset({"font"})


def test_subresource_filter() -> None:
    keep_local = SubresourceFilter(["image", "font"], ["127.0.0.1"])

    def request(url: str, kind: str) -> SimpleNamespace:
        return SimpleNamespace(url=url, resource_type=kind)

    assert keep_local(request("http://127.0.0.1:8000/a.png", "image"))
    assert not keep_local(request("http://127.0.0.1:8000/s.css", "stylesheet"))
    assert keep_local(request("https://cdn.example/s.css", "stylesheet"))
    assert not SubresourceFilter(["image"], [])(request("https://cdn.example/s.css", "stylesheet"))


@pytest.mark.skipif(not (SHARED / "ziyan-spider").exists(), reason="../shared is not here")
def test_page_item_has_every_ziyan_spider_field() -> None:
    page = json.loads((SHARED / "ziyan-spider" / "npr" / "000.json").read_text("utf-8"))
    assert set(page) <= set(PageItem.fields)
    item = PageItem(**page)  # the published data loads into our item unchanged
    block_keys = set(item["texts"][0])
    assert {"bound", "computed", "element", "path", "selector", "text", "html"} <= block_keys


def test_no_spider_callback_is_a_generator_that_returns_a_value() -> None:
    """WARN_ON_GENERATOR_RETURN_VALUE is off for speed; this test does Scrapy's check once."""
    callbacks = [
        function
        for name, function in inspect.getmembers(NewsSpider, inspect.isfunction)
        if name.startswith("parse") and inspect.isgeneratorfunction(function)
    ]
    assert len(callbacks) >= 5
    assert not [f.__name__ for f in callbacks if is_generator_with_return_value(f)]
    assert project_settings.WARN_ON_GENERATOR_RETURN_VALUE is False


def _defined_settings() -> set[str]:
    import re

    text = inspect.getsource(project_settings)
    return set(re.findall(r"^([A-Z][A-Z0-9_]*)\s*[:=]", text, re.MULTILINE))


def test_no_component_repeats_a_default_that_settings_py_sets() -> None:
    """Defaults live once, in settings.py: a read with a default of its own drifts from it."""
    import re
    from pathlib import Path

    read_with_default = re.compile(
        r"\.(?:get|getint|getfloat|getbool|getlist|getdict)\(\"([A-Z_][A-Z0-9_]*)\", "
    )
    defined = _defined_settings()
    package = Path(project_settings.__file__).parent
    repeated = [
        f"{path.relative_to(package)}: {name}"
        for path in package.rglob("*.py")
        if path != Path(project_settings.__file__)
        for name in read_with_default.findall(path.read_text("utf-8"))
        if name in defined
    ]
    assert repeated == []


def test_the_settings_reference_names_settings_that_exist() -> None:
    import re

    from spidercrawl.files import PROJECT_ROOT

    readme = (PROJECT_ROOT / "docs" / "settings.md").read_text("utf-8")
    table = readme[readme.index("## Settings") :]
    table = table[: table.index("\n\n", table.index("| setting |"))]
    first_cells = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    named = {name for cell in first_cells for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    defined = _defined_settings()
    assert named and named - defined == set()
    # Every setting of the project's own (not Scrapy's or a plugin's) is in the table.
    own = {n for n in defined if n.split("_")[0] in {"RENDER", "LEARN", "FAST", "DRIFT"}}
    assert own - named == set()
