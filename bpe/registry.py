"""The encodings bundled inside the package: ``get_encoding(name)`` and ``list_encodings()``.

``r50k_base`` (alias ``gpt2``), ``p50k_base``, ``cl100k_base`` and ``o200k_base`` are built from
the rank tables in ``bpe/data/*.bpeb`` (see ``bpe.bundle``) with tiktoken's split patterns and
special tokens.  Nothing is ever downloaded.  Loaded encodings are cached per backend, and a
bundled tokenizer pickles as its name.  This module does not encode anything itself.
"""

from __future__ import annotations

import os
import threading
from . import _backend
from .errors import UnknownEncodingError
from .io.bundle import unpack
from .tokenizer import Tokenizer

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

#: name -> (bundle file, pattern name, special tokens, explicit n_vocab or None)
ENCODINGS: dict[str, tuple[str, str, dict[str, int], "int | None"]] = {
    "r50k_base": ("r50k_base", "r50k_base", {ENDOFTEXT: 50256}, 50257),
    "p50k_base": ("p50k_base", "p50k_base", {ENDOFTEXT: 50256}, 50281),
    "cl100k_base": (
        "cl100k_base",
        "cl100k_base",
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
        None,
    ),
    "o200k_base": ("o200k_base", "o200k_base", {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}, None),
}
ALIASES = {"gpt2": "r50k_base"}

_cache: dict[tuple[str, str], Tokenizer] = {}
_lock = threading.Lock()


def sample_path() -> str:
    """Path of the bundled public-domain sample text (opening chapters of *Moby-Dick*)."""
    return os.path.join(_DATA, "sample.txt")


def list_encodings() -> list[str]:
    """Names accepted by :func:`get_encoding`."""
    return sorted(ENCODINGS) + sorted(ALIASES)


def bundled_ranks(bundle: str) -> dict[bytes, int]:
    """The mergeable ranks stored in ``bpe/data/<bundle>.bpeb``."""
    path = os.path.join(_DATA, f"{bundle}.bpeb")
    with open(path, "rb") as f:
        header, tokens, ranks = unpack(f.read(), path)
    table = bundled_ranks(header["extends"]) if header.get("extends") else {}
    table.update(zip(tokens, ranks))
    return table


def get_encoding(name: str) -> Tokenizer:
    """A bundled encoding by name (``"gpt2"``/``"r50k_base"``, ``"p50k_base"``, ``"cl100k_base"``,
    ``"o200k_base"``).  Works offline: the data ships inside the package."""
    if not isinstance(name, str) or ALIASES.get(name, name) not in ENCODINGS:
        raise UnknownEncodingError(name, list_encodings())
    key = (name, _backend.active().name)
    with _lock:
        tok = _cache.get(key)
        if tok is None:
            bundle, pattern, specials, n_vocab = ENCODINGS[ALIASES.get(name, name)]
            tok = Tokenizer(
                bundled_ranks(bundle),
                pattern=pattern,
                special_tokens=specials,
                name=name,
                explicit_n_vocab=n_vocab,
                _reduce_as=(get_encoding, (name,)),
            )
            _cache[key] = tok
        return tok
