"""The paper's word-level population ``evalrank-paper-word`` (Wang et al., 2022, Table 8): its 19
static word-vector sets as bag-of-words models ``evalrank/paper-<set>`` and with the zoo's ABTT
(``-abtt``, fitted on every row of the table). A set is downloaded (:func:`fetch_set`, through
:func:`mteb_evalrank.data.fetch.fetch_file`) only from a location whose file hash a named source
publishes (:attr:`PaperWordSet.pin`); the five sets no source pins are declared with ``pin=None``
and never downloaded. Read with the zoo's streaming readers (glove.840B.300d.txt has words with
spaces, which gensim's text reader splits). docs/zoo.md ("The paper's word-level population") gives the rest.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any

from mteb.models import ModelMeta

from mteb_evalrank.data.fetch import FetchError, Pin, fetch_file, http_only, is_verified
from mteb_evalrank.settings import HOME_ENV, VECTORS_URL_ENV, Settings

from . import postprocess
from .static import StaticWordEmbeddings, read_text_vectors
from .word_vector_files import read_word2vec_binary

POPULATION = "evalrank-paper-word"
PREFIX = "evalrank/paper-"
GENSIM_DATA = "https://github.com/RaRe-Technologies/gensim-data/releases/download"
STANFORD = "https://nlp.stanford.edu/data"
FASTTEXT = "https://dl.fbaipublicfiles.com/fasttext/vectors-english"
DICT2VEC = "https://s3.us-east-2.amazonaws.com/dict2vec-data"
GENSIM_PIN = "MD5 of the .gz in gensim-data's list.json (piskvorky/gensim-data@bd93f51), which gensim checks"
MXNET_PIN = "SHA-1 of the extracted file in apache/mxnet python/mxnet/contrib/text/_constants.py (@8c8c4b8)"
UNPINNED = "no hash of this file is published by a maintained source"
PDDL = "https://opendatacommons.org/licenses/pddl/1-0/"
CC_BY_SA = "cc-by-sa-3.0"


@dataclass(frozen=True)
class PaperWordSet:
    """One word-vector set of Table 8 (rows ``rows``: without and with ABTT)."""

    name: str
    """Table 8's *Details* (``glove.6B.50d``); the models are ``evalrank/paper-<name>[-abtt]``."""
    family: str
    rows: str
    dim: int
    url: str
    """The publisher's file (or gensim-data's copy, for the sets it pins)."""
    pin: str | None
    """``<algorithm>:<hex>`` of the file kept (the download, or its ``member``); ``None``: not pinned."""
    source: str
    """Where the pin comes from, or why there is none."""
    licence: str = "not specified"
    """In mteb's terms (a licence id or a URL)."""
    member: str | None = None
    """The file kept, inside the zip at ``url``."""
    binary: bool = False
    """word2vec binary format; else text."""
    words: int | None = None
    """Vocabulary size, where the pin's source states it (checked when the set is read)."""
    download_bytes: int | None = None

    @property
    def file(self) -> str:
        """The file kept in the cache: ``member``, else the download's name."""
        return self.member or self.url.rsplit("/", 1)[1]

    @property
    def model(self) -> str:
        return f"{PREFIX}{self.name}"


FAMILIES = {
    "glove": "GloVe",
    "word2vec": "word2vec",
    "fasttext": "fastText",
    "crawl": "fastText",
    "wiki": "fastText",
}
LICENCES = {"GloVe": PDDL, "fastText": CC_BY_SA, "word2vec": "not specified"}


def _gensim(name: str, rows: str, key: str, md5: str, size: int, words: int) -> PaperWordSet:
    """A set gensim-data serves as ``<key>.gz`` (its dimension ends ``key``), pinned by its list's MD5."""
    family = FAMILIES[key.split("-")[0]]
    dim = int(key.rsplit("-", 1)[1])
    url = f"{GENSIM_DATA}/{key}/{key}.gz"
    pin = f"md5:{md5}"
    binary = family == "word2vec"
    return PaperWordSet(
        name, family, rows, dim, url, pin, GENSIM_PIN, LICENCES[family], None, binary, words, size
    )


def _zip(name: str, rows: str, url: str, sha1: str) -> PaperWordSet:
    """A 300-d set in its publisher's zip (member ``<name>.txt`` or ``.vec``), pinned by MXNet's SHA-1."""
    family = FAMILIES[name.split("-")[0].split(".")[0]]
    member = url.rsplit("/", 1)[1].removesuffix(".zip")
    member += "" if member.endswith(".vec") else ".txt"
    return PaperWordSet(name, family, rows, 300, url, f"sha1:{sha1}", MXNET_PIN, LICENCES[family], member)


PAPER_WORD_SETS: tuple[PaperWordSet, ...] = (
    _gensim("glove.6B.50d", "1 / 2", "glove-wiki-gigaword-50", "c289bc5d7f2f02c6dc9f2f9b67641813", 69_182_535, 400_000),
    _gensim("glove.6B.100d", "3 / 4", "glove-wiki-gigaword-100", "40ec481866001177b8cd4cb0df92924f", 134_300_434, 400_000),
    _gensim("glove.6B.200d", "5 / 6", "glove-wiki-gigaword-200", "59652db361b7a87ee73834a6c391dfc1", 264_336_934, 400_000),
    _gensim("glove.6B.300d", "7 / 8", "glove-wiki-gigaword-300", "29e9329ac2241937d55b852e8284e89b", 394_362_229, 400_000),
    _zip("glove.42B.300d", "9 / 10", f"{STANFORD}/glove.42B.300d.zip", "876767977d6bd4d947c0f84d44510677bc94612a"),
    _zip("glove.840B.300d", "11 / 12", f"{STANFORD}/glove.840B.300d.zip", "294b9f37fa64cce31f9ebb409c266fc379527708"),
    _gensim("glove.twitter.27B.25d", "13 / 14", "glove-twitter-25", "50db0211d7e7a2dcd362c6b774762793", 109_885_004, 1_193_514),
    _gensim("glove.twitter.27B.50d", "15 / 16", "glove-twitter-50", "c168f18641f8c8a00fe30984c4799b2b", 209_216_938, 1_193_514),
    _gensim("glove.twitter.27B.100d", "17 / 18", "glove-twitter-100", "b04f7bed38756d64cf55b58ce7e97b15", 405_932_991, 1_193_514),
    _gensim("glove.twitter.27B.200d", "19 / 20", "glove-twitter-200", "e52e8392d1860b95d5308a525817d8f9", 795_373_100, 1_193_514),
    _gensim("GoogleNews-vectors-negative300", "21 / 22", "word2vec-google-news-300", "a5e5354d40acb95f9ec66d5977d140ef", 1_743_563_840, 3_000_000),
    _zip("crawl-300d-2M", "23 / 24", f"{FASTTEXT}/crawl-300d-2M.vec.zip", "9b556504d099a6c01f3dd76b88775d02cb2f1946"),
    PaperWordSet("crawl-300d-2M-subword", "fastText", "25 / 26", 300, f"{FASTTEXT}/crawl-300d-2M-subword.zip", None, UNPINNED, CC_BY_SA),
    _zip("wiki-news-300d-1M", "27 / 28", f"{FASTTEXT}/wiki-news-300d-1M.vec.zip", "11cac9efe6f599e659be182f5766d6fbd5b1cab9"),
    _gensim("wiki-news-300d-1M-subword", "29 / 30", "fasttext-wiki-news-subwords-300", "de2bb3a20c46ce65c9c131e1ad9a77af", 1_005_007_116, 999_999),
    *(PaperWordSet(f"dict2vec-{d}d", "Dict2vec", f"{29 + d // 50} / {30 + d // 50}", d, f"{DICT2VEC}/dict2vec{d}.tar.bz2", None, UNPINNED, "gpl-3.0") for d in (100, 200, 300)),
    PaperWordSet("paragram_300_sl999", "PSL", "37 / 38", 300, "https://cogcomp.seas.upenn.edu/page/resource_view/106", None, UNPINNED),
)  # fmt: skip
"""Table 8's sets, in its order (row pairs: without / with ABTT)."""
BY_NAME: dict[str, PaperWordSet] = {spec.name: spec for spec in PAPER_WORD_SETS}


# ------------------------------------------------------------------ fetching
def fetch_set(spec: PaperWordSet, settings: Settings) -> Path:
    """The verified file of ``spec`` in ``<home>/word-vectors``, fetched if missing or damaged through the
    raw data's downloader (:func:`mteb_evalrank.data.fetch.fetch_file`); the URL is ``spec.url``, or
    ``<base>/<host>/<path>`` with ``settings.vectors_url`` as ``base``.

    Raises:
        FetchError: the set has no pinned source, downloads are switched off, or the download failed
            or is not the pinned file (nothing kept); the message names the set, the URL and what to do.
    """
    root = settings.home / "word-vectors"
    target = root / spec.file
    if spec.pin is None:
        raise FetchError(
            f"{spec.name} has no pinned source ({spec.source}), so it is never downloaded: it is published "
            f"at {spec.url}."
        )
    algorithm, _, digest = spec.pin.partition(":")
    pin = Pin(digest, algorithm=algorithm)
    if is_verified(target, pin):
        return target
    if flag := settings.offline:
        raise FetchError(
            f"{spec.name}: {target} is missing or not the pinned file and {flag} is set, so nothing is "
            f"downloaded: unset it on a connected machine, or copy the file ({spec.pin}) there."
        )
    parts = urllib.parse.urlsplit(spec.url)
    url = f"{settings.vectors_url}/{parts.netloc}{parts.path}" if settings.vectors_url else spec.url
    advice = (
        f"Set {VECTORS_URL_ENV} to a mirror holding the same file (<base>/<host>/<path>, now {url}), "
        f"or copy the file with {spec.pin} to {target}."
    )
    http_only(url, advice)

    def disk(error: OSError) -> str:
        return (
            f"{spec.name}: could not write under {root}: {error.strerror or error} ({error.filename or root}). "
            "Nothing partial was kept. Make sure it is writable and has room (docs/zoo.md gives each set's "
            f"size), or set {HOME_ENV} to another folder."
        )

    fetch_file(
        [target], url, [pin], settings.fetch_timeout, advice=advice, disk=disk, label=f"{spec.name}: ",
        members=[spec.member] if spec.member else None,
        announce=f"fetching {spec.name} [{spec.licence}] from {url} into {root}",
    )  # fmt: skip
    return target


# ------------------------------------------------------------------ models
@cache
def load_set(name: str, settings: Settings) -> StaticWordEmbeddings:
    """The bag-of-words encoder of the set ``name`` (fetched first if needed; one per process)."""
    spec = BY_NAME[name]
    path = fetch_set(spec, settings)
    words, vectors = (read_word2vec_binary if spec.binary else read_text_vectors)(path)
    if (spec.words is not None and len(words) != spec.words) or vectors.shape[1] != spec.dim:
        raise ValueError(
            f"{spec.model}: {path} holds {len(words)} words of {vectors.shape[1]} dimensions, the "
            f"declaration says {spec.words} of {spec.dim}; fix the declaration."
        )
    return StaticWordEmbeddings(words, vectors, name=spec.model)


@cache
def set_abtt(name: str, settings: Settings) -> postprocess.ABTT:
    """ABTT fitted on every row of the set ``name`` (:func:`.postprocess.table_abtt`)."""
    return postprocess.table_abtt(load_set(name, settings).vectors)


def load_model(name: str, abtt: bool, model_name: str, revision: str | None = None, **kwargs: Any) -> Any:
    """Loader of the metas: the set's encoder, post-processed by its ABTT for ``-abtt``."""
    from .wrappers import PostProcessedEncoder

    settings = Settings.from_environment()  # mteb calls the loader: the settings are read here
    encoder = load_set(name, settings)
    return PostProcessedEncoder(encoder, set_abtt(name, settings)) if abtt else encoder


@dataclass(frozen=True)
class PaperWordModel:
    """A model of the population: a set, without or with ABTT."""

    spec: PaperWordSet
    abtt: bool = False

    @property
    def name(self) -> str:
        return self.spec.model + ("-abtt" if self.abtt else "")

    def meta(self) -> ModelMeta:
        """Its ``ModelMeta``: the table's size (where stated); ABTT adds its mean and ``d x d`` projection."""
        from .zoo import cosine_meta

        spec, d = self.spec, self.spec.dim
        n_embedding = spec.words * d if spec.words else None
        n_parameters = n_embedding and n_embedding + (d + d * d if self.abtt else 0)
        return cosine_meta(
            loader=partial(load_model, spec.name, self.abtt),
            name=self.name,
            revision=str(spec.pin).replace(":", "-"),
            release_date=None,
            n_parameters=n_parameters,
            n_embedding_parameters=n_embedding,
            memory_usage_mb=n_embedding and round(n_embedding * 4 / 2**20),
            max_tokens=float("inf"),
            embed_dim=d,
            license=spec.licence,
            framework=["NumPy"],
            reference=spec.url,
            adapted_from=spec.model if self.abtt else None,
        )


def model_family(name: str) -> str | None:
    """The family of a population model (its set: ``-abtt`` shares the base's table), else ``None``."""
    stem = name.removeprefix(PREFIX).removesuffix("-abtt")
    return f"{PREFIX}{stem}" if name.startswith(PREFIX) and stem in BY_NAME else None


def fetch_all() -> None:
    """Fetch every pinned set (the population's check before a study, which calls it)."""
    settings = Settings.from_environment()
    for spec in PAPER_WORD_SETS:
        if spec.pin is not None:
            fetch_set(spec, settings)


def entries() -> Iterator[tuple[str, str, str, PaperWordModel | None, str | None]]:
    """``(rows, family, details, model, not_runnable)`` per Table 8 row (a pair for a set not pinned)."""
    for spec in PAPER_WORD_SETS:
        if spec.pin is None:
            yield spec.rows, spec.family, spec.name, None, f"{spec.source} (docs/zoo.md)"
            continue
        for row, abtt in zip(spec.rows.split(" / "), (False, True), strict=True):
            yield (
                row,
                spec.family,
                f"{spec.name}, {'ABTT' if abtt else 'no'}",
                PaperWordModel(spec, abtt),
                None,
            )
