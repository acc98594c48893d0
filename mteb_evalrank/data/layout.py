"""The mteb retrieval layout (corpus / queries / qrels) for EvalRank-style data.

EvalRank data is a background ``B`` (the corpus) and positive pairs ``(x, y)`` of
background items. In the retrieval layout every background item is a corpus document with
id ``str(index in B)``; a query is a background item that starts at least one pair (same id
as its document) and the qrels hold one row per pair, ``x -> y`` with score 1.

Hub configs follow mteb's convention: for the ``default`` subset ``corpus``, ``queries`` and
``default`` (the qrels); for another subset ``S``: ``S-corpus``, ``S-queries``, ``S-qrels``.
Every config has a single ``test`` split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from datasets import Dataset, DatasetDict, Features, Value

SPLIT = "test"
TEXT_FEATURES = Features({"id": Value("string"), "text": Value("string")})
QRELS_FEATURES = Features(
    {"query-id": Value("string"), "corpus-id": Value("string"), "score": Value("int64")}
)


@dataclass
class BuiltDataset:
    """What a recipe returns: hub configs (each a ``DatasetDict`` of splits) and build facts."""

    configs: dict[str, DatasetDict]
    stats: dict[str, Any] = field(default_factory=dict)


def config_names(subset: str) -> tuple[str, str, str]:
    """``(corpus, queries, qrels)`` config names of an hf_subset."""
    if subset == "default":
        return "corpus", "queries", "default"
    return f"{subset}-corpus", f"{subset}-queries", f"{subset}-qrels"


def evalrank_configs(
    subset: str,
    background: Sequence[str],
    pairs: Sequence[tuple[str, str]],
) -> dict[str, DatasetDict]:
    """The three configs of one hf_subset; a ``ValueError`` for a repeated background item or pair
    (qrels are a mapping) or a pair side not in the background."""
    index = {text: i for i, text in enumerate(background)}
    if len(index) != len(background):
        raise ValueError(f"subset {subset!r}: the background holds duplicate items.")
    missing = sorted({side for pair in pairs for side in pair if side not in index})
    if missing:
        raise ValueError(
            f"subset {subset!r}: {len(missing)} pair items are not in the background, "
            f"e.g. {missing[:3]}; every pair side must be a background item."
        )
    if len(set(pairs)) != len(pairs):
        raise ValueError(f"subset {subset!r}: repeated positive pairs.")
    ids = [str(i) for i in range(len(background))]
    query_rows = sorted({index[x] for x, _ in pairs})
    corpus = Dataset.from_dict({"id": ids, "text": list(background)}, features=TEXT_FEATURES)
    queries = Dataset.from_dict(
        {"id": [ids[i] for i in query_rows], "text": [background[i] for i in query_rows]},
        features=TEXT_FEATURES,
    )
    qrels = Dataset.from_dict(
        {
            "query-id": [ids[index[x]] for x, _ in pairs],
            "corpus-id": [ids[index[y]] for _, y in pairs],
            "score": [1] * len(pairs),
        },
        features=QRELS_FEATURES,
    )
    names = config_names(subset)
    return {
        name: DatasetDict({SPLIT: data}) for name, data in zip(names, (corpus, queries, qrels), strict=True)
    }


def merge_configs(*parts: Mapping[str, DatasetDict]) -> dict[str, DatasetDict]:
    """Union of config mappings; a config defined twice is an error."""
    merged: dict[str, DatasetDict] = {}
    for part in parts:
        for name, data in part.items():
            if name in merged:
                raise ValueError(f"config {name!r} is defined twice.")
            merged[name] = data
    return merged
