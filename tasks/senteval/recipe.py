"""Recipe: the SentEval transfer (downstream) tasks as shipped in the EvalRank release.

A pure function of the raw files under ``evalrank/sent_classification/``. One config per
task; every text is kept verbatim (only the line end and surrounding spaces are removed):

==========  ==========================================  =============================
config      source files                                splits (rows)
==========  ==========================================  =============================
``mr``      ``MR/rt-polarity.{neg,pos}``                ``train`` + ``fold`` column
``cr``      ``CR/custrev.{neg,pos}``                    ``train`` + ``fold`` column
``subj``    ``SUBJ/subj.{objective,subjective}``        ``train`` + ``fold`` column
``mpqa``    ``MPQA/mpqa.{neg,pos}``                     ``train`` + ``fold`` column
``sst2``    ``SST/binary/sentiment-{train,dev,test}``   ``train`` / ``validation`` / ``test``
``sst5``    ``SST/fine/sentiment-{train,dev,test}``     ``train`` / ``validation`` / ``test``
``trec``    ``TREC/{train_5500,TREC_10}.label``         ``train`` / ``test``
``scicite`` ``SCICITE/{train,dev,test}.txt``            ``train`` / ``validation`` / ``test``
``mrpc``    ``MRPC/msr_paraphrase_{train,test}.txt``    ``train`` / ``test`` (pairs)
``sick-e``  ``SICK/SICK_{train,trial,test_annotated}``  ``train`` / ``validation`` / ``test`` (pairs)
==========  ==========================================  =============================

Single-text configs have ``text`` and ``label`` (a ``ClassLabel``); pair configs have
``sentence1``, ``sentence2`` and ``label``. MR, CR, SUBJ and MPQA have no official split:
their only split ``train`` holds every row and ``fold`` (0-9) assigns it to one of ten
fixed stratified folds (``mteb_evalrank.data.folds.stratified_folds``, namespace = config).

Conventions, as in SentEval: rows of the ``neg``/``objective`` file first, then the other
file, each in file order; TREC uses the six coarse classes (the part before ``:``) and is
decoded as Latin-1 (``train_5500.label`` is not UTF-8); SICK-E uses ``SICK_trial`` as the
validation split. Blank lines (CR and MPQA end their files with one, and have one inside)
are not samples: they are skipped and counted in the stats (SentEval reads them as empty
sentences, hence its 3,775 CR and 10,606 MPQA rows against 3,771 and 10,603 here). Any
other malformed line raises ``SourceFormatError`` naming ``file:line``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from datasets import ClassLabel, Dataset, DatasetDict, Features, Value

from mteb_evalrank.data.folds import stratified_folds
from mteb_evalrank.data.layout import BuiltDataset
from mteb_evalrank.data.sources import SourceFormatError, require_file

ROOT = "evalrank/sent_classification"
N_FOLDS = 10

BINARY_FILES = {
    # config: (folder, ((file, label name), ...), label names in id order)
    "mr": ("MR", (("rt-polarity.neg", "negative"), ("rt-polarity.pos", "positive"))),
    "cr": ("CR", (("custrev.neg", "negative"), ("custrev.pos", "positive"))),
    "subj": ("SUBJ", (("subj.objective", "objective"), ("subj.subjective", "subjective"))),
    "mpqa": ("MPQA", (("mpqa.neg", "negative"), ("mpqa.pos", "positive"))),
}
LABEL_NAMES = {
    "mr": ["negative", "positive"],
    "cr": ["negative", "positive"],
    "subj": ["objective", "subjective"],
    "mpqa": ["negative", "positive"],
    "sst2": ["negative", "positive"],
    "sst5": ["very negative", "negative", "neutral", "positive", "very positive"],
    "trec": ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"],
    "scicite": ["background", "method", "result"],
    "mrpc": ["not_paraphrase", "paraphrase"],
    "sick-e": ["entailment", "neutral", "contradiction"],
}
SPLIT_FILES = {
    "sst2": {
        s: f"SST/binary/sentiment-{f}"
        for s, f in (("train", "train"), ("validation", "dev"), ("test", "test"))
    },
    "sst5": {
        s: f"SST/fine/sentiment-{f}" for s, f in (("train", "train"), ("validation", "dev"), ("test", "test"))
    },
    "trec": {"train": "TREC/train_5500.label", "test": "TREC/TREC_10.label"},
    "scicite": {
        s: f"SCICITE/{f}.txt" for s, f in (("train", "train"), ("validation", "dev"), ("test", "test"))
    },
    "mrpc": {"train": "MRPC/msr_paraphrase_train.txt", "test": "MRPC/msr_paraphrase_test.txt"},
    "sick-e": {
        "train": "SICK/SICK_train.txt",
        "validation": "SICK/SICK_trial.txt",
        "test": "SICK/SICK_test_annotated.txt",
    },
}
SOURCES = (
    *(f"{ROOT}/{folder}/{name}" for folder, files in BINARY_FILES.values() for name, _ in files),
    *(f"{ROOT}/{path}" for splits in SPLIT_FILES.values() for path in splits.values()),
    "evalrank/LICENSE",
)

Row = dict[str, Any]


def _lines(path: Path, encoding: str = "utf-8") -> list[tuple[int, str]]:
    """``(line_no, line)`` of every line, line end and a leading BOM removed."""
    with path.open(encoding=encoding, newline="") as handle:
        lines = [(no, raw.rstrip("\r\n")) for no, raw in enumerate(handle, start=1)]
    if lines and lines[0][1].startswith("\ufeff"):
        lines[0] = (1, lines[0][1][1:])
    return lines


def _label(path: Path, line_no: int, names: list[str], value: str) -> int:
    if value not in names:
        raise SourceFormatError(path, line_no, f"unknown label {value!r}; expected one of {names}")
    return names.index(value)


def read_sentences(path: Path, label: int) -> tuple[list[Row], int]:
    """One row per non-blank line, and the number of blank lines skipped."""
    rows, blank = [], 0
    for _, line in _lines(path):
        if line.strip():
            rows.append({"text": line.strip(), "label": label})
        else:
            blank += 1
    if not rows:
        raise SourceFormatError(path, None, "the file holds no sentences")
    return rows, blank


def read_sst(path: Path, names: list[str]) -> list[Row]:
    """SST binary (``text<TAB>label``) or fine-grained (``label text``) lines."""
    rows = []
    binary = len(names) == 2
    for line_no, line in _lines(path):
        if binary:
            text, sep, value = line.rpartition("\t")
        else:
            value, sep, text = line.partition(" ")
        if not sep or not text.strip() or not value.isdigit() or int(value) >= len(names):
            shape = "'text<TAB>0|1'" if binary else f"'<0-{len(names) - 1}> text'"
            raise SourceFormatError(path, line_no, f"expected {shape}, got {line!r}")
        rows.append({"text": text.strip(), "label": int(value)})
    return rows


def read_trec(path: Path, names: list[str]) -> list[Row]:
    """``COARSE:fine question`` lines (Latin-1); the label is the coarse class."""
    rows = []
    for line_no, line in _lines(path, encoding="latin-1"):
        target, sep, text = line.partition(" ")
        coarse, colon, _ = target.partition(":")
        if not sep or not colon or not text.strip():
            raise SourceFormatError(path, line_no, f"expected 'COARSE:fine question', got {line!r}")
        rows.append({"text": text.strip(), "label": _label(path, line_no, names, coarse)})
    return rows


def read_scicite(path: Path, names: list[str]) -> list[Row]:
    """JSON lines with ``text`` and ``label``."""
    rows = []
    for line_no, line in _lines(path):
        try:
            record = json.loads(line)
            text, value = record["text"], record["label"]
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise SourceFormatError(
                path, line_no, f"expected a JSON object with text and label: {error}"
            ) from None
        if not isinstance(text, str) or not text.strip():
            raise SourceFormatError(path, line_no, "empty text")
        rows.append({"text": text.strip(), "label": _label(path, line_no, names, value)})
    return rows


def _read_tsv_pairs(
    path: Path,
    header: list[str],
    columns: tuple[int, int, int],
    to_label: Callable[[str], str],
    names: list[str],
) -> list[Row]:
    lines = _lines(path)
    if not lines or lines[0][1].split("\t") != header:
        raise SourceFormatError(path, 1, f"expected the header {header}")
    rows = []
    for line_no, line in lines[1:]:
        fields = line.split("\t")
        if len(fields) != len(header):
            raise SourceFormatError(
                path, line_no, f"expected {len(header)} tab-separated fields, got {len(fields)}"
            )
        first, second, value = (fields[i].strip() for i in columns)
        if not first or not second:
            raise SourceFormatError(path, line_no, "a sentence of the pair is empty")
        rows.append(
            {"sentence1": first, "sentence2": second, "label": _label(path, line_no, names, to_label(value))}
        )
    return rows


def read_mrpc(path: Path, names: list[str]) -> list[Row]:
    """``Quality  #1 ID  #2 ID  #1 String  #2 String``; Quality 1 = paraphrase."""
    header = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
    return _read_tsv_pairs(path, header, (3, 4, 0), lambda q: {"0": names[0], "1": names[1]}.get(q, q), names)


def read_sick(path: Path, names: list[str]) -> list[Row]:
    """``pair_ID  sentence_A  sentence_B  relatedness_score  entailment_judgment``."""
    header = ["pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment"]
    return _read_tsv_pairs(path, header, (1, 2, 4), str.lower, names)


READERS: dict[str, Callable[[Path, list[str]], list[Row]]] = {
    "sst2": read_sst,
    "sst5": read_sst,
    "trec": read_trec,
    "scicite": read_scicite,
    "mrpc": read_mrpc,
    "sick-e": read_sick,
}


def _features(config: str, *, pair: bool, fold: bool) -> Features:
    columns: dict[str, Any] = (
        {"sentence1": Value("string"), "sentence2": Value("string")} if pair else {"text": Value("string")}
    )
    columns["label"] = ClassLabel(names=LABEL_NAMES[config])
    if fold:
        columns["fold"] = Value("int64")
    return Features(columns)


def _table(rows: list[Row], features: Features) -> Dataset:
    return Dataset.from_dict({name: [row[name] for row in rows] for name in features}, features=features)


def _label_counts(config: str, rows: list[Row]) -> dict[str, int]:
    counts = Counter(row["label"] for row in rows)
    return {name: counts[i] for i, name in enumerate(LABEL_NAMES[config])}


def build(source: Path) -> BuiltDataset:
    """Build the ten configs from the raw data folder ``source``."""
    configs: dict[str, DatasetDict] = {}
    stats: dict[str, Any] = {}
    for config, (folder, files) in BINARY_FILES.items():
        rows: list[Row] = []
        blank = 0
        for name, label in files:
            part, skipped = read_sentences(
                require_file(source, f"{ROOT}/{folder}/{name}"), LABEL_NAMES[config].index(label)
            )
            rows += part
            blank += skipped
        folds = stratified_folds([row["label"] for row in rows], N_FOLDS, namespace=config)
        for row, fold in zip(rows, folds, strict=True):
            row["fold"] = fold
        configs[config] = DatasetDict({"train": _table(rows, _features(config, pair=False, fold=True))})
        stats[config] = {
            "n_rows": len(rows),
            "labels": _label_counts(config, rows),
            "blank_lines_skipped": blank,
            "rows_per_fold": [folds.count(k) for k in range(N_FOLDS)],
        }
    for config, splits in SPLIT_FILES.items():
        pair = config in ("mrpc", "sick-e")
        features = _features(config, pair=pair, fold=False)
        data = {}
        for split, relative in splits.items():
            rows = READERS[config](require_file(source, f"{ROOT}/{relative}"), LABEL_NAMES[config])
            if not rows:
                raise SourceFormatError(source / ROOT / relative, None, "the file holds no rows")
            data[split] = _table(rows, features)
            stats.setdefault(config, {})[split] = {"n_rows": len(rows), "labels": _label_counts(config, rows)}
        configs[config] = DatasetDict(data)
    return BuiltDataset(configs, stats)
