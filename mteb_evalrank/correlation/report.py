"""``report.md``: the papers' table layout (rows intrinsic, columns extrinsic, ρ×100) (docs/correlation.md).

Bold: the best row per column (not with one row). "Significant" only by adjusted p (< 0.05).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .results import listed_sizes
from .table import column_protocols

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .results import Comparison, CorrelationData


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
    best = (values == np.fmax.reduce(values, axis=0)) & (len(values) > 1)  # fmax: NaN only if all are
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
    if s.within_families:
        what += ", the pooled within-family ρ recomputed on each resample"
    return f"{what}, {s.n_bootstrap} resamples, {100 * s.confidence:.0f}%"


def markdown(
    result: CorrelationData, figures: dict[str, Path], out: Path, family_plot: Sequence[tuple[str, str]] = ()
) -> str:
    """``report.md``: one function per section, in the order of the page."""
    lines = [
        *_summary_section(result),
        *_row_means_section(result),
        *_controls_section(result),
        *_comparisons_section(result),
        "",
        *(f"![{name}]({os.path.relpath(path, out)})" for name, path in figures.items()),
        "",
        *_per_family_section(result, family_plot),
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
    title = "# Evaluation gap" if s.gap else "# Intrinsic vs extrinsic rank correlation"
    statistic = "Spearman's ρ×100 across models"
    if s.within_families:
        title += " within families"
        statistic = (
            "Pooled within-family Spearman's ρ×100 (each model's scores ranked within its family, "
            "families of at least 3 models; the ranks centred by the family's mean rank and pooled "
            "over the families: family effects removed)"
        )
    lines = [
        title,
        "",
        f"{statistic} (results: {', '.join(s.results)}; split `{s.split}`). "
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
        cells = [[str(int(v)) if np.isfinite(v) else "–" for v in row] for row in grid.to_numpy(dtype=float)]
        lines += ["Models per cell (n):", "", *_grid(list(grid.index), list(grid.columns), cells, "n")]
        if len(gs) > 1:
            lines.append(f"Families per cell: {int(gs.min())}–{int(gs.max())}.")
    if s.within_families:
        lines.append(_families_pooled(result))
    return [*lines, "", f"With confidence intervals ({_ci_words(result)}):", "", *rho_ci_table(result)]


def _families_pooled(result: CorrelationData) -> str:
    """The families pooled (with the models having both scores), once if the same in every cell."""
    kinds = {
        (tuple(sorted(p["used"].items())), tuple(sorted(p["excluded"].items())))
        for p in result.within_families
    }
    if len(kinds) != 1:
        return (
            "The families pooled differ between cells: see the notes and correlations.json (within_families)."
        )
    used, excluded = result.within_families[0]["used"], result.within_families[0]["excluded"]
    return f"Families pooled (models): {listed_sizes(used)}." + (
        f" Left out (fewer than 3 models): {listed_sizes(excluded)}." if excluded else ""
    )


def _per_family_section(result: CorrelationData, pairs: Sequence[tuple[str, str]]) -> list[str]:
    """``## Per-family Spearman ρ``: families as rows, one column per family-plot pair (none without)."""
    if not pairs:
        return []
    per_pair = [result.family_spearman(a, b) for a, b in pairs]
    families = {family for per_family in per_pair for family in per_family}
    largest = {f: max(per_family.get(f, (0, 0.0))[0] for per_family in per_pair) for f in families}
    rows = sorted(largest, key=lambda f: (-largest[f], f))

    def cell(per_family: dict[str, tuple[int, float]], family: str) -> str:
        k, rho = per_family.get(family, (0, float("nan")))
        return f"{_x100(rho)} ({k})" if k else "–"

    return [
        "## Per-family Spearman ρ",
        "",
        "Each family's own Spearman ρ×100 over its models having both scores (models in brackets; "
        "– for a family of fewer than 3 models or with a constant side), as in the family plots. "
        "The pooled within-family ρ_W is a weighted average of these (weights ∝ n_g(n_g² − 1) "
        "without ties); the ρ across models also reflects the differences between the families.",
        "",
        *_grid(
            rows,
            [f"{a} vs {b}" for a, b in pairs],
            [[cell(pf, f) for pf in per_pair] for f in rows],
            "family",
        ),
        "",
    ]


def _row_means_section(result: CorrelationData) -> list[str]:
    """Mean ρ of each row over the extrinsic columns with its CI (``control_dim``: mean partial ρ)."""
    if not result.row_means:
        return []
    partial = result.settings.control_dim and not result.settings.within_families
    lines = [
        "",
        f"Mean ρ×100 of each row over the extrinsic columns{_protocol_words(result)}, on the models having "
        f"the row and every extrinsic column, with its CI ({_ci_words(result)})"
        + (
            "; mean partial ρ×100 given the embedding dimension (per column "
            "(ρ_xy − ρ_xd ρ_yd) / sqrt((1 − ρ_xd²)(1 − ρ_yd²)) on the ranks, d the dimension; "
            "models of known dimension), with its CI by the same bootstrap:"
            if partial
            else ":"
        ),
        "",
        "| intrinsic | n | families | mean ρ×100 | CI |" + (" mean partial ρ×100 (dim) | CI |" * partial),
        "|---|---:|---:|---:|---|" + ("---:|---|" * partial),
    ]
    return lines + [
        f"| {r.intrinsic} | {r.n} | {r.n_families} | {_x100(r.mean)} | {_ci(r.ci_low, r.ci_high)} |"
        + (f" {_x100(r.partial_mean)} | {_ci(r.partial_ci_low, r.partial_ci_high)} |" * partial)
        for r in result.row_means
    ]


def _protocol_words(result: CorrelationData) -> str:
    """Which downstream protocol(s) the extrinsic columns belong to (``table.PROTOCOLS``)."""
    protocols = list(column_protocols(result.extrinsic))
    if len(protocols) == 1:
        return f" (the {protocols[0]} protocol's tasks)"
    return f" (mixing the protocols {', '.join(protocols)}: see the notes)" if protocols else ""


def _ci(low: float, high: float) -> str:
    return f"[{_x100(low)}, {_x100(high)}]"


def _controls_section(result: CorrelationData) -> list[str]:
    """``## Controls``: which intrinsic rows beat the baseline rows (``settings.controls``)."""
    controls = list(result.settings.controls)
    if not controls:
        return []
    adjust = ADJUST_NAMES.get(result.settings.p_adjust, result.settings.p_adjust)
    by_row: dict[str, dict[str, Comparison]] = {}
    for comparison in result.control_comparisons:
        by_row.setdefault(comparison.a, {})[comparison.b] = comparison
    means = {r.intrinsic: r for r in result.row_means}
    lines = [
        "",
        "## Controls",
        "",
        f"Baseline rows: {', '.join(f'`{c}`' for c in controls)}. Each other row against each control: "
        "Δ = its mean ρ×100 minus the control's, over the extrinsic columns, on the models having both "
        f"rows and every extrinsic column; CI by the same bootstrap ({_ci_words(result)}); p: the paired "
        f"swap test (as under Comparisons), {adjust}-adjusted over the {len(result.control_comparisons)} "
        "comparisons. A row **beats** a control when the CI of Δ lies above 0; `beats all` = it beats "
        "every control.",
        "",
        "| intrinsic | mean ρ×100 [CI] | "
        + " | ".join(f"Δ vs {c} [CI], p adj." for c in controls)
        + " | beats all |",
        "|---|---|" + "---|" * len(controls) + "---|",
    ]
    for row, against in by_row.items():
        mean = means.get(row)
        cells = [f"{_x100(mean.mean)} {_ci(mean.ci_low, mean.ci_high)}" if mean else "–"]
        against_controls = [against.get(control) for control in controls]
        wins = [c is not None and c.ci_low > 0 for c in against_controls]  # NaN > 0 is False
        for c, win in zip(against_controls, wins, strict=True):
            cell = (
                "–" if c is None else f"{_x100(c.difference)} {_ci(c.ci_low, c.ci_high)}, {_p(c.p_swap_adj)}"
            )
            cells.append(f"**{cell}**" if win else cell)
        lines.append(f"| {row} | " + " | ".join([*cells, "yes" if all(wins) else "no"]) + " |")
    return lines


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
        f"attainable p is 2/2^U, column p min). p adj.: {adjust} over the comparisons."
        + (
            " Within-family view: ρ is the pooled within-family ρ, and a swap exchanges a family's "
            "within-family ranks of the two rows."
            if result.settings.within_families
            else ""
        ),
        "",
        "| a | b | n | families | units | mean ρ a | mean ρ b | Δ (a − b) | CI | p (swap test) | p min | "
        "p adj. |",
        "|---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    return lines + [
        f"| {c.a} | {c.b} | {c.n} | {c.n_families} | {c.n_units} {c.units} | {_x100(c.mean_a)} | "
        f"{_x100(c.mean_b)} | {_x100(c.difference)} | {_ci(c.ci_low, c.ci_high)} | "
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
    header += " partial ρ×100 (dim) | n (dim) |" * partial
    rule = "|---|---|---:|---:|---:|---|---:|---:|---:|---:|" + "---:|---:|" * partial
    within = (
        "Within-family view: ρ, r and the partial ρ are pooled within-family statistics (ranks, "
        "or for r the values centred by their family mean, pooled over the families of at least 3 "
        "models); τ is not computed; n and families count the models and families pooled. "
        if s.within_families
        else ""
    )
    if s.within_families:
        permuted = (
            "), the extrinsic scores permuted within each family pooled: it asks whether the intrinsic "
            "score orders the models within their families. "
        )
    elif any(p.ci_units == "families" for p in result.pairs):
        permuted = (
            "), the extrinsic scores permuted within each family of two or more models (single models "
            "pooled): it asks whether the intrinsic score orders the models beyond their family. "
        )
    else:
        permuted = ", models as units). "
    lines = [
        "## All pairs",
        "",
        f"{within}CI: {_ci_words(result)}. p: two-sided permutation test ({s.n_permutations} permutations"
        + permuted
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
            f"{_ci(p.spearman_ci_low, p.spearman_ci_high)} | {_p(p.spearman_p)} | "
            f"{_p(p.spearman_p_adj)} | {_x100(p.pearson)} | {_x100(p.kendall)} |"
        )
        if partial:
            line += f" {_x100(p.partial_spearman_dim)} | {p.n_partial} |"
        lines.append(line)
    return lines
