"""AccSent: does an embedding prefer a human paraphrase over a one-keyword swap? (docs/accsent.md:
the data, and why the type is ``PairClassification``: symmetric prompts for the three sentences.)
"""

from typing import ClassVar

from mteb_evalrank.data.registry import ACCSENT
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._triplet import AbsTaskTriplet


class AccSent(AbsTaskTriplet):
    breakdown_columns: ClassVar[tuple[str, ...]] = ("length_bucket", "source", "category", "keyword")

    metadata = PluginTaskMetadata(
        name="AccSent",
        description=(
            "AccSent-style triplets (X, X', Y): X' a human paraphrase of X (MRPC paraphrase pairs, "
            "news STS-B pairs with gold >= 4.5), Y = X with one keyword shared by X and X' replaced "
            "by a contrastive word (AccSent's 20 Table 2 swaps plus 658 antonyms, co-hyponyms, "
            "numbers, dates, names, ...). Main score: accuracy of sim(X, X') > sim(X, Y) with the "
            "model's own similarity (ties fail); also sim(X, X') > sim(X', Y), per length bucket, "
            "source, category and keyword."
        ),
        reference="https://data.statmt.org/news-crawl/",
        dataset=ACCSENT.mteb_dataset(),
        type="PairClassification",
        category="t2t",
        eval_langs=["eng-Latn"],
        main_score="anchor_accuracy",
        date=("2003-01-01", "2017-12-31"),
        domains=["News", "Written"],
        task_subtypes=[],
        license="multiple",
        annotations_creators="derived",
        dialect=[],
        sample_creation="created",
        bibtex_citation=r"""@inproceedings{dolan2005automatically,
  author = {Dolan, William B. and Brockett, Chris},
  booktitle = {Proceedings of the Third International Workshop on Paraphrasing (IWP2005)},
  title = {Automatically Constructing a Corpus of Sentential Paraphrases},
  year = {2005},
}
""",
    )
