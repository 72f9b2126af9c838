"""The backend fixtures shared by tests/ and tests_extended/.

``backend`` runs a test once per backend; ``cython_backend`` runs it on the compiled core only.
The compiled backend must be importable unless BPE_PURE_PYTHON=1 is set: a missing build fails
the run instead of quietly testing only the pure-Python code.
"""

import os

import pytest

from bpe import _backend

BACKENDS = ["python"] if os.environ.get("BPE_PURE_PYTHON") == "1" else ["cython", "python"]


def _switch(name):
    if name == "cython" and _backend.COMPILED is None:
        pytest.fail(
            f"the compiled core is not built ({_backend.COMPILED_IMPORT_ERROR}); install with "
            "`pip install .` or set BPE_PURE_PYTHON=1 to test the pure-Python backend only"
        )
    before = _backend.active().name
    _backend.use(name)
    return before


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Switch the backend new tokenizers use (and restore it afterwards)."""
    before = _switch(request.param)
    yield request.param
    _backend.use(before)


@pytest.fixture
def cython_backend():
    """Run the test on the compiled backend (fails when it is not built)."""
    before = _switch("cython")
    yield "cython"
    _backend.use(before)
