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
from typing import Any

import numpy as np

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_OUT = Path(__file__).resolve().parent / "classifiers"


def mr_fold(model_name: str) -> tuple[np.ndarray, ...]:
    """``(x_train, y_train, x_test, y_test)`` of MR's ``fold-0``, embedded by ``model_name``."""
    import mteb

    import mteb_evalrank  # noqa: F401  (registers the tasks)
    from mteb_evalrank.tasks._encoding import as_list

    task = mteb.get_task("SentEvalMR")
    task.load_data()
    fold = task.dataset["fold-0"]
    model = mteb.get_model(model_name)
    texts = as_list(fold["train"]["text"]) + as_list(fold["test"]["text"])
    inner = getattr(model, "model", None)  # a sentence-transformers model, else a plugin encoder
    x = inner.encode(texts, batch_size=64, convert_to_numpy=True) if inner is not None else model.embed(texts)
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


def main() -> None:
    from threadpoolctl import threadpool_limits

    from mteb_evalrank.evaluation.classifiers import FIT_DTYPE, select_and_test, select_and_test_mlp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    x_train, y_train, x_test, y_test = mr_fold(args.model)
    x32_train, x32_test = x_train.astype(FIT_DTYPE), x_test.astype(FIT_DTYPE)
    seed = 42
    load_before = os.getloadavg()
    rows: dict[str, dict[str, Any]] = {}
    with threadpool_limits(limits=1):

        def one_at_a_time(kind: str, a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
            return {
                name: select_and_test(kind, a, y_train, b, y_test, znorm=z, seed=seed)  # type: ignore[arg-type]
                for name, z in (("raw", False), ("znorm", True))
            }

        for label, run in (
            ("lr, float64, one fit at a time (before)", lambda: one_at_a_time("lr", x_train, x_test)),
            ("lr, float32, one fit at a time (after)", lambda: one_at_a_time("lr", x32_train, x32_test)),
            ("mlp, float64, one fit at a time (before)", lambda: one_at_a_time("mlp", x_train, x_test)),
            ("mlp, float32, one fit at a time", lambda: one_at_a_time("mlp", x32_train, x32_test)),
            (
                "mlp, float32, lockstep (after)",
                lambda: select_and_test_mlp(x32_train, y_train, x32_test, y_test, seed=seed),
            ),
        ):
            seconds, result = timed(run)
            rows[label] = {"seconds": seconds, "selections": {k: vars(v) for k, v in result.items()}}
            print(f"{label}: {seconds:.1f} s", flush=True)
    load_after = os.getloadavg()
    before = (
        rows["lr, float64, one fit at a time (before)"]["seconds"]
        + rows["mlp, float64, one fit at a time (before)"]["seconds"]
    )
    after = (
        rows["lr, float32, one fit at a time (after)"]["seconds"]
        + rows["mlp, float32, lockstep (after)"]["seconds"]
    )
    lockstep_exact = (
        rows["mlp, float32, lockstep (after)"]["selections"]
        == rows["mlp, float32, one fit at a time"]["selections"]
    )
    report = {
        "model": args.model,
        "task": "SentEvalMR fold-0",
        "n_train": int(y_train.size),
        "n_test": int(y_test.size),
        "dim": int(x_train.shape[1]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, one thread per fit",
        "load_average_before_after": [load_before, load_after],
        "runs": rows,
        "before_seconds": before,
        "after_seconds": after,
        "speedup": before / after,
        "lockstep_equals_sklearn_float32": lockstep_exact,
        "float32_changes_lr": rows["lr, float64, one fit at a time (before)"]["selections"]
        != rows["lr, float32, one fit at a time (after)"]["selections"],
        "float32_changes_mlp": rows["mlp, float64, one fit at a time (before)"]["selections"]
        != rows["mlp, float32, one fit at a time"]["selections"],
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
