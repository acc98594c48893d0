"""The SentEval transfer-task dataset: folds, row counts, parsing, and malformed sources."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import datasets
import pytest

from mteb_evalrank.data.folds import stratified_folds
from mteb_evalrank.data.layout import BuiltDataset
from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.data.sources import SourceFormatError

RAW = "evalrank/sent_classification"

# SentEval's published sizes (Conneau and Kiela, 2018, Table 1); CR and MPQA lose their blank lines.
SIZES = {
    "mr": {"train": 10662},
    "cr": {"train": 3775 - 4},
    "subj": {"train": 10000},
    "mpqa": {"train": 10606 - 3},
    "sst2": {"train": 67349, "validation": 872, "test": 1821},
    "sst5": {"train": 8544, "validation": 1101, "test": 2210},
    "trec": {"train": 5452, "test": 500},
    "scicite": {"train": 7320, "validation": 916, "test": 1861},
    "mrpc": {"train": 4076, "test": 1725},
    "sick-e": {"train": 4500, "validation": 500, "test": 4927},
}


def test_folds_are_stratified_complete_and_fixed() -> None:
    labels = [0] * 23 + [1] * 7 + [2] * 40
    folds = stratified_folds(labels, 10, namespace="x")
    assert sorted(set(folds)) == list(range(10))
    for label, size in Counter(labels).items():
        per_fold = Counter(f for f, lab in zip(folds, labels, strict=True) if lab == label)
        assert sum(per_fold.values()) == size
        assert max(per_fold.values()) - min(per_fold.get(k, 0) for k in range(10)) <= 1, label
    assert stratified_folds(labels, 10, namespace="x") == folds
    assert stratified_folds(labels, 10, namespace="y") != folds
    with pytest.raises(ValueError, match="at least 2"):
        stratified_folds(labels, 1, namespace="x")


def test_row_counts_match_senteval(built: dict[str, BuiltDataset]) -> None:
    data = built["senteval"]
    assert {c: {s: len(d) for s, d in splits.items()} for c, splits in data.configs.items()} == SIZES
    assert data.stats["cr"]["blank_lines_skipped"] == 4
    assert data.stats["mpqa"]["blank_lines_skipped"] == 3


def test_every_source_line_is_a_row(built: dict[str, BuiltDataset], source: Path) -> None:
    """Independent line counts of the raw files (blank lines excepted, headers excepted)."""
    raw = source / RAW

    def count(relative: str, header: bool = False) -> int:
        text = (raw / relative).read_bytes().decode("latin-1")
        return sum(1 for line in text.splitlines() if line.strip()) - int(header)

    configs = built["senteval"].configs
    assert len(configs["cr"]["train"]) == count("CR/custrev.neg") + count("CR/custrev.pos")
    assert len(configs["mpqa"]["train"]) == count("MPQA/mpqa.neg") + count("MPQA/mpqa.pos")
    assert len(configs["mrpc"]["test"]) == count("MRPC/msr_paraphrase_test.txt", header=True)
    assert len(configs["sick-e"]["test"]) == count("SICK/SICK_test_annotated.txt", header=True)
    labels = Counter(configs["mr"]["train"]["label"])
    assert labels == {0: count("MR/rt-polarity.neg"), 1: count("MR/rt-polarity.pos")}


def test_parsed_rows(built: dict[str, BuiltDataset]) -> None:
    configs = built["senteval"].configs
    trec = configs["trec"]["train"]
    assert trec.features["label"].names == ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]
    # train_5500.label line 66 holds the one non-UTF-8 byte (0xF0, Latin-1 'eth')
    row = trec[65]
    assert row["text"] == "Which city has the oldest relationship as a sister\u00f0city with Los Angeles ?"
    assert trec.features["label"].int2str(row["label"]) == "LOC"
    mrpc = configs["mrpc"]["test"][0]
    assert mrpc["sentence1"].startswith("PCCW 's chief operating officer , Mike Butcher")
    assert mrpc["label"] == 1  # Quality 1 = paraphrase
    sick = configs["sick-e"]["train"][0]
    assert sick["sentence1"].startswith("A group of kids is playing in a yard and an old man is standing")
    assert configs["sick-e"]["train"].features["label"].int2str(sick["label"]) == "neutral"
    sst5 = configs["sst5"]["train"][0]
    assert sst5["label"] == 4 and sst5["text"].startswith("a stirring , funny and finally transporting")
    sst2 = configs["sst2"]["train"][0]
    assert sst2 == {"text": "hide new secretions from the parental units", "label": 0}
    folds = configs["subj"]["train"]["fold"]
    assert Counter(folds) == dict.fromkeys(range(10), 1000)


def test_datasets_load_offline(built: dict[str, BuiltDataset]) -> None:
    rows = datasets.load_dataset(SENTEVAL.hub_id, "cr", split="train", revision=SENTEVAL.revision)
    assert rows.column_names == ["text", "label", "fold"]
    assert len(rows) == SIZES["cr"]["train"]


@pytest.mark.parametrize(
    ("reader", "content", "line"),
    [
        ("read_sst", "a fine movie\t1\nno label here\n", 2),
        ("read_trec", "LOC:city Where is Aspen ?\nnot a question\n", 2),
        ("read_scicite", '{"text": "x", "label": "method"}\n{"text": "y", "label": "other"}\n', 2),
        ("read_mrpc", "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tonly four fields\n", 2),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, reader: str, content: str, line: int) -> None:
    recipe = SENTEVAL.recipe
    names = {
        "read_sst": ["negative", "positive"],
        "read_trec": recipe.LABEL_NAMES["trec"],
        "read_scicite": recipe.LABEL_NAMES["scicite"],
        "read_mrpc": recipe.LABEL_NAMES["mrpc"],
    }[reader]
    path = tmp_path / "bad.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SourceFormatError, match=rf"bad.txt:{line}: "):
        getattr(recipe, reader)(path, names)
