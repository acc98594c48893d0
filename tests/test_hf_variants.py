"""The paper's neural variants over any transformers checkpoint (issue 27, part 2).

Offline, on the local checkpoints: the bundled all-MiniLM-L6-v2 (against the zoo's MiniLM
poolings and a hand computation) and all-mpnet-base-v2 (installed by
``scripts/install_encoders.sh``; slow). Whitening against an independent identity-covariance
check and the zoo's whitening; the paper's population (Table 9) declared once, every variant
a valid ``ModelMeta``; the offline error of ``study --population``. Real models, no mocks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import mteb
import numpy as np
import pytest
from mteb.models.abs_encoder import AbsEncoder

import mteb_evalrank
from mteb_evalrank import _mteb_adapter, cli
from mteb_evalrank.models import MODEL_METAS, postprocess
from mteb_evalrank.models import hf_variants as hv
from mteb_evalrank.models.minilm import MiniLMLayerPooling, model_path
from mteb_evalrank.models.offline import MINILM_REVISION
from mteb_evalrank.models.wrappers import FitCorpus, PostProcessedEncoder, encode_texts, wmt17_references
from mteb_evalrank.settings import Settings

mteb_evalrank.register()

#: the builder's pooling -> the zoo's MiniLM pooling computing the same vector
ENCODERS = Settings.from_environment().encoders  # where all-mpnet-base-v2 is installed
ZOO_POOLING = {"cls": "cls", "last-avg": "mean-last", "first-last-avg": "first-last-avg"}
TEXTS = [
    "A man is playing a guitar.",
    "The quick brown fox jumps over the lazy dog, and then it runs away into the forest.",
    "ok",
    " ".join(["the quick brown fox jumps over the lazy dog ."] * 40),  # longer than 256 word pieces
]


def encode(model: AbsEncoder, texts: Sequence[str]) -> np.ndarray:
    return encode_texts(model, texts, task_metadata=None, hf_split="test", hf_subset="default")


@pytest.fixture(scope="module")
def minilm() -> hv.Checkpoint:
    return hv.checkpoint_from_config(model_path(), revision=MINILM_REVISION, stem="all-MiniLM-L6-v2")


def mpnet_folder() -> Path:
    from mteb_evalrank.models.encoders.install import mpnet_dir, mpnet_ready

    if not mpnet_ready(ENCODERS):
        pytest.skip("all-mpnet-base-v2 is not installed: bash scripts/install_encoders.sh")
    return mpnet_dir(ENCODERS)


def hand_poolings(folder: str, texts: Sequence[str], max_length: int) -> dict[str, np.ndarray]:
    """Every pooling, computed here from ``AutoModel`` one text at a time (no padding) with numpy."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder)
    model.eval()
    rows: dict[str, list[np.ndarray]] = {pooling: [] for pooling in hv.POOLINGS}
    for text in texts:
        batch = tokenizer(text, truncation=True, max_length=max_length, return_tensors="pt")
        with torch.no_grad():
            out = model(**batch, output_hidden_states=True)
        hidden = [h[0].numpy() for h in out.hidden_states]  # (tokens, dim) each, no padding
        assert len(hidden) == model.config.num_hidden_layers + 1 and hidden[0].shape[0] <= max_length
        rows["cls"].append(hidden[-1][0])
        rows["last-avg"].append(hidden[-1].mean(axis=0))
        rows["first-last-avg"].append((hidden[1].mean(axis=0) + hidden[-1].mean(axis=0)) / 2)
        rows["pooler"].append(out.pooler_output[0].numpy())
    return {pooling: np.stack(vectors) for pooling, vectors in rows.items()}


# ------------------------------------------------------------------ checkpoints and poolings
def test_minilm_checkpoint_facts_come_from_its_config(minilm: hv.Checkpoint) -> None:
    assert (minilm.dim, minilm.n_layers, minilm.max_tokens) == (
        384,
        6,
        256,
    )  # max_seq_length of the ST folder
    assert minilm.n_embedding_parameters == 30_522 * 384
    assert minilm.n_parameters == 22_713_216  # the zoo's 22,565,376 (embeddings + 6 layers) + the pooler
    assert minilm.license == "apache-2.0" and minilm.has_pooler


@pytest.mark.parametrize("pooling", sorted(ZOO_POOLING))
def test_builder_poolings_equal_the_zoo_minilm_poolings(minilm: hv.Checkpoint, pooling: str) -> None:
    ours = encode(hv.build_variant(hv.Variant(minilm, pooling)), TEXTS)
    zoo = encode(mteb.get_model(f"evalrank/all-MiniLM-L6-v2-{ZOO_POOLING[pooling]}"), TEXTS)
    np.testing.assert_allclose(ours, zoo, rtol=0, atol=1e-6)


def test_builder_poolings_equal_a_hand_computation(minilm: hv.Checkpoint) -> None:
    expected = hand_poolings(model_path(), TEXTS, max_length=256)
    for pooling in hv.POOLINGS:
        got = hv.HFPooling(minilm, pooling).embed(TEXTS)
        np.testing.assert_allclose(got, expected[pooling], rtol=0, atol=2e-5, err_msg=pooling)


def test_one_forward_pass_serves_every_variant(minilm: hv.Checkpoint) -> None:
    texts = [f"a sentence seen by one test only, number {i}" for i in range(5)]
    hv.HFPooling(minilm, "cls").embed(texts)
    calls = hv.HFPooling.forward_calls
    for variant in hv.paper_variants(minilm, whiten=(False,)):
        assert hv.HFPooling(minilm, variant.pooling).embed(texts[::-1]).shape == (5, 384)
    assert hv.HFPooling.forward_calls == calls


@pytest.mark.slow
def test_mpnet_poolings_equal_a_hand_computation_and_the_zoo() -> None:
    folder = mpnet_folder()
    checkpoint = hv.checkpoint_from_config(folder)
    assert (checkpoint.dim, checkpoint.n_layers, checkpoint.max_tokens) == (768, 12, 384)
    assert checkpoint.revision == "e8c3b32edf5434bc2275fc9bab85f82640a19130"  # from the install marker
    assert checkpoint.n_parameters == 109_486_464  # = the zoo's evalrank/all-mpnet-base-v2
    texts = TEXTS[:3]
    expected = hand_poolings(str(folder), texts, max_length=384)
    for pooling in hv.POOLINGS:
        got = hv.HFPooling(checkpoint, pooling).embed(texts)
        np.testing.assert_allclose(got, expected[pooling], rtol=0, atol=2e-5, err_msg=pooling)
    # the official model (sentence-transformers: mean pooling, then unit length) in the zoo
    mean = hv.HFPooling(checkpoint, "last-avg").embed(texts)
    official = encode(mteb.get_model("evalrank/all-mpnet-base-v2"), texts)
    np.testing.assert_allclose(mean / np.linalg.norm(mean, axis=1, keepdims=True), official, atol=2e-6)


# ------------------------------------------------------------------ whitening
@pytest.fixture(scope="module")
def fit_texts(source: Path) -> list[str]:
    """420 distinct STS-B test sentences (EvalRank copy): more than MiniLM's 384 dimensions."""
    rows = (source / "evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv").read_text("utf-8").splitlines()
    texts = list(dict.fromkeys(text for row in rows for text in row.split("\t")[5:7]))
    assert len(texts) >= 420
    return texts[:420]


def test_whitened_variants_use_the_zoo_fit_corpus_and_formula(minilm: hv.Checkpoint) -> None:
    model = hv.build_variant(hv.Variant(minilm, "first-last-avg", whiten=True))
    assert isinstance(model, PostProcessedEncoder)
    assert model.corpus is not None and model.corpus.name == wmt17_references().name
    assert isinstance(model.base, hv.HFPooling) and model.base.pooling == "first-last-avg"


@pytest.mark.slow
@pytest.mark.parametrize("pooling", ["first-last-avg", "cls"])
def test_whitening_gives_identity_covariance_and_equals_the_zoo(
    minilm: hv.Checkpoint, fit_texts: list[str], pooling: str
) -> None:
    corpus = FitCorpus("420 STS-B test sentences", lambda _: fit_texts)
    ours = hv.build_variant(hv.Variant(minilm, pooling, whiten=True), corpus=corpus)
    whitened = encode(ours, fit_texts).astype(np.float64)
    np.testing.assert_allclose(whitened.mean(axis=0), 0, atol=1e-4)
    # identity covariance on the directions the fit rows span: the covariance of the whitened
    # fit rows is a projection (eigenvalues 0 or 1). Hidden states are LayerNorm outputs, which
    # lie in a 383-d affine hyperplane, so a few directions can have zero variance (mapped to 0)
    eigenvalues = np.linalg.eigvalsh(np.cov(whitened, rowvar=False))
    np.testing.assert_allclose(eigenvalues, np.round(eigenvalues), atol=2e-3)
    assert set(np.round(eigenvalues)) <= {0.0, 1.0} and np.round(eigenvalues).sum() >= 375
    zoo = PostProcessedEncoder(
        MiniLMLayerPooling(ZOO_POOLING[pooling]), postprocess.make_postprocessor("whiten"), corpus=corpus
    )
    np.testing.assert_allclose(encode(ours, TEXTS), encode(zoo, TEXTS), rtol=0, atol=1e-5)


# ------------------------------------------------------------------ the paper's population
def test_paper_population_is_table_9_rows_39_to_67() -> None:
    population = hv.get_population("evalrank-paper", ENCODERS)
    assert population is hv.EVALRANK_PAPER
    assert [entry.rows for entry in population.entries] == [str(n) for n in range(39, 68)]
    names = [variant.name for variant in population.variants]
    assert len(names) == len(set(names)) == 24
    assert {(e.model, e.rows) for e in population.not_runnable} == {
        ("InferSent", "39"),
        ("InferSent", "40"),
        ("BERT-flow", "61"),
        ("BERT-flow", "62"),
        ("BERT-flow", "63"),
    }
    assert all(entry.not_runnable for entry in population.not_runnable)
    sources = {checkpoint.source for checkpoint in population.checkpoints}
    assert sources == {
        "google-bert/bert-base-uncased",
        "google-bert/bert-large-uncased",
        "FacebookAI/roberta-base",
        "FacebookAI/roberta-large",
        "sentence-transformers/bert-base-nli-mean-tokens",
        "princeton-nlp/unsup-simcse-bert-base-uncased",
        "princeton-nlp/sup-simcse-bert-base-uncased",
    }
    settings = {(v.checkpoint.stem, v.pooling, v.whiten) for v in population.variants}
    assert ("roberta-base", "cls", False) not in settings  # the paper has no RoBERTa CLS
    assert ("bert-base-nli-mean-tokens", "last-avg", True) in settings  # SBERT-NLI: mean, +- whitening
    assert ("sup-simcse-bert-base-uncased", "pooler", False) in settings  # SimCSE: the paper's pooler_output
    assert all(v.checkpoint.max_tokens == 512 for v in population.variants)


def test_population_metas_validate_and_stay_out_of_the_default_registry() -> None:
    metas = hv.population_metas("evalrank-paper", ENCODERS)
    default = {meta.name for meta in MODEL_METAS}
    for meta in metas:
        type(meta).model_validate(meta.model_dump())  # every field passes ModelMeta's validators
        assert meta.name is not None and "/" in meta.name and meta.name not in default
        assert meta.revision is not None and meta.n_embedding_parameters is not None
        assert meta.name != meta.adapted_from
        meta.get_training_datasets()
        assert meta.training_datasets == set()  # none of mteb's tasks (pretraining / NLI / Wikipedia)
        assert hv.variant_family(meta.name) in {c.stem for c in hv.EVALRANK_PAPER.checkpoints}
    whitened = next(m for m in metas if m.name == "evalrank/bert-base-uncased-cls-whiten")
    assert whitened.n_parameters == 109_482_240 + 768 + 768 * 768


def test_declared_parameter_counts_match_the_architectures() -> None:
    """The population's counts against ``AutoModel.from_config`` of the published configs."""
    from transformers import BertConfig, RobertaConfig

    large = {
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "intermediate_size": 4096,
    }
    roberta = {"vocab_size": 50_265, "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1}
    configs = {
        hv.BERT_BASE: BertConfig(),  # transformers' defaults are bert-base-uncased's config
        hv.BERT_LARGE: BertConfig(**large),
        hv.ROBERTA_BASE: RobertaConfig(**roberta),
        hv.ROBERTA_LARGE: RobertaConfig(**roberta, **large),
    }
    for checkpoint, config in configs.items():
        n, embedding, pooler = hv.count_parameters(config)
        assert (checkpoint.n_parameters, checkpoint.n_embedding_parameters) == (n, embedding), (
            checkpoint.source
        )
        assert (checkpoint.dim, checkpoint.n_layers) == (config.hidden_size, config.num_hidden_layers)
        assert pooler


def test_local_variant_metas_validate(minilm: hv.Checkpoint) -> None:
    for variant in hv.paper_variants(minilm):
        meta = hv.variant_meta(variant)
        type(meta).model_validate(meta.model_dump())
        assert meta.revision == MINILM_REVISION and meta.embed_dim == 384 and meta.max_tokens == 256
    with pytest.raises(ValueError, match="unknown pooling"):
        hv.HFPooling(minilm, "max")


def test_a_population_never_replaces_a_model_of_mteb(minilm: hv.Checkpoint) -> None:
    meta = hv.variant_meta(hv.Variant(minilm, "cls"))
    taken = meta.model_copy(update={"name": "sentence-transformers/all-MiniLM-L6-v2"})
    with pytest.raises(ValueError, match="already has a model named"):
        hv.register_population_metas([taken])
    assert mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2") is not taken


def test_unknown_population_is_named() -> None:
    with pytest.raises(KeyError, match="evalrank-paper"):
        hv.get_population("paper", ENCODERS)


# ------------------------------------------------------------------ offline: one paragraph
def test_population_offline_error_names_the_first_checkpoint(tmp_path: Path) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"  # conftest: never a download
    with pytest.raises(SystemExit) as raised:
        cli.main(
            ["study", "--population", "evalrank-paper", "--tasks", "STSBenchmark", "--out", str(tmp_path)]
        )
    message = str(raised.value.code)
    assert "'google-bert/bert-base-uncased'" in message and "connected machine" in message
    assert "HF_HUB_OFFLINE is set" in message and "\n" not in message

    assert "evalrank/bert-base-uncased-cls" not in _mteb_adapter.model_registry()  # nothing registered
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_population_offline_error_is_no_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    argv = [
        "study",
        "--population",
        "evalrank-paper",
        "--tasks",
        "STSBenchmark",
        "--out",
        str(tmp_path / "o"),
    ]
    run = subprocess.run(
        [sys.executable, "-c", "from mteb_evalrank.cli import main; main()", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "google-bert/bert-base-uncased" in run.stderr and "connected machine" in run.stderr


# ------------------------------------------------------------------ the local population, end to end
@pytest.mark.slow
def test_local_population_declares_the_paper_variants_of_the_local_checkpoints() -> None:
    population = hv.get_population(hv.LOCAL_POPULATION, ENCODERS)
    stems = {checkpoint.stem for checkpoint in population.checkpoints}
    assert "all-MiniLM-L6-v2-hf" in stems and stems <= {"all-MiniLM-L6-v2-hf", "all-mpnet-base-v2-hf"}
    names = [variant.name for variant in population.variants]
    assert len(names) == len(set(names)) == 6 * len(stems)
    assert not set(names) & {meta.name for meta in MODEL_METAS}  # never a zoo name
    hv.check_population(hv.LOCAL_POPULATION, Settings.from_environment())  # every checkpoint loads here
    for meta in hv.population_metas(hv.LOCAL_POPULATION, ENCODERS):
        type(meta).model_validate(meta.model_dump())


@pytest.fixture
def mteb_registry_restored() -> Iterator[None]:
    """mteb's model registry as it was before the test (a registered population would otherwise stay
    for the tests after it in this process, e.g. the count of the zoo's models in the study's help)."""
    registry = _mteb_adapter.model_registry()
    before = dict(registry)
    yield
    registry.clear()
    registry.update(before)


@pytest.mark.usefixtures("mteb_registry_restored")
def test_enabling_a_population_leaves_the_environment_as_it_was() -> None:
    """A population is registered in this process only; worker processes get its name as an argument."""

    def plugin_env() -> dict[str, str]:  # torch sets TORCHINDUCTOR_CACHE_DIR on import
        return {k: v for k, v in os.environ.items() if k.startswith("MTEB")}

    before = plugin_env()
    names = hv.register_population_metas(hv.population_metas(hv.LOCAL_POPULATION, ENCODERS))
    assert plugin_env() == before
    assert all(mteb.get_model_meta(name).name == name for name in names)


def test_the_loader_of_a_variant_uses_its_arguments(minilm: hv.Checkpoint) -> None:
    variant = hv.Variant(minilm, "cls")
    assert hv.load_variant(variant, variant.name, minilm.revision, batch_size=7).batch_size == 7
    with pytest.raises(ValueError, match="was asked for evalrank/other"):
        hv.load_variant(variant, "evalrank/other")
    with pytest.raises(ValueError, match=f"was asked for {variant.name}@v0"):
        hv.load_variant(variant, variant.name, "v0")
    with pytest.raises(ValueError, match="no loader option device"):
        hv.load_variant(variant, variant.name, device="cuda")


@pytest.mark.slow
def test_study_population_runs_in_worker_processes(tmp_path: Path, source: Path) -> None:
    """A study given a population, on two Dask workers: the population is registered by the
    client and, from the argument, by the workers (not through the environment); a checkpoint's
    variants form one chain."""
    script = f"""
import os
from mteb_evalrank.models.hf_variants import population_metas
from mteb_evalrank.settings import Settings
from mteb_evalrank.study import run_study
from mteb_evalrank.study.jobs import family_of
def plugin_env(): return {{k: v for k, v in os.environ.items() if k.startswith("MTEB")}}
before = plugin_env()
metas = population_metas("paper-variants-local", Settings.from_environment().encoders)
names = [m.name for m in metas if "MiniLM" in m.name]
assert {{family_of(n) for n in names}} == {{"all-MiniLM-L6-v2-hf"}}
names = [n for n in names if not n.endswith("-whiten")]
summary = run_study(names + ["evalrank/glove-toy-50d"], ["WordSimMC30"], out={str(tmp_path / "study")!r},
                    populations=["paper-variants-local"], workers=2, progress=False,
                    n_bootstrap=10, n_permutations=10)
assert summary.ok, [o for o in summary.outcomes if o.status != "done"]
assert plugin_env() == before
print(sorted(o.model for o in summary.outcomes))
"""
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "MTEB_EVALRANK_SOURCE": str(source)}
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("all-MiniLM-L6-v2-hf-") == 3
    results = {path.parent.parent.name for path in (tmp_path / "study" / "results").rglob("WordSimMC30.json")}
    assert {"evalrank__all-MiniLM-L6-v2-hf-cls", "evalrank__all-MiniLM-L6-v2-hf-last-avg"} <= results


def test_a_wrong_declaration_is_caught_when_the_weights_load(minilm: hv.Checkpoint) -> None:
    with pytest.raises(ValueError, match="its declaration says"):
        hv.HFPooling(replace(minilm, n_layers=12), "cls")
