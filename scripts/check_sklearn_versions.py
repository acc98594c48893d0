"""Check the code that depends on scikit-learn's internals against one installed scikit-learn.

``pyproject.toml`` pins ``scikit-learn`` to the versions this script passed on.
One module relies on more than scikit-learn's documented results:
``mteb_evalrank/models/postprocess.py`` uses ``validate_data`` and ``__sklearn_tags__``
(public since 1.6) and claims to pass ``check_estimator``. (The SentEval protocol's MLP, which
reproduced ``MLPClassifier`` operation by operation until it moved to torch, was checked here too;
the records below include it.)

The script loads that file by path, so the environment needs only numpy, scipy and
scikit-learn (not mteb, torch or the plugin). It runs ``check_estimator`` on every
post-processing estimator. Exit status 0 when everything holds.

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
from sklearn.utils.estimator_checks import check_estimator

ROOT = Path(__file__).resolve().parent.parent


def load(relative: str, name: str) -> ModuleType:
    """The module at ``ROOT / relative``, imported on its own (not through the package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


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
    problems = check_estimators(load("mteb_evalrank/models/postprocess.py", "evalrank_postprocess"))
    print("PASS" if not problems else f"FAIL: {', '.join(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
