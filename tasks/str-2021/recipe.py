"""Recipe: STR 2021, the Semantic Textual Relatedness dataset (Abdalla et al., 2021).

A pure function of its source, ``evalrank/sent_similarity/STR/sem_text_rel_ranked.csv``
as shipped in the EvalRank release: a comma-separated file with a header
``Index,SourceID,SubsetID,PairID,Text,Score``, 5,500 rows, ``Text`` quoted and holding
the two sentences separated by one newline (``"s1\\ns2"``), ``Score`` the relatedness in
[0, 1] obtained with best-worst scaling.

``Text`` is split on its newline into ``sentence1`` / ``sentence2`` (the EvalRank toolkit
iterated over the string instead, which splits it into characters; we do not). A row whose
``Text`` does not hold exactly one newline, with an empty side, a score that is not a
finite number in [0, 1], a repeated ``PairID`` or a missing field raises
``SourceFormatError`` naming ``file:line`` (the line where the record starts). Sentences
are kept verbatim (case and punctuation), rows in file order.

One config, ``default``, split ``test``: ``sentence1``, ``sentence2``, ``score`` (float64)
and ``pair_id`` (the source ``PairID``, e.g. ``Formality_pp_222``).
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from pathlib import Path
from typing import Any

from datasets import Dataset, DatasetDict, Features, Value

from mteb_evalrank.data.layout import SPLIT, BuiltDataset
from mteb_evalrank.data.sources import SourceFormatError, require_file

STR_CSV = "evalrank/sent_similarity/STR/sem_text_rel_ranked.csv"
SOURCES = (STR_CSV, "evalrank/LICENSE")
HEADER = ["Index", "SourceID", "SubsetID", "PairID", "Text", "Score"]
FEATURES = Features(
    {
        "sentence1": Value("string"),
        "sentence2": Value("string"),
        "score": Value("float64"),
        "pair_id": Value("string"),
    }
)


def read_str_pairs(path: Path) -> list[dict[str, Any]]:
    """One ``{sentence1, sentence2, score, pair_id, source_id}`` per data row of the STR csv.

    Raises:
        SourceFormatError: naming ``path:line`` for a malformed header or row.
    """
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header != HEADER:
            raise SourceFormatError(path, 1, f"expected the header {','.join(HEADER)}, got {header!r}")
        start = reader.line_num + 1
        for fields in reader:
            line_no, start = start, reader.line_num + 1
            if not fields:
                continue
            if len(fields) != len(HEADER):
                raise SourceFormatError(path, line_no, f"expected {len(HEADER)} fields, got {len(fields)}")
            record = dict(zip(HEADER, fields, strict=True))
            sides = record["Text"].split("\n")
            if len(sides) != 2:
                raise SourceFormatError(
                    path,
                    line_no,
                    f"Text must hold two sentences separated by one newline, got {len(sides)} parts",
                )
            if any(not side.strip() for side in sides):
                raise SourceFormatError(path, line_no, f"pair {record['PairID']!r} has an empty sentence")
            try:
                score = float(record["Score"])
            except ValueError:
                raise SourceFormatError(
                    path, line_no, f"the score {record['Score']!r} is not a number"
                ) from None
            if not math.isfinite(score) or not 0.0 <= score <= 1.0:
                raise SourceFormatError(path, line_no, f"the score {record['Score']} is outside [0, 1]")
            if record["PairID"] in seen:
                raise SourceFormatError(path, line_no, f"PairID {record['PairID']!r} is repeated")
            seen.add(record["PairID"])
            rows.append(
                {
                    "sentence1": sides[0],
                    "sentence2": sides[1],
                    "score": score,
                    "pair_id": record["PairID"],
                    "source_id": record["SourceID"],
                }
            )
    if not rows:
        raise SourceFormatError(path, None, "the file holds no sentence pairs")
    return rows


def build(source: Path) -> BuiltDataset:
    """Build the ``default`` config from the raw data folder ``source``."""
    rows = read_str_pairs(require_file(source, STR_CSV))
    table = Dataset.from_dict({name: [row[name] for row in rows] for name in FEATURES}, features=FEATURES)
    stats = {
        "n_pairs": len(rows),
        "n_pairs_per_source": dict(sorted(Counter(row["source_id"] for row in rows).items())),
        "n_identical_pairs": sum(1 for row in rows if row["sentence1"] == row["sentence2"]),
        "score_range": [min(row["score"] for row in rows), max(row["score"] for row in rows)],
    }
    return BuiltDataset({"default": DatasetDict({SPLIT: table})}, stats)
