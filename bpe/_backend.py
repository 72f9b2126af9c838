"""Chooses between the compiled core and the pure-Python reference backend.

The compiled modules (``bpe._core``, ``bpe._train``) are used when they import, unless the
environment variable ``BPE_PURE_PYTHON=1`` is set; otherwise ``bpe._reference`` is used.
``bpe.backend`` names the one in force ("cython" or "python").  Tests switch backends with
:func:`use`; a tokenizer keeps the backend it was built with.  Nothing else lives here.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from . import _reference

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
        raise ValueError(f"unknown backend {name!r}; pass 'cython' or 'python'")
