"""Recipe: the STS-B test pairs split into gold-score bands (Abe et al., 2022, section 4.3.2).

A pure function of ``evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv`` (the EvalRank
copy, lower-cased and tokenised; parsed by the ``sts-mirrors`` recipe, which raises
``SourceFormatError`` naming ``file:line`` on a malformed row). Five configs, split
``test``, columns ``sentence1``, ``sentence2``, ``score`` (0-5): ``gold-0-1`` = scores in
[0, 1], ``gold-1-2`` = (1, 2], ``gold-2-3``, ``gold-3-4``, ``gold-4-5`` (right-closed bands,
``slices.gold_slices(scores, slices.STS_BAND_EDGES)``). Rows keep the file order; every test
pair is in exactly one band.
"""

from __future__ import annotations

from pathlib import Path

from datasets import Dataset, DatasetDict, Features, Value

from mteb_evalrank.data.layout import SPLIT, BuiltDataset
from mteb_evalrank.data.registry import STS_MIRRORS
from mteb_evalrank.data.sources import require_file
from mteb_evalrank.evaluation import slices

STSB_TEST = "evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv"
SOURCES = (STSB_TEST, "evalrank/sent_similarity/STS/STSBenchmark/LICENSE.txt", "evalrank/LICENSE")
FEATURES = Features({"sentence1": Value("string"), "sentence2": Value("string"), "score": Value("float64")})


def build(source: Path) -> BuiltDataset:
    """Build the five band configs from the raw data folder ``source``."""
    rows = STS_MIRRORS.recipe.read_stsb(require_file(source, STSB_TEST))
    picked = slices.gold_slices([row[2] for row in rows], slices.STS_BAND_EDGES)
    configs = {}
    for name, indices in picked.items():
        part = [rows[i] for i in indices]
        columns = {
            "sentence1": [r[0] for r in part],
            "sentence2": [r[1] for r in part],
            "score": [r[2] for r in part],
        }
        configs[name] = DatasetDict({SPLIT: Dataset.from_dict(columns, features=FEATURES)})
    stats = {"n_pairs": len(rows), "n_pairs_per_band": {name: len(idx) for name, idx in picked.items()}}
    return BuiltDataset(configs, stats)
