"""The plugin's one network policy (a leaf module: standard library only).

``Settings.offline`` decides whether the plugin may use the network; every path of the plugin that
can reach it is passed it first and, offline, ends at once in one message (:func:`refusal`) naming
the variable and what to do instead (docs/usage.md, "Where the data come from").
"""

from __future__ import annotations

import os
import sys

from .settings import OFFLINE_ENVS, Settings

#: (module, constant): the offline flags ``huggingface_hub`` and ``datasets`` read at call time
#: (set from ``HF_HUB_OFFLINE`` when they are imported; ``datasets`` reads no other); also switched
#: for a block by ``_mteb_adapter.hub_switched_off``
HUB_OFFLINE_FLAGS: tuple[tuple[str, str], ...] = (
    ("huggingface_hub.constants", "HF_HUB_OFFLINE"),
    ("datasets.config", "HF_HUB_OFFLINE"),
)


class OfflineError(RuntimeError):
    """What a run needs is not on this machine and the offline switch forbids fetching it."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def refusal(what: str, flag: str) -> str:
    """The one paragraph for ``what`` (a model or dataset the Hugging Face cache lacks) under ``flag``."""
    return (
        f"{what}: {flag} is set, so nothing is downloaded and what the Hugging Face cache (HF_HOME) "
        f"lacks cannot be used. Run the command once with {flag} unset on a connected machine (the "
        "files are then cached), or use a model or dataset the cache holds (`mteb-evalrank models "
        "zoo` lists the models that need no download)."
    )


def switch_libraries_offline(settings: Settings) -> None:
    """With ``MTEB_EVALRANK_OFFLINE`` true, the Hugging Face libraries of this process go offline too.

    Sets ``HF_HUB_OFFLINE=1`` and ``HF_DATASETS_OFFLINE=1`` in the environment (read when
    ``huggingface_hub`` and ``datasets`` are imported, and by child processes) and, for those
    already imported, their flags (:data:`HUB_OFFLINE_FLAGS`): then no path of ``huggingface_hub``
    sends a request. Does nothing otherwise: the user's own HF settings are never changed then.
    """
    if settings.offline != OFFLINE_ENVS[0]:
        return
    os.environ["HF_HUB_OFFLINE"] = os.environ["HF_DATASETS_OFFLINE"] = "1"
    for module_name, name in HUB_OFFLINE_FLAGS:
        if (module := sys.modules.get(module_name)) is not None:
            setattr(module, name, True)
