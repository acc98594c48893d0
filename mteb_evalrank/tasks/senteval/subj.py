from ._base import EVAL_LANGS_FOLDS, AbsTaskSentEval, senteval_metadata, senteval_protocol


class SUBJClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = senteval_metadata(
        name="SUBJClassification",
        description=(
            "Subjectivity (Pang and Lee, 2004): 10,000 movie sentences, objective (plot summaries) or "
            "subjective (review snippets). Ten fixed stratified folds, one hf_subset each (10-fold "
            "cross-validation)."
        ),
        reference="https://www.cs.cornell.edu/people/pabo/movie-review-data/",
        config="subj",
        eval_langs=EVAL_LANGS_FOLDS,
        year=2004,
        domains=["Reviews", "Written"],
        task_subtypes=[],
        annotations_creators="derived",
        citation=r"""@inproceedings{pang2004sentimental,
  author = {Pang, Bo and Lee, Lillian},
  booktitle = {Proceedings of the 42nd Annual Meeting of the Association for Computational Linguistics},
  pages = {271--278},
  title = {A Sentimental Education: Sentiment Analysis Using Subjectivity Summarization Based on Minimum Cuts},
  year = {2004},
}
""",
    )


SentEvalSUBJ = senteval_protocol(SUBJClassification)
