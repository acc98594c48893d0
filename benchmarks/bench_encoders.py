"""Encoding throughput of each PyPI-packaged encoder family (docs/zoo.md): sentences per second.

Encodes the first ``N`` distinct sentences of the STS Benchmark test set (EvalRank copy,
``$MTEB_EVALRANK_SOURCE/evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv``) once with
each family's base encoder, through a fresh in-memory embedding cache (so every text is
encoded), after loading the model (load time reported apart)::

    python benchmarks/bench_encoders.py [N] [FAMILY ...]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

SOURCE = Path(os.environ.get("MTEB_EVALRANK_SOURCE", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> None:
    from mteb_evalrank.embedding_cache import EmbeddingCache, using_process_cache
    from mteb_evalrank.models.encoders import FAMILIES
    from mteb_evalrank.settings import Settings

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    wanted = set(sys.argv[2:])
    rows = (SOURCE / "evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv").read_text("utf-8").splitlines()
    texts = list(dict.fromkeys(text for row in rows for text in row.split("\t")[5:7]))[:n]
    print(f"{len(texts)} STS-B sentences, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("| family | model | load (s) | sentences/s |")
    print("|---|---|---:|---:|")
    for spec in FAMILIES:
        if wanted and spec.family not in wanted and spec.name not in wanted:
            continue
        start = time.perf_counter()
        encoder = spec.load(Settings.from_environment().encoders)
        loaded = time.perf_counter()
        with using_process_cache(EmbeddingCache()):
            encoder.embed(texts[:8])  # warm-up (lazy initialisation), not timed
        with using_process_cache(EmbeddingCache()):
            begin = time.perf_counter()
            encoder.embed(texts)
            seconds = time.perf_counter() - begin
        rate = len(texts) / seconds
        print(f"| {spec.family} | `{spec.name}` | {loaded - start:.1f} | {rate:.0f} |", flush=True)


if __name__ == "__main__":
    main()
