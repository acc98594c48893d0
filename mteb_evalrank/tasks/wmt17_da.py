"""WMT17DA: the MT-metrics application task of Abe et al. (2022) as an mteb STS task.

Data: ``mteb-evalrank/wmt17-da`` (recipe and card in ``tasks/wmt17-da/``), hf_subsets
``cs-en`` ... ``zh-en`` (560 pairs each, lv-en 435): mteb's task score is their mean, the WMT
segment-level average over language pairs. All pairs pooled (``all``, 3,795) is the task
``WMT17DAPooled``. See ``_gap`` for the scores and conventions.
"""

from ._gap import WMT17_LANGUAGE_PAIRS, AbsTaskGapSTS, wmt17_metadata


class WMT17DA(AbsTaskGapSTS):
    metadata = wmt17_metadata(
        name="WMT17DA",
        description=(
            "WMT17 segment-level direct assessment, to-English, 7 language pairs (score: the mean "
            "over language pairs): the application task against which Abe et al. (2022) measure "
            "the evaluation gap of STS-B."
        ),
        hf_subsets=WMT17_LANGUAGE_PAIRS,
    )
