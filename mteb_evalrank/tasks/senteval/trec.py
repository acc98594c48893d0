from ._base import AbsTaskSentEval, senteval_metadata, senteval_protocol


class TRECClassification(AbsTaskSentEval):
    metadata = senteval_metadata(
        name="TRECClassification",
        description=(
            "TREC question classification (Li and Roth, 2002): 5,452 training and 500 test questions, six "
            "coarse answer types. Official splits."
        ),
        reference="https://cogcomp.seas.upenn.edu/Data/QA/QC/",
        config="trec",
        year=2002,
        domains=["Written"],
        task_subtypes=["Intent classification"],
        citation=r"""@inproceedings{li2002learning,
  author = {Li, Xin and Roth, Dan},
  booktitle = {COLING 2002: The 19th International Conference on Computational Linguistics},
  title = {Learning Question Classifiers},
  year = {2002},
}
""",
    )


SentEvalTREC = senteval_protocol(TRECClassification)
