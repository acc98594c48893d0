"""Figures (matplotlib, Agg): ρ heatmap, rank scatter (EvalRank's Figure 4, 1 = best; within
families: centred ranks within the family), evaluation-gap plot, family plot (docs/correlation.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from .._files import save_figure

if TYPE_CHECKING:
    from types import ModuleType

    import pandas as pd
    from matplotlib.figure import Figure

    from .results import CorrelationData, PairResult


def _pyplot() -> ModuleType:  # the matplotlib.pyplot module, on the Agg backend
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` atomically (110 dpi, cropped to its content) and close it."""
    save_figure(fig, path, dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return path


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
    within = result.settings.within_families
    fig.colorbar(image, ax=ax, label="pooled within-family Spearman ρ" if within else "Spearman ρ")
    frame = result.to_frame()
    ns = sorted(set(frame["n"]))
    gs = sorted(set(frame["n_families"]))
    what = "Pooled within-family Spearman ρ" if within else "Spearman ρ across models"
    ax.set_title(
        f"{what} (n = {ns[0]}{f'–{ns[-1]}' if len(ns) > 1 else ''}, "
        f"{gs[0]}{f'–{gs[-1]}' if len(gs) > 1 else ''} families)",
        fontsize=9,
    )
    return _save(fig, path)


def _short(label: str) -> str:
    return label.replace("Classification", "")


def rank_scatter(result: CorrelationData, intrinsic: str, extrinsic: str, path: Path) -> Path:
    """Rank by intrinsic score vs rank by extrinsic score, one point per model (1 = best)."""
    plt = _pyplot()
    both = result.table.frame[[intrinsic, extrinsic]].dropna()
    if result.settings.within_families:
        return _within_scatter(result, both, intrinsic, extrinsic, path)
    rx = stats.rankdata(-both[intrinsic].to_numpy())
    ry = stats.rankdata(-both[extrinsic].to_numpy())
    pair = result.pair(intrinsic, extrinsic)
    fig, ax = plt.subplots(figsize=(4.2, 4.2), layout="constrained")
    ax.scatter(rx, ry, s=10, alpha=0.7)
    ax.plot([1, len(rx)], [1, len(rx)], color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"rank by {intrinsic}")
    ax.set_ylabel(f"rank by {extrinsic}")
    ax.set_title(f"ρ = {pair.spearman:.2f}, n = {pair.n} ({pair.n_families} families)", fontsize=9)
    return _save(fig, path)


def _within_scatter(
    result: CorrelationData, both: pd.DataFrame, intrinsic: str, extrinsic: str, path: Path
) -> Path:
    """Centred rank within the family by the intrinsic vs by the extrinsic score (1 = best), per family."""
    plt = _pyplot()
    pair = result.pair(intrinsic, extrinsic)
    (pooled,) = [
        p for p in result.within_families if (p["intrinsic"], p["extrinsic"]) == (intrinsic, extrinsic)
    ]
    fig, ax = plt.subplots(figsize=(4.6, 4.2), layout="constrained")
    rng = np.random.default_rng(0)  # a small jitter separates coinciding points
    for family in pooled["used"]:
        members = both[[result.families.get(name, name) == family for name in both.index]]
        k = len(members)
        rx = stats.rankdata(-members[intrinsic].to_numpy()) - (k + 1) / 2
        ry = stats.rankdata(-members[extrinsic].to_numpy()) - (k + 1) / 2
        jitter = rng.uniform(-0.12, 0.12, (2, k))
        ax.scatter(rx + jitter[0], ry + jitter[1], s=14, alpha=0.7, label=f"{family} ({k})")
    low, high = ax.get_xlim()
    ax.plot([low, high], [low, high], color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"rank within family by {intrinsic} (centred)")
    ax.set_ylabel(f"rank within family by {extrinsic} (centred)")
    ax.legend(fontsize=7)
    ax.set_title(
        f"within-family ρ = {pair.spearman:.2f}, n = {pair.n} ({pair.n_families} families)", fontsize=9
    )
    return _save(fig, path)


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
    return _save(fig, path)


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")


def family_plot(result: CorrelationData, intrinsic: str, extrinsic: str, path: Path) -> Path:
    """Extrinsic vs intrinsic score per model, one colour and marker per family, each family's models
    joined by a thin line in order of the intrinsic score; legend: ``family (k): ρ = ρ_g``."""
    plt = _pyplot()
    both = result.table.frame[[intrinsic, extrinsic]].dropna()
    per_family = result.family_spearman(intrinsic, extrinsic)
    colours = plt.get_cmap("tab10" if len(per_family) <= 10 else "tab20")
    fig, ax = plt.subplots(figsize=(6.4, 4.4 + 0.16 * ((len(per_family) + 1) // 2)), layout="constrained")
    for i, (family, (k, rho)) in enumerate(per_family.items()):
        members = both[[result.families.get(name, name) == family for name in both.index]]
        members = members.sort_values(intrinsic)
        ax.plot(
            members[intrinsic].to_numpy(), members[extrinsic].to_numpy(), color=colours(i % colours.N),
            marker=MARKERS[i % len(MARKERS)], markersize=4.5, lw=0.8, alpha=0.8,
            label=f"{family} ({k}): ρ = {rho:.2f}" if np.isfinite(rho) else f"{family} ({k}): ρ = –",
        )  # fmt: skip
    ax.set_xlabel(intrinsic)
    ax.set_ylabel(extrinsic)
    ax.grid(alpha=0.3, lw=0.5)
    fig.legend(  # below the axes, in two columns: the plot keeps the figure's width
        loc="outside lower center", ncols=2, fontsize=7, title="family (models): its own Spearman ρ",
        title_fontsize=7, frameon=False,
    )  # fmt: skip
    pair = result.pair(intrinsic, extrinsic)
    shown = f"{pair.spearman:.2f}" if np.isfinite(pair.spearman) else "–"
    if result.settings.within_families:
        title = f"pooled within-family ρ = {shown}, n = {pair.n} ({pair.n_families} families pooled)"
    else:
        title = f"ρ across models = {shown}, n = {pair.n} ({pair.n_families} families)"
    ax.set_title(title, fontsize=9)
    return _save(fig, path)


def family_colours(result: CorrelationData) -> dict[str, str]:
    """One colour per family (``#rrggbb``; tab10, or tab20 beyond ten families), in sorted order."""
    import matplotlib.colors

    families = sorted(set(result.families.values()))
    colours = _pyplot().get_cmap("tab10" if len(families) <= 10 else "tab20")
    return {family: matplotlib.colors.to_hex(colours(i % colours.N)) for i, family in enumerate(families)}


def scatter_panels(result: CorrelationData, intrinsic: str) -> dict[str, Any]:
    """The report page's small multiples of ``intrinsic``: ``{"x", "models", "families", "colours", "xs",
    "panels": [{"title", "rho", "ys"}]}``, scores ×100 to 2 decimals (``None``: missing).
    """
    frame = result.table.frame
    models = [str(name) for name in frame.index]
    families = [result.families.get(name, name) for name in models]
    return {
        "x": intrinsic,
        "models": models,
        "families": families,
        "colours": {f: colour for f, colour in family_colours(result).items() if f in families},
        "xs": _hundredths(frame[intrinsic]),
        "panels": [
            {"title": _short(c), "rho": _rho_ci(result.pair(intrinsic, c)), "ys": _hundredths(frame[c])}
            for c in result.extrinsic
            if c != intrinsic
        ],
    }


def _hundredths(scores: pd.Series) -> list[float | None]:
    """Scores ×100 rounded to 2 decimals (a tenth of the tables' last digit), ``None`` for NaN."""
    return [round(100 * float(v), 2) if np.isfinite(v) else None for v in scores]


def _rho_ci(pair: PairResult) -> str:
    """``ρ = 0.75 [0.60, 0.85], n = 68`` (no CI where the pair has none)."""
    if not np.isfinite(pair.spearman):
        return f"ρ undefined, n = {pair.n}"
    ci = (
        f" [{pair.spearman_ci_low:.2f}, {pair.spearman_ci_high:.2f}]"
        if np.isfinite(pair.spearman_ci_low)
        else ""
    )
    return f"ρ = {pair.spearman:.2f}{ci}, n = {pair.n}"


def check_pairs(result: CorrelationData, kind: str, pairs: list[tuple[str, str]]) -> None:
    """CorrelationInputError naming the columns if a requested figure's pair was not computed."""
    for intrinsic, extrinsic in pairs:
        try:
            result.pair(intrinsic, extrinsic)
        except KeyError:
            from .table import CorrelationInputError

            raise CorrelationInputError(
                f"{kind} {intrinsic} vs {extrinsic}: not a computed pair; "
                f"intrinsic columns: {result.intrinsic}, extrinsic columns: {result.extrinsic}"
            ) from None


def write_figures(
    result: CorrelationData, out: Path, scatter: list[tuple[str, str]], family: list[tuple[str, str]]
) -> dict[str, Path]:
    """Heatmap (or gap plot), one scatter per ``scatter`` pair, one family plot per ``family`` pair."""
    paths = (
        {"evaluation gap": gap_plot(result, out / "gap.png")}
        if result.settings.gap
        else {"heatmap": heatmap(result, out / "heatmap.png")}
    )
    figures = [("scatter", "scatter", rank_scatter, scatter), ("family plot", "family", family_plot, family)]
    for kind, prefix, draw, pairs in figures:
        for a, b in pairs:
            paths[f"{kind} {a} vs {b}"] = draw(result, a, b, out / f"{prefix}_{_slug(a)}__{_slug(b)}.png")
    return paths
