"""Recipe: offline mirrors of mteb's English STS datasets (STS12-16, STSBenchmark, SICK-R).

A pure function of the raw files of the EvalRank release under
``evalrank/sent_similarity/``. One config per mteb task, named like the task (``STS12``,
``STS13``, ``STS14``, ``STS15``, ``STS16``, ``STSBenchmark``, ``SICK-R``), split ``test``,
columns ``sentence1``, ``sentence2`` (strings) and ``score`` (float64, the gold similarity
on mteb's scale: 0-5 for STS, 1-5 for SICK relatedness). ``registry.STS_MIRRORS`` maps each
config to the Hub id mteb's task loads (``mteb/sts12-sts`` ...) and installs it there.

Sources and row selection (every rule below is what reproduces mteb's row counts):

* STS12-STS16: for each evaluation subset of the year, ``STS.input.<subset>.txt`` (one
  ``sentence1<TAB>sentence2`` per line) with ``STS.gs.<subset>.txt`` (one score per line).
  Both files must have the same number of lines. A blank gold line marks a pair that was not
  scored (STS15, STS16): that pair is dropped. Subsets are concatenated in the order listed
  in ``STS_SUBSETS``, pairs in file order. STS13's ``SMT`` subset is left out: its input is
  not redistributable (LDC), it is absent from the release and from mteb's ``mteb/sts13-sts``
  (1,500 pairs). ``STS.gs.ALL.txt`` of STS12 (the concatenation) is not read.
* STSBenchmark: ``STS/STSBenchmark/sts-test.csv``, tab-separated
  ``genre, file, year, id, score, sentence1, sentence2`` (7 fields), file order.
* SICK-R: the 9,927 pairs of ``SICK/SICK_train.txt``, ``SICK_trial.txt`` and
  ``SICK_test_annotated.txt`` (header ``pair_ID, sentence_A, sentence_B,
  relatedness_score, entailment_judgment``), sorted by ``pair_ID``; mteb's ``test`` split
  holds all of them.

Texts are kept verbatim (only the line end removed). NOTE: the EvalRank copies of the
STS12-16 inputs and of STS-B are lower-cased and tokenised (SentEval preprocessing, e.g.
``a girl is styling her hair .``), unlike mteb's Hub copies; SICK is the original text.
The rows and scores are the same, the texts are not (see the card).

Any malformed line (wrong number of fields, empty sentence, a score that is not a finite
number in range, line-count mismatch, duplicated SICK ``pair_ID``) raises
``SourceFormatError`` naming ``file:line``.
"""

from __future__ import annotations

import math
from pathlib import Path

from datasets import Dataset, DatasetDict, Features, Value

from mteb_evalrank.data.layout import SPLIT, BuiltDataset
from mteb_evalrank.data.sources import SourceFormatError, require_file

ROOT = "evalrank/sent_similarity"

#: Subsets of each STS year, in the order they are concatenated.
STS_SUBSETS: dict[str, tuple[str, ...]] = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}
STSB_TEST = f"{ROOT}/STS/STSBenchmark/sts-test.csv"
SICK_FILES = tuple(
    f"{ROOT}/SICK/{name}" for name in ("SICK_train.txt", "SICK_trial.txt", "SICK_test_annotated.txt")
)
SICK_HEADER = ["pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment"]

#: config name -> score range of the task (mteb's ``min_score`` / ``max_score``).
SCORE_RANGE: dict[str, tuple[float, float]] = {
    **{year: (0.0, 5.0) for year in STS_SUBSETS},
    "STSBenchmark": (0.0, 5.0),
    "SICK-R": (1.0, 5.0),
}
CONFIGS = tuple(SCORE_RANGE)


def _sts_files(year: str, subset: str) -> tuple[str, str]:
    folder = f"{ROOT}/STS/{year}-en-test"
    return f"{folder}/STS.input.{subset}.txt", f"{folder}/STS.gs.{subset}.txt"


SOURCES = (
    *(name for year, subsets in STS_SUBSETS.items() for s in subsets for name in _sts_files(year, s)),
    STSB_TEST,
    *SICK_FILES,
    "evalrank/LICENSE",
)

FEATURES = Features({"sentence1": Value("string"), "sentence2": Value("string"), "score": Value("float64")})

Row = tuple[str, str, float]


def _lines(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [raw.rstrip("\r\n") for raw in handle]


def _score(path: Path, line_no: int, text: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SourceFormatError(path, line_no, f"the score {text!r} is not a number") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise SourceFormatError(path, line_no, f"the score {text} is outside [{low:g}, {high:g}]")
    return value


def _pair(path: Path, line_no: int, fields: list[str]) -> tuple[str, str]:
    if any(not field.strip() for field in fields):
        raise SourceFormatError(path, line_no, "empty sentence")
    return fields[0], fields[1]


def read_sts_subset(input_path: Path, gold_path: Path, low: float = 0.0, high: float = 5.0) -> list[Row]:
    """The scored pairs of one STS subset (pairs with a blank gold line are dropped)."""
    inputs, golds = _lines(input_path), _lines(gold_path)
    if len(inputs) != len(golds):
        raise SourceFormatError(
            gold_path, None, f"{len(golds)} lines, but {input_path.name} has {len(inputs)} pairs"
        )
    rows: list[Row] = []
    for line_no, (line, gold) in enumerate(zip(inputs, golds, strict=True), start=1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise SourceFormatError(
                input_path, line_no, f"expected 2 tab-separated fields, got {len(fields)}"
            )
        s1, s2 = _pair(input_path, line_no, fields)
        if not gold.strip():
            continue
        rows.append((s1, s2, _score(gold_path, line_no, gold.strip(), low, high)))
    if not rows:
        raise SourceFormatError(gold_path, None, "no scored pair")
    return rows


def read_stsb(path: Path) -> list[Row]:
    """``sts-test.csv``: ``genre, file, year, id, score, sentence1, sentence2`` per line."""
    rows: list[Row] = []
    for line_no, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 7:
            raise SourceFormatError(path, line_no, f"expected 7 tab-separated fields, got {len(fields)}")
        s1, s2 = _pair(path, line_no, fields[5:7])
        rows.append((s1, s2, _score(path, line_no, fields[4], 0.0, 5.0)))
    return rows


def read_sick(paths: list[Path]) -> list[Row]:
    """All SICK pairs of ``paths`` sorted by ``pair_ID`` (relatedness in [1, 5])."""
    by_id: dict[int, Row] = {}
    for path in paths:
        lines = _lines(path)
        if not lines or lines[0].split("\t") != SICK_HEADER:
            raise SourceFormatError(path, 1, f"expected the header {SICK_HEADER}")
        for line_no, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != len(SICK_HEADER):
                raise SourceFormatError(path, line_no, f"expected 5 tab-separated fields, got {len(fields)}")
            try:
                pair_id = int(fields[0])
            except ValueError:
                raise SourceFormatError(path, line_no, f"pair_ID {fields[0]!r} is not an integer") from None
            if pair_id in by_id:
                raise SourceFormatError(path, line_no, f"pair_ID {pair_id} is repeated")
            s1, s2 = _pair(path, line_no, fields[1:3])
            by_id[pair_id] = (s1, s2, _score(path, line_no, fields[3], 1.0, 5.0))
    return [by_id[pair_id] for pair_id in sorted(by_id)]


def _table(rows: list[Row]) -> DatasetDict:
    columns = {
        "sentence1": [r[0] for r in rows],
        "sentence2": [r[1] for r in rows],
        "score": [r[2] for r in rows],
    }
    return DatasetDict({SPLIT: Dataset.from_dict(columns, features=FEATURES)})


def build(source: Path) -> BuiltDataset:
    """Build the seven configs from the raw data folder ``source``."""
    rows: dict[str, list[Row]] = {}
    per_subset: dict[str, dict[str, int]] = {}
    for year, subsets in STS_SUBSETS.items():
        rows[year], per_subset[year] = [], {}
        for subset in subsets:
            input_name, gold_name = _sts_files(year, subset)
            part = read_sts_subset(require_file(source, input_name), require_file(source, gold_name))
            rows[year].extend(part)
            per_subset[year][subset] = len(part)
    rows["STSBenchmark"] = read_stsb(require_file(source, STSB_TEST))
    rows["SICK-R"] = read_sick([require_file(source, name) for name in SICK_FILES])
    stats = {
        "n_pairs": {name: len(part) for name, part in rows.items()},
        "n_pairs_per_subset": per_subset,
    }
    return BuiltDataset({name: _table(rows[name]) for name in CONFIGS}, stats)
