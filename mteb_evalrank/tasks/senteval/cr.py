from ._base import EVAL_LANGS_FOLDS, AbsTaskSentEval, senteval_metadata, senteval_protocol


class CRClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = senteval_metadata(
        name="CRClassification",
        description=(
            "Customer-review sentence polarity (Hu and Liu, 2004): 3,771 product-review sentences, positive "
            "or negative. Ten fixed stratified folds, one hf_subset each (10-fold cross- validation)."
        ),
        reference="https://www.cs.uic.edu/~liub/FBS/sentiment-analysis.html",
        config="cr",
        eval_langs=EVAL_LANGS_FOLDS,
        year=2004,
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        citation=r"""@inproceedings{hu2004mining,
  author = {Hu, Minqing and Liu, Bing},
  booktitle = {Proceedings of the Tenth ACM SIGKDD International Conference on Knowledge Discovery and Data Mining},
  pages = {168--177},
  title = {Mining and Summarizing Customer Reviews},
  year = {2004},
}
""",
    )


SentEvalCR = senteval_protocol(CRClassification)
