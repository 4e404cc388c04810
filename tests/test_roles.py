"""A layout's parser decided role by role with the page-level reading: an in-article box
the model keeps is excluded, a second paragraph markup it misses is included, the parser
prints as a person would write it, and malformed role records are refused when loaded."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from spidercrawl.learn import model_file
from spidercrawl.learn.consensus_labels import CONSENSUS_FIELD, ConsensusArticle
from spidercrawl.learn.model import MODEL_FILE, LearningError, SiteModel, _stored_classes
from tests.test_fallbacks import FOOTER, NAV, PageBuilder, sentence

ARTICLE = [("div", "", ("page",)), ("article", "", ("story",))]
BODY = [*ARTICLE, ("div", "", ("story-body",))]
PROMO = [*BODY, ("div", "", ("app-promo",))]  # the box's own element, between paragraphs
MORE = [*BODY, ("div", "", ("text-block",))]  # a CMS's second paragraph markup
ADVERT = [*BODY, ("div", "", ("ad-slot",))]
MORE_CSS = {"font-size": "15px", "color": "#333", "font-family": "Georgia", "line-height": "2"}
FIGURE = [*BODY, ("figure", "", ("photo",))]
PARAGRAPH_CSS = {"font-size": "18px", "color": "black"}
# Five wordings, each on two of the ten pages: no site-wide template text (that needs 3
# pages), but the box's text repeats in its role.
APP_BOXES = [
    f"Get our app: the Harbour Times on your phone, with alerts for {topic} as it happens."
    for topic in ("the harbour", "the council", "the schools", "the weather", "the ferries")
]


def story_page(
    number: int, box: bool = False, second_markup: bool = False, caption: bool = False
) -> tuple[dict, list[str]]:
    """A news story: menu, headline, paragraphs, a footer. ``box``: a "Get our app" box
    between the paragraphs, styled like them; ``second_markup``: the story's second half,
    past an advert's label, in ``div.text-block`` elements styled otherwise (a CMS's second
    paragraph markup). Returns
    the page item and the story's paragraphs as a page-level reading keeps them."""
    rng = random.Random(number)
    page = PageBuilder()
    for name in ("News", "Sport", "Weather", "Opinion"):
        page.add(NAV, "a", name, {}, link=True)
    title = f"Harbour{number} council{number} agrees the budget"
    page.add(ARTICLE, "h1", title, {"font-size": "32px"})
    story = [f"harbour{number} council{number} {sentence(rng, 30)}"]
    story += [sentence(rng, 30) for _ in range(3)]
    for index, text in enumerate(story):
        page.add(BODY, "p", text, PARAGRAPH_CSS)
        if box and index == 1:
            page.add(PROMO, "p", APP_BOXES[number % 5], PARAGRAPH_CSS)
        if caption and index == 2:
            page.add(FIGURE, "figcaption", caption_of(number), {"font-size": "13px"})
    if second_markup:
        more = [sentence(rng, 30) for _ in range(3)]
        page.add(ADVERT, "span", "Advertisement", {"font-size": "10px"})
        for text in more:
            page.add(MORE, "div", text, MORE_CSS)
        story += more
    page.add(FOOTER, "p", "© The Harbour Times", {"font-size": "11px"})
    item = page.page(number, title, f"harbour{number} council{number} budget")
    return item, story


def caption_of(number: int) -> str:
    """A photo's caption, its own on every page (no text of it repeats)."""
    return f"The pier{number} at dawn{number}, seen from boat{number} (photo by crew{number})"


def with_reading(item: dict, kept: list[str]) -> dict:
    item[CONSENSUS_FIELD] = ConsensusArticle("\n\n".join(kept), 0.9).as_field()
    return item


@pytest.fixture(scope="module")
def boxed_site() -> tuple[SiteModel, list[dict]]:
    """Ten pages with the box; the reading keeps it on one page only."""
    pages = []
    for number in range(10):
        item, story = story_page(number, box=True)
        kept = [*story, APP_BOXES[number % 5]] if number == 0 else story
        pages.append(with_reading(item, kept))
    return SiteModel(roles=True).fit(pages), pages


def test_the_model_alone_keeps_the_box() -> None:
    pages = [with_reading(*story_page(n, box=True)) for n in range(10)]
    model = SiteModel(roles=False).fit(pages)
    assert any(box in model.extract(pages[3]).text for box in APP_BOXES)


def test_an_in_article_box_the_reading_leaves_out_is_excluded_everywhere(boxed_site) -> None:
    model, pages = boxed_site
    excluded = model.role_decisions().of("excluded")
    assert [r.role for r in excluded] == ["div > article > div > div.app-promo > p"]
    rules = model.usable_rules()
    assert rules is not None
    for page in pages:
        text = model.extract(page).text
        fast = rules.extract(page["rendered_html"])
        assert rules.check(fast).ok
        for box in APP_BOXES:
            assert box not in text and box not in fast.text
        number = pages.index(page)
        first = f"harbour{number} council{number} "
        assert first in text and first in fast.text  # the story's paragraphs stay


def test_a_second_paragraph_markup_the_model_misses_is_included() -> None:
    pages, stories = [], []
    for number in range(10):
        item, story = story_page(number, second_markup=True)
        pages.append(with_reading(item, story))
        stories.append(story)
    alone = SiteModel(roles=False).fit(pages)
    assert stories[4][-1] not in alone.extract(pages[4]).text
    model = SiteModel(roles=True).fit(pages)
    included = model.role_decisions().of("included")
    assert [r.role for r in included] == ["div > article > div > div.text-block > div"]
    rules = model.usable_rules()
    assert rules is not None
    for page, story in zip(pages, stories, strict=True):
        fast = rules.extract(page["rendered_html"])
        assert all(paragraph in fast.text for paragraph in story)
        assert all(paragraph in model.extract(page).text for paragraph in story)


def test_show_prints_the_parser_with_its_exclusions(boxed_site, tmp_path: Path) -> None:
    model, _ = boxed_site
    model.save(tmp_path / "harbour.example")
    shown = subprocess.run(
        [sys.executable, "-m", "spidercrawl.learn", "show", str(tmp_path / "harbour.example")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "container" in out and "paragraphs" in out
    assert "div.story-body > p" in out
    excluded_rows = [line for line in out.splitlines() if line.strip().startswith("excluded ")]
    assert any("app-promo > p" in line and "repeats" in line for line in excluded_rows), out


def test_show_on_a_folder_without_a_model_is_one_error_line(tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "spidercrawl.learn", "show", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 2
    assert shown.stdout == "" and len(shown.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: setattr(r, "pages", -1),
        lambda r: setattr(r, "decision", "run-this"),
        lambda r: setattr(r, "repeated", 7.5),
        lambda r: setattr(r, "reading_pages", r.read_pages + 1),
        lambda r: setattr(r, "extra", "x"),
    ],
)
def test_malformed_role_records_are_refused_when_loaded(boxed_site, tmp_path: Path, damage) -> None:
    model, _ = boxed_site
    folder = model.save(tmp_path / "site")
    stored = model_file.load(folder / MODEL_FILE, _stored_classes())
    damage(stored.role_decisions().records[0])
    model_file.dump(folder / MODEL_FILE, stored, _stored_classes())
    with pytest.raises(LearningError, match="role records"):
        SiteModel.load(folder)


def test_a_disputed_role_is_settled_by_each_pages_reading_on_the_fast_path() -> None:
    """A caption the model keeps between paragraphs and the reading leaves out on most
    pages, its text never repeating: each page's reading decides on the fast path, and is
    asked only on the pages of a layout whose records dispute a role."""
    pages = []
    for number in range(10):
        item, story = story_page(number, caption=True)
        kept = [*story, caption_of(number)] if number in (0, 1) else story
        pages.append(with_reading(item, kept))
    model = SiteModel(roles=True).fit(pages)
    doubted = model.role_decisions().of("doubted")
    assert [r.role for r in doubted] == ["div > article > div > figure.photo > figcaption"]
    rules = model.usable_rules()
    assert rules is not None and not rules.exclusions_
    asked = []

    def reading_of(kept: list[str]):
        def read() -> str:
            asked.append(1)
            return "\n\n".join(kept)

        return read

    for number in (20, 21):
        item, story = story_page(number, caption=True)
        html = item["rendered_html"]
        assert caption_of(number) in rules.extract(html).text  # the rules alone keep it
        without = rules.extract(html, reading=reading_of(story))
        assert without.reconciled and caption_of(number) not in without.text
        assert all(paragraph in without.text for paragraph in story)
        kept = rules.extract(html, reading=reading_of([*story, caption_of(number)]))
        assert kept.reconciled and caption_of(number) in kept.text
    assert len(asked) == 4  # once a page
    # A layout whose records dispute nothing: its pages are never read again.
    agreeing = SiteModel(roles=True).fit([with_reading(*story_page(n)) for n in range(10)])
    assert not agreeing.usable_rules().disputed_
    asked.clear()
    item, story = story_page(30)
    result = agreeing.usable_rules().extract(item["rendered_html"], reading=reading_of(story))
    assert not result.reconciled and not asked and story[0] in result.text
