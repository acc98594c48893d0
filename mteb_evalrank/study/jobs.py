"""The jobs of a study: one per (model, task) without a result file, in chains by model family."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Job:
    """One (model, task) evaluation and where its result goes."""

    model: str
    task: str
    result_path: str  # the final ResultCache path; its existence means "done"

    @property
    def label(self) -> str:
        return f"{self.model} × {self.task}"


@dataclass
class Chain:
    """Jobs run one after the other in one process (one model family)."""

    family: str
    jobs: list[Job] = field(default_factory=list)


def family_of(model: str) -> str:
    """Model family: a population variant's checkpoint, a paper word-vector set, the zoo's, else the name."""
    from mteb_evalrank.models import hf_variants, paper_word, zoo

    return hf_variants.variant_family(model) or paper_word.model_family(model) or zoo.model_family(model)


def plan(
    out: Path, models: Sequence[str], tasks: Sequence[str], classifiers: Sequence[str] = ()
) -> tuple[list[Chain], list[Job]]:
    """Chains of the jobs still to run (task-major within a family), and the jobs skipped (result exists).

    A damaged result (``*.corrupt``) or a SentEval one lacking a requested classifier (``*.outdated``)
    is moved aside and its job planned again.
    """
    import mteb
    from mteb.cache import ResultCache

    from mteb_evalrank.result_files import result_is_done
    from mteb_evalrank.tasks.senteval._base import AbsTaskSentEval

    cache = ResultCache(out)
    families: dict[str, list[str]] = {}
    for model in dict.fromkeys(models):
        families.setdefault(family_of(model), []).append(model)
    chains: list[Chain] = []
    skipped: list[Job] = []
    for family, members in families.items():
        chain = Chain(family)
        for task in dict.fromkeys(tasks):
            senteval = isinstance(mteb.get_task(task), AbsTaskSentEval)
            requested = [f"{kind}_accuracy" for kind in classifiers] if senteval else []
            for model in members:
                job = Job(model, task, str(cache.get_task_result_path(task, mteb.get_model_meta(model))))
                (skipped if result_is_done(Path(job.result_path), requested) else chain.jobs).append(job)
        if chain.jobs:
            chains.append(chain)
    return chains, skipped


def balance(chains: Sequence[Chain], workers: int) -> list[Chain]:
    """Split chains longer than ``fair = ceil(jobs / workers)`` into ``ceil(n / fair)`` (models dealt
    round-robin, task-major kept, shared work repeated), longest first; ``workers <= 1``: unchanged.
    """
    if workers <= 1:
        return list(chains)
    fair = math.ceil(sum(len(chain.jobs) for chain in chains) / workers)
    balanced: list[Chain] = []
    for chain in chains:
        models = list(dict.fromkeys(job.model for job in chain.jobs))
        parts = min(len(models), math.ceil(len(chain.jobs) / fair))
        if parts <= 1:
            balanced.append(chain)
            continue
        for k in range(parts):
            group = set(models[k::parts])
            jobs = [job for job in chain.jobs if job.model in group]
            balanced.append(Chain(f"{chain.family} ({k + 1}/{parts})", jobs))
    return sorted(balanced, key=lambda chain: -len(chain.jobs))
