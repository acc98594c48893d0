"""BibTeX entries shared by several task files, and :func:`cite`, which joins entries."""


def cite(*entries: str) -> str:
    """BibTeX entries as one citation as mteb's formatter writes it: stripped, sorted by key ignoring
    case, a blank line between."""

    def key(entry: str) -> str:
        return entry[entry.index("{") + 1 : entry.index(",")].strip().lower()

    return "\n\n".join(sorted((entry.strip() for entry in entries), key=key))


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


#: SST (Socher et al., 2013): SST2 and SST5.
SST_CITATION = r"""@inproceedings{socher2013recursive,
  author = {Socher, Richard and Perelygin, Alex and Wu, Jean and Chuang, Jason and Manning, Christopher D. and Ng, Andrew and Potts, Christopher},
  booktitle = {Proceedings of the 2013 Conference on Empirical Methods in Natural Language Processing},
  pages = {1631--1642},
  title = {Recursive Deep Models for Semantic Compositionality Over a Sentiment Treebank},
  year = {2013},
}
"""

#: WS-353's similarity / relatedness split (Agirre et al., 2009): WS353-Sim and WS353-Rel.
AGIRRE2009_CITATION = r"""@inproceedings{agirre2009study,
  author = {Agirre, Eneko and Alfonseca, Enrique and Hall, Keith and Kravalova, Jana and Pa{\c{s}}ca,
Marius and Soroa, Aitor},
  booktitle = {Proceedings of Human Language Technologies: The 2009 Annual Conference of the North
American Chapter of the Association for Computational Linguistics},
  title = {A Study on Similarity and Relatedness Using Distributional and {WordNet}-based Approaches},
  url = {https://aclanthology.org/N09-1003},
  year = {2009},
}"""

# Papers that mteb's own tasks already cite: mteb's key and entry, verbatim (mteb rejects one paper
# cited under two keys; tests/test_mteb_validation.py checks these still equal mteb's).

#: SICK (Marelli et al., 2014), as in mteb's ``SICK-R``.
SICK_CITATION = r"""@inproceedings{marelli-etal-2014-sick,
  address = {Reykjavik, Iceland},
  author = {Marelli, Marco  and
Menini, Stefano  and
Baroni, Marco  and
Bentivogli, Luisa  and
Bernardi, Raffaella  and
Zamparelli, Roberto},
  booktitle = {Proceedings of the Ninth International Conference on Language Resources and Evaluation ({LREC}'14)},
  editor = {Calzolari, Nicoletta  and
Choukri, Khalid  and
Declerck, Thierry  and
Loftsson, Hrafn  and
Maegaard, Bente  and
Mariani, Joseph  and
Moreno, Asuncion  and
Odijk, Jan  and
Piperidis, Stelios},
  month = may,
  pages = {216--223},
  publisher = {European Language Resources Association (ELRA)},
  title = {A {SICK} cure for the evaluation of compositional distributional semantic models},
  url = {http://www.lrec-conf.org/proceedings/lrec2014/pdf/363_Paper.pdf},
  year = {2014},
}"""

#: STS Benchmark (Cer et al., 2017), as in mteb's ``STSBenchmark``.
STSB_CITATION = r"""@inproceedings{cer-etal-2017-semeval,
  address = {Vancouver, Canada},
  author = {Cer, Daniel  and
Diab, Mona  and
Agirre, Eneko  and
Lopez-Gazpio, I{\~n}igo  and
Specia, Lucia},
  booktitle = {Proceedings of the 11th International Workshop on Semantic Evaluation ({S}em{E}val-2017)},
  doi = {10.18653/v1/S17-2001},
  editor = {Bethard, Steven  and
Carpuat, Marine  and
Apidianaki, Marianna  and
Mohammad, Saif M.  and
Cer, Daniel  and
Jurgens, David},
  month = aug,
  pages = {1--14},
  publisher = {Association for Computational Linguistics},
  title = {{S}em{E}val-2017 Task 1: Semantic Textual Similarity Multilingual and Crosslingual Focused Evaluation},
  url = {https://aclanthology.org/S17-2001},
  year = {2017},
}"""


# the sequence-labelling tasks (Chiu et al., 2016) and their datasets
CHIU_CITATION = r"""@inproceedings{chiu2016intrinsic,
  author = {Chiu, Billy and Korhonen, Anna and Pyysalo, Sampo},
  booktitle = {Proceedings of the 1st Workshop on Evaluating Vector-Space Representations for {NLP}},
  pages = {1--6},
  title = {Intrinsic Evaluation of Word Vectors Fails to Predict Extrinsic Performance},
  year = {2016},
}"""

SILVEIRA2014_CITATION = r"""@inproceedings{silveira2014gold,
  author = {Silveira, Natalia and Dozat, Timothy and de Marneffe, Marie-Catherine and Bowman, Samuel and Connor, Miriam and Bauer, John and Manning, Christopher D.},
  booktitle = {Proceedings of the Ninth International Conference on Language Resources and Evaluation ({LREC}'14)},
  title = {A Gold Standard Dependency Corpus for {E}nglish},
  year = {2014},
}"""

CONLL2000_CITATION = r"""@inproceedings{tjong-kim-sang-buchholz-2000-introduction,
  author = {Tjong Kim Sang, Erik F. and Buchholz, Sabine},
  booktitle = {Fourth Conference on Computational Natural Language Learning and the Second Learning Language in Logic Workshop},
  title = {Introduction to the {C}o{NLL}-2000 Shared Task Chunking},
  year = {2000},
}"""

# mteb's key and entry, verbatim (its XGlueWPRReranking task cites the paper)
CONLL2003_CITATION = r"""@article{Sang2003IntroductionTT,
  author = {Erik F. Tjong Kim Sang and Fien De Meulder},
  journal = {ArXiv},
  title = {Introduction to the CoNLL-2003 Shared Task: Language-Independent Named Entity Recognition},
  volume = {cs.CL/0306050},
  year = {2003},
}"""
