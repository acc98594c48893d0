from ._base import EVAL_LANGS_FOLDS, AbsTaskSentEval, senteval_metadata, senteval_protocol


class MRClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = senteval_metadata(
        name="MRClassification",
        description=(
            "Movie-review snippet polarity (Pang and Lee, 2005): 10,662 Rotten Tomatoes snippets, positive "
            "or negative. Ten fixed stratified folds, one hf_subset each (10-fold cross- validation)."
        ),
        reference="https://www.cs.cornell.edu/people/pabo/movie-review-data/",
        config="mr",
        eval_langs=EVAL_LANGS_FOLDS,
        year=2005,
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        annotations_creators="derived",
        citation=r"""@inproceedings{pang2005seeing,
  author = {Pang, Bo and Lee, Lillian},
  booktitle = {Proceedings of the 43rd Annual Meeting of the Association for Computational Linguistics},
  pages = {115--124},
  title = {Seeing Stars: Exploiting Class Relationships for Sentiment Categorization with Respect to Rating Scales},
  year = {2005},
}
""",
    )


SentEvalMR = senteval_protocol(MRClassification)
