"""The tagger's width control (docs/sequence_labelling.md, "Width control").

Does Chiu et al.'s protocol (fixed 10 epochs, no regularisation, no selection on held-out data)
penalise the input width whatever the vectors hold? One fixed set of vectors, glove.6B.50d, with
information-free random dimensions appended up to each width: column ``j >= 50`` of the word in
row ``i`` is ``s * z[i, j - 50]``, ``z`` standard normal from ``numpy.random.default_rng(width)``,
``s`` the mean per-dimension standard deviation of GloVe's 400k rows (the added columns are as large
as the real ones and carry no information about the word beyond an arbitrary code). The three
sequence-labelling tasks run unchanged through ``mteb.evaluate``, one model per width.

    python scripts/width_control.py [--widths 50 100 300 768] [--out docs/study/width-control]

Resumable: a result already in ``<out>/results`` is kept (mteb's ``only-missing``). Then writes
``<out>/table.md`` and the block between the ``width-control`` markers of docs/sequence_labelling.md.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import mteb
import numpy as np
from mteb.cache import ResultCache

from mteb_evalrank.models import zoo
from mteb_evalrank.models.static import StaticWordEmbeddings

TASKS = {"CoNLL2000Chunking": "f1", "CoNLL2003NER": "f1", "EWTPOSTagging": "accuracy"}
DOC = Path(__file__).resolve().parents[1] / "docs" / "sequence_labelling.md"
START, END = "<!-- width-control: start -->", "<!-- width-control: end -->"


def name_of(width: int) -> str:
    """The model's name: glove.6B.50d itself at 50 dimensions."""
    return zoo.GLOVE_6B_50D if width == 50 else f"{zoo.GLOVE_6B_50D}-random{width}"


def padded_model(width: int) -> StaticWordEmbeddings:
    """glove.6B.50d with ``width - 50`` random columns (the module docstring's rule)."""
    words, vectors = zoo._glove_6b_50d_arrays(zoo.GLOVE_6B_50D)
    scale = float(vectors.std(axis=0).mean())
    extra = np.random.default_rng(width).standard_normal((len(words), width - 50), dtype=np.float32)
    model = StaticWordEmbeddings(words, np.hstack([vectors, scale * extra]), name=name_of(width))
    base = zoo.ZOO_METAS[zoo.GLOVE_6B_50D]
    model.mteb_model_meta = base.model_copy(update={"name": name_of(width), "embed_dim": width})
    return model


def scores(out: Path, width: int, task: str, prefix: str = "") -> list[float] | None:
    """The per-seed ``<prefix><main score>`` of ``task`` at ``width`` from its result file, if any."""
    files = list((out / "results" / name_of(width).replace("/", "__")).glob(f"*/{task}.json"))
    if not files:
        return None
    (split,) = json.loads(files[0].read_text(encoding="utf-8"))["scores"]["test"]
    return [value for key, value in split.items() if key.startswith(f"{prefix}{TASKS[task]}[seed=")] or None


def widths_run(out: Path) -> list[int]:
    """The widths with results in ``out``."""
    found = {
        50 if p.name.endswith("50d") else int(p.name.rsplit("random", 1)[1])
        for p in (out / "results").iterdir()
    }
    return sorted(found)


def table(out: Path) -> str:
    """Markdown: each task's main score per width (Chiu's protocol, then the dev-selected epoch where the
    task has it), the mean of the seeds with their range, and its change from 50-d in points."""
    widths = widths_run(out)
    lines = ["| task (score) | " + " | ".join(f"{width}-d" for width in widths) + " |"]
    lines.append("|---|" + "---:|" * len(widths))
    for task, metric in TASKS.items():
        for prefix, what in [("", metric)] + [("dev_selected_", f"dev-selected {metric}")] * (
            task != "CoNLL2000Chunking"
        ):
            found = [scores(out, width, task, prefix) for width in widths]
            cells: list[str] = []
            for seeds in found:
                change = (
                    f", {100 * (np.mean(seeds) - np.mean(found[0])):+.1f}"
                    if seeds and found[0] and cells
                    else ""
                )
                cells.append(
                    f"{np.mean(seeds):.4f} ({min(seeds):.4f}–{max(seeds):.4f}{change})"
                    if seeds
                    else "not run"
                )
            lines.append(f"| {task} ({what}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[50, 100, 300, 768])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--out", type=Path, default=Path("docs/study/width-control"))
    parser.add_argument("--tables-only", action="store_true", help="only the table, from the results")
    parser.add_argument("--again", action="store_true", help="run again where a result exists")
    args = parser.parse_args()
    if not args.tables_only:
        tasks = mteb.get_tasks(tasks=args.tasks)
        for width in args.widths:
            model: Any = padded_model(width)  # an mteb encoder (the plugin's classes are not typed as one)
            again = "always" if args.again else "only-missing"
            result = mteb.evaluate(model, tasks, cache=ResultCache(args.out), overwrite_strategy=again)
            if result.exceptions:
                raise RuntimeError(f"{name_of(width)}: mteb.evaluate failed: {result.exceptions}")
    text = table(args.out)
    (args.out / "table.md").write_text(text, encoding="utf-8")
    doc = DOC.read_text(encoding="utf-8")
    block = re.compile(re.escape(START) + ".*?" + re.escape(END), re.DOTALL)
    DOC.write_text(block.sub(lambda _: f"{START}\n{text}{END}", doc), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
