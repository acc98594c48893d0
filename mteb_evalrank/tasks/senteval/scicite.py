from ._base import AbsTaskSentEval, senteval_metadata, senteval_protocol


class SciCiteClassification(AbsTaskSentEval):
    metadata = senteval_metadata(
        name="SciCiteClassification",
        description=(
            "SciCite citation intent (Cohan et al., 2019): 7,320 / 916 / 1,861 citation contexts from "
            "scientific papers, background, method or result. Official splits."
        ),
        reference="https://github.com/allenai/scicite",
        config="scicite",
        year=2019,
        domains=["Academic", "Written"],
        task_subtypes=[],
        citation=r"""@inproceedings{cohan2019structural,
  author = {Cohan, Arman and Ammar, Waleed and van Zuylen, Madeleine and Cady, Field},
  booktitle = {Proceedings of NAACL-HLT 2019},
  pages = {3586--3596},
  title = {Structural Scaffolds for Citation Intent Classification in Scientific Publications},
  year = {2019},
}
""",
    )


SentEvalSciCite = senteval_protocol(SciCiteClassification)
