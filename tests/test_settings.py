"""The settings object: every variable read from a given environment, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from mteb_evalrank.settings import DEFAULT_CACHE_MIB, DEFAULT_TIMEOUT, Settings, SettingsError


def test_an_empty_environment_gives_the_documented_defaults() -> None:
    settings = Settings.from_environment({"XDG_CACHE_HOME": "/c"})
    assert settings == Settings(home=Path("/c/mteb-evalrank"))
    assert (
        (settings.fetch_timeout, settings.cache_mib) == (DEFAULT_TIMEOUT, DEFAULT_CACHE_MIB) == (30.0, 4096)
    )
    assert settings.offline is None and settings.reuse_embeddings and settings.source is None


def test_every_variable_is_read() -> None:
    env = {
        "MTEB_EVALRANK_HOME": "/h", "MTEB_EVALRANK_SOURCE": "/s", "MTEB_EVALRANK_RAW_URL": "http://m/raw/",
        "MTEB_EVALRANK_VECTORS_URL": "http://m/v", "MTEB_EVALRANK_FETCH_TIMEOUT": "2.5",
        "MTEB_EVALRANK_VOCABULARY": "/w.txt", "MTEB_EVALRANK_REUSE_EMBEDDINGS": " 0 ",
        "MTEB_EVALRANK_EMBEDDING_CACHE": "/e", "MTEB_EVALRANK_CACHE_MIB": "64",
        "MTEB_EVALRANK_TASKS_FROM_FILES": "A=/a", "HF_DATASETS_OFFLINE": "yes",
    }  # fmt: skip
    assert Settings.from_environment(env) == Settings(
        home=Path("/h"), source=Path("/s"), raw_url="http://m/raw", vectors_url="http://m/v",
        fetch_timeout=2.5, offline="HF_DATASETS_OFFLINE", vocabulary=Path("/w.txt"),
        reuse_embeddings=False, embedding_cache=Path("/e"), cache_mib=64, tasks_from_files="A=/a",
    )  # fmt: skip


def test_the_plugins_offline_switch_is_named_first_and_false_values_are_online() -> None:
    both = {"HF_HUB_OFFLINE": "1", "MTEB_EVALRANK_OFFLINE": "ON", "XDG_CACHE_HOME": "/c"}
    assert Settings.from_environment(both).offline == "MTEB_EVALRANK_OFFLINE"
    assert Settings.from_environment({"HF_HUB_OFFLINE": "0", "MTEB_EVALRANK_OFFLINE": ""}).offline is None


@pytest.mark.parametrize("name", ["MTEB_EVALRANK_FETCH_TIMEOUT", "MTEB_EVALRANK_CACHE_MIB"])
def test_a_number_that_is_not_one_names_the_variable(name: str) -> None:
    with pytest.raises(SettingsError, match=f"{name}='soon' is not a number"):
        Settings.from_environment({name: "soon"})
