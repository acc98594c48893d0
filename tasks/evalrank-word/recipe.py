"""Recipe: EvalRankWord from the EvalRank release (Wang et al., 2022).

A pure function of its sources:

* positives: the 5,514 lines of ``word_evalrank/pos_pair_5514.txt`` (both directions
  are already in the file);
* background (``default``): de-duplicated, in this order, the words of the
  lexicographically sorted pairs (first, then second word), ``basic_vocab.txt`` (the
  words of the 13 similarity sets), ``wiki_vocab.txt`` (20,000 frequent Wikipedia
  words) -> 22,207 items;
* ``no_wiki``: the paper's ablation without the Wikipedia words (background 5,846).
"""

from __future__ import annotations

from pathlib import Path

from mteb_evalrank.data.layout import BuiltDataset, evalrank_configs, merge_configs
from mteb_evalrank.data.sources import read_items, read_pairs, require_file, unique_in_order

PAIRS = "evalrank/word_evalrank/pos_pair_5514.txt"
BASIC_VOCAB = "evalrank/word_evalrank/basic_vocab.txt"
WIKI_VOCAB = "evalrank/word_evalrank/wiki_vocab.txt"
SOURCES = (PAIRS, BASIC_VOCAB, WIKI_VOCAB, "evalrank/LICENSE")


def build(source: Path) -> BuiltDataset:
    """Build every config of the dataset from the raw data folder ``source``."""
    pairs = read_pairs(require_file(source, PAIRS))
    pair_words = [word for pair in sorted(pairs) for word in pair]
    basic = read_items(require_file(source, BASIC_VOCAB), "words")
    wiki = read_items(require_file(source, WIKI_VOCAB), "words")
    background = unique_in_order(pair_words, basic, wiki)
    background_no_wiki = unique_in_order(pair_words, basic)
    configs = merge_configs(
        evalrank_configs("default", background, pairs),
        evalrank_configs("no_wiki", background_no_wiki, pairs),
    )
    stats = {
        "default": {"n_pairs": len(pairs), "n_background": len(background)},
        "no_wiki": {"n_pairs": len(pairs), "n_background": len(background_no_wiki)},
        "n_pair_words": len(set(pair_words)),
    }
    return BuiltDataset(configs, stats)
