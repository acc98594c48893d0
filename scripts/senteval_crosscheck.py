"""Cross-check of the ``senteval`` protocol against the EvalRank toolkit's published figures.

Runs the toy 5k-word GloVe bag-of-words (``evalrank/word_emb/toy_emb.txt`` of the raw data)
through ``SentEvalMR``, ``SentEvalCR``, ``SentEvalSUBJ``, ``SentEvalMPQA``, ``SentEvalSST2``
and ``SentEvalTREC`` with ``mteb.evaluate`` and prints/writes a markdown table next to the
reference accuracies (EvalRank toolkit README: MR 62.7, CR 69.8, SUBJ 83.0, MPQA 79.0,
SST2 63.2, TREC 66.6). Needs the datasets installed (``mteb-evalrank datasets build``).

    python scripts/senteval_crosscheck.py --source ../shared/data --out docs/senteval_crosscheck.md
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mteb

import mteb_evalrank  # noqa: F401  (registers the tasks)
from mteb_evalrank.models.static import StaticWordEmbeddings

if TYPE_CHECKING:
    from mteb.models import EncoderProtocol

#: accuracies (%) of the toy GloVe bag-of-words in the EvalRank toolkit's README
PUBLISHED = {"MR": 62.7, "CR": 69.8, "SUBJ": 83.0, "MPQA": 79.0, "SST2": 63.2, "TREC": 66.6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="../shared/data", help="raw data folder")
    parser.add_argument("--out", type=Path, help="markdown file to write")
    parser.add_argument("--tasks", nargs="*", default=list(PUBLISHED), help=" ".join(PUBLISHED))
    args = parser.parse_args()
    model = StaticWordEmbeddings.from_file(
        Path(args.source) / "evalrank/word_emb/toy_emb.txt", name="evalrank/toy-glove-5k"
    )
    # a cast: mteb's AbsEncoder types ``mteb_model_meta`` as ``ModelMeta | None`` and its
    # EncoderProtocol as ``ModelMeta``, so no AbsEncoder passes for the protocol
    encoder = cast("EncoderProtocol", model)
    lines = [
        "| task | ours: LR (z-norm selected) | LR raw | LR z-norm | MLP | published | difference | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in args.tasks:
        task = mteb.get_task(f"SentEval{name}")
        start = time.perf_counter()
        result = mteb.evaluate(encoder, task, cache=None, overwrite_strategy="always").task_results[0]
        seconds = time.perf_counter() - start
        rows = result.scores["test"]

        def mean(key: str, rows: Sequence[Mapping[str, Any]] = rows) -> float:
            return 100 * sum(row[key] for row in rows) / len(rows)

        ours = mean("lr_accuracy")
        cells = [
            ours,
            mean("lr_accuracy_raw"),
            mean("lr_accuracy_znorm"),
            mean("mlp_accuracy"),
            PUBLISHED[name],
        ]
        lines.append(
            f"| {name} | "
            + " | ".join(f"{c:.1f}" for c in cells)
            + f" | {ours - PUBLISHED[name]:+.1f} | {seconds:.0f} |"
        )
        print(lines[-1], flush=True)
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table)


if __name__ == "__main__":
    main()
