"""Slicing an STS-style dataset by sentence length, vocabulary coverage and gold score: the three
factors of Abe et al.'s (2022, section 4) evaluation gap (docs/diagnostics.md). Pure functions.

Conventions (reproducing the paper's Tables 4, 6 and 7): tokens are whitespace tokens; pair length
``(|tok(s1)| + |tok(s2)|) / 2``; coverage (Eq. 1) ``Recall(s, s') = |(s ∪ s') ∩ V| / |s ∪ s'|`` over
lower-cased token sets, ``V`` a reference dataset's; bands ``(e_i, e_{i+1}]``, the first ``[e_0, e_1]``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from datasets import Dataset

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.int64]

#: The paper's MT-metrics length windows ``[0, 40), [5, 45), ..., [30, 70)`` (Table 4).
PAPER_LENGTH_WINDOWS: tuple[tuple[int, int], ...] = tuple((lo, lo + 40) for lo in range(0, 35, 5))
#: Histogram bin width (tokens) of the length matching; 5 reproduces the paper's subset sizes.
LENGTH_BIN_WIDTH = 5.0
#: Seed of the within-bin sampling of the length windows.
LENGTH_SEED = 0
#: Size of the paper's ``Recall-High`` / ``Recall-Low`` subsets (section 4.2.2).
EXTREME_PAIRS = 100
#: STS gold bands of section 4.3.2: ``[0, 1], (1, 2], (2, 3], (3, 4], (4, 5]``.
STS_BAND_EDGES: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
#: Names of the four quartile subsets (lowest first), the paper's Sim-{Low, MidLow, MidHigh, High}.
QUARTILE_NAMES: tuple[str, ...] = ("low", "midlow", "midhigh", "high")


def tokenize(text: str) -> list[str]:
    """Whitespace tokens of ``text`` (case kept)."""
    return text.split()


def pair_length(sentence1: str, sentence2: str) -> float:
    """Mean token count of a pair: ``(|tok(s1)| + |tok(s2)|) / 2``."""
    return (len(tokenize(sentence1)) + len(tokenize(sentence2))) / 2


def pair_lengths(sentence1: Sequence[str], sentence2: Sequence[str]) -> FloatArray:
    """``pair_length`` of every pair."""
    _check_pairs(sentence1, sentence2)
    return np.array([pair_length(a, b) for a, b in zip(sentence1, sentence2, strict=True)], dtype=float)


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The set of lower-cased tokens of ``texts`` (``V_sts`` when given the STS-B sentences)."""
    return frozenset(token.lower() for text in texts for token in tokenize(text))


def vocabulary_coverage(sentence1: str, sentence2: str, vocab: frozenset[str] | set[str]) -> float:
    """Eq. 1 of Abe et al.: ``|(s ∪ s') ∩ V| / |s ∪ s'|`` over lower-cased token sets (a ``ValueError``
    for two empty sentences)."""
    tokens = {token.lower() for token in (*tokenize(sentence1), *tokenize(sentence2))}
    if not tokens:
        raise ValueError(f"vocabulary coverage is undefined for an empty pair ({sentence1!r}, {sentence2!r})")
    return len(tokens & vocab) / len(tokens)


def vocabulary_coverages(
    sentence1: Sequence[str], sentence2: Sequence[str], vocab: frozenset[str] | set[str]
) -> FloatArray:
    """``vocabulary_coverage`` of every pair."""
    _check_pairs(sentence1, sentence2)
    return np.array(
        [vocabulary_coverage(a, b, vocab) for a, b in zip(sentence1, sentence2, strict=True)], dtype=float
    )


def band_labels(values: Sequence[float] | FloatArray, edges: Sequence[float]) -> IndexArray:
    """Band index of each value: ``i`` with ``e_i < v <= e_{i+1}``, and ``v = e_0`` in band 0; a
    ``ValueError`` for edges not strictly increasing or a value outside ``[e_0, e_last]``."""
    bounds = np.asarray(edges, dtype=float)
    if bounds.ndim != 1 or len(bounds) < 2 or np.any(np.diff(bounds) <= 0):
        raise ValueError(f"band edges must be at least two strictly increasing numbers, got {list(edges)}")
    data = np.asarray(values, dtype=float)
    outside = ~((data >= bounds[0]) & (data <= bounds[-1]))
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"{int(outside.sum())} value(s) outside [{bounds[0]:g}, {bounds[-1]:g}], "
            f"e.g. row {first}: {data[first]!r}; widen the edges"
        )
    return np.clip(np.searchsorted(bounds, data, side="left") - 1, 0, len(bounds) - 2).astype(np.int64)


def quartile_edges(values: Sequence[float] | FloatArray) -> tuple[float, ...]:
    """``(min, Q1, Q2, Q3, max)`` of ``values`` (numpy's default linear quantiles)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0 or not np.all(np.isfinite(data)):
        raise ValueError("quartiles need at least one value, all finite")
    q1, q2, q3 = np.quantile(data, [0.25, 0.5, 0.75])
    edges = (float(data.min()), float(q1), float(q2), float(q3), float(data.max()))
    if len(set(edges)) != len(edges):
        raise ValueError(f"quartile edges are not distinct ({edges}): too many tied values to split in four")
    return edges


def bands(
    values: Sequence[float] | FloatArray, edges: Sequence[float], names: Sequence[str]
) -> dict[str, IndexArray]:
    """``{name: row indices}`` of each band (see ``band_labels``), rows in input order."""
    if len(names) != len(edges) - 1:
        raise ValueError(f"{len(edges) - 1} bands need as many names, got {list(names)}")
    labels = band_labels(values, edges)
    return {name: np.flatnonzero(labels == i).astype(np.int64) for i, name in enumerate(names)}


def extremes(values: Sequence[float] | FloatArray, k: int = EXTREME_PAIRS) -> tuple[IndexArray, IndexArray]:
    """Row indices of the ``k`` highest and the ``k`` lowest values (each sorted by row; ties at the cut
    go to the earlier row); a ``ValueError`` if ``2k`` exceeds the rows."""
    data = np.asarray(values, dtype=float)
    if k < 1 or 2 * k > data.size:
        raise ValueError(f"cannot take the top and bottom {k} of {data.size} rows without overlap")
    order_high = np.lexsort((np.arange(data.size), -data))
    order_low = np.lexsort((np.arange(data.size), data))
    return np.sort(order_high[:k]).astype(np.int64), np.sort(order_low[:k]).astype(np.int64)


def sample_length_window(
    lengths: Sequence[float] | FloatArray,
    reference_lengths: Sequence[float] | FloatArray,
    window: tuple[float, float],
    *,
    bin_width: float = LENGTH_BIN_WIDTH,
    seed: int = LENGTH_SEED,
) -> IndexArray:
    """Largest subset of rows with length in ``[lo, hi)`` whose histogram follows the reference
    (Abe et al., 4.1.2: "drawn ... according to the STS distribution"), made exact:

    1. bins ``[lo + j*w, lo + (j+1)*w)`` of width ``w = bin_width`` cover the window;
    2. ``p_j`` = share of the *reference* pairs of the window in bin j; ``n_j`` = rows of bin j;
    3. the size is ``N = min_{j: p_j > 0} n_j / p_j``, and ``floor(N * p_j)`` rows are drawn from bin j
       without replacement by ``numpy.random.default_rng(seed)``, bins in increasing order.

    ``w = 5`` reproduces the paper's Table 4 sizes. Returns row indices sorted by row.

    Raises:
        ValueError: for an empty window, a non-positive bin width, or no reference pair in it."""
    lo, hi = float(window[0]), float(window[1])
    if not hi > lo or not bin_width > 0:
        raise ValueError(f"need lo < hi and bin_width > 0, got window {window}, bin_width {bin_width}")
    data = np.asarray(lengths, dtype=float)
    reference = np.asarray(reference_lengths, dtype=float)
    n_bins = int(np.ceil((hi - lo) / bin_width))
    edges = lo + bin_width * np.arange(n_bins + 1)
    edges[-1] = hi
    in_ref = reference[(reference >= lo) & (reference < hi)]
    if in_ref.size == 0:
        raise ValueError(f"no reference pair has a length in [{lo:g}, {hi:g}): nothing to match")
    share = np.histogram(in_ref, edges)[0] / in_ref.size
    rows = np.flatnonzero((data >= lo) & (data < hi))
    bin_of = np.clip(np.searchsorted(edges, data[rows], side="right") - 1, 0, n_bins - 1)
    available = np.bincount(bin_of, minlength=n_bins)
    used = share > 0
    size = float(np.min(available[used] / share[used]))
    take = np.floor(size * share + 1e-9).astype(int)
    rng = np.random.default_rng(seed)
    chosen = [rng.choice(rows[bin_of == j], size=take[j], replace=False) for j in range(n_bins) if take[j]]
    return np.sort(np.concatenate(chosen)).astype(np.int64) if chosen else np.empty(0, dtype=np.int64)


def window_name(window: tuple[float, float]) -> str:
    """Subset name of a length window, e.g. ``length-0-40``."""
    return f"length-{window[0]:g}-{window[1]:g}"


def band_name(lo: float, hi: float, prefix: str = "gold") -> str:
    """Subset name of a band, e.g. ``gold-0-1``."""
    return f"{prefix}-{lo:g}-{hi:g}"


def length_slices(
    sentence1: Sequence[str],
    sentence2: Sequence[str],
    reference_lengths: Sequence[float] | FloatArray,
    windows: Sequence[tuple[float, float]] = PAPER_LENGTH_WINDOWS,
    *,
    bin_width: float = LENGTH_BIN_WIDTH,
    seed: int = LENGTH_SEED,
) -> dict[str, IndexArray]:
    """``{length-lo-hi: rows}``: one ``sample_length_window`` per window."""
    lengths = pair_lengths(sentence1, sentence2)
    return {
        window_name(window): sample_length_window(
            lengths, reference_lengths, window, bin_width=bin_width, seed=seed
        )
        for window in windows
    }


def coverage_slices(
    sentence1: Sequence[str],
    sentence2: Sequence[str],
    vocab: frozenset[str] | set[str],
    *,
    k: int = EXTREME_PAIRS,
) -> dict[str, IndexArray]:
    """``coverage-high`` / ``coverage-low`` (top / bottom ``k`` pairs) and ``coverage-q1..q4``: bands
    between the coverages' ``quartile_edges`` (ties stay together, so sizes can differ)."""
    coverage = vocabulary_coverages(sentence1, sentence2, vocab)
    high, low = extremes(coverage, k)
    edges = quartile_edges(coverage)
    quartiles = bands(coverage, edges, [f"coverage-q{i}" for i in range(1, 5)])
    return {"coverage-high": high, "coverage-low": low, **quartiles}


def gold_slices(
    scores: Sequence[float] | FloatArray, edges: Sequence[float] | None = None
) -> dict[str, IndexArray]:
    """Gold-score bands: the quartiles ``gold-low .. gold-high`` when ``edges`` is None, else
    ``gold-<lo>-<hi>`` for each band of ``edges`` (e.g. ``STS_BAND_EDGES``)."""
    if edges is None:
        return bands(scores, quartile_edges(scores), [f"gold-{name}" for name in QUARTILE_NAMES])
    names = [band_name(lo, hi) for lo, hi in itertools.pairwise(edges)]
    return bands(scores, edges, names)


SliceKind = Literal["length", "coverage", "gold"]


def slice_dataset(
    dataset: Dataset,
    by: SliceKind,
    *,
    reference: Dataset | None = None,
    edges: Sequence[float] | None = None,
    windows: Sequence[tuple[float, float]] = PAPER_LENGTH_WINDOWS,
    k: int = EXTREME_PAIRS,
    seed: int = LENGTH_SEED,
) -> dict[str, Dataset]:
    """Slice an STS-style ``Dataset`` (``sentence1``, ``sentence2``, ``score``) into
    ``{subset name: dataset.select(rows)}``: ``by="length"`` (:func:`length_slices`) or ``"coverage"``
    (:func:`coverage_slices`) against ``reference``, ``"gold"`` (:func:`gold_slices` of ``edges``)."""
    for column in ("sentence1", "sentence2", *(("score",) if by == "gold" else ())):
        if column not in dataset.column_names:
            raise ValueError(
                f"slice_dataset: the dataset has no {column!r} column (has {dataset.column_names})"
            )
    if by == "gold":
        rows = gold_slices(dataset["score"], edges)
    elif reference is None:
        raise ValueError(f"slice_dataset(by={by!r}) needs a reference dataset (e.g. STS-B)")
    elif by == "length":
        ref_lengths = pair_lengths(reference["sentence1"], reference["sentence2"])
        rows = length_slices(dataset["sentence1"], dataset["sentence2"], ref_lengths, windows, seed=seed)
    elif by == "coverage":
        vocab = vocabulary([*reference["sentence1"], *reference["sentence2"]])
        rows = coverage_slices(dataset["sentence1"], dataset["sentence2"], vocab, k=k)
    else:
        raise ValueError(f"slice_dataset: by must be 'length', 'coverage' or 'gold', got {by!r}")
    return {name: dataset.select(indices.tolist()) for name, indices in rows.items()}


def describe(values: Sequence[float] | FloatArray) -> Mapping[str, float]:
    """``{n, mean, std}`` (population std, as the paper's ``mean ± std``)."""
    data = np.asarray(values, dtype=float)
    return (
        {"n": int(data.size), "mean": float(data.mean()), "std": float(data.std())} if data.size else {"n": 0}
    )


def _check_pairs(sentence1: Sequence[str], sentence2: Sequence[str]) -> None:
    if len(sentence1) != len(sentence2):
        raise ValueError(f"sentence1 has {len(sentence1)} rows but sentence2 has {len(sentence2)}")
