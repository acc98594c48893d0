"""Recipe: WMT17 segment-level DA (to-English) as STS pairs, and the diagnostic slices.

A pure function of ``wmt17-da/testset_<lp>-en.tsv`` (lp in cs, de, fi, lv, ru, tr, zh) and
of the STS-B files ``evalrank/sent_similarity/STS/STSBenchmark/sts-{train,dev,test}.csv``
(the reference of the length and vocabulary slices, parsed by the ``sts-mirrors`` recipe).

Source format: tab-separated, no quoting, header ``LP source translation reference
HUMAN_score sentBLEU``; 560 segments per language pair, 435 for lv-en (3,795 in all).
``HUMAN_score`` is the segment's direct-assessment z-score (mean of standardised 0-100
ratings). A row with another number of fields, another ``LP`` than the file name, an empty
reference or translation, or a score that is not a finite number raises
``SourceFormatError`` naming ``file:line``. Texts are kept verbatim (already lower-cased and
tokenised by WMT's metrics task), rows in file order; nothing is dropped.

Columns of every config (split ``test``): ``sentence1`` = reference, ``sentence2`` =
machine translation, ``score`` = DA z-score (float64), ``lp`` (e.g. ``cs-en``) and
``pair_id`` = ``<lp>:<line>`` (line number in the source file).

Configs:

* ``cs-en`` ... ``zh-en``: one language pair each; ``all``: the seven concatenated (file
  order, language pairs alphabetically).
* ``length-<lo>-<hi>``: windows ``[0, 40)`` ... ``[30, 70)`` over the mean token length of
  the pair, sampled so that each window follows the STS-B length histogram (all 8,628 STS-B
  pairs) restricted to the window, bins of 5 tokens, seed 0 (``slices.sample_length_window``).
* ``coverage-high`` / ``coverage-low``: the 100 pairs of ``all`` with the highest / lowest
  vocabulary coverage by the STS-B vocabulary (lower-cased tokens of all 8,628 pairs; ties by
  row order), and ``coverage-q1`` (lowest) ... ``coverage-q4``: quartile bands.
* ``gold-low``, ``gold-midlow``, ``gold-midhigh``, ``gold-high``: quartile bands of the score
  (the paper's Sim-Low ... Sim-High).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
from datasets import Dataset, DatasetDict, Features, Value

from mteb_evalrank.data.layout import SPLIT, BuiltDataset
from mteb_evalrank.data.registry import STS_MIRRORS
from mteb_evalrank.data.sources import SourceFormatError, require_file
from mteb_evalrank.evaluation import slices

LANGUAGE_PAIRS = ("cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en")
HEADER = ["LP", "source", "translation", "reference", "HUMAN_score", "sentBLEU"]
STSB_FILES = tuple(
    f"evalrank/sent_similarity/STS/STSBenchmark/sts-{split}.csv" for split in ("train", "dev", "test")
)
LICENSE_FILE = "wmt17-da/LICENSE-source-repo"
SOURCES = (
    *(f"wmt17-da/testset_{lp}.tsv" for lp in LANGUAGE_PAIRS),
    LICENSE_FILE,
    *STSB_FILES,
)
FEATURES = Features(
    {
        "sentence1": Value("string"),
        "sentence2": Value("string"),
        "score": Value("float64"),
        "lp": Value("string"),
        "pair_id": Value("string"),
    }
)
Row = dict[str, Any]


def read_wmt17_da(path: Path, lp: str) -> list[Row]:
    """The rows of one ``testset_<lp>.tsv`` file.

    Raises:
        SourceFormatError: naming ``path:line`` for a malformed header or row.
    """
    rows: list[Row] = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header != HEADER:
            raise SourceFormatError(path, 1, f"expected the header {' '.join(HEADER)}, got {header!r}")
        for fields in reader:
            line_no = reader.line_num
            if not fields:
                continue
            if len(fields) != len(HEADER):
                raise SourceFormatError(
                    path, line_no, f"expected {len(HEADER)} tab-separated fields, got {len(fields)}"
                )
            record = dict(zip(HEADER, fields, strict=True))
            if record["LP"] != lp:
                raise SourceFormatError(path, line_no, f"LP is {record['LP']!r}, the file is for {lp!r}")
            if not record["reference"].strip() or not record["translation"].strip():
                raise SourceFormatError(path, line_no, "empty reference or translation")
            try:
                score = float(record["HUMAN_score"])
            except ValueError:
                raise SourceFormatError(
                    path, line_no, f"HUMAN_score {record['HUMAN_score']!r} is not a number"
                ) from None
            if not math.isfinite(score):
                raise SourceFormatError(path, line_no, f"HUMAN_score {record['HUMAN_score']} is not finite")
            rows.append(
                {
                    "sentence1": record["reference"],
                    "sentence2": record["translation"],
                    "score": score,
                    "lp": lp,
                    "pair_id": f"{lp}:{line_no}",
                }
            )
    if not rows:
        raise SourceFormatError(path, None, "the file holds no segments")
    return rows


def read_all(source: Path) -> list[Row]:
    """The seven language pairs concatenated (the ``all`` config)."""
    return [
        row
        for lp in LANGUAGE_PAIRS
        for row in read_wmt17_da(require_file(source, f"wmt17-da/testset_{lp}.tsv"), lp)
    ]


def read_stsb_pairs(source: Path) -> list[tuple[str, str, float]]:
    """All STS-B pairs (train, dev, test), parsed by the ``sts-mirrors`` recipe."""
    read_stsb = STS_MIRRORS.recipe.read_stsb
    return [row for name in STSB_FILES for row in read_stsb(require_file(source, name))]


def _table(rows: list[Row]) -> DatasetDict:
    return DatasetDict(
        {
            SPLIT: Dataset.from_dict(
                {name: [row[name] for row in rows] for name in FEATURES}, features=FEATURES
            )
        }
    )


def build(source: Path) -> BuiltDataset:
    """Build the language-pair, ``all`` and slice configs from the raw data folder ``source``."""
    rows = read_all(source)
    stsb = read_stsb_pairs(source)
    configs = {lp: _table([row for row in rows if row["lp"] == lp]) for lp in LANGUAGE_PAIRS}
    configs["all"] = _table(rows)
    s1, s2 = [row["sentence1"] for row in rows], [row["sentence2"] for row in rows]
    lengths = slices.pair_lengths(s1, s2)
    vocab = slices.vocabulary(text for r in stsb for text in r[:2])
    coverage = slices.vocabulary_coverages(s1, s2, vocab)
    scores = np.array([row["score"] for row in rows])
    picked = {
        **slices.length_slices(s1, s2, slices.pair_lengths([r[0] for r in stsb], [r[1] for r in stsb])),
        **slices.coverage_slices(s1, s2, vocab),
        **slices.gold_slices(scores),
    }
    slice_stats = {}
    for name, indices in picked.items():
        configs[name] = _table([rows[i] for i in indices])
        slice_stats[name] = {
            "n_pairs": len(indices),
            "length": slices.describe(lengths[indices]),
            "coverage": slices.describe(coverage[indices]),
            "score": slices.describe(scores[indices]),
        }
    stats = {
        "n_pairs": {lp: len(configs[lp][SPLIT]) for lp in (*LANGUAGE_PAIRS, "all")},
        "score_range": [float(scores.min()), float(scores.max())],
        "n_stsb_reference_pairs": len(stsb),
        "stsb_vocabulary_size": len(vocab),
        "score_quartile_edges": list(slices.quartile_edges(scores)),
        "coverage_quartile_edges": list(slices.quartile_edges(coverage)),
        "slices": slice_stats,
    }
    return BuiltDataset(configs, stats)
