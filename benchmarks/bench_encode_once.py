"""Texts encoded against distinct texts over a suite of tasks, in one process (the encode-once report).

``count``: a user's encoder that the plugin does not know (not a zoo model: each text's vector
is drawn from a generator seeded with the text's BLAKE2b digest, so equal texts get equal
vectors; :class:`HashCounter` counts every text it is asked to encode) runs the suite through
``mteb.evaluate`` in this process, and the script prints texts encoded, distinct texts and
their ratio (the target is at most 1.05; 1.0 is each distinct text encoded once in the run).
Suites: ``intrinsic`` = the 27 intrinsic tasks of ``EvalRank-Study`` (all but its downstream
tasks, as the correlation module counts them: ``correlation.table.default_downstream``), ``downstream`` =
``EvalRank-Downstream`` + ``EvalRank-Downstream-SentEval`` (the SentEval-protocol tasks fit
logistic regression only here: the MLP does not encode).

``minilm``: the bundled all-MiniLM-L6-v2 loaded as a user loads it
(``mteb.get_model("sentence-transformers/all-MiniLM-L6-v2")`` after ``mteb-evalrank models
install-offline``) over the same suite, printing the run's wall time and the texts the model
encoded; time the whole process from outside (``/usr/bin/time -v``) for the peak memory.

Reuse is on unless ``MTEB_EVALRANK_REUSE_EMBEDDINGS=0`` (the switch the README documents)::

    HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 python benchmarks/bench_encode_once.py count intrinsic
    MTEB_EVALRANK_REUSE_EMBEDDINGS=0 python benchmarks/bench_encode_once.py count downstream
    /usr/bin/time -v python benchmarks/bench_encode_once.py minilm intrinsic

The datasets must be built (``mteb-evalrank datasets build --source DIR --sts-mirrors``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

DIM = 64


def suite(name: str) -> list[Any]:
    """The tasks of a suite (see the module docstring), as mteb task objects."""
    import mteb

    import mteb_evalrank  # noqa: F401  (registers the plugin's tasks and benchmarks)
    from mteb_evalrank.correlation.table import default_downstream
    from mteb_evalrank.tasks.senteval import SENTEVAL_PROTOCOL_TASKS

    senteval = {task.metadata.name for task in (cls() for cls in SENTEVAL_PROTOCOL_TASKS)}
    if name == "intrinsic":
        study = mteb.get_benchmark("EvalRank-Study").tasks
        downstream = set(default_downstream([t.metadata.name for t in study]))
        return [t for t in study if t.metadata.name not in downstream]
    tasks = [
        *mteb.get_benchmark("EvalRank-Downstream").tasks,
        *mteb.get_benchmark("EvalRank-Downstream-SentEval").tasks,
    ]
    for task in tasks:
        if task.metadata.name in senteval:
            task.classifiers = ("lr",)  # type: ignore[attr-defined]
    return tasks


class HashCounter:
    """A user's encoder the plugin does not know: hash-seeded ``dim``-d vectors, every text counted
    (another width is another model name, so that no embedding cache mixes widths)."""

    def __init__(self, dim: int = DIM) -> None:
        from mteb.models import ModelMeta

        name = "bench/hash-counter" + ("" if dim == DIM else f"-{dim}")
        self.mteb_model_meta = ModelMeta.create_empty({"name": name, "revision": "1"})
        self.dim = dim
        self.texts: Counter[str] = Counter()

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray[Any, np.dtype[np.float32]]:
        texts = [text for batch in inputs for text in batch["text"]]
        self.texts.update(texts)
        rows = [
            np.random.default_rng(np.frombuffer(hashlib.blake2b(t.encode("utf-8")).digest(), np.uint64))
            .standard_normal(self.dim)
            .astype(np.float32)
            for t in texts
        ]
        return np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)

    def similarity(self, a: Any, b: Any) -> Any:
        from mteb.similarity_functions import cos_sim

        return cos_sim(a, b)

    def similarity_pairwise(self, a: Any, b: Any) -> Any:
        from mteb.similarity_functions import pairwise_cos_sim

        return pairwise_cos_sim(a, b)


class CountingMiniLM:
    """Counts the texts reaching the user's model (mteb's sentence-transformers wrapper)."""

    def __init__(self, model: Any) -> None:
        self.texts: Counter[str] = Counter()
        original = model.encode

        def encode(inputs: Any, **kwargs: Any) -> Any:
            self.texts.update(text for batch in inputs for text in batch["text"])
            return original(inputs, **kwargs)

        model.encode = encode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("model", choices=["count", "minilm"])
    parser.add_argument("suite", choices=["intrinsic", "downstream"])
    parser.add_argument("--tasks", nargs="+", help="only these tasks of the suite")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    import mteb

    from mteb_evalrank.settings import Settings

    tasks = [task for task in suite(args.suite) if not args.tasks or task.metadata.name in args.tasks]
    if args.model == "count":
        model: Any = HashCounter()
        counter = model
    else:
        model = mteb.get_model("sentence-transformers/all-MiniLM-L6-v2")
        counter = CountingMiniLM(model)
    start = time.perf_counter()
    mteb.evaluate(model, tasks, cache=None, overwrite_strategy="always", show_progress_bar=False)
    seconds = time.perf_counter() - start
    encoded, distinct = sum(counter.texts.values()), len(counter.texts)
    figures = {
        "model": args.model,
        "suite": args.suite,
        "tasks": [task.metadata.name for task in tasks] if args.tasks else len(tasks),
        "reuse": Settings.from_environment().reuse_embeddings,
        "texts_encoded": encoded,
        "distinct_texts": distinct,
        "ratio": round(encoded / distinct, 4),
        "evaluate_seconds": round(seconds, 1),
    }
    print(json.dumps(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
