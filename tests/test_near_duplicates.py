"""Near-duplicates across sites and crawls: the same story under another host or a
tracking query is marked, another story is not, and the index survives a restart and
damage to its files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from spidercrawl.near_duplicates import (
    JOURNAL,
    SNAPSHOT,
    DeliveredArticle,
    NearDuplicateIndex,
    signature,
)

WORDS = [f"w{n}" for n in range(3000)]


def story(seed: int, words: int = 400) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def edited(text: str, changes: int, seed: int = 0) -> str:
    """The text with ``changes`` words replaced (a dateline, a byline, a corrected name)."""
    rng = random.Random(seed)
    words = text.split()
    for _ in range(changes):
        words[rng.randrange(len(words))] = "changed"
    return " ".join(words)


def test_a_copy_is_found_and_another_story_is_not(tmp_path: Path) -> None:
    index = NearDuplicateIndex(tmp_path)
    original = DeliveredArticle("https://a.example/story", "a.example")
    index.add("a.example/story", original, story(1))
    assert index.duplicate_of("b.example/copy", edited(story(1), 3)) == original
    assert index.duplicate_of("b.example/other", story(2)) is None
    # A page crawled again is not a duplicate of itself.
    assert index.duplicate_of("a.example/story", story(1)) is None


def test_a_copy_cut_with_other_short_lines_is_found() -> None:
    """Two sites' parsers cut one story differently: one keeps a headline, captions'
    credits and "Related: ..." lines between its paragraphs (72 words in 12 short lines),
    the other none. Over all words the two are 0.67 alike (under the threshold); the
    story's prose is the same."""
    prose = story(7).split()
    paragraphs = [" ".join(prose[i : i + 20]) for i in range(0, 400, 20)]
    short = [f"Related: {story(100 + n, 5)}" for n in range(12)]
    cut = [paragraphs[0], *(p for pair in zip(short, paragraphs[1:13], strict=True) for p in pair)]
    kept_more = "\n\n".join([*cut, *paragraphs[13:]])
    index = NearDuplicateIndex(None)
    original = DeliveredArticle("https://a.example/story", "a.example")
    index.add("a.example/story", original, "\n\n".join(paragraphs))
    assert index.duplicate_of("b.example/copy", kept_more) == original


def test_short_texts_are_never_compared() -> None:
    index = NearDuplicateIndex(None)
    index.add("a", DeliveredArticle("u", "s"), "Read more")
    assert signature("Read more") is None and signature("") is None
    assert index.duplicate_of("b", "Read more") is None
    assert index.duplicate_of("c", "") is None


def test_the_index_outlives_the_crawl(tmp_path: Path) -> None:
    first = NearDuplicateIndex(tmp_path)
    first.add("a/1", DeliveredArticle("https://a/1", "a"), story(1))
    first.save()  # a snapshot
    first.add("a/2", DeliveredArticle("https://a/2", "a"), story(2))  # in the journal only
    assert (tmp_path / SNAPSHOT).exists() and (tmp_path / JOURNAL).exists()
    again = NearDuplicateIndex(tmp_path)
    assert again.duplicate_of("b/1", story(1)).url == "https://a/1"
    assert again.duplicate_of("b/2", story(2)).url == "https://a/2"


@pytest.mark.parametrize("damage", ["snapshot", "journal"])
def test_damaged_index_files_lose_nothing_else(tmp_path: Path, damage: str) -> None:
    index = NearDuplicateIndex(tmp_path)
    index.add("a/1", DeliveredArticle("https://a/1", "a"), story(1))
    index.save()
    index.add("a/2", DeliveredArticle("https://a/2", "a"), story(2))
    if damage == "snapshot":
        (tmp_path / SNAPSHOT).write_bytes(b"PK\x03\x04 not a zip at all")
    else:
        with (tmp_path / JOURNAL).open("a") as journal:
            journal.write('{"key": "x", "hash": "***"}\n[1]\n')
            journal.write(json.dumps({"key": "y", "url": "u", "site": "s", "hash": ""}) + "\n")
    again = NearDuplicateIndex(tmp_path)
    assert again.duplicate_of("b/2", story(2)).url == "https://a/2"
    if damage == "snapshot":
        assert (tmp_path / f"{SNAPSHOT}.damaged").exists()
    else:
        assert again.duplicate_of("b/1", story(1)).url == "https://a/1"
