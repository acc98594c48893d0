"""``mteb-evalrank report``: one self-contained HTML page of an mteb results folder (docs/report.md).

Inline SVG heatmaps, scatter panels drawn by ``templates/panels.js`` from their data, inline styles
(``templates/report.html.j2``); every number from :mod:`mteb_evalrank.correlation`.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import numpy as np

from .._files import write_text
from ..correlation import CorrelationInputError, correlate, load_results, stats
from ..correlation import figures as correlation_figures
from ..correlation.core import resolve_families
from ..correlation.table import (
    PROTOCOLS,
    ColumnSpec,
    LoadedResults,
    build_table,
    by_protocol,
    column_scores,
    expand_columns,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..correlation import CorrelationResult

SPLIT = "test"
OTHER_TASKS = "Other tasks"
MIN_CORRELATION_MODELS = 8
"""The page correlates from this many models on (a downstream protocol: models having its results);
with fewer it shows the comparison view instead (docs/report.md)."""


@dataclass(frozen=True)
class Cell:
    """One table cell: text, sort value (``None``: missing), best of its column, background ``colour``."""

    text: str
    value: float | None = None
    best: bool = False
    colour: str | None = None
    title: str | None = None
    """the first cell's tooltip (default: its text)"""


@dataclass(frozen=True)
class Table:
    """A sortable table: header cells (``heads``: name, sub-line), rows of cells."""

    heads: list[tuple[str, str]]
    rows: list[list[Cell]]
    numeric: list[bool]


@dataclass(frozen=True)
class Section:
    """A titled part of the page: a description, tables and figures."""

    title: str
    description: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    """(caption, markup: inline SVG, or the data of panels drawn by the page's script)"""
    anchor: str = ""


@dataclass(frozen=True)
class ProtocolView:
    """One downstream protocol's correlations: overview, all pairs, scatters, families' ρ, colours."""

    title: str
    description: str
    overview: Section
    pairs: Section
    scatters: list[Section]
    families: list[Section]
    colours: dict[str, str]


@dataclass
class Page:
    """Everything the template shows."""

    title: str
    source: str
    models: list[str]
    tasks: list[str]
    scores: list[Section]
    coverage: Section | None
    correlation: list[ProtocolView]
    provenance: list[Section]
    notes: list[str]
    written_by: str
    comparison: Section | None = None
    csv: str = ""
    """the scores (model × task, main scores) as a ``data:text/csv`` link"""
    seconds: float = 0.0


@dataclass(frozen=True)
class Options:
    """What the page is asked for (``--benchmark``, ``--models``, ``--model-regex``, ``--families``)."""

    benchmark: str | None = None
    models: Sequence[str] | None = None
    model_regex: str | None = None
    families: Mapping[str, str] | None = None
    n_bootstrap: int = 2000
    n_permutations: int = 10000
    seed: int = 0


def write_report(results: str | Path, out: str | Path, options: Options | None = None) -> Path:
    """Write ``<out>/index.html`` for the results folder ``results`` (see the module docstring).

    Raises:
        CorrelationInputError: no usable results (the message names the folder, model or benchmark).
    """
    from threadpoolctl import threadpool_limits

    target = Path(out) / "index.html"
    blocking = next((p for p in (Path(out), *Path(out).parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:  # before any work: a file where the page's folder must be
        raise CorrelationInputError(f"--out {out}: {blocking} is a file, not a folder: give a folder.")
    start = time.perf_counter()
    # one BLAS thread: on the bootstrap's small matrices a second one costs more than it gives
    with threadpool_limits(1):
        page = build_page(Path(results), options or Options())
    page.seconds = time.perf_counter() - start
    write_text(target, render(page))
    return target


def build_page(results: Path, options: Options) -> Page:
    """The page's content: load the results, then each section (module docstring)."""
    loaded = load_results([_cache_folder(results)], models=options.models, model_regex=options.model_regex)
    notes = list(loaded.notes)
    tasks = _usable_tasks(loaded, _benchmark_tasks(options.benchmark, loaded), notes)
    if not tasks:
        raise CorrelationInputError(f"{results}: no task has results in split {SPLIT!r}")
    frame = build_table(loaded, [ColumnSpec(t) for t in tasks], SPLIT).frame
    families, _ = resolve_families(loaded.models, options.families)
    sections = _sections(options.benchmark, tasks)
    few = len(frame) < MIN_CORRELATION_MODELS
    correlations = enumerate(_correlations(loaded, tasks, notes, options))
    return Page(
        title=f"mteb-evalrank report: {results}", source=str(results), models=list(frame.index), tasks=tasks,
        scores=_score_sections(frame, families, sections),
        coverage=_coverage_section(loaded, families, tasks),
        correlation=[_protocol_view(i, protocol, result) for i, (protocol, result) in correlations],
        provenance=_provenance_sections(loaded, families, tasks), notes=notes, written_by=_versions(),
        comparison=_comparison_section(frame, loaded, sections) if few else None,
        csv="data:text/csv;charset=utf-8," + quote(frame.to_csv()),
    )  # fmt: skip


# ----------------------------------------------------------------------------- tasks and sections
def _cache_folder(path: Path) -> Path:
    """``path``, or its parent when ``path`` is the ``results/`` folder of a ``ResultCache``."""
    if not (path / "results").is_dir() and path.name == "results" and path.is_dir():
        return path.parent
    return path


def _benchmark_tasks(benchmark: str | None, loaded: LoadedResults) -> list[str]:
    """The results' tasks, sorted; with ``benchmark``, only its tasks (an error if none is present)."""
    present = sorted(loaded.task_names())
    if benchmark is None:
        return present
    import mteb

    try:
        wanted = {task.metadata.name for task in mteb.get_benchmark(benchmark).tasks}
    except KeyError as error:
        raise CorrelationInputError(f"--benchmark {benchmark}: {error.args[0]}") from None
    kept = [t for t in present if t in wanted]
    if not kept:
        raise CorrelationInputError(
            f"--benchmark {benchmark}: none of its tasks has results here "
            f"(tasks present: {', '.join(present)})"
        )
    return kept


def _usable_tasks(loaded: LoadedResults, tasks: list[str], notes: list[str]) -> list[str]:
    """The tasks with a main score in split ``test`` for some model; the others noted."""
    usable = []
    for task in tasks:
        try:
            column_scores(loaded, ColumnSpec(task), SPLIT)
        except CorrelationInputError as error:
            notes.append(f"not shown: {error}")
            continue
        usable.append(task)
    return usable


def _sections(benchmark: str | None, tasks: list[str]) -> list[tuple[str, str, list[str]]]:
    """(title, description, tasks) per score table: each task in the first benchmark listing it."""
    import mteb

    if benchmark is not None:
        return [(benchmark, mteb.get_benchmark(benchmark).description or "", tasks)]
    from ..suites import BENCHMARKS

    sections, placed = [], set()
    for suite in BENCHMARKS:
        own = [t for t in tasks if t in {task.metadata.name for task in suite.tasks} and t not in placed]
        if own:
            sections.append((suite.name, suite.description or "", own))
            placed.update(own)
    rest = [t for t in tasks if t not in placed]
    if rest:
        sections.append((OTHER_TASKS, "Tasks of none of the plugin's benchmarks.", rest))
    return sections


def _main_metric(task: str) -> str:
    import mteb

    try:
        return str(mteb.get_task(task).metadata.main_score)
    except KeyError:
        return "main_score"


# ----------------------------------------------------------------------------- score tables
def _number(value: float) -> str:
    return f"{100.0 * value:.1f}"


def _score(value: float, text: str | None = None, **style: Any) -> Cell:
    """A number's cell, sorted by it: ``text``, else the number ×100; "–" where it is missing."""
    return Cell(text or _number(value), float(value), **style) if np.isfinite(value) else Cell("–")


def _model_table(
    frame: pd.DataFrame, families: dict[str, str], heads: list[tuple[str, str]], mark_best: bool = True
) -> Table:
    """The model column, a column per column of ``frame`` (×100, best marked), then the family if known."""
    known = {name: family for name, family in families.items() if family != name}
    best = frame.max(axis=0, skipna=True).where(frame.notna().sum(axis=0) > 1)  # none among one
    rows = []
    for name, scores in frame.iterrows():
        cells = [Cell(str(name))]
        cells += [_score(value, best=mark_best and value == best[column]) for column, value in scores.items()]
        rows.append(cells + ([Cell(known.get(str(name), ""))] if known else []))
    family = [("family", "")] if known else []
    numeric = [False] + [True] * len(heads) + [False] * len(family)
    return Table([("model", ""), *heads, *family], rows, numeric)


def _score_sections(
    frame: pd.DataFrame, families: dict[str, str], sections: list[tuple[str, str, list[str]]]
) -> list[Section]:
    return [
        Section(
            title,
            description,
            [_model_table(frame[tasks], families, [(t, _main_metric(t)) for t in tasks])],
            anchor=f"scores-{i}",
        )
        for i, (title, description, tasks) in enumerate(sections)
    ]


def _coverage_section(loaded: LoadedResults, families: dict[str, str], tasks: list[str]) -> Section | None:
    """Each model's ``coverage`` score on the tasks reporting one (×100), or ``None``."""
    columns = []
    for task in tasks:
        try:
            column_scores(loaded, ColumnSpec(task, None, "coverage"), SPLIT)
        except CorrelationInputError:
            continue
        columns.append(ColumnSpec(task, None, "coverage"))
    if not columns:
        return None
    frame = build_table(loaded, columns, SPLIT).frame
    heads = [(c.task, "coverage") for c in columns]
    return Section(
        "Coverage",
        "The share of a task's pairs whose words the model knows (×100): a pair with an unknown word "
        "counts as a wrong answer in the task's score.",
        [_model_table(frame, families, heads, mark_best=False)],
        anchor="coverage",
    )


# ----------------------------------------------------------------------------- comparison
def _short_names(names: Sequence[str]) -> dict[str, str]:
    """Each model's name after its last '/', or the whole name where two would read alike."""
    short = {name: name.rsplit("/", 1)[-1] for name in names}
    counts = Counter(short.values())
    return {name: text if counts[text] == 1 else name for name, text in short.items()}


def _count(n: int | None) -> Cell:
    """A parameter count as 22.6M / 1.2B (sorted by the count); "–" when unknown."""
    if not n:
        return Cell("–")
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return Cell(f"{n / size:.1f}{unit}", n)
    return Cell(str(n), n)


def _ranked(scores: pd.Series, ranks: pd.Series, name: str) -> Cell:
    """A model's score ×100 with its rank in brackets (★ on the best of two scores or more)."""
    value = scores[name]
    best = bool(ranks[name] == 1 and scores.count() > 1)
    return _score(value, f"{_number(value)} ({int(ranks[name])})" if np.isfinite(value) else None, best=best)


def _comparison_section(
    frame: pd.DataFrame, loaded: LoadedResults, sections: list[tuple[str, str, list[str]]]
) -> Section:
    """The few-model view: Borda rank (mteb's leaderboard: ``n − r`` points per task, ties averaged, ranked
    by the sum; ties share the best rank), mean per benchmark and size; per task the scores and ranks.
    """
    names = _short_names(list(frame.index))
    ranks = frame.rank(ascending=False, method="min")
    points = (len(frame) - frame.rank(ascending=False, method="average")).sum(axis=1)
    borda = points.rank(ascending=False, method="min")
    means = {title: frame[tasks].mean(axis=1, skipna=False) for title, _, tasks in sections}
    summary = [
        [
            Cell(names[name], title=name), Cell(str(int(borda[name])), borda[name]),
            *(_score(mean[name]) for mean in means.values()),
            Cell(str(loaded.models[name].embed_dim or "–"), loaded.models[name].embed_dim),
            _count(loaded.models[name].n_parameters),
        ]
        for name in borda.sort_values(kind="stable").index
    ]  # fmt: skip
    heads = [("model", ""), ("Borda rank", f"{len(frame.columns)} tasks"), *((t, "mean") for t in means),
             ("dim", "embed_dim"), ("parameters", "n_parameters")]  # fmt: skip
    per_task = [[Cell(task), *(_ranked(frame[task], ranks[task], name) for name in frame.index)]
                for _, _, tasks in sections for task in tasks]  # fmt: skip
    task_heads = [("task", ""), *((names[name], "score (rank)") for name in frame.index)]
    return Section(
        "Comparison",
        f"{len(frame)} model{'s' * (len(frame) > 1)}: first each model's Borda rank over the tasks (as "
        "mteb's leaderboard: per task a model earns one point per model it beats, ties halved; the most "
        "points rank first), its mean score per benchmark (only over every task of the benchmark) and "
        "its size; then per task each model's score ×100 and its rank among these models (★ the best). "
        "Model names are shortened to the part after the last '/' (the whole name in the tooltip).",
        [Table(heads, summary, [False, True, *([True] * len(means)), True, True]),
         Table(task_heads, per_task, [False, *([True] * len(frame))])],
        anchor="comparison",
    )  # fmt: skip


# ----------------------------------------------------------------------------- correlation
def _correlations(
    loaded: LoadedResults, tasks: list[str], notes: list[str], options: Options
) -> list[tuple[str, CorrelationResult]]:
    """Per downstream protocol every intrinsic column against its tasks; a protocol left out is noted."""
    import mteb

    if len(loaded.models) < MIN_CORRELATION_MODELS:
        notes.append(
            f"no correlations: they need at least {MIN_CORRELATION_MODELS} models (over fewer a rank "
            "correlation says little: a Spearman ρ of 0.5 over 7 models has a 95 % CI of about "
            f"[−0.4, 0.9]); here {len(loaded.models)}: the comparison shows ranks instead"
        )
        return []
    known = []
    for task in tasks:
        try:
            mteb.get_task(task)
        except KeyError:
            notes.append(f"not correlated: {task} is a task mteb does not know (intrinsic or downstream?)")
            continue
        known.append(task)
    groups = by_protocol(known)
    rows = _rows(loaded, [t for t in known if not any(t in group for group in groups.values())])
    if not groups or not rows:
        notes.append(
            "no correlations: they need an intrinsic task and a downstream task (mteb type "
            f"Classification); here {len(rows)} intrinsic column(s) and {len(groups)} downstream protocol(s)"
        )
        return []
    return [
        (protocol, result)
        for protocol, group in groups.items()
        if (result := _protocol_correlation(loaded, protocol, rows, group, notes, options)) is not None
    ]


def _protocol_correlation(
    loaded: LoadedResults,
    protocol: str,
    rows: list[ColumnSpec],
    group: list[str],
    notes: list[str],
    options: Options,
) -> CorrelationResult | None:
    """The intrinsic rows against one protocol's ``group``, on the models having one of them, or ``None``."""
    having = {name: m for name, m in loaded.models.items() if any(task in m.tasks for task in group)}
    if len(having) < MIN_CORRELATION_MODELS:
        notes.append(
            f"no correlations for the {protocol} protocol ({', '.join(group)}): {len(having)} model(s) have "
            f"its results; they need at least {MIN_CORRELATION_MODELS}"
        )
        return None
    subset = LoadedResults(having, loaded.folders, [])
    intrinsic = _enough(subset, rows, notes, protocol)
    downstream = _enough(subset, [ColumnSpec(t) for t in group], notes, protocol)
    if not downstream or not intrinsic:
        return None
    try:
        return correlate(
            subset, intrinsic, downstream, split=SPLIT, families=options.families,
            n_bootstrap=options.n_bootstrap, n_permutations=options.n_permutations, seed=options.seed,
        )  # fmt: skip
    except CorrelationInputError as error:
        notes.append(f"no correlations for the {protocol} protocol: {error}")
        return None


def _rows(loaded: LoadedResults, tasks: list[str]) -> list[ColumnSpec]:
    """The intrinsic rows: one per subset of a task with several (never averaged), else its main score."""
    rows: list[ColumnSpec] = []
    for task in tasks:
        subsets = expand_columns(loaded, [ColumnSpec(task, "*")], SPLIT)
        rows += subsets if len(subsets) > 1 else [ColumnSpec(task)]
    return rows


def _enough(loaded: LoadedResults, columns: list[ColumnSpec], notes: list[str], protocol: str) -> list[str]:
    """The labels of the columns that at least MIN_CORRELATION_MODELS models have; the others noted."""
    kept = []
    for column in columns:
        try:
            n = len(column_scores(loaded, column, SPLIT)[0])
        except CorrelationInputError:  # no model of this protocol has the column
            n = 0
        if n >= MIN_CORRELATION_MODELS:
            kept.append(column.label)
        else:
            notes.append(
                f"not correlated ({protocol} protocol): {column.label} has the scores of {n} model(s)"
            )
    return kept


def _svg(draw: Callable[[Path], Path], salt: str) -> str:
    """The SVG markup a figure function writes (text as text; ids unique to this figure)."""
    import matplotlib

    with tempfile.TemporaryDirectory(prefix="mteb-evalrank-report-") as folder:
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
            path = draw(Path(folder) / "figure.svg")
        text = path.read_text(encoding="utf-8")
    return text[text.index("<svg") :]


def _panels(data: dict[str, Any]) -> str:
    """A figure that the page's script (``templates/panels.js``) draws from its data when it is opened."""
    import markupsafe

    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return f'<div class="panels" data-panels="{markupsafe.escape(text)}"></div>'


def _protocol_view(i: int, protocol: str, result: CorrelationResult) -> ProtocolView:
    """The ``i``-th protocol's part: heatmap with row means, all pairs, scatters, the families' own ρ."""
    n = sorted({p.n for p in result.pairs})
    means = [
        [Cell(r.intrinsic), Cell(_number(r.mean), r.mean), Cell(_ci(r.ci_low, r.ci_high)),
         Cell(str(r.n), r.n), Cell(str(r.n_families), r.n_families)]
        for r in result.row_means
    ]  # fmt: skip
    heads = [("intrinsic", ""), ("mean ρ", "×100"), ("CI", f"{result.settings.confidence:.0%}"),
             ("models", ""), ("families", "")]  # fmt: skip
    heatmap = _svg(partial(correlation_figures.heatmap, result), f"heatmap-{i}")
    overview = Section(
        "Which intrinsic task predicts the downstream tasks?",
        f"Spearman ρ across models between each intrinsic score and each downstream score "
        f"(n = {n[0]}{f'–{n[-1]}' if len(n) > 1 else ''} models per pair), and each intrinsic task's mean ρ "
        "over the downstream tasks with its family-cluster bootstrap CI.",
        [Table(heads, means, [False, True, False, True, True])],
        [("Spearman ρ (×100) of every intrinsic × downstream pair", heatmap)],
        anchor=f"correlation-{i}",
    )
    scatters = []
    for j, intrinsic in enumerate(result.intrinsic):
        panels = _panels(correlation_figures.scatter_panels(result, intrinsic))
        caption = (
            f"{intrinsic} (across) against each downstream task (up), scores ×100: one point per model, "
            "coloured by family (hover a point for its model)"
        )
        scatters.append(Section(intrinsic, figures=[(caption, panels)], anchor=f"scatter-{i}-{j}"))
    return ProtocolView(
        f"{protocol}: {len(result.extrinsic)} task{'s' * (len(result.extrinsic) > 1)}, "
        f"{len(result.table.frame)} models",
        f"Downstream here: {PROTOCOLS[protocol]} ({', '.join(result.extrinsic)}); correlated over the "
        "models having its results.",
        overview, _pairs_section(i, result), scatters, _family_sections(i, result),
        correlation_figures.family_colours(result),
    )  # fmt: skip


def _ci(low: float, high: float) -> str:
    return f"[{_number(low)}, {_number(high)}]" if np.isfinite(low) else "–"


def _pairs_section(i: int, result: CorrelationResult) -> Section:
    """Every pair: ρ, its CI, n, the families and the adjusted permutation p-value."""
    rows = [
        [
            Cell(p.intrinsic), Cell(p.extrinsic),
            _score(p.spearman),
            Cell(_ci(p.spearman_ci_low, p.spearman_ci_high)), Cell(str(p.n), p.n),
            Cell(str(p.n_families), p.n_families),
            _score(p.spearman_p_adj, f"{p.spearman_p_adj:.4f}"),
        ]
        for p in result.pairs
    ]  # fmt: skip
    confidence = f"{result.settings.confidence:.0%}"
    heads = [("intrinsic", ""), ("downstream", ""), ("ρ", "×100"), ("CI", confidence), ("models", ""),
             ("families", ""), ("p", result.settings.p_adjust)]  # fmt: skip
    description = (
        f"Each pair's Spearman ρ, its family-cluster bootstrap CI ({result.settings.n_bootstrap} resamples) "
        f"and its permutation p-value ({result.settings.n_permutations} permutations within families), "
        f"adjusted over the {len(result.pairs)} pairs ({result.settings.p_adjust})."
    )
    return Section(
        "All pairs", description, [Table(heads, rows, [False, False, True, False, True, True, True])],
        anchor=f"pairs-{i}",
    )  # fmt: skip


def _family_sections(k: int, result: CorrelationResult) -> list[Section]:
    """Per family of at least MIN_FAMILY_SIZE models: its own ρ for every pair (a heat table)."""
    import matplotlib

    colormap = matplotlib.colormaps["RdBu_r"]
    per_pair = {
        (a, b): result.family_spearman(a, b) for a in result.intrinsic for b in result.extrinsic if a != b
    }
    sizes = Counter(result.families.values())
    sections = []
    for i, family in enumerate(sorted(f for f, k in sizes.items() if k >= stats.MIN_FAMILY_SIZE)):
        rows = []
        for a in result.intrinsic:
            cells = [Cell(a)]
            for b in result.extrinsic:
                _, rho = per_pair.get((a, b), {}).get(family, (0, float("nan")))
                cells.append(_score(rho, colour=matplotlib.colors.to_hex(colormap((rho + 1) / 2))))
            rows.append(cells)
        members = sorted(name for name, f in result.families.items() if f == family)
        heads = [("intrinsic", ""), *[(b, "ρ") for b in result.extrinsic]]
        table = Table(heads, rows, [False, *([True] * len(result.extrinsic))])
        description = (
            f"Models: {', '.join(members)}. Each cell: this family's own Spearman ρ (×100) over its "
            "models having both scores."
        )
        sections.append(
            Section(f"{family} ({len(members)} models)", description, [table], anchor=f"family-{k}-{i}")
        )
    return sections


# ----------------------------------------------------------------------------- provenance
def _provenance_sections(loaded: LoadedResults, families: dict[str, str], tasks: list[str]) -> list[Section]:
    """Per model: revision, family, embedding size, mteb versions, dates; per task: dataset revisions."""
    rows = []
    for name, model in sorted(loaded.models.items()):
        results = [model.tasks[t] for t in tasks if t in model.tasks]
        dates = sorted(r.date.strftime("%Y-%m-%d") for r in results if r.date is not None)
        versions = sorted({r.mteb_version or "unknown" for r in results})
        rows.append([
            Cell(name), Cell(model.revision or "–"), Cell(families.get(name, name)),
            Cell(str(model.embed_dim) if model.embed_dim else "–", model.embed_dim),
            Cell(str(len(results)), len(results)), Cell(", ".join(versions)),
            Cell(f"{dates[0]} – {dates[-1]}" if len(set(dates)) > 1 else (dates[0] if dates else "–")),
        ])  # fmt: skip
    model_heads = [("model", ""), ("revision", ""), ("family", ""), ("dim", ""), ("tasks", ""),
                   ("mteb", "version"), ("evaluated", "dates")]  # fmt: skip
    task_rows = []
    for task in tasks:
        having = [m.tasks[task] for m in loaded.models.values() if task in m.tasks]
        revisions = sorted({str(r.dataset_revision) for r in having})
        task_rows.append([Cell(task), Cell(", ".join(revisions)), Cell(str(len(having)), len(having))])
    return [
        Section("Models", tables=[Table(model_heads, rows, [False, False, False, True, True, False, False])],
                anchor="provenance-models"),
        Section("Tasks", "The dataset revision(s) each task's results were computed on.",
                [Table([("task", ""), ("dataset revision", ""), ("models", "")], task_rows,
                       [False, False, True])], anchor="provenance-tasks"),
    ]  # fmt: skip


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for package in ("mteb-evalrank", "mteb"):
        try:
            found.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            found.append(f"{package} (not installed)")
    return ", ".join(found)


# ----------------------------------------------------------------------------- output
def render(page: Page) -> str:
    """The page's HTML (jinja2, autoescaped; the figures' markup is inserted as it is)."""
    import jinja2
    import markupsafe

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("mteb_evalrank.html_report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # markup: matplotlib's SVG (it escapes its text) and the panels' <div> (escaped by _panels), as they are
    return environment.get_template("report.html.j2").render(page=page, markup=markupsafe.Markup)
