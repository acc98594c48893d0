"""``mteb-evalrank diagnose``: the length and vocabulary-coverage statistics of Abe et al. (2022)
(docs/diagnostics.md): Figure 3, sentence length (whitespace tokens, each side of a pair once, as a
share of each dataset's sentences, bins of 5 tokens); Figure 6, ``Recall(s, s')`` (Eq. 1, lower-cased
token sets) of each target pair against the reference vocabulary, 20 bins on [0, 1], the last closed;
mean ± std (population). Histograms: ``numpy.histogram``; the slicing maths: ``evaluation.slices``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._files import save_figure, write_text
from ._network import OfflineError, refusal
from .evaluation import slices
from .settings import Settings

LENGTH_BIN_WIDTH = 5
COVERAGE_BINS = 20
FILE_FORMATS = {".tsv": "csv", ".csv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}


@dataclass(frozen=True)
class PairSet:
    """The sentence pairs of one dataset (scores are not needed here)."""

    name: str
    sentence1: list[str]
    sentence2: list[str]

    def __post_init__(self) -> None:
        if len(self.sentence1) != len(self.sentence2) or not self.sentence1:
            raise ValueError(
                f"dataset {self.name!r}: need as many sentence1 as sentence2 rows and at least one pair, "
                f"got {len(self.sentence1)} and {len(self.sentence2)}"
            )

    @property
    def sentence_lengths(self) -> np.ndarray:
        """Token count of every sentence, ``sentence1`` then ``sentence2``."""
        return np.array([len(slices.tokenize(text)) for text in (*self.sentence1, *self.sentence2)])


def load_pairs(spec: str, settings: Settings) -> PairSet:
    """A dataset from a local file (``.tsv``/``.csv``/``.jsonl``/``.json``/``.parquet`` with
    columns ``sentence1`` and ``sentence2``) or a Hub id ``org/name[:config]`` (split ``test``,
    read through ``datasets.load_dataset``, from its cache alone when ``settings.offline``)."""
    import datasets

    path = Path(spec)
    if path.suffix.lower() in FILE_FORMATS:
        if not path.is_file():
            raise FileNotFoundError(
                f"{spec}: no such file (give a .tsv/.csv/.jsonl/.parquet file or a Hub id)"
            )
        kwargs = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
        table = datasets.load_dataset(
            FILE_FORMATS[path.suffix.lower()], data_files=str(path), split="train", **kwargs
        )
    else:
        from .data.ready import load_split
        from .data.registry import spec_for_hub_id

        hub_id, _, config = spec.partition(":")
        plugin = spec_for_hub_id(hub_id)
        if plugin is not None:  # the tasks' checks: built on first use, a damaged copy repaired or named
            table = load_split(plugin, config or None, "test", f"diagnose {spec}", settings)
        else:
            try:
                table = datasets.load_dataset(hub_id, config or None, split="test")
            except ConnectionError as error:  # datasets' "Couldn't reach ... (OfflineModeIsEnabled)"
                if (flag := settings.offline) is None:
                    raise
                message = refusal(f"the dataset {hub_id} is not in the datasets cache", flag)
                raise OfflineError(message) from error
    missing = [name for name in ("sentence1", "sentence2") if name not in table.column_names]
    if missing:
        raise ValueError(
            f"{spec}: no column {missing} (columns: {table.column_names}); rename them to sentence1/2"
        )
    return PairSet(
        spec, [str(text) for text in table["sentence1"]], [str(text) for text in table["sentence2"]]
    )


def default_pairs(source: Path) -> tuple[PairSet, PairSet]:
    """``(STS-B, WMT17 DA)`` read from the raw data folder by the ``wmt17-da`` recipe."""
    from .data.registry import WMT17_DA

    recipe = WMT17_DA.recipe
    stsb = recipe.read_stsb_pairs(source)
    wmt = recipe.read_all(source)
    return (
        PairSet("STS-B", [r[0] for r in stsb], [r[1] for r in stsb]),
        PairSet("WMT17 DA", [r["sentence1"] for r in wmt], [r["sentence2"] for r in wmt]),
    )


def _summary(values: np.ndarray) -> dict[str, float]:
    return {"mean": float(values.mean()), "std": float(values.std()), "median": float(np.median(values))}


def statistics(reference: PairSet, targets: list[PairSet]) -> dict[str, Any]:
    """Every number of the two figures (see the module docstring)."""
    datasets = [reference, *targets]
    longest = max(int(pairs.sentence_lengths.max()) for pairs in datasets)
    length_edges = np.arange(0, longest + 2 * LENGTH_BIN_WIDTH, LENGTH_BIN_WIDTH)
    # exact k/20 edges (linspace: 0.6000000000000001)
    coverage_edges = np.arange(COVERAGE_BINS + 1) / COVERAGE_BINS
    vocab = slices.vocabulary([*reference.sentence1, *reference.sentence2])
    result: dict[str, Any] = {
        "reference": reference.name,
        "reference_vocabulary_size": len(vocab),
        "length_bin_edges": length_edges.tolist(),
        "coverage_bin_edges": coverage_edges.tolist(),
        "datasets": {},
    }
    for pairs in datasets:
        lengths = pairs.sentence_lengths
        entry: dict[str, Any] = {
            "n_pairs": len(pairs.sentence1),
            "sentence_length": _summary(lengths),
            "pair_length": _summary(slices.pair_lengths(pairs.sentence1, pairs.sentence2)),
            "sentence_length_counts": np.histogram(lengths, length_edges)[0].tolist(),
        }
        if pairs is not reference:
            coverage = slices.vocabulary_coverages(pairs.sentence1, pairs.sentence2, vocab)
            entry["coverage"] = {**_summary(coverage), "share_fully_covered": float(np.mean(coverage == 1.0))}
            entry["coverage_counts"] = np.histogram(coverage, coverage_edges)[0].tolist()
        result["datasets"][pairs.name] = entry
    return result


def _plot(stats: dict[str, Any], kind: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    edges = np.array(stats[f"{kind}_bin_edges"])
    key = "sentence_length_counts" if kind == "length" else "coverage_counts"
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    for name, entry in stats["datasets"].items():
        if key in entry:
            counts = np.array(entry[key], dtype=float)
            ax.stairs(
                100 * counts / counts.sum(), edges, label=f"{name} (n={entry['n_pairs']})", fill=False, lw=1.8
            )
    if kind == "length":
        ax.set(
            xlabel="sentence length (tokens)",
            ylabel="% of sentences",
            title="Sentence length (Abe et al. Fig. 3)",
        )
        ax.set_xlim(0, min(edges[-1], 100))
    else:
        ax.set(
            xlabel=f"Recall(s, s') against the {stats['reference']} vocabulary",
            ylabel="% of pairs",
            title="Vocabulary coverage (Abe et al. Fig. 6)",
        )
    ax.legend()
    fig.tight_layout()
    save_figure(fig, out)
    plt.close(fig)


def markdown(stats: dict[str, Any]) -> str:
    """The summary table and both histograms as markdown."""
    lines = [
        f"Reference vocabulary: {stats['reference']} "
        f"({stats['reference_vocabulary_size']:,} lower-cased tokens)",
        "",
        "| dataset | pairs | sentence length | pair length | coverage | fully covered |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in stats["datasets"].items():
        cov = entry.get("coverage")
        lines.append(
            f"| {name} | {entry['n_pairs']:,} | {entry['sentence_length']['mean']:.2f} ± "
            f"{entry['sentence_length']['std']:.2f} | {entry['pair_length']['mean']:.2f} ± "
            f"{entry['pair_length']['std']:.2f} | "
            + (
                f"{cov['mean']:.3f} ± {cov['std']:.3f} | {100 * cov['share_fully_covered']:.1f}% |"
                if cov
                else "- | - |"
            )
        )
    for kind, key, title in (
        ("length", "sentence_length_counts", "Sentences per length bin [lo, hi)"),
        ("coverage", "coverage_counts", "Pairs per coverage bin [lo, hi), the last one closed"),
    ):
        names = [name for name, entry in stats["datasets"].items() if key in entry]
        edges = stats[f"{kind}_bin_edges"]
        lines += [
            "",
            f"{title}:",
            "",
            "| bin | " + " | ".join(names) + " |",
            "| --- |" + " ---: |" * len(names),
        ]
        for i in range(len(edges) - 1):
            row = [stats["datasets"][name][key][i] for name in names]
            if any(row):
                close = "]" if i == len(edges) - 2 else ")"  # numpy's last bin holds its right edge
                cells = " | ".join(str(v) for v in row)
                lines.append(f"| [{edges[i]:g}, {edges[i + 1]:g}{close} | {cells} |")
    return "\n".join(lines) + "\n"


def diagnose(reference: PairSet, targets: list[PairSet], out: Path) -> dict[str, Path]:
    """Write the two PNGs, ``diagnostics.json`` and ``diagnostics.md`` into ``out``."""
    if not targets:
        raise ValueError("diagnose needs at least one target dataset")
    out.mkdir(parents=True, exist_ok=True)
    stats = statistics(reference, targets)
    paths = {
        "length": out / "sentence_length.png",
        "coverage": out / "vocabulary_coverage.png",
        "json": out / "diagnostics.json",
        "markdown": out / "diagnostics.md",
    }
    _plot(stats, "length", paths["length"])
    _plot(stats, "coverage", paths["coverage"])
    write_text(paths["json"], json.dumps(stats, indent=2) + "\n")
    write_text(paths["markdown"], markdown(stats))
    return paths
