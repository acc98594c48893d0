"""The plugin's own folder on this machine (a leaf module: standard library only).

``$MTEB_EVALRANK_HOME``, else ``$XDG_CACHE_HOME/mteb-evalrank``, else
``~/.cache/mteb-evalrank``. It holds what the plugin derives or downloads itself: the
PyPI encoders' folders (``encoders/``) and the fetched raw data (``raw/``).
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "MTEB_EVALRANK_HOME"


def home() -> Path:
    """The plugin's folder (see the module docstring); not created here."""
    explicit = os.environ.get(HOME_ENV)
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "mteb-evalrank"
