"""Score tables from mteb result folders (``ResultCache`` layout)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EVALRANK_COLUMNS = (
    "cosine_mrr", "cosine_hits_at_1", "cosine_hits_at_3", "cosine_hits_at_10", "cosine_mean_rank",
    "euclidean_mrr", "n_pairs", "n_background",
)  # fmt: skip
#: scores of the downstream tasks' ``senteval`` protocol shown next to the main score
SENTEVAL_COLUMNS = ("lr_accuracy", "mlp_accuracy")
#: AccSent-style triplet tasks (the main score is the anchor accuracy).
TRIPLET_COLUMNS = ("paraphrase_accuracy", "n_triplets")
_FOLD = re.compile(r"fold-\d+")


def mean_over_folds(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace the ``fold-k`` rows of a (model, revision, task, split) by one row of their numeric means.

    ``hf_subset`` reads ``mean of N folds``; non-numeric scores are dropped.
    """
    kept: list[dict[str, Any]] = []
    groups: dict[tuple[Any, Any, Any, Any], list[dict[str, Any]]] = {}
    for row in rows:
        if _FOLD.fullmatch(str(row.get("hf_subset", ""))):
            groups.setdefault((row["model"], row["revision"], row["task"], row["split"]), []).append(row)
        else:
            kept.append(row)
    for (model, revision, task, split), folds in groups.items():
        numeric = {
            k
            for row in folds
            for k, v in row.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        mean = {
            k: sum(row[k] for row in folds) / len(folds) for k in numeric if all(k in row for row in folds)
        }
        kept.append(
            {"model": model, "revision": revision, "task": task, "split": split,
             "hf_subset": f"mean of {len(folds)} folds", **mean}
        )  # fmt: skip
    return kept


def score_rows(results_dir: Path, tasks: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per (model, revision, task, split, hf_subset); damaged result files skipped with a warning."""
    from .result_files import load_result_folder

    if not (results_dir / "results").is_dir():
        raise FileNotFoundError(
            f"{results_dir} holds no 'results/' folder: pass the folder given to mteb's --output-folder."
        )
    results, _ = load_result_folder(results_dir, tasks)
    return [
        {"model": model.model_name, "revision": model.model_revision, "task": task.task_name, "split": split,
         **scores}
        for model in results.model_results
        for task in model.task_results
        for split, subsets in task.scores.items()
        for scores in subsets
    ]  # fmt: skip


def print_scores(results_dir: Path, tasks: Sequence[str] | None = None) -> None:
    """Print a table of the main score (and EvalRank's metrics where present)."""
    from rich.console import Console
    from rich.table import Table

    rows = mean_over_folds(score_rows(results_dir, tasks))
    if not rows:
        raise SystemExit(f"no results found under {results_dir}/results")
    extra = (*EVALRANK_COLUMNS, *SENTEVAL_COLUMNS, *TRIPLET_COLUMNS)
    columns = ["main_score", *(c for c in extra if any(c in row for row in rows))]
    table = Table(title=f"Scores in {results_dir}")
    for name in ("model", "task", "hf_subset", *columns):
        table.add_column(
            name, justify="left" if name in ("model", "task", "hf_subset") else "right", overflow="fold"
        )
    for row in sorted(rows, key=lambda r: (r["model"], r["task"], r.get("hf_subset", ""))):
        cells = [row["model"], row["task"], str(row.get("hf_subset", ""))]
        for name in columns:
            value = row.get(name)
            if isinstance(value, float):
                cells.append(f"{value:.2f}" if "rank" in name else f"{100 * value:.2f}")
            else:
                cells.append("" if value is None else str(value))
        table.add_row(*cells)
    Console(width=200).print(table)
    print("Scores are shown x100 (mean rank as is); cross-validation folds are averaged.")
