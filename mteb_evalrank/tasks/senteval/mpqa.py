from ._base import EVAL_LANGS_FOLDS, AbsTaskSentEval, senteval_metadata, senteval_protocol


class MPQAClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = senteval_metadata(
        name="MPQAClassification",
        description=(
            "MPQA opinion polarity (Wiebe et al., 2005): 10,603 short news phrases, positive or negative. "
            "Ten fixed stratified folds, one hf_subset each (10-fold cross-validation)."
        ),
        reference="https://mpqa.cs.pitt.edu/",
        config="mpqa",
        eval_langs=EVAL_LANGS_FOLDS,
        year=2005,
        domains=["News", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        citation=r"""@article{wiebe2005annotating,
  author = {Wiebe, Janyce and Wilson, Theresa and Cardie, Claire},
  journal = {Language Resources and Evaluation},
  number = {2-3},
  pages = {165--210},
  title = {Annotating Expressions of Opinions and Emotions in Language},
  volume = {39},
  year = {2005},
}
""",
    )


SentEvalMPQA = senteval_protocol(MPQAClassification)
