"""Which classifiers scored the committed study's downstream results, and what today's would change.

The SentEval-protocol classifiers moved from scikit-learn (``LogisticRegression`` with its default
tolerance on float32 features, ``MLPClassifier``) to torch (the logistic regression at its optimum in
float64, scikit-learn's MLP algorithm) in 815152d, 2026-11-27 15:37 UTC; a result file's ``date``
says which scored it. Four uses::

    python benchmarks/study_rescore.py                       # the committed SentEval jobs by scorer
    python benchmarks/study_rescore.py --rescore MODEL ...   # rescore a model's SentEval tasks now
    python benchmarks/study_rescore.py --noise 0.002 --table sentence --rows ROW,ROW  # a table's rows
    python benchmarks/study_rescore.py --set-aside           # rescore the study: then bash scripts/study.sh

``--rescore`` runs each task through ``mteb.evaluate`` with today's code (no cache) and prints, per
task, the committed and today's mean LR and MLP accuracy over its subsets and the subsets whose
selected L2 changed (``--out``: as JSON). ``--noise`` adds independent normal noise of that standard
deviation to every downstream accuracy of a study table's ``scores.csv`` (300 draws) and prints the
range of each row's mean Spearman rho with the downstream tasks: how far an LR change of that size
could move the table's headline numbers. ``--set-aside`` renames each SentEval result scored by
scikit-learn to ``<name>.outdated`` (the study's convention for a result to run again: never committed), so
that ``bash scripts/study.sh`` (``FAMILIES``, ``TASKS`` to choose) scores those jobs again; commit the new
results as they come (``git add`` the modified files only: a job not run yet keeps its committed result).
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "docs" / "study" / "run" / "results"
#: the commit that replaced the scikit-learn classifiers by the torch ones (815152d)
TORCH_CLASSIFIERS = datetime(2026, 11, 27, 15, 37, 38, tzinfo=UTC).timestamp()


def scorer_of(path: Path) -> str:
    """``"torch"`` or ``"scikit-learn"``: which classifiers wrote the result file ``path`` (its ``date``)."""
    return "torch" if json.loads(path.read_text())["date"] >= TORCH_CLASSIFIERS else "scikit-learn"


def by_scorer(results: Path) -> dict[str, dict[str, int]]:
    """``{"scikit-learn" | "torch": {model: SentEval jobs}}`` by each result file's ``date``."""
    out: dict[str, dict[str, int]] = {"scikit-learn": {}, "torch": {}}
    for path in sorted(results.glob("*/*/SentEval*.json")):
        scorer = scorer_of(path)
        model = path.parents[1].name.replace("__", "/", 1)
        out[scorer][model] = out[scorer].get(model, 0) + 1
    return out


def set_aside(results: Path) -> int:
    """Rename every SentEval result scored by scikit-learn to ``<name>.outdated``; returns how many."""
    paths = [p for p in sorted(results.glob("*/*/SentEval*.json")) if scorer_of(p) == "scikit-learn"]
    for path in paths:
        path.rename(path.with_name(path.name + ".outdated"))
    return len(paths)


def rescore(model_name: str, tasks: list[str]) -> dict[str, dict[str, Any]]:
    """Each SentEval task of ``model_name`` scored now against its committed result."""
    import mteb

    import mteb_evalrank  # noqa: F401  (registers the tasks and models)

    model, out = mteb.get_model(model_name), {}
    for task in tasks:
        committed = json.loads(next(RUN.glob(f"{model_name.replace('/', '__')}/*/{task}.json")).read_text())
        result = mteb.evaluate(model, mteb.get_tasks(tasks=[task]), cache=None).task_results[0]
        now = {row["hf_subset"]: row for row in result.scores["test"]}
        pairs = [(row, now[row["hf_subset"]]) for row in committed["scores"]["test"]]
        out[task] = {
            "subsets": len(pairs),
            **{
                f"{kind}_{when}": float(np.mean([pair[i][f"{kind}_accuracy"] for pair in pairs]))
                for kind in ("lr", "mlp")
                for i, when in enumerate(("committed", "now"))
            },
            "lr_l2_changed": sum(
                any(old[f"lr_l2_{z}"] != new[f"lr_l2_{z}"] for z in ("raw", "znorm")) for old, new in pairs
            ),
        }
        row = out[task]
        change, changed = row["lr_now"] - row["lr_committed"], row["lr_l2_changed"]
        print(
            f"{task}: LR {row['lr_committed']:.4f} -> {row['lr_now']:.4f} ({change:+.4f}), MLP "
            f"{row['mlp_committed']:.4f} -> {row['mlp_now']:.4f}, L2 changed in {changed}/{len(pairs)}",
            flush=True,
        )
    return out


def noise(table: str, rows: list[str], sd: float, draws: int = 300) -> dict[str, tuple[float, float, float]]:
    """``{row: (committed, lowest, highest)}`` mean Spearman rho with the downstream tasks of the study
    table ``table``, and its range over ``draws`` noisy copies of the downstream accuracies; with two
    rows or more also ``"<first> - <second>"``, their difference."""
    import pandas as pd
    from scipy.stats import spearmanr

    scores = pd.read_csv(ROOT / "docs" / "study" / "families" / table / "scores.csv", index_col="model")
    downstream = [column for column in scores.columns if column.startswith("SentEval")]

    def mean_rho(frame: pd.DataFrame, row: str) -> float:
        return float(np.mean([spearmanr(frame[row], frame[task]).statistic for task in downstream]))

    committed = [mean_rho(scores, row) for row in rows]
    rng, noisy = np.random.default_rng(0), []
    for _ in range(draws):
        frame = scores.copy()
        frame[downstream] += rng.normal(0.0, sd, size=frame[downstream].shape)
        noisy.append([mean_rho(frame, row) for row in rows])
    spread = np.array(noisy)
    if len(rows) > 1:
        rows = [*rows, f"{rows[0]} - {rows[1]}"]
        committed.append(committed[0] - committed[1])
        spread = np.column_stack([spread, spread[:, 0] - spread[:, 1]])
    low, high = spread.min(0), spread.max(0)
    return {row: (committed[i], float(low[i]), float(high[i])) for i, row in enumerate(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rescore", nargs="+", metavar="MODEL", help="models whose SentEval tasks to rescore"
    )
    parser.add_argument(
        "--tasks", nargs="+", default=None, help="with --rescore: these tasks (default: all ten)"
    )
    parser.add_argument("--out", type=Path, help="with --rescore: write the comparison as JSON")
    parser.add_argument("--noise", type=float, help="standard deviation of the noise added to the accuracies")
    parser.add_argument(
        "--table", default="sentence", help="with --noise: the study table (docs/study/families)"
    )
    parser.add_argument("--rows", default="EvalRankSent:default,STSBenchmark", help="with --noise: its rows")
    parser.add_argument("--set-aside", action="store_true", help="rename the scikit-learn-scored results")
    args = parser.parse_args()
    if args.set_aside:
        print(f"{set_aside(RUN)} SentEval results set aside (*.outdated): bash scripts/study.sh scores them")
    elif args.rescore:
        tasks = args.tasks or sorted({path.stem for path in RUN.glob("*/*/SentEval*.json")})
        report = {model: rescore(model, tasks) for model in args.rescore}
        if args.out:
            args.out.write_text(json.dumps(report, indent=1) + "\n")
    elif args.noise is not None:
        for row, (committed, low, high) in noise(args.table, args.rows.split(","), args.noise).items():
            print(
                f"{args.table} {row}: mean rho {committed:.4f}; noise sd {args.noise}: {low:.4f}..{high:.4f}"
            )
    else:
        for scorer, models in by_scorer(RUN).items():
            print(f"{scorer}: {sum(models.values())} SentEval jobs of {len(models)} models")
            print("  " + ", ".join(f"{model} ({jobs})" for model, jobs in models.items()))


if __name__ == "__main__":
    main()
