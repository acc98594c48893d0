"""STR2021 (Abdalla et al., 2021) as an mteb STS task; the name carries the year because mteb's
``SemRel24STS`` is another collection (SemEval-2024 Task 1, 14 languages).
"""

from mteb.abstasks.sts import AbsTaskSTS

from mteb_evalrank.data.registry import STR_2021
from mteb_evalrank.tasks._loading import PluginDatasetLoading
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._citations import EVALRANK_CITATION, cite
from ._encoding import EncodeOnce


class STR2021(EncodeOnce, PluginDatasetLoading, AbsTaskSTS):
    min_score, max_score = 0, 1
    metadata = PluginTaskMetadata(
        name="STR2021",
        description=(
            "Semantic Textual Relatedness 2021 (Abdalla et al., 2021): 5,500 English sentence pairs "
            "from seven sources (Formality, Goodreads, Wikipedia, ParaNMT, SNLI, Stance, STS) with "
            "relatedness scores in [0, 1] from comparative (best-worst scaling) annotation. A "
            "sentence-similarity baseline of EvalRank (Wang et al., 2022); main score: Spearman "
            "correlation of the cosine similarity of the two sentence embeddings with the scores."
        ),
        reference="https://arxiv.org/abs/2110.04845",
        dataset=STR_2021.mteb_dataset(),
        type="STS",
        category="t2t",
        eval_langs=["eng-Latn"],
        main_score="cosine_spearman",
        date=("2021-01-01", "2021-12-31"),
        domains=["Written", "Encyclopaedic", "Social"],
        task_subtypes=[],
        license=STR_2021.license,
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=cite(
            r"""@misc{abdalla2021makes,
  archiveprefix = {arXiv},
  author = {Abdalla, Mohamed and Vishnubhotla, Krishnapriya and Mohammad, Saif M.},
  eprint = {2110.04845},
  primaryclass = {cs.CL},
  title = {What Makes Sentences Semantically Related: A Textual Relatedness Dataset and Empirical Study},
  year = {2021},
}

""",
            EVALRANK_CITATION,
        ),
    )
