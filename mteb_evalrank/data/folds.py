"""Fixed, documented cross-validation folds for datasets without an official split.

SentEval's MR, CR, SUBJ and MPQA come without a train/test split; the SentEval toolkit
draws stratified folds with a seeded shuffle at evaluation time, so its folds depend on
the library version. Here the folds are part of the data, assigned once by the recipe with
a rule that needs no random generator:

1. group the rows by label;
2. inside a label, order the rows by ``SHA-256(f"{namespace}:{row_index}")`` (a fixed
   pseudo-random order that does not depend on the text, so duplicated texts are spread
   like any other rows);
3. the ``r``-th row of that order (``r = 0, 1, ...``) goes to fold ``r mod k``.

Every fold therefore holds ``floor(n_c / k)`` or ``ceil(n_c / k)`` rows of each label
``c`` (stratified), and the assignment is a pure function of ``(namespace, labels, k)``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def stratified_folds(labels: Sequence[int], n_folds: int = 10, *, namespace: str) -> list[int]:
    """Fold index in ``[0, n_folds)`` of every row, stratified by label (rule in the module doc).

    Args:
        labels: the label of each row, in row order.
        n_folds: ``k``; at least 2.
        namespace: salt of the hash (the dataset config name), so that two datasets of the
            same size do not share their fold pattern.

    Returns:
        ``folds[i]`` for row ``i``.
    """
    if n_folds < 2:
        raise ValueError(f"n_folds must be at least 2, got {n_folds}")
    by_label: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        by_label.setdefault(label, []).append(index)
    folds = [-1] * len(labels)
    for rows in by_label.values():
        rows.sort(key=lambda i: hashlib.sha256(f"{namespace}:{i}".encode()).digest())
        for rank, row in enumerate(rows):
            folds[row] = rank % n_folds
    return folds
