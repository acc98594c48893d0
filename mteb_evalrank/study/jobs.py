"""The jobs of a study: one per (model, task), grouped into chains by model family.

A result file ``<out>/results/<org__model>/<revision>/<Task>.json`` (mteb's ``ResultCache``
layout) marks a finished job; :func:`plan` skips those. Jobs of one model *family* (models that
share a forward pass, :func:`family_of`) form one :class:`Chain`, run in order by one worker
process, task-major, so that in-process caches and the loaded weights are reused; chains run
in parallel.
"""

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
    """The model family: a population variant's checkpoint (``models.hf_variants.variant_family``), a
    paper word-vector set (``models.paper_word.model_family``), ``mteb_evalrank.models.zoo.model_family``
    when the zoo has it, else the name."""
    from mteb_evalrank.models import hf_variants, paper_word, zoo

    return hf_variants.variant_family(model) or paper_word.model_family(model) or zoo.model_family(model)


def plan(
    out: Path, models: Sequence[str], tasks: Sequence[str], classifiers: Sequence[str] = ()
) -> tuple[list[Chain], list[Job]]:
    """Chains of the jobs still to run, and the jobs skipped because their result exists.

    A SentEval-protocol result without the ``<classifier>_accuracy`` of one of ``classifiers``
    (e.g. written by an ``lr``-only run when ``mlp`` is asked for now) is moved aside
    (``*.outdated``) and its job planned again.

    Within a family the order is task-major (every model of the family on the first task, then
    the second, ...), so variants that share a forward pass reuse each other's work. A damaged
    result file is moved aside (``*.corrupt``, one warning) and its job planned again
    (:func:`mteb_evalrank.result_files.result_is_done`).
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
    """Split the family chains longer than a fair share so that ``workers`` processes stay busy.

    ``fair = ceil(total jobs / workers)``. A chain of ``n > fair`` jobs is split into
    ``ceil(n / fair)`` chains (at most one per model); its models are dealt round-robin, each
    sub-chain keeps the task-major order. Each sub-chain repeats the family's shared work
    (e.g. the MiniLM forward pass) once: worth it when, as for a 16-model family, the
    per-model work (classifier fits, ranking) dominates. The chains come back longest first,
    the order in which the engine submits them (longest-processing-time-first scheduling: a
    long chain started last would leave the other workers idle at the end).
    ``workers <= 1``: unchanged.
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
