"""Shared fixtures: every test that takes ``backend`` runs once per backend
(see backend_fixtures.py), plus the fixture texts in tests/data."""

import os

import pytest

import bpe
from backend_fixtures import backend, cython_backend  # noqa: F401  (fixtures)

try:
    from bpe import _core
except ImportError:  # pragma: no cover - the compiled core is built before the tests run
    _core = None

# Encoders normally build their pair signatures (bpe/_signatures.pxi) only after 20,000
# merged pieces; the suite's texts are smaller, so here they build at the first, and every
# identity test runs with them.  tests/test_core.py checks both settings against each other.
if _core is not None:
    _core._set_default_signatures_after(0)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


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


@pytest.fixture
def threads_for_any_batch(monkeypatch):
    """Batch encoding wakes pool threads even for little text (normally it needs 32K
    characters per thread) and beyond the machine's CPUs, so that small test batches do run
    on as many threads as they ask for."""
    monkeypatch.setattr(bpe.tokenizer, "_CHARS_PER_HELPER", 1)
    monkeypatch.setattr(bpe.tokenizer, "_THREADS_PER_CPU_CAP", False)  # as many as asked for
