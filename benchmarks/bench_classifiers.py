"""Cost of the SentEval-protocol classifiers on one outer fold of MR: before and after.

The study's downstream half is dominated by the classifiers of the four cross-validated
datasets (MR, CR, SUBJ, MPQA: ten outer folds each, and per fold 42 logistic-regression and
10 MLP fits). This benchmark times one outer fold (``fold-0``: 9,594 training rows, 1,068
test rows) of MR with a real encoder's embeddings, one thread:

* **before**: scikit-learn's estimators fitted one at a time on float64 features
  (``select_and_test`` per classifier and normalisation, as the protocol ran until now);
* **after**: ``senteval_scores`` as the tasks run it now: features rounded to float32
  (``FIT_DTYPE``), the MLPs of one selection trained in lockstep (``fit_lockstep``).

It also runs scikit-learn one fit at a time on the *float32* features, which the lockstep
MLPs must equal exactly (the selections and scores are compared), so the report separates
the two gains (dtype, lockstep), and it prints whether float32 changed any selection or
score against float64::

    python benchmarks/bench_classifiers.py [--model NAME] [--out benchmarks/classifiers]

Writes ``<out>.json`` and ``<out>.md``. Encoding MR (10,662 sentences) is not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from mteb_evalrank.models.base import TextEmbedder

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_OUT = Path(__file__).resolve().parent / "classifiers"


def mr_fold(model_name: str) -> tuple[np.ndarray, ...]:
    """``(x_train, y_train, x_test, y_test)`` of MR's ``fold-0``, embedded by ``model_name``."""
    import mteb

    import mteb_evalrank  # noqa: F401  (registers the tasks)
    from mteb_evalrank.tasks._encoding import as_list

    task = mteb.get_task("SentEvalMR")
    task.load_data()
    assert task.dataset is not None  # loaded
    fold = task.dataset["fold-0"]
    model = mteb.get_model(model_name)
    texts = as_list(fold["train"]["text"]) + as_list(fold["test"]["text"])
    inner = getattr(model, "model", None)  # a sentence-transformers model, else a plugin encoder
    if inner is not None:
        x = inner.encode(texts, batch_size=64, convert_to_numpy=True)
    else:
        x = cast("TextEmbedder", model).embed(texts)
    n = len(fold["train"])
    x = np.asarray(x, dtype=np.float64)
    return (
        x[:n],
        np.asarray(as_list(fold["train"]["label"])),
        x[n:],
        np.asarray(as_list(fold["test"]["label"])),
    )


def timed(run: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


#: the runs, in order: (label, classifier, dtype of the features, lockstep MLPs)
RUNS = (
    ("lr, float64, one fit at a time (before)", "lr", "float64", False),
    ("lr, float32, one fit at a time (after)", "lr", "float32", False),
    ("mlp, float64, one fit at a time (before)", "mlp", "float64", False),
    ("mlp, float32, one fit at a time", "mlp", "float32", False),
    ("mlp, float32, lockstep (after)", "mlp", "float32", True),
)
BEFORE = ("lr, float64, one fit at a time (before)", "mlp, float64, one fit at a time (before)")
AFTER = ("lr, float32, one fit at a time (after)", "mlp, float32, lockstep (after)")


def run_all(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray
) -> dict[str, Any]:
    """Each run of ``RUNS`` on one thread: seconds and the selections per normalisation."""
    from threadpoolctl import threadpool_limits

    from mteb_evalrank.evaluation.classifiers import select_and_test, select_and_test_mlp

    seed, rows = 42, {}
    with threadpool_limits(limits=1):
        for label, kind, dtype, lockstep in RUNS:
            a, b = x_train.astype(dtype), x_test.astype(dtype)
            if lockstep:
                seconds, result = timed(
                    lambda a=a, b=b: select_and_test_mlp(a, y_train, b, y_test, seed=seed)
                )
            else:
                seconds, result = timed(
                    lambda a=a, b=b, kind=kind: {
                        name: select_and_test(kind, a, y_train, b, y_test, znorm=z, seed=seed)
                        for name, z in (("raw", False), ("znorm", True))
                    }
                )
            rows[label] = {"seconds": seconds, "selections": {k: vars(v) for k, v in result.items()}}
            print(f"{label}: {seconds:.1f} s", flush=True)
    return rows


def summarise(rows: dict[str, Any]) -> dict[str, Any]:
    """Before/after totals, the speed-up and the equality checks of the report."""
    before = sum(rows[label]["seconds"] for label in BEFORE)
    after = sum(rows[label]["seconds"] for label in AFTER)
    selections = {label: row["selections"] for label, row in rows.items()}
    sklearn_mlp32 = selections["mlp, float32, one fit at a time"]
    return {
        "before_seconds": before,
        "after_seconds": after,
        "speedup": before / after,
        "lockstep_equals_sklearn_float32": selections[AFTER[1]]
        == selections["mlp, float32, one fit at a time"],
        "float32_changes_lr": selections[BEFORE[0]] != selections[AFTER[0]],
        "float32_changes_mlp": selections[BEFORE[1]] != sklearn_mlp32,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    x_train, y_train, x_test, y_test = mr_fold(args.model)
    load_before = os.getloadavg()
    rows = run_all(x_train, y_train, x_test, y_test)
    report = {
        "model": args.model,
        "task": "SentEvalMR fold-0",
        "n_train": int(y_train.size),
        "n_test": int(y_test.size),
        "dim": int(x_train.shape[1]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, one thread per fit",
        "load_average_before_after": [load_before, os.getloadavg()],
        "runs": rows,
        **summarise(rows),
    }
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(render(report), encoding="utf-8")
    print(render(report))


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


def render(report: dict[str, Any]) -> str:
    load = report["load_average_before_after"]
    lines = [
        "# SentEval-protocol classifiers: one outer fold of MR",
        "",
        f"`{report['model']}` embeddings ({report['dim']}-d), {report['task']}: "
        f"{report['n_train']:,} training and {report['n_test']:,} test rows; {report['machine']}; "
        f"load average before/after {load[0][0]:.1f} / {load[1][0]:.1f}.",
        "",
        "| run | seconds | raw: L2, test accuracy | z-norm: L2, test accuracy |",
        "|---|---:|---|---|",
    ]
    for label, row in report["runs"].items():
        cells = [
            f"{row['selections'][n]['l2']:g}, {100 * row['selections'][n]['test_accuracy']:.2f}"
            for n in ("raw", "znorm")
        ]
        lines.append(f"| {label} | {row['seconds']:.1f} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        f"Before (float64, one fit at a time): {report['before_seconds']:.1f} s; "
        f"after: {report['after_seconds']:.1f} s (**{report['speedup']:.1f}x**).",
        f"Lockstep MLPs equal scikit-learn's one-at-a-time fits on the same float32 features: "
        f"{'yes' if report['lockstep_equals_sklearn_float32'] else '**NO**'}. "
        f"float32 changed a selection or score against float64: logistic regression "
        f"{yes(report['float32_changes_lr'])}, MLP {yes(report['float32_changes_mlp'])}.",
        "",
        "Command: `python benchmarks/bench_classifiers.py`",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
