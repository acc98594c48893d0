"""``mteb-evalrank report``: one self-contained HTML page of an mteb results folder.

The page (``<out>/index.html``) needs nothing but itself: the heatmap is inline SVG (matplotlib), the
scatter panels are drawn by an inline script from their data when opened (``templates/panels.js``),
styles and the few lines of script that sort the tables are inline (``templates/report.html.j2``).
Every number comes from the correlation module (:mod:`.correlation`): the score tables from its
``table.py`` (a task's main score, averaged over its hf_subsets, split ``test``), the
correlations, their CIs and the families' own ρ from ``correlate`` and :mod:`.correlation.stats`.
The sections (scores, coverage, correlation, families, provenance, notes) and when each is shown:
``docs/report.md``.
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

import numpy as np

from .._files import replacing
from ..correlation import CorrelationInputError, correlate, load_results, stats
from ..correlation import figures as correlation_figures
from ..correlation.core import resolve_families
from ..correlation.table import (
    ColumnSpec,
    LoadedResults,
    build_table,
    column_scores,
    default_downstream,
    expand_columns,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..correlation import CorrelationResult

SPLIT = "test"
OTHER_TASKS = "Other tasks"


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, the number it sorts by (``None``: missing) and whether it is the
    best of its column; ``colour``: a background (the family heat tables), with white text where
    it is dark (|ρ| > 0.6)."""

    text: str
    value: float | None = None
    best: bool = False
    colour: str | None = None


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


@dataclass
class Page:
    """Everything the template shows."""

    title: str
    source: str
    models: list[str]
    tasks: list[str]
    scores: list[Section]
    coverage: Section | None
    correlation: list[Section]
    families: list[Section]
    provenance: list[Section]
    notes: list[str]
    written_by: str
    colours: dict[str, str] = field(default_factory=dict)
    """family -> colour of the scatter plots"""
    seconds: float = 0.0


@dataclass(frozen=True)
class Options:
    """What the page is asked for: ``--benchmark``, ``--models``, ``--families`` (a model -> family
    mapping, :func:`..correlation.core.read_families`; default the zoo's families) and the settings of
    ``correlate`` (its defaults)."""

    benchmark: str | None = None
    models: Sequence[str] | None = None
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
    # one BLAS thread: the bootstrap multiplies small matrices (resamples × models × models), where a
    # second thread costs more than it gives (the study's page: 20 s of CPU in correlate, 10 s so)
    with threadpool_limits(1):
        page = build_page(Path(results), options or Options())
    page.seconds = time.perf_counter() - start
    with replacing(target) as staged:
        staged.write_text(render(page), encoding="utf-8")
    return target


def build_page(results: Path, options: Options) -> Page:
    """The page's content: load the results, then each section (module docstring)."""
    loaded = load_results([_cache_folder(results)], models=options.models)
    notes = list(loaded.notes)
    tasks = _usable_tasks(loaded, _benchmark_tasks(options.benchmark, loaded), notes)
    if not tasks:
        raise CorrelationInputError(f"{results}: no task has results in split {SPLIT!r}")
    frame = build_table(loaded, [ColumnSpec(t) for t in tasks], SPLIT).frame
    families, _ = resolve_families(loaded.models, options.families)
    result = _correlation(loaded, tasks, notes, options)
    return Page(
        title=f"mteb-evalrank report: {results}",
        source=str(results),
        models=list(frame.index),
        tasks=tasks,
        scores=_score_sections(frame, families, _sections(options.benchmark, tasks)),
        coverage=_coverage_section(loaded, families, tasks),
        correlation=_correlation_sections(result) if result is not None else [],
        families=_family_sections(result) if result is not None else [],
        provenance=_provenance_sections(loaded, families, tasks),
        notes=notes,
        written_by=_versions(),
        colours=correlation_figures.family_colours(result) if result is not None else {},
    )


# ----------------------------------------------------------------------------- tasks and sections
def _cache_folder(path: Path) -> Path:
    """The folder in mteb's ``ResultCache`` layout: ``path``, or its parent when ``path`` is the
    ``results/`` folder itself (``docs/study/run/results``)."""
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
    """The model column, one column per column of ``frame`` (×100, the best of each column with two
    scores or more marked), then the model's family where one is known (not the model alone): last,
    so that on a narrow screen the first score sits beside the name."""
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


# ----------------------------------------------------------------------------- correlation
def _correlation(
    loaded: LoadedResults, tasks: list[str], notes: list[str], options: Options
) -> CorrelationResult | None:
    """Every intrinsic column against every downstream task, or ``None`` (why: in ``notes``)."""
    import mteb

    if len(loaded.models) < stats.MIN_MODELS:
        notes.append(
            f"no correlations: they need at least {stats.MIN_MODELS} models; here {len(loaded.models)}"
        )
        return None
    known = []
    for task in tasks:
        try:
            mteb.get_task(task)
        except KeyError:
            notes.append(f"not correlated: {task} is a task mteb does not know (intrinsic or downstream?)")
            continue
        known.append(task)
    downstream_tasks = default_downstream(known)
    intrinsic = _enough(loaded, _rows(loaded, [t for t in known if t not in downstream_tasks]), notes)
    downstream = _enough(loaded, [ColumnSpec(t) for t in downstream_tasks], notes)
    if not downstream or not intrinsic:
        notes.append(
            "no correlations: they need an intrinsic task and a downstream task (mteb type "
            f"Classification) that {stats.MIN_MODELS} models or more have; here {len(intrinsic)} "
            f"intrinsic and {len(downstream)} downstream column(s)"
        )
        return None
    try:
        return correlate(
            loaded, intrinsic, downstream, split=SPLIT, families=options.families,
            n_bootstrap=options.n_bootstrap, n_permutations=options.n_permutations, seed=options.seed,
        )  # fmt: skip
    except CorrelationInputError as error:
        notes.append(f"no correlations: {error}")
        return None


def _rows(loaded: LoadedResults, tasks: list[str]) -> list[ColumnSpec]:
    """The intrinsic rows: one per subset present of a task with several (different evaluations,
    never averaged, as in a study), else the task's main score."""
    rows: list[ColumnSpec] = []
    for task in tasks:
        subsets = expand_columns(loaded, [ColumnSpec(task, "*")], SPLIT)
        rows += subsets if len(subsets) > 1 else [ColumnSpec(task)]
    return rows


def _enough(loaded: LoadedResults, columns: list[ColumnSpec], notes: list[str]) -> list[str]:
    """The labels of the columns that at least MIN_MODELS models have; the others noted."""
    kept = []
    for column in columns:
        scores, _ = column_scores(loaded, column, SPLIT)
        if len(scores) >= stats.MIN_MODELS:
            kept.append(column.label)
        else:
            notes.append(f"not correlated: {column.label} has the scores of {len(scores)} model(s)")
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


def _correlation_sections(result: CorrelationResult) -> list[Section]:
    """The heatmap with the row means, then the scatters of each intrinsic column."""
    n = sorted({p.n for p in result.pairs})
    means = [
        [
            Cell(r.intrinsic),
            Cell(_number(r.mean), r.mean),
            Cell(_ci(r.ci_low, r.ci_high)),
            Cell(str(r.n), r.n),
            Cell(str(r.n_families), r.n_families),
        ]
        for r in result.row_means
    ]
    heads = [("intrinsic", ""), ("mean ρ", "×100"), ("CI", f"{result.settings.confidence:.0%}"),
             ("models", ""), ("families", "")]  # fmt: skip
    heatmap = _svg(partial(correlation_figures.heatmap, result), "heatmap")
    overview = Section(
        "Which intrinsic task predicts the downstream tasks?",
        f"Spearman ρ across models between each intrinsic score and each downstream score "
        f"(n = {n[0]}{f'–{n[-1]}' if len(n) > 1 else ''} models per pair), and each intrinsic task's mean ρ "
        "over the downstream tasks with its family-cluster bootstrap CI.",
        [Table(heads, means, [False, True, False, True, True])],
        [("Spearman ρ (×100) of every intrinsic × downstream pair", heatmap)],
        anchor="correlation",
    )
    scatters = [_pairs_section(result)]
    for i, intrinsic in enumerate(result.intrinsic):
        panels = _panels(correlation_figures.scatter_panels(result, intrinsic))
        caption = (
            f"{intrinsic} (across) against each downstream task (up), scores ×100: one point per model, "
            "coloured by family (hover a point for its model)"
        )
        scatters.append(Section(intrinsic, figures=[(caption, panels)], anchor=f"scatter-{i}"))
    return [overview, *scatters]


def _ci(low: float, high: float) -> str:
    return f"[{_number(low)}, {_number(high)}]" if np.isfinite(low) else "–"


def _pairs_section(result: CorrelationResult) -> Section:
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
        anchor="pairs",
    )  # fmt: skip


def _family_sections(result: CorrelationResult) -> list[Section]:
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
            Section(f"{family} ({len(members)} models)", description, [table], anchor=f"family-{i}")
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
    # markup: matplotlib's own SVG output (it escapes the text it writes) and the panels' <div> (its
    # data escaped by _panels), inserted as they are
    return environment.get_template("report.html.j2").render(page=page, markup=markupsafe.Markup)
