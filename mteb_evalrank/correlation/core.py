"""``correlate``: rank correlation, across models, of intrinsic vs extrinsic score columns.

Per pair: the models having both scores (``n``; others ``n_missing``). Families
(:func:`resolve_families`: mapping, ``family_regex``, the zoo's, own name) are the resampling units
of :mod:`.stats`. The pairs' permutation p and the swap-test p are adjusted as two families of
tests. ``within_families``: the pooled within-family statistics (families of >= 3 models, no τ).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from math import comb
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._files import write_text
from . import stats
from .results import Comparison, CorrelationData, PairResult, RowMean, Settings, listed_sizes
from .table import (
    ColumnSpec,
    CorrelationInputError,
    LoadedResults,
    ScoreTable,
    build_table,
    column_protocols,
    expand_columns,
    load_results,
    task_names,
)

if TYPE_CHECKING:
    import pandas as pd

logger = logging.getLogger(__name__)


class CorrelationResult(CorrelationData):
    """:class:`~.results.CorrelationData` (pairs, score table, settings, notes) and ``write``."""

    def write(
        self,
        out_dir: str | Path,
        scatter: Iterable[tuple[str, str]] = (),
        family_plot: Iterable[tuple[str, str]] = (),
    ) -> dict[str, Path]:
        """Write ``correlations.csv/.json``, ``report.md``, ``scores.csv`` and the figures."""
        from . import figures, report

        scatter, family_plot = list(scatter), list(family_plot)
        figures.check_pairs(self, "scatter", scatter)
        figures.check_pairs(self, "family plot", family_plot)
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = {
            "csv": out / "correlations.csv",
            "json": out / "correlations.json",
            "scores": out / "scores.csv",
            "report": out / "report.md",
        }
        write_text(written["csv"], self.to_frame().to_csv(index=False))  # every file atomically
        data = self.to_json() | ({"per_family": self.per_family_json(family_plot)} if family_plot else {})
        write_text(written["json"], json.dumps(data, indent=1) + "\n")
        source = self.table.loaded.folders[0] if self.table.loaded.scores is not None else None
        if source is None or Path(source).resolve() != written["scores"].resolve():
            write_text(written["scores"], self.table.frame.to_csv())  # never overwrite the score table read
        figure_paths = figures.write_figures(self, out, scatter=scatter, family=family_plot)
        written.update(figure_paths)
        write_text(written["report"], report.markdown(self, figure_paths, out, family_plot))
        return written


def resolve_families(
    names: Iterable[str],
    families: Mapping[str, str] | None = None,
    family_regex: str | None = None,
    cluster: bool = True,
) -> tuple[dict[str, str], str]:
    """Family of every model (precedence: mapping, regex, zoo, own name) and where they came from."""
    names = list(names)
    if not cluster:
        return {name: name for name in names}, "none"
    from ..models.zoo import model_family

    pattern = None
    if family_regex:
        try:
            pattern = re.compile(family_regex)
        except re.error as error:
            raise CorrelationInputError(f"--family-regex {family_regex!r}: {error}") from None
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        if families and name in families:
            out[name] = str(families[name])
            used.add("file")
        elif pattern is not None and (match := pattern.search(name)):
            out[name] = match.group(1) if pattern.groups else match.group(0)
            used.add("regex")
        else:
            out[name] = model_family(name)
            used.add("zoo")
    if families and (unknown := sorted(set(families) - set(names))):
        logger.info("families given for models not in the table: %s", unknown)
    return out, "+".join(k for k in ("file", "regex", "zoo") if k in used)


def read_families(path: str | Path) -> dict[str, str]:
    """A model -> family mapping from a JSON object or a CSV ``model,family`` (UTF-8, BOM dropped); a
    :class:`CorrelationInputError` names the file (and line) of a problem."""
    path = Path(path)
    if not path.is_file():
        raise CorrelationInputError(f"--families {path}: file not found")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        from mteb_evalrank.data.sources import invalid_utf8

        raise CorrelationInputError(f"--families {invalid_utf8(path, error)}") from None
    rows = _families_json(path, text) if path.suffix.lower() == ".json" else _families_csv(path, text)
    mapping: dict[str, tuple[str, int | None]] = {}  # model -> (family, line; None in a JSON object)
    for model, family, line in rows:
        first, first_line = mapping.setdefault(model, (family, line))
        if first != family:
            raise CorrelationInputError(
                f"--families {path}:{line}: model {model!r} has family {family!r} here and {first!r} on "
                f"line {first_line}"
                if line
                else f"--families {path}: model {model!r} is given two families ({first!r}, {family!r})"
            )
    if not mapping:
        raise CorrelationInputError(f"--families {path}: the file lists no model")
    return {model: family for model, (family, _) in mapping.items()}


def _families_json(path: Path, text: str) -> list[tuple[str, str, None]]:
    """The ``(model, family, None)`` pairs of a JSON object, in order (a repeated key kept)."""
    try:
        data = json.loads(text, object_pairs_hook=tuple)  # an object: a tuple of pairs; an array: a list
    except json.JSONDecodeError as error:
        raise CorrelationInputError(
            f"--families {path}:{error.lineno}: not valid JSON ({error.msg}, column {error.colno})"
        ) from None
    if not isinstance(data, tuple):
        raise CorrelationInputError(f"--families {path}: a JSON object {{model: family}} is needed")
    return [(model, str(family), None) for model, family in data]


def _families_csv(path: Path, text: str) -> Iterator[tuple[str, str, int]]:
    """The ``(model, family, line)`` rows of a CSV with the columns ``model,family``."""
    import csv

    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or not {"model", "family"} <= set(reader.fieldnames):
        raise CorrelationInputError(f"--families {path}: a CSV with the columns model,family is needed")
    for row in reader:
        model, family = row.get("model"), row.get("family")
        if not model or not family:
            raise CorrelationInputError(
                f"--families {path}:{reader.line_num}: expected model,family, got {row}"
            )
        yield model, family, reader.line_num


def _family_note(families: dict[str, str], source: str, within: bool = False) -> list[str]:
    """What the resampling units are, and a warning when the families are few."""
    if source == "none":
        return ["families ignored (--no-families): every model is its own resampling unit, "
                "which overstates certainty when models are variants of a few base models"]  # fmt: skip
    sizes = Counter(families.values())
    g = len(sizes)
    if g == len(families) and not within:
        return [f"families ({source}): every model is its own family: the models are the resampling units"]
    notes = [f"families ({source}): {g} families among {len(families)} models: {listed_sizes(sizes)}"]
    if within:
        used = sum(k >= stats.MIN_FAMILY_SIZE for k in sizes.values())
        return notes + ([_few_families_warning(used)] if 1 < used < stats.FEW_FAMILIES else [])
    if g == 1:
        notes.append(
            "one family: the models (its variants) are the resampling units, a within-family analysis"
        )
    elif g < stats.FEW_FAMILIES:
        notes.append(_few_families_warning(g))
    return notes


def _protocol_note(extrinsic: list[str]) -> list[str]:
    """A warning when the extrinsic columns span several downstream protocols (table.PROTOCOLS)."""
    groups = column_protocols(extrinsic)
    if len(groups) < 2:
        return []
    listed = "; ".join(f"{name}: {', '.join(tasks)}" for name, tasks in groups.items())
    return [
        f"the extrinsic columns span {len(groups)} downstream protocols ({listed}): a row's mean ρ "
        "averages over them, on the models having every column; correlate each protocol on its own "
        "(--extrinsic-protocol NAME)"
    ]


def _few_families_warning(g: int) -> str:
    return (
        f"only {g} families: the family-cluster bootstrap has {comb(2 * g - 1, g)} distinct "
        f"resamples, so the CIs are coarse; the permutation p-values test only the ordering within "
        f"families; a paired swap test can give no p below {2 / 2**g:.3g}. These tests have little "
        "power: a non-significant result says little"
        + (f"; below {stats.MIN_FAMILIES} families no CI is given" if g < stats.MIN_FAMILIES else "")
    )


def _pair(
    table: pd.DataFrame,
    intrinsic: str,
    extrinsic: str,
    dims: pd.Series | None,
    settings: Settings,
    families: Mapping[str, str],
) -> PairResult:
    """The statistics of one pair: across models, or the pooled within-family ones (module docstring)."""
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
    fam = [families[name] for name in both.index]
    within = settings.within_families
    if within:
        pooled = _pooling(both, families, f"{intrinsic} vs {extrinsic}")
        n_used, n_families = int(pooled.used.sum()), pooled.count
        rho, r, tau = (
            stats.within_spearman(x, y, families=fam),
            stats.within_pearson(x, y, families=fam),
            np.nan,
        )
    else:
        n_used, n_families = n, len(set(fam))
        rho, r, tau = stats.spearman(x, y), stats.pearson(x, y), stats.kendall(x, y)
    ci = stats.bootstrap_spearman_ci(
        x, y, families=fam, within=within, n_resamples=settings.n_bootstrap, confidence=settings.confidence,
        seed=settings.seed,
    )  # fmt: skip
    partial, n_partial = _partial_dim(both, dims, families, within) if dims is not None else (None, None)
    p = stats.permutation_p_spearman(
        x, y, families=fam, within=within, n_permutations=settings.n_permutations, seed=settings.seed
    )
    return PairResult(
        intrinsic=intrinsic, extrinsic=extrinsic, n=n_used, n_missing=len(table) - n, spearman=rho,
        spearman_ci_low=ci.low, spearman_ci_high=ci.high, spearman_p=p,
        spearman_p_adj=float("nan"),  # set over all pairs in correlate()
        pearson=r, kendall=tau,  # no pooled within-family τ
        partial_spearman_dim=partial, n_partial=n_partial, n_families=n_families, ci_units=ci.units,
    )  # fmt: skip


def _partial_dim(
    both: pd.DataFrame, dims: pd.Series, families: Mapping[str, str], within: bool
) -> tuple[float, int]:
    """The partial ρ (or ρ_W) of ``both`` given the dimension, and the models of known dimension it uses."""
    known = dims.reindex(both.index).dropna()
    labels = [families[name] for name in known.index]
    x, y = (both.loc[known.index, column].to_numpy() for column in both.columns)
    if within:
        n_partial = sum(size for size in Counter(labels).values() if size >= stats.MIN_FAMILY_SIZE)
        if not n_partial:
            return np.nan, 0
        return stats.within_partial_spearman(x, y, known.to_numpy(dtype=float), families=labels), n_partial
    if len(known) < stats.MIN_MODELS:
        return np.nan, len(known)
    return stats.partial_spearman(x, y, known.to_numpy(dtype=float)), len(known)


def _pooling(both: pd.DataFrame, families: Mapping[str, str], what: str) -> stats.Pooling:
    """The families used by the within-family view on the models of ``both``, or a clear error."""
    try:
        return stats.pooling([families[name] for name in both.index], len(both))
    except stats.TooFewModelsError as error:
        raise CorrelationInputError(
            f"{what}: within-family view: {error}, among the {len(both)} models having the scores; "
            "drop --within-families, or give families (--families FILE, --family-regex RE)"
        ) from None


def _poolings(
    frame: pd.DataFrame, pairs: list[PairResult], families: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Per pair, the families used by the within-family view and those left out (with sizes)."""
    pooled = [
        _pooling(frame[[p.intrinsic, p.extrinsic]].dropna(), families, f"{p.intrinsic} vs {p.extrinsic}")
        for p in pairs
    ]
    return [
        dict(intrinsic=p.intrinsic, extrinsic=p.extrinsic, used=q.sizes, excluded=q.excluded)
        for p, q in zip(pairs, pooled, strict=True)
    ]


def _within_notes(pooled: list[dict[str, Any]]) -> list[str]:
    """The within-family view's statistic and the families it pools (once, or their range per pair)."""
    head = (
        "within-family view: every ρ is the pooled within-family Spearman ρ_W (each model's scores "
        f"ranked within its family, families of at least {stats.MIN_FAMILY_SIZE} models, the ranks "
        "centred by the family mean rank and pooled: family effects removed); r is the pooled "
        "within-family Pearson r, τ is not computed"
    )
    kinds = {(json.dumps(p["used"]), json.dumps(p["excluded"])) for p in pooled}
    if len(kinds) == 1:
        used, excluded = pooled[0]["used"], pooled[0]["excluded"]
        return [
            f"{head}. Families pooled ({len(used)}): {listed_sizes(used) or 'none'}; left out (fewer than "
            f"{stats.MIN_FAMILY_SIZE} models): {listed_sizes(excluded) or 'none'}"
        ]
    counts = sorted({len(p["used"]) for p in pooled})
    return [
        f"{head}. The families pooled differ between pairs (models are dropped per pair; "
        f"{counts[0]}–{counts[-1]} families): each pair's families and sizes are in "
        "correlations.json (within_families)"
    ]


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
    families: Mapping[str, str] | None = None,
    family_regex: str | None = None,
    cluster: bool = True,
    p_adjust: str = "holm",
    within_families: bool = False,
    controls: Sequence[str] = (),
) -> CorrelationResult:
    """Correlate every intrinsic column with every extrinsic column across the models (docs/correlation.md).

    ``complete``: only models having every column (else dropped per pair); ``compare``: row pairs
    (:class:`Comparison`); ``controls``: baseline rows (``"dim"`` = :data:`DIMENSION_ROW`, else a
    column), compared with every other row (``control_comparisons``).
    """
    _check_arguments(intrinsic, extrinsic, gap, p_adjust, within_families and not cluster)
    intrinsic = [*intrinsic, *(c for c in controls if c != "dim" and c not in map(str, intrinsic))]
    if isinstance(results, LoadedResults):
        loaded = results
    else:
        policy = revision_policy
        loaded = load_results(
            results, models=models, model_regex=model_regex, revisions=revisions, revision_policy=policy,
            tasks=task_names([*intrinsic, *extrinsic]),
        )  # fmt: skip
    table, labels_in, labels_ex = _score_table(loaded, intrinsic, extrinsic, split)
    dims = {name: m.embed_dim for name, m in loaded.models.items()}
    frame, notes = _select_models(table.frame, dims, dim_band, complete, control_dim)
    frame, labels_in, control_labels = _add_controls(frame, table.describe, labels_in, controls, dims)
    table = ScoreTable(frame, table.describe, loaded)
    family_of, source = resolve_families(frame.index, families, family_regex, cluster)
    settings = Settings(
        results=loaded.folders, split=split, n_bootstrap=n_bootstrap, n_permutations=n_permutations,
        confidence=confidence, seed=seed, complete=complete, control_dim=control_dim,
        dim_band=(dim_band[0], dim_band[1]) if dim_band else None,  # a list from JSON or the CLI
        gap=gap, families=source, p_adjust=p_adjust, within_families=within_families,
        controls=tuple(control_labels),
    )  # fmt: skip
    notes += _family_note(family_of, source, within_families) + _protocol_note(labels_ex)
    dim_series = frame.index.to_series().map(dims).dropna().astype(float) if control_dim else None
    pairs, pair_notes = _pairs(frame, labels_in, labels_ex, dim_series, settings, family_of)
    pooled = _poolings(frame, pairs, family_of) if within_families else []
    if within_families:
        notes = [*_within_notes(pooled), *notes]
    comparisons = _comparisons(frame, compare, labels_in, labels_ex, settings, family_of)
    rows = [] if gap else labels_in
    means = [_row_mean(frame, a, labels_ex, settings, family_of, dim_series) for a in rows]
    checks = [(a, c) for c in control_labels for a in labels_in if a not in control_labels]
    return CorrelationResult(
        pairs, labels_in, labels_ex, table, settings, [*notes, *pair_notes, *loaded.notes], comparisons,
        family_of, [r for r in means if r is not None], pooled,
        _comparisons(frame, checks, labels_in, labels_ex, settings, family_of),
    )  # fmt: skip


def _check_arguments(
    intrinsic: Sequence[str | ColumnSpec],
    extrinsic: Sequence[str | ColumnSpec],
    gap: bool,
    p_adjust: str,
    within_without_families: bool,
) -> None:
    if within_without_families:
        raise CorrelationInputError(
            "--within-families with --no-families: every model would be its own family; the "
            "within-family view needs families (the zoo's, --families FILE or --family-regex RE)"
        )
    if p_adjust not in ("holm", "fdr_bh"):
        raise CorrelationInputError(f"p-value adjustment {p_adjust!r}: use 'holm' or 'fdr_bh'")
    if not intrinsic or not extrinsic:
        raise CorrelationInputError("give at least one intrinsic and one extrinsic column")
    if gap and len(intrinsic) != 1:
        raise CorrelationInputError("the evaluation-gap mode takes exactly one reference (intrinsic) column")


def _score_table(
    loaded: LoadedResults,
    intrinsic: Sequence[str | ColumnSpec],
    extrinsic: Sequence[str | ColumnSpec],
    split: str,
) -> tuple[ScoreTable, list[str], list[str]]:
    """The model x column table of the intrinsic and extrinsic columns, and their labels."""
    rows = expand_columns(loaded, intrinsic, split)
    cols = expand_columns(loaded, extrinsic, split)
    table = build_table(loaded, [*rows, *{c.label: c for c in cols if c not in rows}.values()], split)
    return table, [c.label for c in rows], [c.label for c in cols]


def _select_models(
    scores: pd.DataFrame,
    dims: Mapping[str, int | None],
    dim_band: tuple[int, int] | None,
    complete: bool,
    control_dim: bool,
) -> tuple[pd.DataFrame, list[str]]:
    """The models of the requested view (size band, complete table, else any score), and notes."""
    notes: list[str] = []
    frame = scores
    if dim_band is not None:
        lo, hi = dim_band
        keep = [name for name in frame.index if (dim := dims[name]) is not None and lo <= dim <= hi]
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
    scored = frame if dim_band is None else scores[scores.notna().any(axis=1)]  # before the band
    no_dim = sorted(name for name in scored.index if dims[name] is None)
    if (control_dim or dim_band is not None) and no_dim:
        notes.append(
            f"models without a known embedding dimension (left out of the dimension views): {no_dim}"
        )
    return frame, notes


DIMENSION_ROW = "embedding dimension"
"""The label of the ``"dim"`` control row: each model's embedding dimension as its score."""


def _add_controls(
    frame: pd.DataFrame,
    describe: dict[str, str],
    labels_in: list[str],
    controls: Sequence[str],
    dims: Mapping[str, int | None],
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The frame and intrinsic labels with the control rows, and the controls' labels."""
    labels: list[str] = []
    for control in controls:
        if control == "dim":
            frame = frame.assign(**{DIMENSION_ROW: [dims.get(name) for name in frame.index]}).astype(float)
            describe[DIMENSION_ROW] = (
                "control: the model's embedding dimension (ModelMeta.embed_dim) as its score; a row "
                "that predicts the downstream scores no better than this says little about quality"
            )
            labels_in = [*labels_in, DIMENSION_ROW]
            labels.append(DIMENSION_ROW)
        else:
            labels.append(ColumnSpec.parse(control).label)
    return frame, labels_in, labels


def _pairs(
    frame: pd.DataFrame,
    labels_in: list[str],
    labels_ex: list[str],
    dims: pd.Series | None,
    settings: Settings,
    families: Mapping[str, str],
) -> tuple[list[PairResult], list[str]]:
    """Every pair of distinct columns with adjusted p, and notes on pairs without a CI, p or ρ."""
    pairs = [_pair(frame, a, b, dims, settings, families) for a in labels_in for b in labels_ex if a != b]
    if not pairs:
        raise CorrelationInputError("no (intrinsic, extrinsic) pair of distinct columns")
    adjusted = stats.adjust_pvalues([p.spearman_p for p in pairs], settings.p_adjust)
    pairs = [replace(p, spearman_p_adj=float(q)) for p, q in zip(pairs, adjusted, strict=True)]
    reasons = sorted(
        {r for r in (_ci_reason(frame, p, families, settings.within_families) for p in pairs) if r}
    )
    notes = [f"no CI or p-value: {r}" if "models" in r else f"no CI: {r}" for r in reasons]
    undefined = [f"{p.intrinsic} vs {p.extrinsic}" for p in pairs if not np.isfinite(p.spearman)]
    if undefined:
        notes.append(f"ρ undefined (a column is constant over the models): {', '.join(undefined)}")
    return pairs, notes


def _comparisons(
    frame: pd.DataFrame,
    compare: Sequence[tuple[str, str]],
    labels_in: list[str],
    labels_ex: list[str],
    settings: Settings,
    families: Mapping[str, str],
) -> list[Comparison]:
    """The requested row comparisons, with their swap-test p-values adjusted over the comparisons."""
    comparisons = [_compare(frame, a, b, labels_ex, labels_in, settings, families) for a, b in compare]
    if not comparisons:
        return []
    adjusted = stats.adjust_pvalues([c.p_swap for c in comparisons], settings.p_adjust)
    return [replace(c, p_swap_adj=float(q)) for c, q in zip(comparisons, adjusted, strict=True)]


def _row_mean(
    frame: pd.DataFrame,
    a: str,
    extrinsic: list[str],
    settings: Settings,
    families: Mapping[str, str],
    dims: pd.Series | None = None,
) -> RowMean | None:
    columns = [c for c in extrinsic if c != a]
    both = frame[[a, *columns]].dropna()
    if len(both) < stats.MIN_MODELS or not columns:
        return None
    fam = [families[name] for name in both.index]
    try:
        used = stats.view(fam, len(fam), settings.within_families)
    except stats.TooFewModelsError:  # within families: no family of MIN_FAMILY_SIZE models
        return None
    mean, ci = stats.mean_spearman_ci(
        both[a].to_numpy(), both[columns].to_numpy(), families=fam, within=settings.within_families,
        n_resamples=settings.n_bootstrap, confidence=settings.confidence, seed=settings.seed,
    )  # fmt: skip
    row = RowMean(a, int(used.used.sum()), used.units.n_families, mean, ci.low, ci.high)
    known = dims.reindex(both.index).dropna() if dims is not None else None
    if settings.within_families or known is None or len(known) < stats.MIN_MODELS or a == DIMENSION_ROW:
        return row
    partial, pci = stats.mean_partial_spearman_ci(
        both.loc[known.index, a].to_numpy(), both.loc[known.index, columns].to_numpy(),
        known.to_numpy(dtype=float), families=[families[name] for name in known.index],
        n_resamples=settings.n_bootstrap, confidence=settings.confidence, seed=settings.seed,
    )  # fmt: skip
    return replace(row, partial_mean=partial, partial_ci_low=pci.low, partial_ci_high=pci.high)


def _ci_reason(frame: pd.DataFrame, pair: PairResult, families: Mapping[str, str], within: bool) -> str:
    if np.isfinite(pair.spearman_ci_low) or not np.isfinite(pair.spearman):
        return ""
    names = frame[[pair.intrinsic, pair.extrinsic]].dropna().index
    labels = [families[n] for n in names]
    return stats.too_few_units(stats.view(labels, len(names), within).units)


def _compare(
    frame: pd.DataFrame,
    a: str,
    b: str,
    extrinsic: list[str],
    intrinsic: list[str],
    settings: Settings,
    families: Mapping[str, str],
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
            both[a].to_numpy(), both[b].to_numpy(), both[columns].to_numpy(),
            families=[families[name] for name in both.index], within=settings.within_families,
            n_resamples=settings.n_bootstrap, n_permutations=settings.n_permutations,
            confidence=settings.confidence, seed=settings.seed,
        )  # fmt: skip
    except stats.TooFewModelsError as error:
        raise CorrelationInputError(
            f"--compare {a} {b}: {error} with both rows and every extrinsic column"
        ) from None
    return Comparison(
        a, b, d.n, d.n_families, d.units, d.n_units, d.mean_a, d.mean_b, d.difference, d.low, d.high,
        d.p, float("nan"), d.p_min, d.exact,
    )  # fmt: skip
