"""A static model distilled by ``model2vec.distill`` from the bundled all-MiniLM-L6-v2 (docs/zoo.md).

Token ``r`` is weighted by SIF, ``1e-4 / (1e-4 + p_r)`` (Zipf ``p_r``), after PCA to :data:`PCA_DIMS`;
written once to ``<home>/encoders/<DISTILLED_FOLDER>`` (:mod:`.install`). A family of its own, but
all-MiniLM-L6-v2's training (``derived_from``).
"""

from __future__ import annotations

from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from mteb_evalrank.embedding_cache import StoreKey

from ..offline import MINILM, MINILM_REVISION
from ._common import EncoderFamily, require
from .install import read_marker, sha256_file, write_marked_folder
from .static_models import MODEL2VEC_CITATION, StaticModel2Vec

NAME = "evalrank/m2v-all-MiniLM-L6-v2-256d"
PCA_DIMS = 256
SIF = 1e-4
DISTILLED_FOLDER = f"m2v-all-MiniLM-L6-v2-{MINILM_REVISION[:7]}-pca{PCA_DIMS}"
SETTINGS: dict[str, Any] = {
    "teacher": MINILM,
    "teacher_revision": MINILM_REVISION,
    "pca_dims": PCA_DIMS,
    "sif_coefficient": SIF,
    "quantize_to": "float32",
    "token_remove_pattern": r"\[unused\d+\]",
    "pooling": "mean",
}
REVISION = f"model2vec-distill-pca{PCA_DIMS}-sif{SIF:g}"


def distil(out: Path) -> dict[str, Any]:
    """Distil into ``out`` (a model2vec folder); the marker facts (settings, versions, SHA-256)."""
    require("model2vec.distill", "model2vec", NAME)
    require("skeletoken", "skeletoken", NAME)
    import torch
    from model2vec.distill import distill_from_model
    from transformers import AutoModel, AutoTokenizer

    from ..offline import bundled_minilm_path

    teacher = str(bundled_minilm_path())
    tokenizer: Any = AutoTokenizer.from_pretrained(teacher)
    model = AutoModel.from_pretrained(teacher)
    model.eval()
    with torch.inference_mode():
        static = distill_from_model(
            model,
            tokenizer,
            device="cpu",
            pca_dims=PCA_DIMS,
            sif_coefficient=SIF,
            token_remove_pattern=SETTINGS["token_remove_pattern"],
            quantize_to="float32",
        )
    static.save_pretrained(str(out))
    return {
        "model": NAME,
        "settings": SETTINGS,
        "versions": {p: metadata.version(p) for p in ("model2vec", "skeletoken", "torch", "transformers")},
        "weights_sha256": sha256_file(out / "model.safetensors"),
    }


def distilled_dir(root: Path) -> Path:
    """The distilled model's folder, distilled now if absent (about a minute on 2 cores)."""
    folder = root / DISTILLED_FOLDER
    marker = read_marker(folder)
    if marker is not None and marker.get("settings") == SETTINGS and (folder / "model.safetensors").is_file():
        return folder
    return write_marked_folder(DISTILLED_FOLDER, distil, root=root)


@cache
def load(root: Path) -> StaticModel2Vec:
    """The distilled static model under ``root`` (one per process; distils it on first use)."""
    return StaticModel2Vec(str(distilled_dir(root)), StoreKey(NAME, REVISION, "none"), dim=PCA_DIMS)


FAMILY = EncoderFamily(
    family="m2v-all-MiniLM-L6-v2",
    derived_from="all-MiniLM-L6-v2",
    name=NAME,
    dim=PCA_DIMS,
    what="static model distilled from all-MiniLM-L6-v2 by model2vec (PCA 256, SIF), token mean",
    load=load,
    cut=(128,),
    meta={
        "revision": REVISION,
        "release_date": "2024-10-01",
        "n_parameters": 29_525 * PCA_DIMS,
        "n_embedding_parameters": 29_525 * PCA_DIMS,
        "memory_usage_mb": 29,  # 29,525 tokens x 256 float32
        "max_tokens": 512,  # model2vec's tokenizer truncation
        "license": "apache-2.0",
        "reference": "https://github.com/MinishLab/model2vec",
        "framework": ["NumPy", "safetensors"],
        "training_datasets": None,
        "adapted_from": MINILM,
        "citation": MODEL2VEC_CITATION,
    },
)
