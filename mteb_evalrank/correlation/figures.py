"""Figures (matplotlib, Agg backend): ρ heatmap, rank-vs-rank scatter, evaluation-gap plot.

The scatter is the EvalRank paper's Figure 4: each model is a point at (its rank by the
intrinsic score, its rank by the extrinsic score), rank 1 = best (highest score).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

if TYPE_CHECKING:
    from types import ModuleType

    from .results import CorrelationData


def _pyplot() -> ModuleType:  # the matplotlib.pyplot module, on the Agg backend
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def heatmap(result: CorrelationData, path: Path) -> Path:
    """Heatmap of ρ (rows intrinsic, columns extrinsic), annotated with ρ×100."""
    plt = _pyplot()
    rho = result.matrix("spearman")
    values = rho.to_numpy(dtype=float)
    fig, ax = plt.subplots(
        figsize=(max(5.0, 2.5 + 0.55 * values.shape[1]), max(3.0, 1.6 + 0.4 * values.shape[0])),
        layout="constrained",
    )
    image = ax.imshow(values, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(
        range(values.shape[1]), [_short(c) for c in rho.columns], rotation=60, ha="right", fontsize=8
    )
    ax.set_yticks(range(values.shape[0]), list(rho.index), fontsize=8)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if np.isfinite(values[i, j]):
                ax.text(j, i, f"{100 * values[i, j]:.0f}", ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label="Spearman ρ")
    frame = result.to_frame()
    ns = sorted(set(frame["n"]))
    gs = sorted(set(frame["n_families"]))
    ax.set_title(
        f"Spearman ρ across models (n = {ns[0]}{f'–{ns[-1]}' if len(ns) > 1 else ''}, "
        f"{gs[0]}{f'–{gs[-1]}' if len(gs) > 1 else ''} families)",
        fontsize=9,
    )
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _short(label: str) -> str:
    return label.replace("Classification", "")


def rank_scatter(result: CorrelationData, intrinsic: str, extrinsic: str, path: Path) -> Path:
    """Rank by intrinsic score vs rank by extrinsic score, one point per model (1 = best)."""
    plt = _pyplot()
    both = result.table.frame[[intrinsic, extrinsic]].dropna()
    rx = stats.rankdata(-both[intrinsic].to_numpy())
    ry = stats.rankdata(-both[extrinsic].to_numpy())
    pair = result.pair(intrinsic, extrinsic)
    fig, ax = plt.subplots(figsize=(4.2, 4.2), layout="constrained")
    ax.scatter(rx, ry, s=10, alpha=0.7)
    ax.plot([1, len(rx)], [1, len(rx)], color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"rank by {intrinsic}")
    ax.set_ylabel(f"rank by {extrinsic}")
    ax.set_title(f"ρ = {pair.spearman:.2f}, n = {pair.n} ({pair.n_families} families)", fontsize=9)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def gap_plot(result: CorrelationData, path: Path) -> Path:
    """ρ (with the bootstrap CI) of the reference column against each target column, in order."""
    plt = _pyplot()
    reference = result.intrinsic[0]
    pairs = [result.pair(reference, target) for target in result.extrinsic if target != reference]
    x = np.arange(len(pairs))
    rho = np.array([p.spearman for p in pairs])
    low = np.array([p.spearman_ci_low for p in pairs])
    high = np.array([p.spearman_ci_high for p in pairs])
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(pairs) + 1.5), 3.6), layout="constrained")
    # a NaN CI (too few families to resample) is drawn without a bar
    ax.errorbar(x, rho, yerr=np.nan_to_num([rho - low, high - rho]), fmt="o-", capsize=3)
    ax.set_xticks(x, [p.extrinsic for p in pairs], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel(f"Spearman ρ with {reference}")
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_title(
        f"Evaluation gap (n = {min(p.n for p in pairs)}–{max(p.n for p in pairs)} models)", fontsize=9
    )
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def write_figures(result: CorrelationData, out: Path, scatter: list[tuple[str, str]]) -> dict[str, Path]:
    """Heatmap (or gap plot) plus one scatter per requested pair; returns name -> path."""
    paths = (
        {"evaluation gap": gap_plot(result, out / "gap.png")}
        if result.settings.gap
        else {"heatmap": heatmap(result, out / "heatmap.png")}
    )
    for intrinsic, extrinsic in scatter:
        try:
            result.pair(intrinsic, extrinsic)
        except KeyError:
            from .table import CorrelationInputError

            raise CorrelationInputError(
                f"scatter {intrinsic} vs {extrinsic}: not a computed pair; "
                f"intrinsic columns: {result.intrinsic}, extrinsic columns: {result.extrinsic}"
            ) from None
        name = f"scatter {intrinsic} vs {extrinsic}"
        paths[name] = rank_scatter(
            result, intrinsic, extrinsic, out / f"scatter_{_slug(intrinsic)}__{_slug(extrinsic)}.png"
        )
    return paths
