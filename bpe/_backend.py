"""Chooses between the compiled core and the pure-Python reference backend.

The compiled modules (``bpe._core``, ``bpe._train``) are used when they import, unless the
environment variable ``BPE_PURE_PYTHON=1`` is set; otherwise ``bpe._reference`` is used.
``bpe.backend`` names the one in force ("cython" or "python").  Tests switch backends with
:func:`use`; a tokenizer keeps the backend it was built with.  When the compiled core is
missing and the pure backend was not asked for (``BPE_PURE_PYTHON=1``, or a pure install
made on purpose), importing bpe warns once, saying why and what to do: the pure backend is
tens of times slower, which should never come as a surprise.  Nothing else lives here.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from . import _reference
from .errors import ArgumentError

try:
    from . import _core, _train

    COMPILED = SimpleNamespace(name="cython", Encoder=_core.Encoder, byte_level_form=_core.byte_level_form,
                               json_model_spans=_core.json_model_spans,
                               byte_level_form_json=_core.byte_level_form_json,
                               train_merges=_train.train_merges,
                               Trainer=_train.Trainer, PieceCounter=_train.PieceCounter)
    COMPILED_IMPORT_ERROR = None
except ImportError as exc:  # the extension was not built
    COMPILED = None
    COMPILED_IMPORT_ERROR = exc

PURE = SimpleNamespace(name="python", Encoder=_reference.Encoder, byte_level_form=None, json_model_spans=None,
                       byte_level_form_json=None,
                       train_merges=_reference.train_merges,
                       Trainer=_reference.Trainer)

_active = PURE if (COMPILED is None or os.environ.get("BPE_PURE_PYTHON") == "1") else COMPILED


def _missing_core_message() -> str:
    """Why the compiled core is missing, and what to do about it."""
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.exists(os.path.join(here, "_core.pyx")):  # the source tree, not an installed package
        return (f"bpe is imported from its source tree ({here}), where the compiled core is not built, so "
                "the pure-Python backend is used (tens of times slower). Run from outside the repository "
                "folder to use the installed package, or build in place: `python setup.py build_ext --inplace`. "
                "Set BPE_PURE_PYTHON=1 to choose the pure backend without this warning.")
    built = [f for f in os.listdir(here) if f.startswith("_core.") and f.endswith((".so", ".pyd"))]
    why = f"it does not import: {COMPILED_IMPORT_ERROR}" if built else f"no compiled module bpe._core in {here}"
    return (f"bpe's compiled core is missing ({why}), so the pure-Python backend is used (tens "
            "of times slower). Reinstall bpe from its source with a C compiler available, or set BPE_PURE_PYTHON=1 "
            "to choose the pure backend without this warning.")


if COMPILED is None and os.environ.get("BPE_PURE_PYTHON") != "1" and not os.path.exists(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "PURE_INSTALL")):
    import warnings

    warnings.warn(_missing_core_message(), RuntimeWarning, stacklevel=2)


def active() -> SimpleNamespace:
    """The backend new tokenizers and training runs use."""
    return _active


def use(name: str) -> None:
    """Switch the backend for tokenizers built from now on: ``"cython"`` or ``"python"``."""
    global _active
    if name == "python":
        _active = PURE
    elif name == "cython":
        if COMPILED is None:
            raise RuntimeError(
                f"the compiled core is not available ({COMPILED_IMPORT_ERROR}); "
                "build it with `pip install .` (needs Cython and a C compiler)"
            )
        _active = COMPILED
    else:
        raise ArgumentError(f"unknown backend {name!r}; pass 'cython' or 'python'")
