"""Recipe: an AccSent-style triplet set built from human news paraphrases (MRPC, STS-B).

AccSent (see the card) asks whether an embedding prefers a paraphrase ``X'`` of ``X`` over
``Y``, a copy of ``X`` with one keyword replaced. Its GPT-4 paraphrases of News Crawl 2020
are not available offline, so this recipe builds triplets of the same nature from:

* MRPC (``evalrank/sent_classification/MRPC/msr_paraphrase_{train,test}.txt``, header
  ``Quality, #1 ID, #2 ID, #1 String, #2 String``): the pairs with ``Quality`` 1
  (paraphrase);
* STS Benchmark (``evalrank/sent_similarity/STS/STSBenchmark/sts-{train,dev,test}.csv``,
  ``genre, file, year, id, score, sentence1, sentence2``): the ``main-news`` pairs with a
  gold score >= 4.5 (lower-cased and tokenised in this release).

A pair whose two sentences are identical cannot tell ``X'`` from ``X`` and is skipped
(counted in ``stats``); a pair repeated verbatim is used once (counted too).

``lexicon.tsv`` (beside this file, columns ``word, replacement, category``) lists the
keywords: AccSent's 20 pairs (Table 2, category ``accsent-table2``) and a few hundred
contrastive pairs of the same nature. A keyword *occurs* in a sentence as a whole word
(not part of a longer word or hyphenated compound), case-insensitively, except that a
keyword written with a capital (a name) must be capitalised in a sentence that has any
capital letter (so ``Apple`` does not match ``apple`` in MRPC; STS-B is all lower case).

For each pair ``(s1, s2)`` and each keyword that occurs in **both** sentences (the
detail is shared by the paraphrases), one triplet:

* ``anchor`` X: ``s1`` or ``s2``. If exactly one side has a length in a paper bucket
  (20-30 or 50-60 words) it is X, else the side picked by the parity of
  ``sha256(pair_id + keyword)`` (both directions occur, reproducibly);
* ``positive`` X': the other side;
* ``negative`` Y: X with every occurrence of the keyword replaced by its replacement,
  case preserved (a token spelled like the lexicon entry gets the replacement as listed;
  lower-case -> lower-case, all capitals -> all capitals, capitalised -> capitalised).

``length_bucket`` is ``short`` (20-30 words), ``long`` (50-60) or ``other``, where a word
is a whitespace token of X holding a letter or digit (so tokenised punctuation does not
count). Extra columns: ``keyword`` (as listed), ``replacement``, ``category``,
``n_words``, ``source`` (``mrpc``/``stsb``) and ``pair_id`` (source file and ids).
One config ``default``, split ``test``. Any malformed source or lexicon line raises
``SourceFormatError`` naming ``file:line``.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from datasets import Dataset, DatasetDict, Features, Value

from mteb_evalrank.data.layout import SPLIT, BuiltDataset
from mteb_evalrank.data.sources import SourceFormatError, read_lines, require_file

MRPC_FILES = tuple(
    f"evalrank/sent_classification/MRPC/msr_paraphrase_{part}.txt" for part in ("train", "test")
)
STSB_FILES = tuple(
    f"evalrank/sent_similarity/STS/STSBenchmark/sts-{part}.csv" for part in ("train", "dev", "test")
)
SOURCES = (*MRPC_FILES, *STSB_FILES, "evalrank/LICENSE")
LEXICON = Path(__file__).resolve().parent / "lexicon.tsv"
LEXICON_HEADER = ["word", "replacement", "category"]
MRPC_HEADER = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
STSB_GENRE = "main-news"
STSB_MIN_SCORE = 4.5
#: Paper length buckets (inclusive word counts); every other length is ``other``.
BUCKETS: dict[str, tuple[int, int]] = {"short": (20, 30), "long": (50, 60)}

FEATURES = Features(
    {
        name: Value("int64") if name == "n_words" else Value("string")
        for name in (
            "anchor",
            "positive",
            "negative",
            "keyword",
            "replacement",
            "category",
            "length_bucket",
            "n_words",
            "source",
            "pair_id",
        )
    }
)


@dataclass(frozen=True)
class Entry:
    """One lexicon line: replace ``word`` by ``replacement``."""

    word: str
    replacement: str
    category: str

    @property
    def is_name(self) -> bool:
        return any(ch.isupper() for ch in self.word)


@dataclass(frozen=True)
class Pair:
    """A human paraphrase pair of a source file."""

    s1: str
    s2: str
    source: str
    pair_id: str


_WORD = re.compile(r"^[A-Za-z]+$")


def read_lexicon(path: Path = LEXICON) -> list[Entry]:
    """The replacement lexicon (``#`` lines are comments); keywords unique case-insensitively."""
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    header_seen = False
    for line_no, line in read_lines(path):
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if fields != LEXICON_HEADER:
                raise SourceFormatError(path, line_no, f"expected the header {LEXICON_HEADER}")
            header_seen = True
            continue
        if len(fields) != 3 or not all(fields):
            raise SourceFormatError(path, line_no, "expected 'word<TAB>replacement<TAB>category'")
        word, replacement, category = fields
        if not _WORD.match(word) or not _WORD.match(replacement):
            raise SourceFormatError(path, line_no, f"{word!r} -> {replacement!r}: both must be single words")
        if word.lower() == replacement.lower():
            raise SourceFormatError(path, line_no, f"{word!r} is replaced by itself")
        if word.lower() in seen:
            first = seen[word.lower()]
            raise SourceFormatError(path, line_no, f"keyword {word!r} already listed on line {first}")
        seen[word.lower()] = line_no
        entries.append(Entry(word, replacement, category))
    if not entries:
        raise SourceFormatError(path, None, "the lexicon holds no entries")
    return entries


def read_mrpc(path: Path) -> list[Pair]:
    """The paraphrase pairs (``Quality`` 1) of an MRPC file."""
    pairs: list[Pair] = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for line_no, raw in enumerate(handle, start=1):
            fields = raw.rstrip("\r\n").split("\t")
            if line_no == 1:
                if fields != MRPC_HEADER:
                    raise SourceFormatError(path, 1, f"expected the header {MRPC_HEADER}")
                continue
            if fields == [""]:
                continue
            complete = len(fields) == 5 and fields[3].strip() and fields[4].strip()
            if not complete or fields[0] not in {"0", "1"}:
                raise SourceFormatError(path, line_no, "expected 'Quality(0/1) id1 id2 s1 s2'")
            if fields[0] == "1":
                pairs.append(Pair(fields[3], fields[4], "mrpc", f"mrpc:{path.stem}:{fields[1]}-{fields[2]}"))
    return pairs


def read_stsb_news(path: Path) -> list[Pair]:
    """The ``main-news`` pairs of an STS-B file with a gold score >= ``STSB_MIN_SCORE``."""
    pairs: list[Pair] = []
    for line_no, line in read_lines(path):
        fields = line.split("\t")
        if len(fields) != 7 or not fields[5].strip() or not fields[6].strip():
            raise SourceFormatError(path, line_no, "expected 7 tab-separated fields with two sentences")
        try:
            score = float(fields[4])
        except ValueError:
            raise SourceFormatError(path, line_no, f"the score {fields[4]!r} is not a number") from None
        if not 0.0 <= score <= 5.0:
            raise SourceFormatError(path, line_no, f"the score {score} is outside [0, 5]")
        if fields[0] == STSB_GENRE and score >= STSB_MIN_SCORE:
            pair_id = f"stsb:{path.stem}:{fields[1]}:{fields[2]}:{fields[3]}"
            pairs.append(Pair(fields[5], fields[6], "stsb", pair_id))
    return pairs


def keyword_pattern(entry: Entry) -> re.Pattern[str]:
    """Whole-word, case-insensitive pattern of a keyword.

    Not a whole word: next to a letter, digit, ``_`` or ``-``, after a ``.`` or before a
    ``.`` + letter (``chip.m.aker``, ``U.S.``), or followed by a tokenised ``'t`` (``won 't``).
    """
    return re.compile(rf"(?<![\w.-]){re.escape(entry.word)}(?![\w-]|\.\w|\s*['’]t\b)", re.IGNORECASE)


def occurrences(entry: Entry, pattern: re.Pattern[str], sentence: str) -> list[re.Match[str]]:
    """Matches of the keyword in ``sentence`` (a name must be capitalised in cased text)."""
    matches = list(pattern.finditer(sentence))
    if entry.is_name and any(ch.isupper() for ch in sentence):
        matches = [m for m in matches if m.group(0)[0].isupper()]
    return matches


def match_case(token: str, entry: Entry) -> str:
    """The replacement written in the case of ``token`` (see the module docstring)."""
    if token == entry.word:
        return entry.replacement
    if token.islower():
        return entry.replacement.lower()
    if token.isupper() and len(token) > 1:
        return entry.replacement.upper()
    if token[0].isupper():
        return entry.replacement[0].upper() + entry.replacement[1:]
    return entry.replacement


def replace_keyword(sentence: str, entry: Entry, matches: list[re.Match[str]]) -> str:
    """``sentence`` with the given keyword matches replaced (case preserved)."""
    parts, start = [], 0
    for match in matches:
        parts += [sentence[start : match.start()], match_case(match.group(0), entry)]
        start = match.end()
    return "".join([*parts, sentence[start:]])


def n_words(sentence: str) -> int:
    """Whitespace tokens holding a letter or a digit."""
    return sum(1 for token in sentence.split() if any(ch.isalnum() for ch in token))


def length_bucket(words: int) -> str:
    """``short`` (20-30 words), ``long`` (50-60) or ``other``."""
    for name, (low, high) in BUCKETS.items():
        if low <= words <= high:
            return name
    return "other"


def _anchor_first(pair: Pair, entry: Entry) -> bool:
    """Whether ``s1`` is the anchor X (see the module docstring)."""
    in_bucket = [length_bucket(n_words(s)) != "other" for s in (pair.s1, pair.s2)]
    if in_bucket[0] != in_bucket[1]:
        return in_bucket[0]
    return hashlib.sha256(f"{pair.pair_id}\0{entry.word}".encode()).digest()[0] % 2 == 0


def make_triplets(pairs: list[Pair], lexicon: list[Entry]) -> list[dict[str, str | int]]:
    """At most one triplet per (pair, keyword), pairs in order, keywords in lexicon order."""
    patterns = [(entry, keyword_pattern(entry)) for entry in lexicon]
    rows: list[dict[str, str | int]] = []
    for pair in pairs:
        for entry, pattern in patterns:
            if not occurrences(entry, pattern, pair.s1) or not occurrences(entry, pattern, pair.s2):
                continue
            anchor, positive = (pair.s1, pair.s2) if _anchor_first(pair, entry) else (pair.s2, pair.s1)
            negative = replace_keyword(anchor, entry, occurrences(entry, pattern, anchor))
            words = n_words(anchor)
            rows.append(
                {
                    "anchor": anchor,
                    "positive": positive,
                    "negative": negative,
                    "keyword": entry.word,
                    "replacement": entry.replacement,
                    "category": entry.category,
                    "length_bucket": length_bucket(words),
                    "n_words": words,
                    "source": pair.source,
                    "pair_id": pair.pair_id,
                }
            )
    return rows


def read_pairs(source: Path) -> tuple[list[Pair], dict[str, int]]:
    """All usable paraphrase pairs and the counts of those skipped (identical, repeated)."""
    raw = [pair for name in MRPC_FILES for pair in read_mrpc(require_file(source, name))]
    raw += [pair for name in STSB_FILES for pair in read_stsb_news(require_file(source, name))]
    pairs: list[Pair] = []
    seen: set[tuple[str, str]] = set()
    skipped = Counter[str]()
    for pair in raw:
        if pair.s1.strip() == pair.s2.strip():
            skipped["identical_sentences"] += 1
        elif (pair.s1, pair.s2) in seen:
            skipped["repeated_pair"] += 1
        else:
            seen.add((pair.s1, pair.s2))
            pairs.append(pair)
    return pairs, {**dict.fromkeys(("identical_sentences", "repeated_pair"), 0), **skipped}


def build(source: Path) -> BuiltDataset:
    """Build the ``default`` config from the raw data folder ``source``."""
    lexicon = read_lexicon()
    pairs, skipped = read_pairs(source)
    rows = make_triplets(pairs, lexicon)
    if not rows:
        raise ValueError(f"no triplet could be built from {source}: check the sources and {LEXICON}")
    table = Dataset.from_dict({name: [row[name] for row in rows] for name in FEATURES}, features=FEATURES)

    def count(column: str) -> dict[str, int]:
        return dict(Counter(str(row[column]) for row in rows).most_common())

    stats = {
        "n_triplets": len(rows),
        "n_lexicon_entries": len(lexicon),
        "n_pairs_per_source": dict(Counter(pair.source for pair in pairs)),
        "n_pairs_skipped": skipped,
        "n_pairs_used": len({row["pair_id"] for row in rows}),
        "n_triplets_per_source": count("source"),
        "n_triplets_per_length_bucket": {**dict.fromkeys([*BUCKETS, "other"], 0), **count("length_bucket")},
        "n_triplets_per_category": count("category"),
        "n_triplets_per_keyword": count("keyword"),
        "n_keywords_used": len({row["keyword"] for row in rows}),
    }
    return BuiltDataset({"default": DatasetDict({SPLIT: table})}, stats)
