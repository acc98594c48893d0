"""Dataset recipes, Hub folders, offline installation and the push plan, on the real sources."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from second_process import second_process

from mteb_evalrank.data import hub
from mteb_evalrank.data.layout import BuiltDataset, evalrank_configs
from mteb_evalrank.data.registry import DATASETS, EVALRANK_SENT, EVALRANK_WORD, read_card_configs
from mteb_evalrank.data.sources import SourceFormatError, read_pairs, require_file


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_word_dataset_matches_the_paper(built: dict[str, BuiltDataset], source: Path) -> None:
    data = built["evalrank-word"]
    # the paper's Table 2: 5,514 pairs, 22,207 background words; Table 4 ablation: 5,846
    assert len(data.configs["default"]["test"]) == 5514
    assert len(data.configs["corpus"]["test"]) == 22207
    assert len(data.configs["no_wiki-corpus"]["test"]) == 5846
    corpus = data.configs["corpus"]["test"]["text"]
    pairs = [line.split("\t") for line in _lines(source / "evalrank/word_evalrank/pos_pair_5514.txt")]
    # the background starts with the words of the sorted pairs, first then second word
    first_pair = sorted(map(tuple, pairs))[0]
    assert corpus[:2] == list(first_pair)
    basic = _lines(source / "evalrank/word_evalrank/basic_vocab.txt")
    wiki = _lines(source / "evalrank/word_evalrank/wiki_vocab.txt")
    assert set(corpus) == {w for p in pairs for w in p} | set(basic) | set(wiki)
    assert len(set(corpus)) == len(corpus)
    qrels = data.configs["default"]["test"]
    as_text = {
        (corpus[int(q)], corpus[int(d)]) for q, d in zip(qrels["query-id"], qrels["corpus-id"], strict=True)
    }
    assert as_text == {tuple(p) for p in pairs}


def test_sentence_dataset_matches_the_paper(built: dict[str, BuiltDataset]) -> None:
    data = built["evalrank-sent"]
    assert len(data.configs["default"]["test"]) == 6989
    # snapshot: copied from the code's output at 03f244d; guards against regressions, not correctness
    assert len(data.configs["corpus"]["test"]) == 24957
    stats = data.stats
    assert stats["stsb"]["n_pairs"] + stats["str"]["n_pairs"] == 6989
    assert stats["n_pairs_in_both_sources"] == 0 and stats["n_pairs_in_neither_source"] == 0
    # snapshot: copied from the code's output at 03f244d; guards against regressions, not correctness
    assert stats["n_identical_pairs"] == 13
    # the subsets share the background
    assert data.configs["stsb-corpus"]["test"]["text"] == data.configs["corpus"]["test"]["text"]


def test_installed_datasets_load_offline_through_the_hub_path(built: dict[str, BuiltDataset]) -> None:
    for spec in (EVALRANK_WORD, EVALRANK_SENT):
        for config, data in built[spec.family].configs.items():
            loaded = datasets.load_dataset(spec.hub_id, config, split="test", revision=spec.revision)
            assert loaded.to_dict() == data["test"].to_dict(), (spec.hub_id, config)


def test_hub_folder_has_card_data_licence_and_provenance(
    built: dict[str, BuiltDataset], hub_dir: Path, source: Path
) -> None:
    for family, data in built.items():
        folder = hub_dir / family
        configs = read_card_configs(folder / "README.md")
        assert set(configs) == set(data.configs)
        for name, files in configs.items():
            for split, file in files.items():  # SentEval configs have train/validation splits too
                table = datasets.Dataset.from_parquet(str(folder / file))
                assert table.to_dict() == data.configs[name][split].to_dict()
        info = json.loads((folder / "build_info.json").read_text())
        assert info["revision"] == DATASETS[family].revision
        assert all(len(digest) == 64 for digest in info["sources"].values())
        card = (folder / "README.md").read_text()
        assert f"license: {DATASETS[family].license}\n" in card
        licence_file = getattr(DATASETS[family].recipe, "LICENSE_FILE", None)
        terms = getattr(DATASETS[family].recipe, "LICENSE_TEXT", None)
        if terms is not None:  # a source that ships no licence file: the terms the recipe states
            assert (folder / "LICENSE").read_text(encoding="utf-8") == terms and terms.strip()
        elif licence_file is None:  # the EvalRank release's licence and citation
            assert (folder / "LICENSE").read_text().startswith("BSD 3-Clause")
            assert "@inproceedings{wang2022just" in card
        else:
            assert (folder / "LICENSE").read_bytes() == (source / licence_file).read_bytes()


@pytest.mark.usefixtures("built")  # it writes the hub folders
def test_push_dry_run_lists_every_file(hub_dir: Path) -> None:
    plan = hub.push_plan(EVALRANK_SENT, hub_dir / "evalrank-sent", "my-org")
    assert plan.repo_id == "my-org/evalrank-sent" and plan.revision == EVALRANK_SENT.revision
    expected = {"README.md", "LICENSE", "build_info.json"} | {
        hub.parquet_path(name, "test") for name in read_card_configs(EVALRANK_SENT.card_path)
    }
    assert set(plan.files) == expected
    assert all(path.is_file() for path in plan.files.values())


def test_card_that_disagrees_with_the_build_is_refused(source: Path, tmp_path: Path) -> None:
    data = BuiltDataset(evalrank_configs("default", ["a", "b"], [("a", "b")]))
    with pytest.raises(ValueError, match="configs' do not match"):
        hub.check_card(EVALRANK_WORD, data)


@second_process
def test_malformed_pair_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "pairs.txt"
    bad.write_text("cat\tdog\nno tab here\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"pairs\.txt:2: expected 'left<TAB>right'"):
        read_pairs(bad)


@second_process
def test_missing_source_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="--source"):
        require_file(tmp_path, "evalrank/word_evalrank/pos_pair_5514.txt")


def test_layout_refuses_pairs_outside_the_background() -> None:
    with pytest.raises(ValueError, match="not in the background"):
        evalrank_configs("default", ["a", "b"], [("a", "c")])
    with pytest.raises(ValueError, match="repeated"):
        evalrank_configs("default", ["a", "b"], [("a", "b"), ("a", "b")])


def test_cli_build_with_push_dry_run_sends_nothing(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mteb_evalrank.cli import main

    main(["datasets", "build", "--source", str(source), "--out", str(tmp_path), "--only", "evalrank-word",
          "--no-install", "--push", "my-org", "--dry-run"])  # fmt: skip
    out = capsys.readouterr().out
    assert "would upload to my-org/evalrank-word (tag v1.0.0)" in out
    assert "no_wiki-qrels/test-00000-of-00001.parquet" in out and "README.md" in out
    assert (tmp_path / "evalrank-word" / "README.md").is_file()


def test_cli_rejects_a_missing_source(tmp_path: Path) -> None:
    from mteb_evalrank.cli import main

    with pytest.raises(SystemExit, match="not a folder"):
        main(["datasets", "build", "--source", str(tmp_path / "nope")])


# --- publishing a folder whole ---------------------------------------------------------------------


def test_a_published_folder_replaces_the_former_one_whole(tmp_path: Path) -> None:
    from mteb_evalrank._files import publishing

    target = tmp_path / "family"
    with publishing(target) as folder:
        (folder / "a.arrow").write_text("one")
        assert not target.exists()  # nothing visible before the rename
    with publishing(target) as folder:
        (folder / "b.arrow").write_text("two")
        assert [p.name for p in target.iterdir()] == ["a.arrow"]  # the former build, whole
    assert [p.name for p in target.iterdir()] == ["b.arrow"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["family"]  # no temporary left


@pytest.mark.parametrize("interruption", [OSError("disk full"), KeyboardInterrupt()])
@second_process
def test_an_interrupted_publish_leaves_the_former_folder_and_nothing_else(
    tmp_path: Path, interruption: BaseException
) -> None:
    from mteb_evalrank._files import publishing

    target = tmp_path / "family"
    target.mkdir()
    (target / "a.arrow").write_text("one")
    with pytest.raises(type(interruption)), publishing(target) as folder:
        (folder / "b.arrow").write_text("half")
        raise interruption
    assert [p.name for p in target.iterdir()] == ["a.arrow"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["family"]


def test_a_displaced_folder_is_kept_and_a_killed_publishers_leftover_removed(tmp_path: Path) -> None:
    from mteb_evalrank._files import aside_name, publishing

    target = tmp_path / "family"
    target.mkdir()
    (target / "damaged.arrow").write_text("x")
    (tmp_path / ".family.0123456789abcdef.tmp").mkdir()  # a publisher killed midway
    aside = aside_name(target)
    with publishing(target, displaced=aside) as folder:
        (folder / "sound.arrow").write_text("y")
    assert aside.name == "family.corrupt" and [p.name for p in aside.iterdir()] == ["damaged.arrow"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["family", "family.corrupt"]


def test_the_build_fingerprint_carries_the_format_version(
    built: dict[str, BuiltDataset], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = built["str-2021"].configs["default"]
    first = hub.write_config(tmp_path / "a", "mteb-evalrank/str-2021", "default", data)
    monkeypatch.setattr(hub, "BUILD_FORMAT", hub.BUILD_FORMAT + 1)
    second = hub.write_config(tmp_path / "b", "mteb-evalrank/str-2021", "default", data)
    assert first.parent.name == second.parent.name == "0.0.0" and first.name != second.name


@second_process
def test_a_build_of_an_older_format_is_built_again_from_the_raw_data_with_the_same_rows(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local build recording another format than ``hub.BUILD_FORMAT`` (as an older version wrote
    it) is built again from the raw data on first use, and the task loads the same 5,500 pairs."""
    import mteb

    import mteb_evalrank  # noqa: F401
    from mteb_evalrank.data.registry import STR_2021

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    monkeypatch.setenv("MTEB_EVALRANK_SOURCE", str(source))
    built = STR_2021.recipe.build(source).configs["default"]["test"]
    with monkeypatch.context() as older:
        older.setattr(hub, "BUILD_FORMAT", hub.BUILD_FORMAT - 1)
        root = hub.install_into_cache(STR_2021, STR_2021.recipe.build(source))
    before = sorted(p.name for p in root.glob("default/*/*"))
    task = mteb.get_task("STR2021")
    task.load_data()
    after = sorted(p.name for p in root.glob("default/*/*"))
    assert before and after and after != before  # built again: the fingerprint carries the format
    loaded = task.dataset["test"]
    assert len(loaded) == 5500
    for column in ("sentence1", "sentence2", "score"):
        assert loaded[column] == built[column], column


@second_process
def test_a_build_recording_another_revision_is_built_again(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local build of this format recording another revision of its spec (data of an older
    version) is outdated: built again from the raw data on first use, recording the spec's revision."""
    from dataclasses import replace

    import mteb

    import mteb_evalrank  # noqa: F401
    from mteb_evalrank.data.ready import build_state
    from mteb_evalrank.data.registry import STR_2021

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")
    monkeypatch.setenv("MTEB_EVALRANK_SOURCE", str(source))
    root = hub.install_into_cache(replace(STR_2021, revision="v0.9.0"), STR_2021.recipe.build(source))
    record = root / hub.BUILD_RECORD
    assert json.loads(record.read_text()) == {"format": hub.BUILD_FORMAT, "revision": "v0.9.0"}
    why = f"built from revision v0.9.0, this version reads {STR_2021.revision}"
    assert build_state(root, STR_2021.card_configs, STR_2021.revision) == (why, [])
    task = mteb.get_task("STR2021")
    task.load_data()
    assert json.loads(record.read_text()) == {"format": hub.BUILD_FORMAT, "revision": STR_2021.revision}
    assert build_state(root, STR_2021.card_configs, STR_2021.revision) is None
    assert len(task.dataset["test"]) == 5500
