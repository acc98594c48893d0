"""Chiu et al.'s window tagger on a chosen torch device and on every core when its input is wide.

Real data: CoNLL-2000 chunking (NLTK's zip in the raw data folder), the first sentences of its
train and test files; the word vectors are drawn per lower-cased word from its SHA-256 (a
zero-cost encoder: each word its own fixed random vector, as an embedding model gives each word
its own vector). Independent of mteb and ``datasets`` (read here with ``zipfile``), so that the
GPU checks run where only numpy and torch are installed (the device machine).

* narrow input (50-d) trains on one thread, as before the thread rule: the default config's
  predictions are bit-identical to an explicit one-thread CPU run;
* wide input (768-d) trains on torch's default pool (every core): its predictions agree with a
  one-thread run's but for floating-point rounding, far closer than two seeds agree (:func:`agree`);
* on CUDA (where torch sees one; skipped elsewhere, naming why) the same agreement with the CPU:
  initialisation and shuffling come from CPU generators on every device.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from numpy.typing import NDArray

from mteb_evalrank.evaluation.tagging import (
    N_CAPS,
    WIDE_INPUT,
    WINDOW,
    TaggerConfig,
    TaggerInput,
    capitalisation,
    centred,
    train_and_predict,
    train_and_select,
    training_threads,
)

SOURCE = Path(os.environ.get("MTEB_EVALRANK_SOURCE", Path(__file__).resolve().parents[2] / "shared" / "data"))
#: a few epochs over a few hundred sentences: seconds per run, a tagger that learns (accuracy ~0.8)
SMALL = TaggerConfig(epochs=3)
NO_CUDA = "torch sees no CUDA device here: the tagger's GPU path is checked where one exists"


def sentences(member: str, n: int) -> list[list[tuple[str, str]]]:
    """The first ``n`` sentences of a CoNLL-2000 file: (word, chunk tag) per token."""
    with zipfile.ZipFile(SOURCE / "conll2000" / "conll2000.zip") as archive:
        text = archive.read(f"conll2000/{member}").decode("utf-8")
    blocks = [block for block in text.split("\n\n") if block.strip()][:n]
    return [[(line.split()[0], line.split()[2]) for line in block.splitlines()] for block in blocks]


def hashed_vectors(words: list[str], dim: int) -> NDArray[np.float32]:
    """Each word's vector drawn from a generator seeded by its SHA-256."""
    seeds = (int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little") for word in words)
    return np.stack([np.random.default_rng(seed).standard_normal(dim) for seed in seeds]).astype(np.float32)


Chunking = tuple[list[str], dict[str, TaggerInput], NDArray[np.intp], NDArray[np.intp], int]


@pytest.fixture(scope="module")
def chunking() -> Chunking:
    if not (SOURCE / "conll2000" / "conll2000.zip").is_file():
        pytest.fail(f"no conll2000/conll2000.zip under {SOURCE}: set MTEB_EVALRANK_SOURCE")
    return load_chunking()


def load_chunking(n_train: int = 400, n_test: int = 150) -> Chunking:
    """Forms, inputs, train targets, test targets and the number of tags of a CoNLL-2000 sample
    (its first ``n_train`` and ``n_test`` sentences; the benchmark takes them all)."""
    splits = {"train": sentences("train.txt", n_train), "test": sentences("test.txt", n_test)}
    forms = list(dict.fromkeys(word.lower() for split in splits.values() for s in split for word, _ in s))
    row = {form: i for i, form in enumerate(forms)}
    tags = sorted({tag for s in splits["train"] for _, tag in s})
    index = {tag: i for i, tag in enumerate(tags)}
    inputs, targets = {}, {}
    for name, split in splits.items():
        tokens = [word for s in split for word, _ in s]
        rows = np.array([row[word.lower()] for word in tokens], dtype=np.intp)
        caps = np.array([capitalisation(word) for word in tokens], dtype=np.intp)
        inputs[name] = TaggerInput.of(rows, caps, [len(s) for s in split])
        targets[name] = np.array([index.get(tag, 0) for s in split for _, tag in s], dtype=np.intp)
    return forms, inputs, targets["train"], targets["test"], len(tags)


def run(chunking: Chunking, dim: int, config: TaggerConfig, seed: int = 0) -> NDArray[np.intp]:
    forms, inputs, train_targets, _, n_tags = chunking
    vectors = centred(hashed_vectors(forms, dim)).astype(np.float32)
    return train_and_predict(
        vectors, inputs["train"], train_targets, inputs["test"], n_tags, seed=seed, config=config
    )


def agree(chunking: Chunking, first: NDArray[np.intp], second: NDArray[np.intp]) -> None:
    """The same tagger but for rounding: accuracy within 0.5 points, at least 95 % of the predictions
    equal (two seeds of one setting agree on 89 % (50-d) and 92 % (768-d) of this sample's tokens,
    one thread and every core on 100 % and 98 %)."""
    gold = chunking[3]
    accuracies = [float((p == gold).mean()) for p in (first, second)]
    assert min(accuracies) > 0.6, accuracies  # a tagger that learnt something
    assert abs(accuracies[0] - accuracies[1]) <= 0.005, accuracies
    assert float((first == second).mean()) >= 0.95


def test_the_cpu_trains_on_one_thread_below_128_dimensions_and_on_every_core_from_there() -> None:
    assert WIDE_INPUT == WINDOW * (128 + N_CAPS)
    assert training_threads(WINDOW * (127 + N_CAPS), TaggerConfig()) == 1
    assert training_threads(WINDOW * (128 + N_CAPS), TaggerConfig()) is None  # torch's pool
    assert training_threads(WINDOW * (768 + N_CAPS), TaggerConfig(threads=3)) == 3  # an explicit count wins


def test_narrow_input_trains_on_one_thread_as_before(chunking: Chunking) -> None:
    default = run(chunking, 50, SMALL)
    one_thread = run(chunking, 50, TaggerConfig(epochs=3, threads=1, device="cpu"))
    np.testing.assert_array_equal(default, one_thread)


@pytest.mark.slow
def test_wide_input_on_every_core_agrees_with_one_thread(chunking: Chunking) -> None:
    before = torch.get_num_threads()
    every_core = run(chunking, 768, SMALL)
    assert torch.get_num_threads() == before  # restored
    agree(chunking, every_core, run(chunking, 768, TaggerConfig(epochs=3, threads=1)))


@pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)
@pytest.mark.parametrize("dim", [50, 768])
def test_the_tagger_on_cuda_agrees_with_the_cpu(chunking: Chunking, dim: int) -> None:
    agree(chunking, run(chunking, dim, TaggerConfig(epochs=3, device="cuda")), run(chunking, dim, SMALL))


def test_the_task_trains_where_the_model_runs() -> None:
    """A model's own ``device`` or that of the model it wraps (mteb's sentence-transformers wrapper
    keeps the ``SentenceTransformer`` as ``model``); a model without one (static vectors): the CPU."""
    from types import SimpleNamespace

    from mteb_evalrank.tasks._encoding import torch_device

    assert torch_device(SimpleNamespace(device=torch.device("cuda", 1))) == "cuda:1"
    assert torch_device(SimpleNamespace(model=SimpleNamespace(device=torch.device("cuda")))) == "cuda"
    assert torch_device(SimpleNamespace(device="cuda")) == "cpu"  # a string is not torch's device
    assert torch_device(SimpleNamespace(model=np.zeros(3))) == "cpu"


def test_the_benchmark_floor_counts_the_products_the_training_runs(chunking: Chunking) -> None:
    """``benchmarks/bench_tagger_device.training_flops`` against torch's profiler, which counts each
    matrix product ``2 m n k`` as it runs: the training's products are the whole call's less the
    prediction's forward products (``2 x test tokens x (width x hidden + hidden x tags)``)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_tagger_device import training_flops

    _, _, train_targets, test_targets, n_tags = chunking
    config, dim = TaggerConfig(epochs=1, hidden=40), 16
    width = WINDOW * (dim + N_CAPS)
    with torch.profiler.profile(with_flops=True) as profile:
        run(chunking, dim, config)
    counted = sum(
        event.flops
        for event in profile.key_averages()
        if event.key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")
    )
    predicted = 2 * len(test_targets) * (width * config.hidden + config.hidden * n_tags)
    assert counted - predicted == training_flops(len(train_targets), width, n_tags, config)


def test_a_penalised_tagger_is_a_lone_tagger_whose_adam_decays_its_weights(chunking: Chunking) -> None:
    """``l2``: a seed trained with a penalty beside the same seed without one equals a lone tagger
    written here with ``torch.nn`` whose Adam adds ``l2 W`` to its two weight matrices' gradients
    (torch's coupled ``weight_decay``; the biases not penalised), but for rounding (far less than
    the penalty's own effect)."""
    forms, inputs, train_targets, _, n_tags = chunking
    vectors = centred(hashed_vectors(forms, 16)).astype(np.float32)
    config, penalty = TaggerConfig(epochs=2), 3e-3
    (plain, _, _), (penalised, _, _) = train_and_select(
        vectors, inputs["train"], train_targets, inputs["test"], n_tags, seeds=(0, 0), l2=(0.0, penalty),
        config=config,
    )  # fmt: skip
    matrix = torch.from_numpy(np.vstack([np.zeros((1, 16), np.float32), vectors]))

    def features(data: TaggerInput, rows: torch.Tensor) -> torch.Tensor:
        words, caps = torch.from_numpy(data.words)[rows], torch.from_numpy(data.caps)[rows]
        return torch.cat([matrix[words].flatten(1), torch.nn.functional.one_hot(caps, N_CAPS).flatten(1)], 1)

    torch.manual_seed(0)
    first, second = (
        torch.nn.Linear(WINDOW * (16 + N_CAPS), config.hidden),
        torch.nn.Linear(config.hidden, n_tags),
    )
    groups: list[dict[str, Any]] = [
        {"params": [first.weight, second.weight], "weight_decay": penalty},
        {"params": [first.bias, second.bias]},
    ]
    optimiser, shuffle = torch.optim.Adam(groups), torch.Generator().manual_seed(0)
    targets = torch.from_numpy(train_targets)
    for _ in range(config.epochs):
        for batch in torch.randperm(len(targets), generator=shuffle).split(config.batch_size):
            x = features(inputs["train"], batch)
            loss = torch.nn.functional.cross_entropy(
                second(torch.nn.functional.hardtanh(first(x))), targets[batch]
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    with torch.no_grad():
        everything = torch.arange(len(inputs["test"].words))
        lone = (
            second(torch.nn.functional.hardtanh(first(features(inputs["test"], everything))))
            .argmax(1)
            .numpy()
        )
    # equal on one thread (measured: every token); the penalty alone moves 2.8 % of the tokens
    assert float((penalised == lone).mean()) >= 0.995
    assert float((penalised == plain).mean()) < 0.99
