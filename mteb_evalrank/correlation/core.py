"""``correlate``: rank correlation, across models, of intrinsic vs extrinsic score columns.

For every (intrinsic, extrinsic) pair the models having both scores are used (the others are
counted in ``n_missing``); ``n`` is stated for every cell. Statistics: see
:mod:`mteb_evalrank.correlation.stats`. Eger et al.'s pitfalls: ``control_dim`` adds the partial
Spearman ρ controlling for the embedding dimension (models without a known dimension are left
out of that number and listed), ``dim_band=(lo, hi)`` keeps only models with ``lo <= dim <= hi``.
``gap=True`` marks the evaluation-gap layout of Abe et al. (one reference column against many
subset columns): same numbers, a one-row table and a line plot instead of the heatmap.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import stats
from .table import (
    ColumnSpec,
    CorrelationInputError,
    LoadedResults,
    ScoreTable,
    build_table,
    expand_columns,
    load_results,
)

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class PairResult:
    """The statistics of one (intrinsic, extrinsic) pair; ``spearman_p`` is the permutation p-value."""

    intrinsic: str
    extrinsic: str
    n: int
    n_missing: int
    spearman: float
    spearman_ci_low: float
    spearman_ci_high: float
    spearman_p: float
    pearson: float
    kendall: float
    partial_spearman_dim: float | None = None
    n_partial: int | None = None


@dataclass(frozen=True)
class Settings:
    """How the numbers were computed (written with every output)."""

    results: list[str]
    split: str
    n_bootstrap: int
    n_permutations: int
    confidence: float
    seed: int
    complete: bool
    control_dim: bool
    dim_band: tuple[int, int] | None
    gap: bool


@dataclass(frozen=True)
class Comparison:
    """Does intrinsic row ``a`` predict the extrinsic columns better than row ``b``?

    ``difference`` = mean ρ(a) − mean ρ(b) over the extrinsic columns, on the ``n`` models
    that have both rows and every extrinsic column (paired bootstrap CI and one-sided p:
    :func:`mteb_evalrank.correlation.stats.mean_spearman_difference`).
    """

    a: str
    b: str
    n: int
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_not_better: float


@dataclass
class CorrelationResult:
    """Pairs, the score table they came from, the settings and notes on what was left out."""

    pairs: list[PairResult]
    intrinsic: list[str]
    extrinsic: list[str]
    table: ScoreTable
    settings: Settings
    notes: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """One row per pair (columns as in ``correlations.csv``)."""
        import pandas as pd

        return pd.DataFrame([asdict(p) for p in self.pairs])

    def matrix(self, value: str = "spearman") -> pd.DataFrame:
        """Intrinsic x extrinsic matrix of one statistic."""
        frame = self.to_frame().pivot(index="intrinsic", columns="extrinsic", values=value)
        return frame.reindex(index=self.intrinsic, columns=self.extrinsic)

    def pair(self, intrinsic: str, extrinsic: str) -> PairResult:
        for p in self.pairs:
            if p.intrinsic == intrinsic and p.extrinsic == extrinsic:
                return p
        raise KeyError((intrinsic, extrinsic))

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": asdict(self.settings),
            "columns": self.table.describe,
            "models": {
                name: {"revision": m.revision, "embed_dim": m.embed_dim, "embed_dim_source": m.dim_source}
                for name, m in self.table.loaded.models.items()
                if name in self.table.frame.index
            },
            "notes": self.notes,
            "pairs": [_json_safe(asdict(p)) for p in self.pairs],
            "comparisons": [_json_safe(asdict(c)) for c in self.comparisons],
        }

    def write(self, out_dir: str | Path, scatter: Iterable[tuple[str, str]] = ()) -> dict[str, Path]:
        """Write ``correlations.csv/.json``, ``report.md``, ``scores.csv`` and the figures."""
        from . import figures, report

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = {
            "csv": out / "correlations.csv",
            "json": out / "correlations.json",
            "scores": out / "scores.csv",
            "report": out / "report.md",
        }
        self.to_frame().to_csv(written["csv"], index=False)
        written["json"].write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        self.table.frame.to_csv(written["scores"])
        figure_paths = figures.write_figures(self, out, scatter=list(scatter))
        written.update(figure_paths)
        written["report"].write_text(report.markdown(self, figure_paths, out), encoding="utf-8")
        return written


def _json_safe(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}


def _pair(
    table: pd.DataFrame, intrinsic: str, extrinsic: str, dims: pd.Series | None, settings: Settings
) -> PairResult:
    both = table[[intrinsic, extrinsic]].dropna()
    n = len(both)
    if n < stats.MIN_MODELS:
        raise CorrelationInputError(
            f"{intrinsic} vs {extrinsic}: only {n} models have both scores "
            f"({int(table[intrinsic].notna().sum())} have {intrinsic}, "
            f"{int(table[extrinsic].notna().sum())} have {extrinsic}); "
            f"a correlation needs at least {stats.MIN_MODELS}: add result folders or loosen the filters"
        )
    x = both[intrinsic].to_numpy()
    y = both[extrinsic].to_numpy()
    ci = stats.bootstrap_spearman_ci(
        x, y, n_resamples=settings.n_bootstrap, confidence=settings.confidence, seed=settings.seed
    )
    partial = n_partial = None
    if dims is not None:
        known = dims.reindex(both.index).dropna()
        n_partial = len(known)
        partial = (
            stats.partial_spearman(
                both.loc[known.index, intrinsic].to_numpy(),
                both.loc[known.index, extrinsic].to_numpy(),
                known.to_numpy(dtype=float),
            )
            if n_partial >= stats.MIN_MODELS
            else float("nan")
        )
    return PairResult(
        intrinsic=intrinsic,
        extrinsic=extrinsic,
        n=n,
        n_missing=len(table) - n,
        spearman=stats.spearman(x, y),
        spearman_ci_low=ci.low,
        spearman_ci_high=ci.high,
        spearman_p=stats.permutation_p_spearman(
            x, y, n_permutations=settings.n_permutations, seed=settings.seed
        ),
        pearson=stats.pearson(x, y),
        kendall=stats.kendall(x, y),
        partial_spearman_dim=partial,
        n_partial=n_partial,
    )


def correlate(
    results: Sequence[str | Path] | LoadedResults,
    intrinsic: Sequence[str | ColumnSpec],
    extrinsic: Sequence[str | ColumnSpec],
    *,
    split: str = "test",
    models: Iterable[str] | None = None,
    model_regex: str | None = None,
    revisions: Mapping[str, str] | None = None,
    revision_policy: str = "newest",
    complete: bool = False,
    control_dim: bool = False,
    dim_band: tuple[int, int] | None = None,
    n_bootstrap: int = 2000,
    n_permutations: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
    gap: bool = False,
    compare: Sequence[tuple[str, str]] = (),
) -> CorrelationResult:
    """Correlate every intrinsic column with every extrinsic column across the models.

    ``complete=True`` keeps only the models that have every column (one n for the whole
    table); otherwise models are dropped per pair. Column syntax and revision choice: see
    :mod:`mteb_evalrank.correlation.table`.
    ``compare=[(a, b), ...]``: for each pair of intrinsic columns, the difference of their mean
    ρ over the extrinsic columns with a paired bootstrap (:class:`Comparison`).
    """
    if not intrinsic or not extrinsic:
        raise CorrelationInputError("give at least one intrinsic and one extrinsic column")
    if gap and len(intrinsic) != 1:
        raise CorrelationInputError("the evaluation-gap mode takes exactly one reference (intrinsic) column")
    loaded = (
        results
        if isinstance(results, LoadedResults)
        else load_results(
            results,
            models=models,
            model_regex=model_regex,
            revisions=revisions,
            revision_policy=revision_policy,
        )
    )
    settings = Settings(
        results=loaded.folders,
        split=split,
        n_bootstrap=n_bootstrap,
        n_permutations=n_permutations,
        confidence=confidence,
        seed=seed,
        complete=complete,
        control_dim=control_dim,
        dim_band=tuple(dim_band) if dim_band else None,  # type: ignore[arg-type]
        gap=gap,
    )
    rows = expand_columns(loaded, intrinsic, split)
    cols = expand_columns(loaded, extrinsic, split)
    table = build_table(loaded, [*rows, *{c.label: c for c in cols if c not in rows}.values()], split)
    notes: list[str] = []
    frame = table.frame
    labels_in = [c.label for c in rows]
    labels_ex = [c.label for c in cols]
    dims = {name: m.embed_dim for name, m in loaded.models.items()}
    if dim_band is not None:
        lo, hi = dim_band
        keep = [name for name in frame.index if dims[name] is not None and lo <= dims[name] <= hi]  # type: ignore[operator]
        notes.append(f"size-matched view: {len(keep)} of {len(frame)} models with {lo} <= embed_dim <= {hi}")
        frame = frame.loc[keep]
    if complete:
        full = frame.dropna()
        notes.append(
            f"complete table: {len(full)} of {len(frame)} models have every column; the others are left out"
        )
        frame = full
    else:
        frame = frame[frame.notna().any(axis=1)]
    no_dim = sorted(name for name in frame.index if dims[name] is None)
    if dim_band is not None:
        scored = table.frame[table.frame.notna().any(axis=1)]  # before the band removed them
        no_dim = sorted(name for name in scored.index if dims[name] is None)
    if (control_dim or dim_band is not None) and no_dim:
        notes.append(
            f"models without a known embedding dimension (left out of the dimension views): {no_dim}"
        )
    table = ScoreTable(frame, table.describe, loaded)
    import pandas as pd

    dim_series = (
        pd.Series({n: float(d) for n, d in dims.items() if d is not None and n in frame.index}, dtype=float)
        if control_dim
        else None
    )
    pairs = [_pair(frame, a, b, dim_series, settings) for a in labels_in for b in labels_ex if a != b]
    if not pairs:
        raise CorrelationInputError("no (intrinsic, extrinsic) pair of distinct columns")
    undefined = [f"{p.intrinsic} vs {p.extrinsic}" for p in pairs if not np.isfinite(p.spearman)]
    if undefined:
        notes.append(f"ρ undefined (a column is constant over the models): {', '.join(undefined)}")
    comparisons = [_compare(frame, a, b, labels_ex, labels_in, settings) for a, b in compare]
    return CorrelationResult(
        pairs, labels_in, labels_ex, table, settings, [*notes, *loaded.notes], comparisons
    )


def _compare(
    frame: pd.DataFrame, a: str, b: str, extrinsic: list[str], intrinsic: list[str], settings: Settings
) -> Comparison:
    for label in (a, b):
        if label not in intrinsic:
            raise CorrelationInputError(
                f"--compare {a} {b}: {label!r} is not an intrinsic column {intrinsic}"
            )
    columns = [c for c in extrinsic if c not in (a, b)]
    both = frame[[a, b, *columns]].dropna()
    try:
        d = stats.mean_spearman_difference(
            both[a].to_numpy(),
            both[b].to_numpy(),
            both[columns].to_numpy(),
            n_resamples=settings.n_bootstrap,
            confidence=settings.confidence,
            seed=settings.seed,
        )
    except stats.TooFewModelsError as error:
        raise CorrelationInputError(
            f"--compare {a} {b}: {error} with both rows and every extrinsic column"
        ) from None
    return Comparison(a, b, d.n, d.mean_a, d.mean_b, d.difference, d.low, d.high, d.p_not_better)
