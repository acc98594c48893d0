from ._base import AbsTaskSentEvalPair, senteval_metadata, senteval_protocol


class MRPCClassification(AbsTaskSentEvalPair):
    metadata = senteval_metadata(
        name="MRPCClassification",
        description=(
            "Microsoft Research Paraphrase Corpus (Dolan and Brockett, 2005): 4,076 training and 1,725 test "
            "news sentence pairs, paraphrase or not. Official splits. Classified on the pair features [u, "
            "v, |u-v|, u*v]."
        ),
        reference="https://www.microsoft.com/en-us/download/details.aspx?id=52398",
        config="mrpc",
        year=2005,
        domains=["News", "Written"],
        task_subtypes=["Duplicate Detection"],
        citation=r"""@inproceedings{dolan2005automatically,
  author = {Dolan, William B. and Brockett, Chris},
  booktitle = {Proceedings of the Third International Workshop on Paraphrasing (IWP2005)},
  title = {Automatically Constructing a Corpus of Sentential Paraphrases},
  year = {2005},
}
""",
    )


SentEvalMRPC = senteval_protocol(MRPCClassification)
