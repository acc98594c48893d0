"""Recipe: EvalRankSent from the EvalRank release (Wang et al., 2022).

A pure function of its sources:

* positives: the 6,989 lines of ``sent_evalrank/pos_pair.txt`` (top 25% of STS-B and
  STR, both directions; 13 pairs have identical sides and rank 1 by definition);
* background: the pair sentences in first-appearance order, then
  ``background_sent.txt``, de-duplicated -> 24,957 items (same for every subset);
* ``stsb`` / ``str``: only the positives whose unordered sentence pair occurs in
  STS-B (``sent_similarity/STS/STSBenchmark/sts-{train,dev,test}.csv``) or in STR 2021
  (``sent_similarity/STR/sem_text_rel_ranked.csv``, Text = "s1\\ns2"), for the
  paper's Table 7 ablation. The counts, including pairs found in both or neither, are
  reported in the build stats.
"""

from __future__ import annotations

import csv
from pathlib import Path

from mteb_evalrank.data.layout import BuiltDataset, evalrank_configs, merge_configs
from mteb_evalrank.data.sources import (
    SourceFormatError,
    read_items,
    read_lines,
    read_pairs,
    require_file,
    unique_in_order,
)

PAIRS = "evalrank/sent_evalrank/pos_pair.txt"
BACKGROUND = "evalrank/sent_evalrank/background_sent.txt"
STSB = tuple(f"evalrank/sent_similarity/STS/STSBenchmark/sts-{s}.csv" for s in ("train", "dev", "test"))
STR = "evalrank/sent_similarity/STR/sem_text_rel_ranked.csv"
SOURCES = (PAIRS, BACKGROUND, *STSB, STR, "evalrank/LICENSE")


def _stsb_pairs(path: Path) -> set[frozenset[str]]:
    """Unordered sentence pairs of an STS-B csv (genre, file, year, id, score, s1, s2[, ...])."""
    found = set()
    for line_no, line in read_lines(path):
        fields = line.split("\t")
        if len(fields) < 7:
            raise SourceFormatError(
                path, line_no, f"expected at least 7 tab-separated fields, got {len(fields)}"
            )
        found.add(frozenset((fields[5].strip(), fields[6].strip())))
    return found


def _str_pairs(path: Path) -> set[frozenset[str]]:
    """Unordered sentence pairs of the STR csv, Text split on its newline."""
    found = set()
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            sides = row["Text"].split("\n")
            if len(sides) != 2:
                raise SourceFormatError(
                    path, None, f"pair {row['PairID']}: Text does not hold exactly two lines"
                )
            found.add(frozenset(side.strip() for side in sides))
    return found


def build(source: Path) -> BuiltDataset:
    """Build every config of the dataset from the raw data folder ``source``."""
    pairs = read_pairs(require_file(source, PAIRS))
    background = unique_in_order(
        (side for pair in pairs for side in pair), read_items(require_file(source, BACKGROUND), "sentences")
    )
    stsb: set[frozenset[str]] = set().union(*(_stsb_pairs(require_file(source, f)) for f in STSB))
    str_ = _str_pairs(require_file(source, STR))
    in_stsb = [pair for pair in pairs if frozenset(pair) in stsb]
    in_str = [pair for pair in pairs if frozenset(pair) in str_]
    configs = merge_configs(
        evalrank_configs("default", background, pairs),
        evalrank_configs("stsb", background, in_stsb),
        evalrank_configs("str", background, in_str),
    )
    both = sum(1 for pair in pairs if frozenset(pair) in stsb and frozenset(pair) in str_)
    neither = sum(1 for pair in pairs if frozenset(pair) not in stsb and frozenset(pair) not in str_)
    stats = {
        "default": {"n_pairs": len(pairs), "n_background": len(background)},
        "stsb": {"n_pairs": len(in_stsb), "n_background": len(background)},
        "str": {"n_pairs": len(in_str), "n_background": len(background)},
        "n_pairs_in_both_sources": both,
        "n_pairs_in_neither_source": neither,
        "n_identical_pairs": sum(1 for x, y in pairs if x == y),
    }
    return BuiltDataset(configs, stats)
