"""The static word-vector encoder: file formats, tokenisation, mean pooling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mteb_evalrank.models.static import StaticWordEmbeddings


def test_bag_of_words_mean_and_zero_vector() -> None:
    model = StaticWordEmbeddings(["cat", "dog", "Fish"], np.array([[1.0, 0], [0, 2], [4, 4]]))
    out = model.embed(["Cat DOG", "cat unknown", "unknown words only", "Fish", ""])
    np.testing.assert_allclose(out[0], [0.5, 1.0])  # mean of cat and dog, lower-cased input
    np.testing.assert_allclose(out[1], [1.0, 0.0])  # unknown token skipped
    np.testing.assert_allclose(out[2], [0.0, 0.0])  # nothing known -> zero vector
    np.testing.assert_allclose(out[3], [0.0, 0.0])  # input lower-cased, vocabulary as given
    np.testing.assert_allclose(out[4], [0.0, 0.0])
    assert model.n_unknown_tokens == 5 and model.n_tokens == 8


def test_first_occurrence_of_a_word_wins() -> None:
    model = StaticWordEmbeddings(["a", "a"], np.array([[1.0], [2.0]]))
    assert model.embed(["a"])[0, 0] == 1.0


def test_glove_text_file(source: Path) -> None:
    path = source / "evalrank" / "word_emb" / "toy_emb.txt"
    model = StaticWordEmbeddings.from_file(path)
    assert len(model.index) == 5000 and model.dim == 50
    first = path.open(encoding="utf-8").readline().split()
    np.testing.assert_allclose(model.embed([first[0]])[0], np.array(first[1:], dtype=np.float32))


def test_word2vec_header_and_npy_with_vocabulary(tmp_path: Path) -> None:
    text = tmp_path / "w2v.txt"
    text.write_text("2 3\nhello 1 2 3\nworld 4 5 6\n", encoding="utf-8")
    model = StaticWordEmbeddings.from_file(text)
    np.testing.assert_allclose(model.embed(["hello world"])[0], [2.5, 3.5, 4.5])
    np.save(tmp_path / "v.npy", np.array([[1.0, 1.0], [3.0, 5.0]], dtype=np.float32))
    (tmp_path / "vocab.txt").write_text("x\ny\n", encoding="utf-8")
    model = StaticWordEmbeddings.from_file(tmp_path / "v.npy", tmp_path / "vocab.txt")
    np.testing.assert_allclose(model.embed(["x y"])[0], [2.0, 3.0])


def test_bad_files_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nb 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.txt:2: expected a word and 2 numbers"):
        StaticWordEmbeddings.from_file(bad)
    bad.write_text("a 1 x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.txt:1: a vector value is not a number"):
        StaticWordEmbeddings.from_file(bad)
    with pytest.raises(ValueError, match="needs vocabulary"):
        StaticWordEmbeddings.from_file(tmp_path / "v.npy")
    with pytest.raises(ValueError, match="one vector per word"):
        StaticWordEmbeddings(["a", "b"], np.zeros((3, 2)))


def test_bundled_glove_model_loads_through_mteb() -> None:
    import mteb

    import mteb_evalrank  # noqa: F401

    model = mteb.get_model("evalrank/glove.6B.50d")
    assert isinstance(model, StaticWordEmbeddings)
    assert len(model.index) == 400_000 and model.dim == 50
    assert model.mteb_model_meta.name == "evalrank/glove.6B.50d"
