"""The width control with a penalty chosen on the validation split (docs/sequence_labelling.md).

Does an L2 penalty on the tagger's two weight matrices, chosen with the epoch on the task's
validation split, remove the width penalty of Chiu et al.'s protocol? One task with a validation
split (CoNLL-2003 NER or EWT POS), glove.6B.50d with information-free random dimensions appended
(``scripts/width_control.py``'s models), the task's own data path (tokens, lower-cased forms, centring,
windows) through ``mteb.evaluate``; its tagger replaced by one lockstep run of one tagger per
penalty (``tagging.train_and_select(..., l2=...)``, seed 0, Chiu's 10 epochs), each scored on the
validation split after every epoch and on the test split. Writes, per width, each penalty's final and
selected test score, its selected epoch and its validation scores:

    python scripts/width_control_l2.py [--widths 50 300] [--task CoNLL2003NER] [--l2 0 1e-4 1e-3 1e-2]
        [--out docs/study/width-control/l2]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import mteb
import numpy as np
from width_control import padded_model

from mteb_evalrank.evaluation.tagging import train_and_select
from mteb_evalrank.tasks._sequence_labelling import AbsTaskSequenceLabelling


def penalised_scores(penalties: list[float], found: dict[str, Any]) -> Any:
    """A replacement of the task's ``_scores``: one tagger per penalty; what it finds goes to ``found``."""

    def scores(self: Any, vectors: Any, inputs: Any, gold: Any, config: Any) -> dict[str, float]:
        labels = np.asarray(sorted({tag for sentence in gold["train"] for tag in sentence}), dtype=object)
        index = {tag: i for i, tag in enumerate(labels)}
        targets = np.fromiter((index[t] for s in gold["train"] for t in s), dtype=np.intp)
        main = self.metadata.main_score

        def scored(split: str, predicted: Any) -> float:
            tags = np.split(labels[predicted], np.cumsum([len(s) for s in gold[split]])[:-1])
            return float(self._score_predictions(gold[split], [list(s) for s in tags])[main])

        dev: list[float] = []  # the members' validation scores, in the order train_and_select asks

        def validation(predicted: Any) -> float:
            dev.append(scored("dev", predicted))
            return dev[-1]

        start = time.perf_counter()
        runs = train_and_select(
            vectors, inputs["train"], targets, inputs["test"], len(labels), seeds=[0] * len(penalties),
            l2=penalties, config=config, dev=(inputs["dev"], validation),
        )  # fmt: skip
        for k, (penalty, (final, selected, epoch)) in enumerate(zip(penalties, runs, strict=True)):
            found[str(penalty)] = {
                "final": scored("test", final), "selected": scored("test", selected), "epoch": epoch,
                "validation": dev[k :: len(penalties)],
            }  # fmt: skip
        found["seconds"] = time.perf_counter() - start
        return {main: float("nan")}

    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[50, 300])
    parser.add_argument("--task", default="CoNLL2003NER", choices=["CoNLL2003NER", "EWTPOSTagging"])
    parser.add_argument("--l2", type=float, nargs="+", default=[0.0, 1e-4, 1e-3, 1e-2])
    parser.add_argument("--out", type=Path, default=Path("docs/study/width-control/l2"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for width in args.widths:
        found: dict[str, Any] = {}
        AbsTaskSequenceLabelling._scores = penalised_scores(args.l2, found)  # type: ignore[method-assign]
        model: Any = padded_model(width)
        mteb.evaluate(model, [mteb.get_task(args.task)], cache=None, overwrite_strategy="always")
        record = {"task": args.task, "width": width, "seed": 0, "l2": found}
        (args.out / f"{args.task}-{width}d.json").write_text(
            json.dumps(record, indent=1) + "\n", encoding="utf-8"
        )
        best = max(args.l2, key=lambda penalty: max(found[str(penalty)]["validation"]))
        print(f"{width}-d: chosen l2 {best}, test {found[str(best)]['selected']:.4f}")


if __name__ == "__main__":
    main()
