"""BibTeX entries shared by several task files."""

EVALRANK_CITATION = r"""@inproceedings{wang2022just,
  author = {Wang, Bin and Kuo, C.-C. Jay and Li, Haizhou},
  booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)},
  pages = {6060--6077},
  title = {Just Rank: Rethinking Evaluation with Word and Sentence Similarities},
  url = {https://aclanthology.org/2022.acl-long.419},
  year = {2022},
}"""
