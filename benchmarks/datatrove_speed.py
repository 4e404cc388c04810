"""Pages per second on one core in a datatrove pipeline: our WARC reader (datatrove's, which
keeps every HTML record), then our ``SiteModelExtractor`` (each record by its host's site
model, the arbiter elsewhere) beside datatrove's own ``Trafilatura`` extractor, then its
JSONL writer; one task, one worker, the same WARC files.

    python benchmarks/datatrove_speed.py WARC_FOLDER --models MODELS [--runs 2]

Each extractor's pages/s counts the documents read over the extractor step's own time
(datatrove's per-step timing), and over the whole pipeline's; the documents it wrote.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def run(folder: Path, extractor: object) -> tuple[float, float, int, int]:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    from spidercrawl.datatrove import WarcReader

    with tempfile.TemporaryDirectory() as out:
        executor = LocalPipelineExecutor(
            pipeline=[WarcReader(str(folder)), extractor, JsonlWriter(f"{out}/docs")],
            tasks=1, workers=1, logging_dir=f"{out}/logs",
        )  # fmt: skip
        started = time.perf_counter()
        executor.run()
        wall = time.perf_counter() - started
        stats = json.loads(Path(f"{out}/logs/stats.json").read_text())
    step = next(s for s in stats if "EXTRAC" in s.get("name", ""))
    seconds = float(step["time_stats"]["total"])
    read = int(step["stats"].get("total", 0))
    written = int(step["stats"].get("forwarded", 0) or (read - step["stats"].get("dropped", 0)))
    return seconds, wall, read, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder of .warc.gz files")
    parser.add_argument("--models", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    from datatrove.pipeline.extractors import Trafilatura

    from spidercrawl.datatrove import SiteModelExtractor

    makers = {
        "spidercrawl SiteModelExtractor": lambda: SiteModelExtractor(models=args.models),
        "datatrove Trafilatura": lambda: Trafilatura(favour_precision=True, timeout=10),
    }
    for name, make in makers.items():
        for _ in range(args.runs):
            seconds, wall, read, written = run(args.folder, make())
            print(f"{name}: {read} documents, {written} written; extractor {seconds:.1f} s "
                  f"({read / seconds:.1f} pages/s), pipeline {wall:.1f} s "
                  f"({read / wall:.1f} pages/s)")  # fmt: skip


if __name__ == "__main__":
    main()
