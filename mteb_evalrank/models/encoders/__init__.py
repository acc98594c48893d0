"""Pretrained encoders that PyPI packages ship, one module (an ``EncoderFamily``) each (docs/zoo.md);
importing this package imports no encoder runtime."""

from __future__ import annotations

from ._common import INSTALL_HINT, EncoderFamily, FamilyEncoder, WeightFile
from .bge_small import FAMILY as BGE_SMALL
from .distilled import FAMILY as M2V_DISTILLED
from .e5_small import FAMILY as E5_SMALL
from .mpnet import FAMILY as MPNET
from .paraphrase_minilm import FAMILY as PARAPHRASE_MINILM
from .sre import FAMILY as SRE
from .static_models import TOKENLEARN_FAMILY as TOKENLEARN
from .use_m3 import FAMILY as USE_M3
from .word_tables import WORD_TABLES

FAMILIES = (MPNET, PARAPHRASE_MINILM, BGE_SMALL, E5_SMALL, USE_M3, TOKENLEARN, M2V_DISTILLED, SRE)
"""The PyPI-packaged encoders, in the zoo's order (``SRE`` belongs to the all-MiniLM-L6-v2 family)."""

__all__ = ["FAMILIES", "INSTALL_HINT", "WORD_TABLES", "EncoderFamily", "FamilyEncoder", "WeightFile"]
