"""The study runner on real data and real models: a local Dask cluster of 2 workers, resuming,
an interrupted job, the cross-task embedding cache and the correlation report.

Independent checks: scores against a direct ``mteb.evaluate`` in this process, the texts the
cache encoded against the union of the tasks' texts read from the datasets, the report's
Spearman against scipy on the scores read from the result files.
"""

from __future__ import annotations

import csv
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import datasets
import mteb
import numpy as np
import pytest
from scipy.stats import spearmanr
from second_process import second_process

import mteb_evalrank  # noqa: F401
from mteb_evalrank.cli import main
from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.embedding_cache import DIGEST_SIZE, EmbeddingCache, VectorStore
from mteb_evalrank.models.zoo import ZOO_MODELS
from mteb_evalrank.result_files import OutdatedResultWarning
from mteb_evalrank.study import StudyInputError, default_downstream, run_study
from mteb_evalrank.study.jobs import Chain, Job, balance, plan
from mteb_evalrank.study.summary import intrinsic_columns
from mteb_evalrank.study.timing import with_history
from mteb_evalrank.tasks import WMT17DALength
from mteb_evalrank.tasks._encoding import CachedEncoder
from mteb_evalrank.tasks.word_similarity import WORD_SIMILARITY_TASKS

GLOVE = "evalrank/glove.6B.50d"
RANDOM = "mteb/baseline-random-encoder"  # mteb's deterministic (text-hash seeded) encoder
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BROKEN = "baseline/Human"  # registered in mteb, but has no implementation: every job fails
MODELS = [GLOVE, RANDOM, MINILM]
INTRINSIC = ["WordSimMC30", "WordSimRG65"]
DOWNSTREAM = ["WordSimWS353All"]
TASKS = [*INTRINSIC, *DOWNSTREAM]


@pytest.fixture(scope="module")
def data(source: Path, tmp_path_factory: pytest.TempPathFactory, offline_models: None) -> None:
    """The word-similarity and STS-B granularity datasets installed in the isolated datasets cache."""
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import DATASETS

    out = tmp_path_factory.mktemp("study-hub")
    for family in ("word-similarity", "stsb-granularity"):
        spec = DATASETS[family]
        built = spec.recipe.build(source)
        hub.write_hub_folder(spec, built, source, out)
        hub.install_into_cache(spec, built)


@pytest.fixture(scope="module")
def study(data: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list]:
    out = tmp_path_factory.mktemp("study")
    seen: list = []
    summary = run_study(
        [*MODELS, BROKEN],
        TASKS,
        out=out,
        workers=2,
        downstream=DOWNSTREAM,
        n_bootstrap=200,
        n_permutations=200,
        progress=seen.append,
    )
    return out, summary, seen


def result_file(out: Path, model: str, task: str) -> Path:
    revision = mteb.get_model_meta(model).revision
    return out / "results" / model.replace("/", "__") / revision / f"{task}.json"


@pytest.mark.slow  # a local Dask cluster runs a real study
def test_cluster_runs_every_job_and_reports_the_failures(study: tuple[Path, Any, list]) -> None:
    out, summary, seen = study
    assert summary.workers == 2
    assert summary.count("done") == len(MODELS) * len(TASKS)
    assert {(o.model, o.task) for o in summary.failed} == {(BROKEN, t) for t in TASKS}
    assert all("No model implementation" in o.error for o in summary.failed)
    assert not summary.ok
    assert sorted((o.model, o.task) for o in seen) == sorted((o.model, o.task) for o in summary.outcomes)
    for model in MODELS:
        for task in TASKS:
            assert result_file(out, model, task).is_file()
    assert not result_file(out, BROKEN, TASKS[0]).parent.exists()
    assert not list((out / ".staging").glob("*"))
    report = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "3 failed" in report and f"| {BROKEN} | WordSimMC30 | loading the model" in report


@pytest.mark.slow  # real models over real datasets
def test_scores_equal_a_direct_mteb_evaluate(study: tuple[Path, Any, list], tmp_path: Path) -> None:
    """A direct ``mteb.evaluate`` per (model, task), saved by mteb (which rounds the scores)."""
    from mteb.cache import ResultCache

    out, _, _ = study
    for model_name in MODELS:
        model = mteb.get_model(model_name)
        for task in TASKS:
            mteb.evaluate(
                model,
                mteb.get_task(task),
                cache=ResultCache(tmp_path),
                overwrite_strategy="always",
                show_progress_bar=False,
            )
            expected = json.loads(result_file(tmp_path, model_name, task).read_text())["scores"]["test"][0]
            stored = json.loads(result_file(out, model_name, task).read_text())["scores"]["test"][0]
            assert stored.keys() == expected.keys()
            # static / hash-seeded encoders: identical embeddings; MiniLM: the cache encodes each
            # unique text once, in other batches than a direct run (float noise of padding)
            tol = 1e-4 if model_name == MINILM else 0.0
            for key, value in expected.items():
                if isinstance(value, float):
                    assert stored[key] == pytest.approx(value, abs=tol), (model_name, task, key)
                else:
                    assert stored[key] == value, (model_name, task, key)


@pytest.mark.slow  # the study fixture: a local Dask cluster
def test_each_unique_text_is_encoded_once_per_model(study: tuple[Path, Any, list]) -> None:
    out, summary, _ = study
    texts: set[str] = set()
    for task in TASKS:
        config = mteb.get_task(task).metadata.dataset["name"]
        rows = datasets.load_dataset(
            WORD_SIMILARITY.hub_id, config, split="test", revision=WORD_SIMILARITY.revision
        )
        texts.update(rows["sentence1"], rows["sentence2"])
    timing = json.loads((out / "study_timing.json").read_text())
    assert timing == json.loads(json.dumps(summary.timing))
    for model in MODELS:
        stats = timing["models"][model]
        assert stats["encoded"] == len(texts), model
        assert stats["cached"] > 0  # the three tasks share words
        assert stats["encoded"] + stats["cached"] <= stats["requested"]
        assert stats["encode_seconds"] > 0
        shards = list((out / "embeddings").glob(f"format-*/{model.replace('/', '__')}/*/none/shard-*.npz"))
        # a zoo model's own output stays in memory (a cheap function of its family's cached base)
        persisted = 0 if model in ZOO_MODELS else len(texts)
        assert sum(len(np.load(s)["keys"]) for s in shards) == persisted
    assert timing["texts_encoded"] == len(MODELS) * len(texts)
    assert timing["wall_seconds"] == pytest.approx(summary.wall_seconds)


@pytest.mark.slow  # the study fixture: a local Dask cluster
def test_report_correlates_intrinsic_with_downstream(study: tuple[Path, Any, list]) -> None:
    out, summary, _ = study
    assert summary.intrinsic == INTRINSIC and summary.downstream == DOWNSTREAM
    for name in ("report.md", "correlations.csv", "correlations.json", "scores.csv", "heatmap.png"):
        assert (out / "report" / name).is_file(), name
    with (out / "report" / "correlations.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["intrinsic"], r["extrinsic"]) for r in rows] == [(t, DOWNSTREAM[0]) for t in INTRINSIC]

    def main_score(model: str, task: str) -> float:
        return json.loads(result_file(out, model, task).read_text())["scores"]["test"][0]["main_score"]

    for row in rows:
        x = [main_score(m, row["intrinsic"]) for m in MODELS]
        y = [main_score(m, row["extrinsic"]) for m in MODELS]
        assert int(row["n"]) == 3
        assert float(row["spearman"]) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
        # 3 models are too few to resample: no CI, and the report says why
        assert row["spearman_ci_low"] == "" and row["spearman_p"] == ""
    assert "3 models: too few to resample" in (out / "report" / "report.md").read_text(encoding="utf-8")


@pytest.mark.slow  # the study fixture: a local Dask cluster
def test_rerun_skips_everything_without_encoding(study: tuple[Path, Any, list], tmp_path: Path) -> None:
    """Resuming a finished study, on a copy of it: the shared ``study`` folder stays as the first
    run left it, so the other tests hold in any order."""
    original, summary, _ = study
    out = tmp_path / "study"
    shutil.copytree(original, out)
    shards = sorted((out / "embeddings").rglob("shard-*.npz"))
    again = run_study(MODELS, TASKS, out=out, workers=2, downstream=DOWNSTREAM, progress=False)
    assert again.count("skipped") == len(MODELS) * len(TASKS) and again.ok
    timing = json.loads((out / "study_timing.json").read_text())
    assert timing["texts_encoded"] == 0
    assert all(m.get("encode_calls", 0) == 0 for m in timing["models"].values())
    assert sorted((out / "embeddings").rglob("shard-*.npz")) == shards
    # the history keeps the first run's compute: every job was done by run 0, in its seconds;
    # the jobs of run 0 that this run did not list (the broken model's, failed) are kept as they were
    first = {(o.model, o.task): o.seconds for o in summary.outcomes if o.status == "done"}
    assert [run["done"] for run in timing["runs"]] == [summary.count("done"), 0]
    assert {(j["model"], j["task"]): (j["run"], j["status"], j["seconds"]) for j in timing["jobs"]} == {
        (o.model, o.task): (0, o.status, o.seconds) for o in summary.outcomes
    }
    assert {o.model for o in summary.outcomes if o.status != "done"} == {BROKEN}
    assert timing["total"]["wall_seconds"] == pytest.approx(summary.wall_seconds + again.wall_seconds)
    assert timing["total"]["job_seconds"] == pytest.approx(
        sum(s for (m, _), s in first.items() if m in MODELS)
    )


def test_a_result_without_a_requested_classifier_is_planned_again(tmp_path: Path) -> None:
    """An ``lr``-only SentEval-protocol result is done for an ``lr`` study; for an ``lr mlp`` study
    it is moved aside (``.outdated``, one warning naming ``mlp_accuracy``) and its job planned; a
    result with both is done for either; other tasks ask for no classifier score."""
    model = "evalrank/glove-toy-50d"

    def write(task: str, entry: dict[str, Any]) -> Path:
        path = Path(plan(tmp_path, [model], [task], ())[0][0].jobs[0].result_path)
        data = {
            "dataset_revision": mteb.get_task(task).metadata.dataset["revision"], "task_name": task,
            "mteb_version": "2.26.24", "evaluation_time": 1.0, "kg_co2_emissions": None,
            "scores": {"test": [{"hf_subset": "fold-0", "languages": ["eng-Latn"]} | entry]},
        }  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
        return path

    lr_only = {"main_score": 0.7, "lr_accuracy": 0.7}
    path = write("SentEvalMR", lr_only)
    assert plan(tmp_path, [model], ["SentEvalMR"], ("lr",))[0] == []
    with pytest.warns(OutdatedResultWarning, match="no mlp_accuracy"):
        chains, skipped = plan(tmp_path, [model], ["SentEvalMR"], ("lr", "mlp"))
    assert [job.task for chain in chains for job in chain.jobs] == ["SentEvalMR"] and skipped == []
    assert path.with_name(path.name + ".outdated").is_file() and not path.exists()
    write("SentEvalMR", lr_only | {"mlp_accuracy": 0.72})
    assert plan(tmp_path, [model], ["SentEvalMR"], ("lr", "mlp"))[0] == []
    write("WordSimMC30", {"main_score": 0.5, "cosine_spearman": 0.5, "mean_vector_cosine_spearman": 0.5})
    assert plan(tmp_path, [model], ["WordSimMC30"], ("lr", "mlp"))[0] == []


def test_timing_history_of_a_resumed_study() -> None:
    """The first run's ``study_timing.json`` becomes run 0; a job skipped now keeps its entry."""

    def timing(wall: float, workers: int, encode: float, *jobs: tuple[str, str, float]) -> dict[str, Any]:
        rows = [{"model": "a", "task": t, "status": st, "seconds": sec} for t, st, sec in jobs]
        return {"wall_seconds": wall, "workers": workers, "sum_encode_seconds": encode, "jobs": rows}

    old = with_history(timing(100.0, 2, 60.0, ("T1", "done", 30.0), ("T2", "failed", 5.0)), None)
    now = timing(50.0, 1, 20.0, ("T1", "skipped", 0.0), ("T2", "done", 40.0))
    merged = with_history(now, old)
    assert [(r["done"], r["failed"], r["wall_seconds"]) for r in merged["runs"]] == [
        (1, 1, 100.0),
        (1, 0, 50.0),
    ]
    assert [(j["task"], j["status"], j["seconds"], j["run"]) for j in merged["jobs"]] == [
        ("T1", "done", 30.0, 0),
        ("T2", "done", 40.0, 1),
    ]
    assert merged["total"] == {
        "runs": 2,
        "wall_seconds": 150.0,
        "job_seconds": 70.0,
        "sum_encode_seconds": 80.0,
    }
    again = with_history({**now, "jobs": [{**j, "status": "skipped"} for j in now["jobs"]]}, merged)
    assert again["total"]["runs"] == 3 and again["total"]["job_seconds"] == 70.0
    assert [j["run"] for j in again["jobs"]] == [0, 1]
    assert with_history(now, None)["total"]["runs"] == 1


def test_timing_history_keeps_the_jobs_of_runs_over_other_models() -> None:
    """Regression: a run over other models (a study resumed family by family) dropped the earlier
    runs' jobs from ``jobs``, so ``total.job_seconds`` counted the last run's jobs only."""

    def run(model: str, wall: float, *jobs: tuple[str, str, float]) -> dict[str, Any]:
        rows = [{"model": model, "task": t, "status": st, "seconds": sec} for t, st, sec in jobs]
        return {"wall_seconds": wall, "workers": 1, "sum_encode_seconds": 1.0, "jobs": rows}

    first = with_history(run("a", 100.0, ("T1", "done", 30.0), ("T2", "failed", 5.0)), None)
    second = with_history(run("b", 50.0, ("T1", "done", 20.0)), first)
    third = with_history(run("a", 10.0, ("T1", "skipped", 0.0), ("T2", "done", 8.0)), second)
    assert sorted((j["model"], j["task"], j["status"], j["seconds"], j["run"]) for j in third["jobs"]) == [
        ("a", "T1", "done", 30.0, 0),
        ("a", "T2", "done", 8.0, 2),
        ("b", "T1", "done", 20.0, 1),
    ]
    assert third["total"]["job_seconds"] == 58.0  # 30 + 20 + 8: each finished job once
    assert [r["done"] for r in third["runs"]] == [1, 1, 1]


@second_process
def test_interrupted_job_leaves_no_result_and_is_redone(
    data: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mteb saves the result after every hf_subset: interrupt the job right after the first save.

    A gate in mteb's own writer (``ResultCache.save_to_cache``) lets the first save through,
    checks that the file it wrote in the job's staging folder is partial (1 of 5 subsets), then
    raises KeyboardInterrupt there, as Ctrl-C would at that moment (no timing involved).
    """
    from mteb.cache import ResultCache

    out, task = tmp_path / "study", "STSBenchmarkGranularity"
    seen: list[int] = []
    save = ResultCache.save_to_cache

    def save_then_interrupt(self: ResultCache, *args: Any, **kwargs: Any) -> Any:
        saved = save(self, *args, **kwargs)
        if not seen:
            (path,) = (out / ".staging").glob(f"*/results/*/*/{task}.json")
            seen.append(len(json.loads(path.read_text())["scores"]["test"]))
            raise KeyboardInterrupt
        return saved

    monkeypatch.setattr(ResultCache, "save_to_cache", save_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_study([GLOVE], [task], out=out, workers=1, progress=False)
    monkeypatch.undo()
    assert seen and seen[0] < 5
    final = result_file(out, GLOVE, task)
    assert not final.exists()
    summary = run_study([GLOVE], [task], out=out, workers=1, progress=False)
    assert summary.count("done") == 1 and summary.ok
    assert summary.report_note is not None and "downstream" in summary.report_note  # no downstream task
    subsets = {row["hf_subset"] for row in json.loads(final.read_text())["scores"]["test"]}
    assert subsets == set(mteb.get_task(task).hf_subsets) and len(subsets) == 5
    assert not list((out / ".staging").iterdir())
    assert summary.timing["models"][GLOVE]["cached"] > 0  # the interrupted run's embeddings were kept


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_a_local_cluster_study_and_its_workers(data: None, tmp_path: Path) -> None:
    """SIGINT to ``mteb-evalrank study`` on a 2-worker local cluster, while jobs run.

    The CLI must exit with 130 and a resume hint, its worker processes must be gone, and the
    jobs it did not finish must have no result (the finished ones stay complete).
    """
    out = tmp_path / "study"
    tasks = [task.metadata.name for task in WORD_SIMILARITY_TASKS]
    command = [str(Path(sys.executable).parent / "mteb-evalrank"), "study", "--models", MINILM, GLOVE]
    command += ["--tasks", *tasks, "--workers", "2", "--out", str(out), "--no-progress"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background job inherits SIGINT ignored; Ctrl-C in a terminal is not ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 300
        while not any((out / ".staging").glob("*")) and process.poll() is None:
            assert time.monotonic() < deadline, "no job started within 300 s"
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()
        workers = [
            int(pid)
            for pid in subprocess.run(
                ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
            ).stdout.split()
        ]
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)  # seconds, a liveness bound, not a speed target
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr and "rerun the same command to resume" in stderr
    time.sleep(1)
    assert workers and not [pid for pid in workers if _alive(pid)]
    finished = list((out / "results").glob("*/*/WordSim*.json"))
    assert len(finished) < 2 * len(tasks)
    for path in finished:
        assert json.loads(path.read_text())["task_name"] in tasks  # complete, parseable


@pytest.mark.slow
def test_ctrl_c_stops_an_in_process_study(data: None, tmp_path: Path) -> None:
    """SIGINT to ``mteb-evalrank study --workers 1`` (jobs run in the command's own process).

    Sent as soon as the first job's staging folder exists: the command must stop within the
    liveness bound, exit as interrupted (130, or killed by SIGINT: also 130 to a shell), leave
    no staging folder and no partial result (every result file present is complete: all the
    task's subsets and splits).
    """
    out = tmp_path / "study"
    tasks = [task.metadata.name for task in WORD_SIMILARITY_TASKS]
    command = [sys.executable, "-m", "mteb_evalrank.cli", "study", "--models", GLOVE, "--tasks", *tasks]
    command += ["--workers", "1", "--out", str(out), "--no-progress"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )
    try:
        deadline = time.monotonic() + 300
        while not any((out / ".staging").glob("*")) and process.poll() is None:
            assert time.monotonic() < deadline, "no job started within 300 s"
            time.sleep(0.01)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)  # seconds, a liveness bound, not a speed target
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode in (130, -signal.SIGINT), stderr[-2000:]
    assert "interrupted" in stderr and "rerun the same command to resume" in stderr
    assert not list((out / ".staging").glob("*"))
    finished = list((out / "results").glob("*/*/WordSim*.json"))
    assert len(finished) < len(tasks)
    for path in finished:
        result = json.loads(path.read_text())
        task = mteb.get_task(result["task_name"])
        assert set(result["scores"]) == set(task.eval_splits)
        assert {row["hf_subset"] for row in result["scores"][task.eval_splits[0]]} == set(task.hf_subsets)


def test_study_help_gives_the_size_of_the_zoo(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as shown:
        main(["study", "--help"])
    assert shown.value.code == 0
    # counted independently of the CLI: the plugin's model metas in mteb's registry
    registered = [meta for meta in mteb.get_model_metas() if meta.name and meta.name.startswith("evalrank/")]
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(mteb_evalrank.models.ZOO, {len(registered)} models)" in help_text
    # issue 15's zoo + issue 27's static word vectors + the encoders' word tables: update with the zoo
    assert len(registered) == 78


def test_shard_store_round_trip_keeps_every_digest(tmp_path: Path) -> None:
    digests = [bytes([i]) * (DIGEST_SIZE - 1) + b"\x00" for i in range(1, 4)] + [b"\x00" * DIGEST_SIZE]
    vectors = np.arange(8, dtype=np.float64).reshape(4, 2)
    VectorStore(tmp_path).add(digests[:2], vectors[:2])
    VectorStore(tmp_path).add(digests[2:], vectors[2:])
    store = VectorStore(tmp_path)
    assert len(store) == 4 and len(list(tmp_path.glob("shard-*.npz"))) == 2
    np.testing.assert_array_equal(store.take(digests[::-1]), vectors[::-1])
    assert store.take(digests).dtype == np.float64


def test_cached_model_keeps_the_model_identity(data: None, tmp_path: Path) -> None:
    model = mteb.get_model(GLOVE)
    cached = CachedEncoder(model, EmbeddingCache(tmp_path))
    assert cached.mteb_model_meta is model.mteb_model_meta
    assert cached.cache.root == tmp_path and list(tmp_path.iterdir()) == []  # folders come with rows
    assert default_downstream(["WordSimMC30", "CRClassification", "SentEvalTREC"]) == [
        "CRClassification",
        "SentEvalTREC",
    ]
    from mteb_evalrank.study.summary import protocol_groups

    tasks = ["SentEvalTREC", "CoNLL2000Chunking", "WordSimWS353All", "CRClassification", "SentEvalMR"]
    assert protocol_groups(tasks) == {  # one study correlation per group
        "senteval": ["SentEvalTREC", "SentEvalMR"],
        "sequence-labelling": ["CoNLL2000Chunking"],
        "classification": ["CRClassification"],
        "other": ["WordSimWS353All"],  # named with --downstream, of no protocol
    }


def test_cli_exit_code_and_input_errors(data: None, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as failed:
        main(["study", "--models", BROKEN, "--tasks", "WordSimMC30", "--out", str(tmp_path), "--no-progress"])
    assert failed.value.code == 1
    assert f"FAILED {BROKEN} × WordSimMC30" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="unknown task"):
        main(["study", "--models", GLOVE, "--tasks", "NoSuchTask", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="not among the study's tasks"):
        main(
            [
                "study",
                "--models",
                GLOVE,
                "--tasks",
                "WordSimMC30",
                "--downstream",
                "WordSimRG65",
                "--out",
                "x",
            ]
        )


def test_study_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--models NAME"):
        main(["study", "--tasks", "WordSimMC30", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as wrong:  # argparse: not a classifier kind
        main(["study", "--zoo", "--tasks", "WordSimMC30", "--senteval-classifiers", "svm", "--out", "x"])
    assert wrong.value.code == 2
    with pytest.raises(StudyInputError, match="lr and/or mlp"):
        run_study([GLOVE], ["WordSimMC30"], out=tmp_path, senteval_classifiers=[])


def test_balance_splits_a_family_longer_than_a_fair_share() -> None:
    family = Chain("big", [Job(f"m{i}", t, "") for t in ("T1", "T2") for i in range(4)])
    small = Chain("small", [Job("s", t, "") for t in ("T1", "T2")])
    # 10 jobs, 2 workers: fair share 5; "big" (8 jobs) -> 2 chains of 2 models, task-major
    chains = balance([family, small], 2)
    assert [c.family for c in chains] == ["big (1/2)", "big (2/2)", "small"]
    first = [(j.model, j.task) for j in chains[0].jobs]
    assert first == [("m0", "T1"), ("m2", "T1"), ("m0", "T2"), ("m2", "T2")]
    every = sorted(j.label for j in [*family.jobs, *small.jobs])
    assert sorted(j.label for c in chains for j in c.jobs) == every
    assert balance([family, small], 1) == [family, small]
    # longest chain first
    assert [c.family for c in balance([small, family], 2)] == ["big (1/2)", "big (2/2)", "small"]


def test_intrinsic_rows_keep_subsets_apart() -> None:
    # a slice task's subsets are separate evaluations (length windows): one row each, never averaged
    windows = WMT17DALength.metadata.hf_subsets
    assert len(windows) > 1
    assert intrinsic_columns(["WMT17DALength", "WordSimMEN", "EvalRankWord", "EvalRankWordNoWiki"]) == [
        *(f"WMT17DALength:{window}" for window in windows),
        "WordSimMEN",
        "EvalRankWord",
        "EvalRankWordNoWiki",
    ]


def test_scheduler_address_runs_the_same_study(data: None, tmp_path: Path) -> None:
    """``--scheduler``: a running cluster (here an in-process one) gets the chains by address."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        summary = run_study(
            [GLOVE], ["WordSimMC30"], out=tmp_path, scheduler=cluster.scheduler_address, progress=False
        )
    assert summary.count("done") == 1 and summary.scheduler == cluster.scheduler_address
    assert result_file(tmp_path, GLOVE, "WordSimMC30").is_file()
    assert summary.timing["models"][GLOVE]["encoded"] > 0
