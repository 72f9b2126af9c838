"""Shared fixtures: every test that takes ``backend`` runs once per backend.

The compiled backend must be importable unless BPE_PURE_PYTHON=1 is set: a missing build
fails the run instead of quietly testing only the pure-Python code.
"""

import os

import pytest

import bpe
from bpe import _backend

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

BACKENDS = ["python"] if os.environ.get("BPE_PURE_PYTHON") == "1" else ["cython", "python"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Switch the backend new tokenizers use (and restore it afterwards)."""
    before = _backend.active().name
    if request.param == "cython" and _backend.COMPILED is None:
        pytest.fail(
            f"the compiled core is not built ({_backend.COMPILED_IMPORT_ERROR}); install with "
            "`pip install .` or set BPE_PURE_PYTHON=1 to test the pure-Python backend only"
        )
    _backend.use(request.param)
    yield request.param
    _backend.use(before)


@pytest.fixture
def enc_factory(backend):
    """``enc_factory(name)`` -> the bundled encoding on the fixture's backend."""

    def make(name):
        tok = bpe.get_encoding(name)
        assert tok.backend == backend
        return tok

    return make


def read_text(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return f.read()
