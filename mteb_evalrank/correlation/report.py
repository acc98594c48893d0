"""``report.md``: the papers' table layout (rows = intrinsic, columns = extrinsic, ρ×100).

The best (highest ρ) intrinsic column for each extrinsic column is in bold (not with a single
row: the gap table); the ``mean`` column is the mean ρ of a row over the extrinsic columns.
Below it: n per cell (once if the same for all), the grid with CIs, the figures, a long table
with CIs, p-values, Pearson, Kendall (and the partial ρ), the columns' definitions and the
notes on what was left out.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .core import CorrelationResult


def _x100(value: float | None) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{100 * value:.1f}"


def _grid(rows: list[str], columns: list[str], cells: list[list[str]], corner: str) -> list[str]:
    lines = [f"| {corner} | " + " | ".join(columns) + " |", "|---" + "|---:" * len(columns) + "|"]
    lines += [f"| {row} | " + " | ".join(cell) + " |" for row, cell in zip(rows, cells, strict=True)]
    return lines


def rho_table(result: CorrelationResult) -> list[str]:
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


def rho_ci_table(result: CorrelationResult) -> list[str]:
    """The same grid with each cell ``ρ [CI low, CI high]`` (×100, rounded)."""
    rho, low, high = (result.matrix(v) for v in ("spearman", "spearman_ci_low", "spearman_ci_high"))

    def cell(v: float, lo: float, hi: float) -> str:
        return "–" if not np.isfinite(v) else f"{round(100 * v)} [{round(100 * lo)}, {round(100 * hi)}]"

    cells = [
        [cell(*values) for values in zip(rho.loc[i], low.loc[i], high.loc[i], strict=True)] for i in rho.index
    ]
    return _grid(list(rho.index), list(rho.columns), cells, "ρ×100 [95% CI]")


def markdown(result: CorrelationResult, figures: dict[str, Path], out: Path) -> str:
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
    if len(ns) == 1:
        lines.append(f"n = {int(ns[0])} models in every cell.")
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
    lines += ["", "With bootstrap confidence intervals:", "", *rho_ci_table(result)]
    if result.comparisons:
        lines += [
            "",
            "## Comparisons",
            "",
            "Mean ρ×100 over the extrinsic columns of two intrinsic rows, on the models having both rows "
            "and every extrinsic column; Δ with a paired bootstrap over models "
            f"({s.n_bootstrap} resamples, {100 * s.confidence:.0f}% CI); p = share of resamples with Δ ≤ 0.",
            "",
            "| a | b | n | mean ρ a | mean ρ b | Δ (a − b) | CI | p (a not better) |",
            "|---|---|---:|---:|---:|---:|---|---:|",
        ]
        lines += [
            f"| {c.a} | {c.b} | {c.n} | {_x100(c.mean_a)} | {_x100(c.mean_b)} | {_x100(c.difference)} | "
            f"[{_x100(c.ci_low)}, {_x100(c.ci_high)}] | {c.p_not_better:.4f} |"
            for c in result.comparisons
        ]
    lines += ["", *(f"![{name}]({os.path.relpath(path, out)})" for name, path in figures.items()), ""]
    partial = s.control_dim
    header = "| intrinsic | extrinsic | n | ρ×100 | 95% CI | p (perm.) | r×100 | τ×100 |"
    rule = "|---|---|---:|---:|---|---:|---:|---:|"
    if partial:
        header += " partial ρ×100 (dim) | n (dim) |"
        rule += "---:|---:|"
    lines += [
        "## All pairs",
        "",
        f"CI: percentile bootstrap over models ({s.n_bootstrap} resamples, {100 * s.confidence:.0f}%); "
        f"p: two-sided permutation test ({s.n_permutations} permutations); seed {s.seed}.",
        "",
        header,
        rule,
    ]
    for p in result.pairs:
        line = (
            f"| {p.intrinsic} | {p.extrinsic} | {p.n} | {_x100(p.spearman)} | "
            f"[{_x100(p.spearman_ci_low)}, {_x100(p.spearman_ci_high)}] | {p.spearman_p:.4f} | "
            f"{_x100(p.pearson)} | {_x100(p.kendall)} |"
        )
        if partial:
            line += f" {_x100(p.partial_spearman_dim)} | {p.n_partial} |"
        lines.append(line)
    lines += ["", "## Columns", ""]
    lines += [f"- `{label}`: {text}" for label, text in result.table.describe.items()]
    if result.notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {note}" for note in result.notes]
    return "\n".join(lines) + "\n"
