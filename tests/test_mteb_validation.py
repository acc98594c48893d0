"""The checks mteb applies to its own tasks, benchmarks and models, on every plugin object.

Each test reaches the object through mteb's public API (``mteb.get_task``, ``mteb.get_benchmark``,
``mteb.get_model_meta``, ...) after registration, as mteb's own test-suite does. Sources, mteb
2.26's ``tests/``: ``test_tasks/test_metadata.py`` (metadata filled and valid, no
``trust_remote_code``, descriptive statistics present, prompt shape), ``test_get_tasks.py``
(``test_no_duplicate_citations_with_different_ids``), ``test_validate_metadata/
test_citation_formatting.py``, ``test_benchmarks/test_names_must_be_unique.py`` and
``test_models/test_model_meta.py``.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import mteb
import pytest
from mteb.abstasks import AbsTaskClassification, AbsTaskRetrieval

import mteb_evalrank
from mteb_evalrank.models import MODEL_METAS
from mteb_evalrank.suites import BENCHMARKS
from mteb_evalrank.tasks import SENTEVAL_PROTOCOL_TASKS, TASKS
from mteb_evalrank.tasks._describe import regenerate_descriptive_stats, remove_stale_stats, same_data_groups
from mteb_evalrank.tasks._metadata import DESCRIPTIVE_STATS_DIR, PluginTaskMetadata

mteb_evalrank.register()

TASK_NAMES = [cls.metadata.name for cls in TASKS]
BENCHMARK_NAMES = [benchmark.name for benchmark in BENCHMARKS]
MODEL_NAMES = [meta.name for meta in MODEL_METAS]
PLUGIN_ITEMS = (
    {f"task:{name}" for name in TASK_NAMES}
    | {f"benchmark:{name}" for name in BENCHMARK_NAMES}
    | {f"model:{name}" for name in MODEL_NAMES}
)


# --------------------------------------------------------------------------------- tasks
@pytest.mark.parametrize("name", TASK_NAMES)
def test_task_metadata_is_filled_and_valid(name: str) -> None:
    """mteb's ``test_all_metadata_is_filled_and_valid``, for one plugin task."""
    task = mteb.get_task(name)
    metadata = task.metadata
    metadata._validate_metadata()
    unfilled = [
        field
        for field in type(metadata).model_fields
        if getattr(metadata, field) is None
        and field not in ("prompt", "adapted_from", "contributed_by", "superseded_by")
    ]
    assert metadata.is_filled(), f"{name}: unfilled metadata {unfilled}"
    assert metadata.dataset.get("trust_remote_code", False) is False
    assert isinstance(metadata.simplified_task_type, str)
    assert not task.is_aggregate
    assert metadata.descriptive_stats is not None, f"{name}: no descriptive statistics"
    assert metadata.n_samples is not None
    if isinstance(metadata.prompt, dict):
        assert isinstance(task, AbsTaskRetrieval), f"{name}: a dict prompt outside a Retrieval task"


@pytest.mark.parametrize("name", TASK_NAMES)
def test_descriptive_stats_cover_every_split_and_subset(name: str) -> None:
    """Statistics for each evaluated split (plus the training split of a classification task,
    as mteb computes them) and, for a task with several subsets, for each subset."""
    task = mteb.get_task(name)
    metadata = task.metadata
    assert isinstance(metadata, PluginTaskMetadata)
    assert metadata.descriptive_stat_path == DESCRIPTIVE_STATS_DIR / metadata.type / f"{name}.json"
    splits = set(metadata.eval_splits)
    if isinstance(task, AbsTaskClassification):
        splits.add(task.train_split)
    stats = metadata.descriptive_stats
    assert stats is not None
    assert set(stats) == splits
    assert set(metadata.n_samples or {}) == splits
    for split, split_stats in stats.items():
        assert split_stats["num_samples"] > 0, (name, split)
        if metadata.is_multilingual:
            subsets = split_stats["hf_subset_descriptive_stats"]  # type: ignore[typeddict-item]
            assert set(subsets) == set(metadata.hf_subsets), (name, split)
            assert sum(s["num_samples"] for s in subsets.values()) == split_stats["num_samples"]


def test_shipped_statistics_are_exactly_the_plugin_tasks() -> None:
    """No stale file: one JSON per plugin task, under its task type (and in the package)."""
    shipped = {path.relative_to(DESCRIPTIVE_STATS_DIR) for path in DESCRIPTIVE_STATS_DIR.rglob("*.json")}
    expected = {Path(cls.metadata.type) / f"{cls.metadata.name}.json" for cls in TASKS}
    assert shipped == expected
    assert DESCRIPTIVE_STATS_DIR.parent == Path(mteb_evalrank.__file__).resolve().parent


def test_stale_statistics_files_are_removed(tmp_path: Path) -> None:
    kept = tmp_path / "STS" / "Kept.json"
    stale = [tmp_path / "STS" / "Old.json", tmp_path / "Retrieval" / "Split.json"]
    for path in (kept, *stale):
        path.parent.mkdir(exist_ok=True)
        path.write_text("{}", encoding="utf-8")
    assert remove_stale_stats(tmp_path, {kept}) == sorted(stale)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == [
        Path("STS"),
        Path("STS/Kept.json"),
    ]


def test_same_data_groups_pair_each_senteval_task_with_its_parent() -> None:
    """The SentEval-protocol tasks subclass their mteb-protocol parents and load the same data:
    one group each; every other plugin task is alone."""
    groups = same_data_groups(TASKS)
    assert sorted(cls.metadata.name for group in groups for cls in group) == sorted(TASK_NAMES)
    pairs = {group[-1].metadata.name: group[0].metadata.name for group in groups if len(group) > 1}
    assert set(pairs) == {cls.metadata.name for cls in SENTEVAL_PROTOCOL_TASKS}
    assert all(len(group) <= 2 for group in groups)
    for child, parent in pairs.items():
        assert mteb.get_task(child).metadata.dataset == mteb.get_task(parent).metadata.dataset


def test_same_data_groups_keep_apart_what_loads_differently() -> None:
    """Hand-made classes: a plain subclass joins its parent; a subclass with its own
    ``dataset_transform``, a sibling (not a subclass) and another split each stay alone."""

    def meta(splits: list[str]) -> SimpleNamespace:
        return SimpleNamespace(
            type="Classification",
            dataset={"path": "x", "revision": "1"},
            eval_splits=splits,
            hf_subsets=["default"],
        )

    class Parent:
        metadata = meta(["test"])

    class Child(Parent):
        pass

    class Transformed(Parent):
        def dataset_transform(self) -> None: ...

    class Sibling:
        metadata = meta(["test"])

    class OtherSplit(Parent):
        metadata = meta(["validation"])

    groups = same_data_groups([Parent, Child, Transformed, Sibling, OtherSplit])
    assert groups == [[Parent, Child], [Transformed], [Sibling], [OtherSplit]]


@pytest.mark.slow
def test_shipped_statistics_equal_a_fresh_computation(built: dict, tmp_path: Path) -> None:
    """``mteb-evalrank datasets describe`` (mteb's ``calculate_descriptive_statistics`` on the
    datasets built from the raw data, computed once per :func:`same_data_groups` group) gives the
    shipped files, written into ``tmp_path``; the package is not touched."""
    before = {path: path.stat().st_mtime_ns for path in DESCRIPTIVE_STATS_DIR.rglob("*.json")}
    written = regenerate_descriptive_stats(out_dir=tmp_path)
    assert sorted(written) == sorted(TASK_NAMES)
    for cls in TASKS:
        name, task_type = cls.metadata.name, cls.metadata.type
        assert written[name] == tmp_path / task_type / f"{name}.json"
        fresh = json.loads(written[name].read_text(encoding="utf-8"))
        shipped = json.loads((DESCRIPTIVE_STATS_DIR / task_type / f"{name}.json").read_text(encoding="utf-8"))
        assert fresh == shipped, f"{name}: rerun 'mteb-evalrank datasets describe'"
    assert {path: path.stat().st_mtime_ns for path in DESCRIPTIVE_STATS_DIR.rglob("*.json")} == before


# ------------------------------------------------------------------------------ citations
def _bibtex_entries(bibtex: str | None) -> list[tuple[str, str]]:
    """(key, title) of each entry; mteb's ``_parse_bibtex_entries`` (tests/test_get_tasks.py)."""
    entries: list[tuple[str, str]] = []
    for match in re.finditer(r"@\w+\s*\{([^,]+)", bibtex or "", re.IGNORECASE):
        assert bibtex is not None
        following = bibtex.find("@", match.end())
        block = bibtex[match.start() : following if following != -1 else None]
        title = re.search(r"\btitle\s*=\s*\{", block, re.IGNORECASE)
        if title is None:
            continue
        depth, i = 1, title.end()
        while i < len(block) and depth > 0:
            depth += {"{": 1, "}": -1}.get(block[i], 0)
            i += 1
        if depth == 0 and (text := " ".join(block[title.end() : i - 1].split())):
            entries.append((match.group(1).strip(), text))
    return entries


def _citations_by_title() -> dict[str, list[tuple[str, str]]]:
    """Normalised title -> [(item, key)] over every task, model and benchmark mteb knows."""
    cited: list[tuple[str, str | None]] = [
        (f"task:{task.metadata.name}", task.metadata.bibtex_citation)
        for task in mteb.get_tasks(exclude_superseded=False, exclude_aggregate=False)
    ]
    cited += [(f"model:{meta.name}", meta.citation) for meta in mteb.get_model_metas()]
    cited += [(f"benchmark:{benchmark.name}", benchmark.citation) for benchmark in mteb.get_benchmarks()]
    by_title: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for item, bibtex in cited:
        for key, title in _bibtex_entries(bibtex):
            by_title[" ".join(title.lower().split())].append((item, key))
    return by_title


def test_no_paper_cited_under_two_keys() -> None:
    """mteb's ``test_no_duplicate_citations_with_different_ids``: the same title (or a title
    within difflib ratio 0.9 of another) must have one key; checked for every title a plugin
    object cites. Titles that differ only in digits are editions of a series, not one paper
    (mteb itself cites the CoNLL-2002 and CoNLL-2003 shared tasks under two keys)."""
    by_title = _citations_by_title()
    problems = []
    for title, items in by_title.items():
        if not any(item in PLUGIN_ITEMS for item, _ in items):
            continue
        keys = {key for _, key in items}
        if len(keys) > 1:
            problems.append(f"{title!r} under keys {sorted(keys)} ({sorted(set(items))})")
        close = [
            other
            for other in difflib.get_close_matches(title, set(by_title) - {title}, n=2, cutoff=0.9)
            if re.sub(r"\d", "", other) != re.sub(r"\d", "", title)  # editions: CoNLL-2002 and -2003
        ]
        if close:
            problems.append(f"{title!r} is nearly {close[0]!r} ({by_title[close[0]][0]})")
    assert not problems, "\n".join(problems)


def test_shared_citations_are_mtebs_entries() -> None:
    """The papers mteb's own tasks cite are cited with mteb's key and entry, verbatim."""
    from mteb_evalrank.tasks._citations import SICK_CITATION, STSB_CITATION

    assert mteb.get_task("SICK-R").metadata.bibtex_citation.strip() == SICK_CITATION
    assert mteb.get_task("STSBenchmark").metadata.bibtex_citation.strip() == STSB_CITATION
    for name in ("SICKEClassification", "SentEvalSICKE"):
        assert SICK_CITATION in mteb.get_task(name).metadata.bibtex_citation
    assert STSB_CITATION in mteb.get_task("STSBenchmarkGranularity").metadata.bibtex_citation
    from mteb_evalrank.tasks._citations import CONLL2003_CITATION

    assert CONLL2003_CITATION in mteb.get_task("XGlueWPRReranking").metadata.bibtex_citation
    assert CONLL2003_CITATION in mteb.get_task("CoNLL2003NER").metadata.bibtex_citation


def _format_bibtex(bibtex: str) -> str | None:
    """mteb's ``format_bibtex`` (tests/test_validate_metadata/test_citation_formatting.py)."""
    bibtexparser = pytest.importorskip("bibtexparser", minversion="1.4.3")
    if not hasattr(bibtexparser, "bparser"):
        pytest.skip("mteb's citation check uses the bibtexparser 1.x API")
    from bibtexparser.bwriter import BibTexWriter

    parser = bibtexparser.bparser.BibTexParser(
        common_strings=True, ignore_nonstandard_types=False, interpolate_strings=False
    )
    database = bibtexparser.loads(bibtex, parser)
    if not database.entries:
        return None
    writer = BibTexWriter()
    writer.indent = "  "
    writer.comma_first = False
    writer.add_trailing_comma = True
    return writer.write(database).strip()


@pytest.mark.parametrize(
    ("kind", "name"),
    [("task", name) for name in TASK_NAMES] + [("benchmark", name) for name in BENCHMARK_NAMES],
)
def test_bibtex_is_formatted_as_mteb_requires(kind: str, name: str) -> None:
    """mteb's ``test_task_bibtex`` / ``test_benchmark_bibtex``: the citation is what its BibTeX
    formatter writes (entries sorted by key, two-space indent, trailing commas)."""
    if kind == "task":
        bibtex = mteb.get_task(name).metadata.bibtex_citation
    else:
        bibtex = mteb.get_benchmark(name).citation
    assert bibtex and bibtex.strip(), f"{kind} {name} cites nothing"
    assert _format_bibtex(bibtex.strip()) == bibtex.strip()


# ----------------------------------------------------------------------------- benchmarks
def test_benchmark_names_unique_against_mteb() -> None:
    """mteb's ``test_benchmark_names_must_be_unique``, with the plugin's benchmarks added."""
    import mteb.benchmarks.benchmarks as mteb_benchmarks

    names = [obj.name for obj in vars(mteb_benchmarks).values() if isinstance(obj, mteb.Benchmark)]
    names += BENCHMARK_NAMES
    assert len(names) == len(set(names))
    aliases = [alias for benchmark in mteb.get_benchmarks() for alias in benchmark.aliases or ()]
    assert not set(aliases) & set(names)
    assert len(aliases) == len(set(aliases))


@pytest.mark.parametrize("name", BENCHMARK_NAMES)
def test_benchmark_resolves_with_every_task(name: str) -> None:
    benchmark = mteb.get_benchmark(name)
    assert benchmark in BENCHMARKS
    assert benchmark.tasks, name
    from mteb_evalrank.suites import STUDY_STS_TASKS
    from mteb_evalrank.tasks._encoding import EncodeOnce

    for task in benchmark.tasks:
        registered = type(mteb.get_task(task.metadata.name))
        if task.metadata.name in STUDY_STS_TASKS:  # mteb's class, encoding through the run's cache
            assert isinstance(task, registered) and isinstance(task, EncodeOnce), (name, task.metadata.name)
        else:
            assert type(task) is registered, (name, task.metadata.name)


# --------------------------------------------------------------------------------- models
@pytest.fixture(scope="module")
def known_tasks() -> set[str]:
    """Every task name mteb knows (instantiating them all takes seconds: once per module)."""
    return {task.metadata.name for task in mteb.get_tasks(exclude_superseded=False, exclude_aggregate=False)}


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_model_meta_valid(name: str, known_tasks: set[str]) -> None:
    """mteb's model-meta checks (tests/test_models/test_model_meta.py) for one zoo model."""
    meta = mteb.get_model_meta(name)
    assert meta in MODEL_METAS
    type(meta).model_validate(meta.model_dump())  # every field passes ModelMeta's validators
    assert "/" in meta.name
    assert meta.revision is not None
    assert meta.name != meta.adapted_from
    meta.get_training_datasets()  # test_check_training_datasets_can_be_derived
    assert set(meta.training_datasets or ()) <= known_tasks
    if meta.adapted_from is not None:
        mteb.get_model_meta(meta.adapted_from)
    if meta.open_weights and "text" in meta.modalities:
        assert meta.n_embedding_parameters is not None  # test_n_embedding_parameters
