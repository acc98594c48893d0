"""Our STS mirrors with the PyPI-packaged encoders against their published mteb scores (docs/zoo.md).

For each encoder with published results in ``$MTEB_EVALRANK_SOURCE/mteb-results`` (default
``../shared/data``), run mteb's unmodified STS tasks on the offline mirrors
(``mteb_evalrank.data.mirrors``) and print ``ours``, ``published`` and the difference of the
main score (cosine Spearman) as a Markdown table, plus each encoder's throughput on the
task's unique texts. Run in a private ``HF_HOME`` (the mirrors are installed there):

    HF_HOME=/tmp/hf-published HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 \\
        python benchmarks/published_scores.py [--tasks STS12 ...] [--models evalrank/... ...]

or, without running anything, from results already computed (the study's)::

    python benchmarks/published_scores.py --from-results docs/study/run/results
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

SOURCE = Path(os.environ.get("MTEB_EVALRANK_SOURCE", Path(__file__).resolve().parents[2] / "shared" / "data"))

#: our model -> (published mteb name, revision of the published results)
PUBLISHED = {
    "evalrank/all-mpnet-base-v2": (
        "sentence-transformers/all-mpnet-base-v2",
        "84f2bcc00d77236f9e89c8a360a00fb1139bf47d",
    ),
    "evalrank/bge-small-en-v1.5-int8": ("BAAI/bge-small-en-v1.5", "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a"),
    "evalrank/multilingual-e5-small-q4": (
        "intfloat/multilingual-e5-small",
        "fd1525a9fd15316a2d503bf26ab031a61d056e98",
    ),
    "sentence-transformers/all-MiniLM-L6-v2": (
        "sentence-transformers/all-MiniLM-L6-v2",
        "8b3219a92973c328a8e22fadcfa821b5dc75636a",
    ),
    # the zoo's official pooling without the final L2 normalisation, which no cosine score sees
    "evalrank/all-MiniLM-L6-v2-mean-last": (
        "sentence-transformers/all-MiniLM-L6-v2",
        "8b3219a92973c328a8e22fadcfa821b5dc75636a",
    ),
}
TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICK-R")


def published_score(model: str, task: str, source: Path = SOURCE) -> float | None:
    """``main_score`` of the published result, ``None`` if there is none."""
    name, revision = PUBLISHED[model]
    folder = source / "mteb-results" / "results" / name.replace("/", "__")
    for path in (folder / revision / f"{task}.json", folder / "external" / f"{task}.json"):
        if path.is_file():  # "external": results the model's authors submitted (bge's STS16, BIOSSES)
            (row,) = json.loads(path.read_text())["scores"]["test"]
            return float(row["main_score"])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--models", nargs="+", default=list(PUBLISHED))
    parser.add_argument(
        "--from-results",
        type=Path,
        metavar="DIR",
        help="read our scores from an mteb results folder (e.g. the study's docs/study/run/results) "
        "instead of running the tasks",
    )
    args = parser.parse_args()
    if args.from_results:
        compare_results(args.from_results, args.models, args.tasks)
        return

    import mteb

    import mteb_evalrank
    from mteb_evalrank.data.mirrors import install_sts_mirrors
    from mteb_evalrank.models.offline import install_offline_models

    mteb_evalrank.register()
    install_sts_mirrors(SOURCE)
    install_offline_models()
    print("| model | task | ours | published | ours - published | seconds |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.models:
        model = mteb.get_model(name)
        for task in args.tasks:
            start = time.perf_counter()
            result = mteb.evaluate(
                model, mteb.get_task(task), cache=None, overwrite_strategy="always", show_progress_bar=False
            )
            seconds = time.perf_counter() - start
            (row,) = result.task_results[0].scores["test"]
            ours, published = float(row["main_score"]), published_score(name, task)
            diff = "" if published is None else f"{ours - published:+.4f}"
            shown = "—" if published is None else f"{published:.4f}"
            print(f"| `{name}` | {task} | {ours:.4f} | {shown} | {diff} | {seconds:.0f} |", flush=True)


def compare_results(results: Path, models: list[str], tasks: list[str]) -> None:
    """The table of ``main``, with our scores read from ``results/<org__model>/<revision>/<task>.json``."""
    print("| model | task | ours | published | ours - published |")
    print("|---|---|---:|---:|---:|")
    for name in models:
        for task in tasks:
            paths = sorted((results / name.replace("/", "__")).glob(f"*/{task}.json"))
            published = published_score(name, task)
            if not paths or published is None:
                continue
            (row,) = json.loads(paths[-1].read_text())["scores"]["test"]
            ours = float(row["main_score"])
            print(f"| `{name}` | {task} | {ours:.4f} | {published:.4f} | {ours - published:+.4f} |")


if __name__ == "__main__":
    main()
