"""The lockstep MLPs against scikit-learn's own ``MLPClassifier`` fits, on real embeddings.

``fit_lockstep`` claims each network equals ``MLPClassifier(...).fit`` bit for bit; the
selection built on it (``select_and_test_mlp``) claims the same selections and scores as
``select_and_test("mlp", ...)``, which fits scikit-learn's estimator one grid point at a time.
"""

from __future__ import annotations

import datasets
import mteb
import numpy as np
import pytest
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.evaluation.classifiers import (
    FIT_DTYPE,
    select_and_test,
    select_and_test_mlp,
    senteval_scores,
)
from mteb_evalrank.evaluation.mlp import MLPSettings, fit_lockstep

GLOVE = "evalrank/glove.6B.50d"
SETTINGS = MLPSettings(
    hidden=50, batch_size=64, validation_fraction=0.1, n_iter_no_change=5, max_iter=200, seed=7
)


@pytest.fixture(scope="module")
def trec(built: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """GloVe embeddings of TREC (six classes: a softmax output), 1,500 training rows."""
    glove = mteb.get_model(GLOVE)
    train = datasets.load_dataset(SENTEVAL.hub_id, "trec", split="train", revision=SENTEVAL.revision)
    test = datasets.load_dataset(SENTEVAL.hub_id, "trec", split="test", revision=SENTEVAL.revision)
    return (
        glove.embed(train["text"][:1500]),
        np.asarray(train["label"][:1500]),
        glove.embed(test["text"]),
        np.asarray(test["label"]),
    )


def sklearn_mlp(x: np.ndarray, y: np.ndarray, alpha: float, settings: MLPSettings) -> MLPClassifier:
    return settings.classifier(alpha).fit(x, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("classes", ["six", "two"])
def test_each_network_equals_sklearns_fit_bit_for_bit(
    trec: tuple[np.ndarray, ...], dtype: type, classes: str
) -> None:
    x, y = trec[0].astype(dtype), trec[1]
    if classes == "two":  # a sigmoid output: "is it a numeric question" (label 5 in SentEval's TREC)
        y = (y == y.max()).astype(int)
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    nets = [(0, 1e-4), (0, 0.64), (1, 1e-3), (0, 6.4)]  # strong penalties stop at other epochs
    with threadpool_limits(limits=1):
        ours = fit_lockstep([x, z], y, nets, SETTINGS)
        for (source, alpha), fitted in zip(nets, ours, strict=True):
            reference = sklearn_mlp([x, z][source], y, alpha, SETTINGS)
            assert fitted.n_iter == reference.n_iter_
            assert fitted.validation_scores == reference.validation_scores_
            for got, expected in zip(
                fitted.coefs + fitted.intercepts, reference.coefs_ + reference.intercepts_, strict=True
            ):
                assert got.dtype == expected.dtype == dtype
                np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(
                fitted.predict(trec[2].astype(dtype)), reference.predict(trec[2].astype(dtype))
            )
    if classes == "six":  # the networks stopped at different epochs (the stack shrank)
        assert len({fitted.n_iter for fitted in ours}) > 1


@pytest.mark.parametrize("validation", [False, True])
def test_lockstep_selection_equals_one_fit_at_a_time(trec: tuple[np.ndarray, ...], validation: bool) -> None:
    x_train, y_train, x_test, y_test = (a.astype(FIT_DTYPE) if a.ndim == 2 else a for a in trec)
    valid = (x_test[:250], y_test[:250]) if validation else None
    if validation:
        x_test, y_test = x_test[250:], y_test[250:]
    with threadpool_limits(limits=1):
        ours = select_and_test_mlp(x_train, y_train, x_test, y_test, seed=3, validation=valid)
        for name, znorm in (("raw", False), ("znorm", True)):
            reference = select_and_test(
                "mlp", x_train, y_train, x_test, y_test, znorm=znorm, seed=3, validation=valid
            )
            assert ours[name] == reference


def test_scores_are_fitted_in_float32_and_overflow_is_named() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(200, 3)), np.arange(200) % 2
    x[5, 1] = 1e39  # finite in float64, infinite in float32
    with pytest.raises(ValueError, match="training features: values beyond the float32 range"):
        senteval_scores(x, y, x[:10], y[:10], kinds=("lr",))


def test_bad_lockstep_inputs_are_refused() -> None:
    x, y = np.zeros((40, 3)), np.arange(40) % 2
    with pytest.raises(ValueError, match="one shape"):
        fit_lockstep([x, np.zeros((40, 4))], y, [(0, 1.0)], SETTINGS)
    with pytest.raises(ValueError, match="input index"):
        fit_lockstep([x], y, [(1, 1.0)], SETTINGS)
