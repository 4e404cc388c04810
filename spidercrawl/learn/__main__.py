"""``python -m spidercrawl.learn show models/SITE``

Prints a learned site's parser as a person would write it (:mod:`.parser_view`): per
layout, the article's container, its paragraph, subheadline and list selectors, its
exclusions, and each template role with its record over the training pages. A folder that
holds no usable model is one error line and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spidercrawl.learn.model import LearningError, SiteModel
from spidercrawl.learn.parser_view import parser_lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spidercrawl.learn", description="Site models: look at what was learned."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print a site's learned parser")
    show.add_argument("folder", type=Path, help="a site's model folder (models/SITE)")
    args = parser.parse_args(argv)
    if not SiteModel.exists(args.folder):
        print(f"error: {args.folder} holds no site model (model.npz)", file=sys.stderr)
        return 2
    try:
        model = SiteModel.load(args.folder)
    except (LearningError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in parser_lines(model, args.folder.name):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
