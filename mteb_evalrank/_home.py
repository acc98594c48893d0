"""The plugin's own folder on this machine: ``Settings.home`` (a leaf module)."""

from __future__ import annotations

from pathlib import Path

from .settings import Settings


def home() -> Path:
    """:attr:`Settings.home <mteb_evalrank.settings.Settings.home>` of the environment; not created here."""
    return Settings.from_environment().home
