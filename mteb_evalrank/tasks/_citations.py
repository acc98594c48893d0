"""BibTeX entries shared by several task files."""

EVALRANK_CITATION = r"""@inproceedings{wang2022just,
  author = {Wang, Bin and Kuo, C.-C. Jay and Li, Haizhou},
  booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)},
  pages = {6060--6077},
  title = {Just Rank: Rethinking Evaluation with Word and Sentence Similarities},
  url = {https://aclanthology.org/2022.acl-long.419},
  year = {2022},
}"""

ABE2022_CITATION = r"""@inproceedings{abe2022sts,
  author = {Abe, Kenya and Yokoi, Sho and Kajiwara, Tomoyuki and Inui, Kentaro},
  booktitle = {Proceedings of the 3rd Workshop on Evaluation and Comparison of NLP Systems},
  title = {Why is sentence similarity benchmark not predictive of application-oriented task performance?},
  year = {2022},
}"""

WMT17_METRICS_CITATION = r"""@inproceedings{bojar2017results,
  author = {Bojar, Ond{\v{r}}ej and Graham, Yvette and Kamran, Amir},
  booktitle = {Proceedings of the Second Conference on Machine Translation},
  pages = {489--513},
  title = {Results of the {WMT17} Metrics Shared Task},
  year = {2017},
}"""
