"""Recipe: the 13 word-similarity sets of the EvalRank release, one Hub config per set.

A pure function of its sources, ``evalrank/word_similarity/EN-*.txt``.

Source format (every file inspected): one pair per line, ``word1 SEP word2 SEP score``.

* SEP is a tab in WS-353-ALL/-REL/-SIM, MC-30, RG-65, RW-STANFORD, MTurk-287,
  SimLex-999, Verb-143 and SimVerb-3500, a single space in MEN-TR-3k, MTurk-771 and YP-130;
* line ends are LF, or CRLF (WS-353-ALL, MTurk-771, Verb-143, SimVerb-3500); the last
  line of MTurk-287 and SimVerb-3500 has no line end;
* WS-353 has capitalised words (``Jerusalem``, ``OPEC``, ...); no file has a header.

Parsing rules: a blank (whitespace-only) line is skipped; every other line must split on
runs of whitespace into exactly three fields, two words and a finite number inside the
set's rating scale (``WordSet.min_score`` .. ``max_score``). Anything else raises
``SourceFormatError`` naming ``file:line`` -- no line is ever dropped silently. Words are
lower-cased (the sets are case-insensitive; WS-353 is the only one with capitals).
Every pair is kept, in file order, including the few repeated pairs (WS-353-ALL lists
``money cash`` twice) and identical-word pairs (``tiger tiger``).

Each config ``<set>`` has one ``test`` split with columns ``sentence1`` (word 1),
``sentence2`` (word 2) and ``score`` (float64, the set's original scale), the layout of
mteb STS tasks.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NamedTuple

from datasets import Dataset, DatasetDict, Features, Value

from mteb_evalrank.data.layout import SPLIT, BuiltDataset
from mteb_evalrank.data.sources import SourceFormatError, read_lines, require_file

FEATURES = Features({"sentence1": Value("string"), "sentence2": Value("string"), "score": Value("float64")})
FOLDER = "evalrank/word_similarity"


class WordSet(NamedTuple):
    """One word-similarity set: Hub config name, source file and rating scale."""

    config: str
    filename: str
    min_score: int
    max_score: int

    @property
    def source(self) -> str:
        """Path of the raw file relative to the data folder."""
        return f"{FOLDER}/{self.filename}"


#: The 13 sets, in the order of the EvalRank release. Scales are the annotation scales of
#: the original papers; every score in the files lies inside them (checked when parsing).
WORD_SETS: tuple[WordSet, ...] = (
    WordSet("ws-353-all", "EN-WS-353-ALL.txt", 0, 10),
    WordSet("ws-353-rel", "EN-WS-353-REL.txt", 0, 10),
    WordSet("ws-353-sim", "EN-WS-353-SIM.txt", 0, 10),
    WordSet("mc-30", "EN-MC-30.txt", 0, 4),
    WordSet("rg-65", "EN-RG-65.txt", 0, 4),
    WordSet("rw-stanford", "EN-RW-STANFORD.txt", 0, 10),
    WordSet("men-tr-3k", "EN-MEN-TR-3k.txt", 0, 50),
    WordSet("mturk-287", "EN-MTurk-287.txt", 1, 5),
    WordSet("mturk-771", "EN-MTurk-771.txt", 1, 5),
    WordSet("yp-130", "EN-YP-130.txt", 0, 4),
    WordSet("simlex-999", "EN-SIMLEX-999.txt", 0, 10),
    # Verb-143 (Baker et al., 2014) is distributed with scores in [0, 1] (0.07 .. 0.79 here)
    # and holds 144 pairs despite its name.
    WordSet("verb-143", "EN-VERB-143.txt", 0, 1),
    WordSet("simverb-3500", "EN-SimVerb-3500.txt", 0, 10),
)
SOURCES = (*(word_set.source for word_set in WORD_SETS), "evalrank/LICENSE")


def read_word_pairs(path: Path, min_score: float, max_score: float) -> list[tuple[str, str, float]]:
    """``(word1, word2, score)`` per non-blank line of ``path``, words as written in the file.

    Raises:
        SourceFormatError: naming ``path:line`` for a line that is not two words and a
            finite score in ``[min_score, max_score]``, or for a file without pairs.
    """
    rows: list[tuple[str, str, float]] = []
    for line_no, line in read_lines(path):
        fields = line.split()
        if len(fields) != 3:
            raise SourceFormatError(
                path, line_no, f"expected 'word1 word2 score' (tab or space separated), got {line!r}"
            )
        word1, word2, raw_score = fields
        try:
            score = float(raw_score)
        except ValueError:
            raise SourceFormatError(path, line_no, f"the score {raw_score!r} is not a number") from None
        if not math.isfinite(score) or not min_score <= score <= max_score:
            raise SourceFormatError(
                path, line_no, f"the score {raw_score} is outside the set's scale [{min_score}, {max_score}]"
            )
        rows.append((word1, word2, score))
    if not rows:
        raise SourceFormatError(path, None, "the file holds no word pairs")
    return rows


def build_set(source: Path, word_set: WordSet) -> tuple[DatasetDict, dict[str, Any]]:
    """The config of one set (lower-cased words) and its build statistics."""
    rows = read_word_pairs(require_file(source, word_set.source), word_set.min_score, word_set.max_score)
    lowered = [(w1.lower(), w2.lower(), score) for w1, w2, score in rows]
    table = Dataset.from_dict(
        {
            "sentence1": [w1 for w1, _, _ in lowered],
            "sentence2": [w2 for _, w2, _ in lowered],
            "score": [score for _, _, score in lowered],
        },
        features=FEATURES,
    )
    pairs = [(w1, w2) for w1, w2, _ in lowered]
    stats = {
        "n_pairs": len(rows),
        "n_lines_lowercased": sum(1 for row, low in zip(rows, lowered, strict=True) if row != low),
        "n_repeated_pairs": len(pairs) - len(set(pairs)),
        "n_identical_word_pairs": sum(1 for w1, w2 in pairs if w1 == w2),
        "n_words": len({word for pair in pairs for word in pair}),
        "score_range": [min(s for *_, s in rows), max(s for *_, s in rows)],
        "scale": [word_set.min_score, word_set.max_score],
    }
    return DatasetDict({SPLIT: table}), stats


def build(source: Path) -> BuiltDataset:
    """Build every config of the dataset from the raw data folder ``source``."""
    configs: dict[str, DatasetDict] = {}
    stats: dict[str, Any] = {}
    for word_set in WORD_SETS:
        configs[word_set.config], stats[word_set.config] = build_set(source, word_set)
    stats["n_pairs_total"] = sum(stats[word_set.config]["n_pairs"] for word_set in WORD_SETS)
    return BuiltDataset(configs, stats)
