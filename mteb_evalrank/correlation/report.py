"""``report.md``: the papers' table layout (rows = intrinsic, columns = extrinsic, ρ×100).

The best (highest ρ) intrinsic column for each extrinsic column is in bold (not with a single
row: the gap table); the ``mean`` column is the mean ρ of a row over the extrinsic columns.
Below it: n models and n families per cell (once if the same for all), the grid with CIs, the
comparisons, the figures, a long table with CIs, raw and adjusted p-values, Pearson, Kendall (and
the partial ρ), the columns' definitions and the notes (families, what was left out). The word
"significant" is used only for adjusted p-values (< 0.05).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .results import CorrelationData


def _x100(value: float | None) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{100 * value:.1f}"


def _grid(rows: list[str], columns: list[str], cells: list[list[str]], corner: str) -> list[str]:
    lines = [f"| {corner} | " + " | ".join(columns) + " |", "|---" + "|---:" * len(columns) + "|"]
    lines += [f"| {row} | " + " | ".join(cell) + " |" for row, cell in zip(rows, cells, strict=True)]
    return lines


def rho_table(result: CorrelationData) -> list[str]:
    """The ρ×100 grid with the best per column in bold and the row mean."""
    rho = result.matrix("spearman")
    values = rho.to_numpy(dtype=float)
    best = np.full(values.shape, False)
    for j in range(values.shape[1]):
        column = values[:, j]
        if values.shape[0] > 1 and np.isfinite(column).any():
            best[:, j] = column == np.nanmax(column)
    cells = []
    for i in range(values.shape[0]):
        row = [f"**{_x100(v)}**" if b else _x100(v) for v, b in zip(values[i], best[i], strict=True)]
        finite = values[i][np.isfinite(values[i])]
        row.append(_x100(float(finite.mean())) if len(finite) else "–")
        cells.append(row)
    return _grid(list(rho.index), [*rho.columns, "mean"], cells, "intrinsic \\ extrinsic")


def rho_ci_table(result: CorrelationData) -> list[str]:
    """The same grid with each cell ``ρ [CI low, CI high]`` (×100, rounded)."""
    rho, low, high = (result.matrix(v) for v in ("spearman", "spearman_ci_low", "spearman_ci_high"))

    def cell(v: float, lo: float, hi: float) -> str:
        if not np.isfinite(v):
            return "–"
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return f"{round(100 * v)} [–]"
        return f"{round(100 * v)} [{round(100 * lo)}, {round(100 * hi)}]"

    cells = [
        [cell(*values) for values in zip(rho.loc[i], low.loc[i], high.loc[i], strict=True)] for i in rho.index
    ]
    return _grid(list(rho.index), list(rho.columns), cells, "ρ×100 [95% CI]")


ADJUST_NAMES = {"holm": "Holm", "fdr_bh": "Benjamini-Hochberg"}
ALPHA = 0.05


def _p(value: float) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.4f}"


def _ci_words(result: CorrelationData) -> str:
    units = {p.ci_units for p in result.pairs}
    s = result.settings
    what = (
        "family-cluster bootstrap (families resampled with replacement, all models of a drawn family taken)"
        if "families" in units
        else "percentile bootstrap over models"
    )
    return f"{what}, {s.n_bootstrap} resamples, {100 * s.confidence:.0f}%"


def markdown(result: CorrelationData, figures: dict[str, Path], out: Path) -> str:
    """``report.md``: the ρ table, n per cell, the CIs, row means, comparisons, figures, all pairs,
    the columns and the notes (one function per section)."""
    lines = [
        *_summary_section(result),
        *_row_means_section(result),
        *_comparisons_section(result),
        "",
        *(f"![{name}]({os.path.relpath(path, out)})" for name, path in figures.items()),
        "",
        *_pairs_section(result),
        "",
        "## Columns",
        "",
        *(f"- `{label}`: {text}" for label, text in result.table.describe.items()),
    ]
    if result.notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {note}" for note in result.notes]
    return "\n".join(lines) + "\n"


def _summary_section(result: CorrelationData) -> list[str]:
    """Title, the ρ table, models (and families) per cell and the table with CIs."""
    s = result.settings
    frame = result.to_frame()
    lines = [
        "# Evaluation gap" if s.gap else "# Intrinsic vs extrinsic rank correlation",
        "",
        f"Spearman's ρ×100 across models (results: {', '.join(s.results)}; split `{s.split}`). "
        f"Best intrinsic column per extrinsic column in bold; `mean` = mean ρ of the row.",
        "",
        *rho_table(result),
        "",
    ]
    ns = frame["n"].unique()
    gs = frame["n_families"].unique()
    if len(ns) == 1 and len(gs) == 1:
        lines.append(f"n = {int(ns[0])} models from {int(gs[0])} families in every cell.")
    else:
        grid = result.matrix("n")
        lines += [
            "Models per cell (n):",
            "",
            *_grid(
                list(grid.index),
                list(grid.columns),
                [[str(int(v)) if np.isfinite(v) else "–" for v in row] for row in grid.to_numpy(dtype=float)],
                "n",
            ),
        ]
        if len(gs) > 1:
            lines.append(f"Families per cell: {int(gs.min())}–{int(gs.max())}.")
    return [*lines, "", f"With confidence intervals ({_ci_words(result)}):", "", *rho_ci_table(result)]


def _row_means_section(result: CorrelationData) -> list[str]:
    """Mean ρ of each row over the extrinsic columns, with its CI (none in the gap layout)."""
    if not result.row_means:
        return []
    lines = [
        "",
        "Mean ρ×100 of each row over the extrinsic columns, on the models having the row and every "
        f"extrinsic column, with its CI ({_ci_words(result)}):",
        "",
        "| intrinsic | n | families | mean ρ×100 | CI |",
        "|---|---:|---:|---:|---|",
    ]
    return lines + [
        f"| {r.intrinsic} | {r.n} | {r.n_families} | {_x100(r.mean)} | "
        f"[{_x100(r.ci_low)}, {_x100(r.ci_high)}] |"
        for r in result.row_means
    ]


def _comparisons_section(result: CorrelationData) -> list[str]:
    """``## Comparisons``: Δ mean ρ of two rows, its CI and swap-test p (when requested)."""
    if not result.comparisons:
        return []
    adjust = ADJUST_NAMES.get(result.settings.p_adjust, result.settings.p_adjust)
    lines = [
        "",
        "## Comparisons",
        "",
        "Mean ρ×100 over the extrinsic columns of two intrinsic rows, on the models having both rows "
        f"and every extrinsic column; CI of Δ by the same bootstrap ({_ci_words(result)}). "
        "p: two-sided paired swap test: under the null that the rows are exchangeable, their ranks are "
        "swapped within each unit (a whole family when the units are families, else a model) and Δ "
        "recomputed; exact over all 2^U swap patterns when there are few units (then the smallest "
        f"attainable p is 2/2^U, column p min). p adj.: {adjust} over the comparisons.",
        "",
        "| a | b | n | families | units | mean ρ a | mean ρ b | Δ (a − b) | CI | p (swap test) | p min | "
        "p adj. |",
        "|---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    return lines + [
        f"| {c.a} | {c.b} | {c.n} | {c.n_families} | {c.n_units} {c.units} | {_x100(c.mean_a)} | "
        f"{_x100(c.mean_b)} | {_x100(c.difference)} | [{_x100(c.ci_low)}, {_x100(c.ci_high)}] | "
        f"{_p(c.p_swap)} | {c.p_min:.3g} | {_p(c.p_swap_adj)} |"
        for c in result.comparisons
    ]


def _pairs_section(result: CorrelationData) -> list[str]:
    """``## All pairs``: every pair with CI, raw and adjusted p, Pearson, Kendall (and partial ρ)."""
    s = result.settings
    frame = result.to_frame()
    adjust = ADJUST_NAMES.get(s.p_adjust, s.p_adjust)
    partial = s.control_dim
    header = "| intrinsic | extrinsic | n | families | ρ×100 | 95% CI | p (perm.) | p adj. | r×100 | τ×100 |"
    rule = "|---|---|---:|---:|---:|---|---:|---:|---:|---:|"
    if partial:
        header += " partial ρ×100 (dim) | n (dim) |"
        rule += "---:|---:|"
    lines = [
        "## All pairs",
        "",
        f"CI: {_ci_words(result)}. p: two-sided permutation test ({s.n_permutations} permutations"
        + (
            "), the extrinsic scores permuted within each family of two or more models (single models "
            "pooled): it asks whether the intrinsic score orders the models beyond their family. "
            if any(p.ci_units == "families" for p in result.pairs)
            else ", models as units). "
        )
        + f"p adj.: {adjust} over the {len(result.pairs)} pairs; seed {s.seed}. "
        f"Significant ({adjust}-adjusted p < {ALPHA}): "
        f"{int((frame['spearman_p_adj'] < ALPHA).sum())} of {len(result.pairs)} pairs.",
        "",
        header,
        rule,
    ]
    for p in result.pairs:
        line = (
            f"| {p.intrinsic} | {p.extrinsic} | {p.n} | {p.n_families} | {_x100(p.spearman)} | "
            f"[{_x100(p.spearman_ci_low)}, {_x100(p.spearman_ci_high)}] | {_p(p.spearman_p)} | "
            f"{_p(p.spearman_p_adj)} | {_x100(p.pearson)} | {_x100(p.kendall)} |"
        )
        if partial:
            line += f" {_x100(p.partial_spearman_dim)} | {p.n_partial} |"
        lines.append(line)
    return lines
