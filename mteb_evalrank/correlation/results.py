"""The result types of :func:`mteb_evalrank.correlation.correlate`; imports go one way:
``core`` -> ``report``, ``figures`` -> ``results`` -> ``table``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import stats
from .table import ScoreTable

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
    spearman_p_adj: float
    pearson: float
    kendall: float
    partial_spearman_dim: float | None = None
    n_partial: int | None = None
    n_families: int = 0
    ci_units: str = "models"


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
    families: str = "zoo"
    """Where the families came from: ``zoo``, ``regex``, ``file`` (combined with ``+``) or ``none``."""
    p_adjust: str = "holm"
    within_families: bool = False
    """The within-family view (pooled within-family statistics; :mod:`.core`)."""
    controls: tuple[str, ...] = ()
    """The baseline rows every intrinsic row is compared with (:mod:`.core`, ``controls``)."""

    def to_json(self) -> dict[str, Any]:
        """The settings as a dict (``within_families`` and ``controls`` only when set)."""
        out = asdict(self)
        for key in ("within_families", "controls"):
            if not out[key]:
                del out[key]
        return out


@dataclass(frozen=True)
class Comparison:
    """Row ``a`` against row ``b``: ``difference`` = mean ρ(a) − mean ρ(b) over the extrinsic columns, CI
    and swap test (:func:`.stats.mean_spearman_difference`); ``p_swap_adj`` over the comparisons.
    """

    a: str
    b: str
    n: int
    n_families: int
    units: str
    n_units: int
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_swap: float
    p_swap_adj: float
    p_min: float
    exact: bool


@dataclass(frozen=True)
class RowMean:
    """Mean ρ of one row over the extrinsic columns, its CI (:func:`.stats.mean_spearman_ci`)."""

    intrinsic: str
    n: int
    n_families: int
    mean: float
    ci_low: float
    ci_high: float
    partial_mean: float = float("nan")
    """With ``control_dim``: the mean partial ρ given the embedding dimension, on the models of
    known dimension (:func:`mteb_evalrank.correlation.stats.mean_partial_spearman_ci`), and its CI."""
    partial_ci_low: float = float("nan")
    partial_ci_high: float = float("nan")


@dataclass
class CorrelationData:
    """Pairs, their score table, settings and notes: what ``correlate`` computes, without ``write``."""

    pairs: list[PairResult]
    intrinsic: list[str]
    extrinsic: list[str]
    table: ScoreTable
    settings: Settings
    notes: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    families: dict[str, str] = field(default_factory=dict)
    row_means: list[RowMean] = field(default_factory=list)
    within_families: list[dict[str, Any]] = field(default_factory=list)
    """Within-family view: per pair, the families pooled (``used``) and left out (``excluded``),
    each ``{family: number of models having both scores}``."""
    control_comparisons: list[Comparison] = field(default_factory=list)
    """Every intrinsic row that is not a control against every control (``b``): does it beat it?"""

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

    def family_spearman(self, intrinsic: str, extrinsic: str) -> dict[str, tuple[int, float]]:
        """Each family's own ρ on the models having both scores (:func:`.stats.family_spearman`)."""
        both = self.table.frame[[intrinsic, extrinsic]].dropna()
        return stats.family_spearman(
            both[intrinsic].to_numpy(dtype=float),
            both[extrinsic].to_numpy(dtype=float),
            [self.families.get(name, name) for name in both.index],
        )

    def per_family_json(self, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """``correlations.json``'s ``per_family``: per pair ``{family: {"n": k, "spearman": ρ or null}}``."""
        return [
            {
                "intrinsic": a,
                "extrinsic": b,
                "families": {
                    family: _json_safe({"n": k, "spearman": rho})
                    for family, (k, rho) in self.family_spearman(a, b).items()
                },
            }
            for a, b in pairs
        ]

    def to_json(self) -> dict[str, Any]:
        models = {
            name: {
                "revision": m.revision or None,
                "embed_dim": m.embed_dim,
                "embed_dim_source": m.dim_source,
                "family": self.families.get(name, name),
            }
            for name, m in self.table.loaded.models.items()
            if name in self.table.frame.index
        }
        out: dict[str, Any] = {
            "settings": self.settings.to_json(),
            "columns": self.table.describe,
            "models": models,
        }
        out |= {"notes": self.notes, "pairs": [_json_safe(asdict(p)) for p in self.pairs]}
        out["comparisons"] = [_json_safe(asdict(c)) for c in self.comparisons]
        out["row_means"] = [_json_safe(asdict(r)) for r in self.row_means]
        if self.settings.within_families:
            out["within_families"] = self.within_families
        if self.settings.controls:
            out["control_comparisons"] = [_json_safe(asdict(c)) for c in self.control_comparisons]
        return out


def listed_sizes(sizes: Mapping[str, int]) -> str:
    """``family (k), ...``: the largest family first, ties by name."""
    return ", ".join(f"{f} ({k})" for f, k in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])))


def _json_safe(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
