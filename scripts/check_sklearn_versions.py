"""Check the code that depends on scikit-learn's internals against one installed scikit-learn.

``pyproject.toml`` pins ``scikit-learn`` to the versions this script passed on.
Two modules rely on more than scikit-learn's documented results:

* ``mteb_evalrank/evaluation/mlp.py`` reproduces ``MLPClassifier``'s fit operation by
  operation (initial weights, early-stopping split, shuffles, Adam, stopping rule), so a new
  scikit-learn release may change what it must reproduce;
* ``mteb_evalrank/models/postprocess.py`` uses ``validate_data`` and ``__sklearn_tags__``
  (public since 1.6) and claims to pass ``check_estimator``.

The script loads those two files by path, so the environment needs only numpy, scipy and
scikit-learn (not mteb, torch or the plugin). It fits ``fit_lockstep``'s networks and, one at a
time, scikit-learn's ``MLPClassifier`` on a synthetic data set (six and two classes, float32
and float64, four L2 penalties that stop at different epochs, one BLAS thread as in
``tests/test_mlp.py``) and requires bit-identical weights, epochs, validation scores and
predictions; then it runs ``check_estimator`` on every post-processing estimator. Exit status
0 when everything holds.

Run it in a throwaway environment per version (PyPI reachable)::

    python3.11 -m venv /tmp/skl-low
    /tmp/skl-low/bin/pip install scikit-learn==1.6.0 numpy==1.26.4 scipy==1.11.4
    /tmp/skl-low/bin/python scripts/check_sklearn_versions.py

Recorded runs (Python 3.11.7, 2026-11-26, one throwaway venv per version as above; ``PASS``:
all 16 networks bit-identical to scikit-learn's and ``check_estimator`` passed for all six
estimators; exit status 0):

* scikit-learn 1.6.0, numpy 1.26.4, scipy 1.11.4 (the lowest allowed version, with the
  lowest numpy and scipy ``pyproject.toml`` allows): PASS
* scikit-learn 1.7.2, numpy 2.4.6, scipy 1.17.1: PASS
* scikit-learn 1.8.0, numpy 2.4.6, scipy 1.17.1: PASS
* scikit-learn 1.9.1, numpy 2.4.6, scipy 1.17.1 (the highest allowed, the newest release, the
  project's ``.venv``): PASS
* scikit-learn 1.3.0, numpy 1.26.4, scipy 1.11.4 (the former lower bound): the 16 networks
  are identical, but ``postprocess.py`` does not import (``validate_data`` is not in
  ``sklearn.utils.validation`` before 1.6): exit status 1. Hence ``>=1.6``.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import sklearn
from numpy.typing import NDArray
from sklearn.utils.estimator_checks import check_estimator
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
ALPHAS = (1e-4, 1e-3, 0.64, 6.4)  # strong penalties stop at other epochs


def load(relative: str, name: str) -> ModuleType:
    """The module at ``ROOT / relative``, imported on its own (not through the package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def data(classes: int, dtype: type) -> tuple[NDArray[np.floating], NDArray[np.int64], NDArray[np.floating]]:
    """1,500 training and 300 test rows, 50-d, ``classes`` overlapping Gaussian clusters."""
    rng = np.random.default_rng(classes)
    centres = rng.normal(size=(classes, 50))
    labels = rng.integers(0, classes, size=1800)
    x: NDArray[np.floating] = (centres[labels] + 4.0 * rng.normal(size=(1800, 50))).astype(dtype)
    return x[:1500], labels[:1500], x[1500:]


def compare_mlps(mlp: ModuleType, classes: int, dtype: type) -> list[str]:
    """Differences between ``fit_lockstep`` and ``MLPClassifier`` on one data set (empty: none)."""
    x, y, test = data(classes, dtype)
    settings = mlp.MLPSettings(
        hidden=50, batch_size=64, validation_fraction=0.1, n_iter_no_change=5, max_iter=200, seed=7
    )
    problems = []
    with threadpool_limits(limits=1):
        fitted = mlp.fit_lockstep([x], y, [(0, alpha) for alpha in ALPHAS], settings)
        for alpha, ours in zip(ALPHAS, fitted, strict=True):
            reference = settings.classifier(alpha).fit(x, y)
            same = (
                ours.n_iter == reference.n_iter_
                and ours.validation_scores == list(reference.validation_scores_)
                and all(
                    a.dtype == b.dtype and np.array_equal(a, b)
                    for a, b in zip(
                        ours.coefs + ours.intercepts, reference.coefs_ + reference.intercepts_, strict=True
                    )
                )
                and np.array_equal(ours.predict(test), reference.predict(test))
            )
            label = f"{classes} classes, {np.dtype(dtype).name}, alpha {alpha}"
            print(f"  MLP {label}: {'identical' if same else 'DIFFERENT'} ({ours.n_iter} epochs)")
            if not same:
                problems.append(f"MLP {label}")
    return problems


def check_estimators(postprocess: ModuleType) -> list[str]:
    """The post-processing estimators that fail scikit-learn's ``check_estimator`` (empty: none)."""
    problems = []
    for estimator in (
        postprocess.ABTT(),
        postprocess.ABTT(svd_solver="covariance_eigh"),
        postprocess.PCRemoval(),
        postprocess.Whitening(),
        postprocess.ZNorm(),
        postprocess.Truncation(),
    ):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # skipped checks (array API) warn
                check_estimator(estimator)
            print(f"  check_estimator({estimator!r}): passed")
        except Exception as error:  # any failing check
            print(f"  check_estimator({estimator!r}): FAILED: {error}")
            problems.append(repr(estimator))
    return problems


def main() -> int:
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}")
    mlp = load("mteb_evalrank/evaluation/mlp.py", "evalrank_mlp")
    problems = [
        problem
        for classes in (6, 2)
        for dtype in (np.float32, np.float64)
        for problem in compare_mlps(mlp, classes, dtype)
    ]
    problems += check_estimators(load("mteb_evalrank/models/postprocess.py", "evalrank_postprocess"))
    print("PASS" if not problems else f"FAIL: {', '.join(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
