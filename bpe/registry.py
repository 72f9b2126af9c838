"""The encodings bundled inside the package: ``get_encoding(name)`` and ``list_encodings()``.

``r50k_base`` (alias ``gpt2``), ``p50k_base``, ``p50k_edit`` (p50k's ranks with the fill-in-
the-middle tokens), ``cl100k_base`` and ``o200k_base`` are built from the rank tables in
``bpe/data/*.bpeb`` (see ``bpe.bundle``) with tiktoken's split patterns and special tokens;
``encoding_name_for_model`` maps model names to them as tiktoken 0.14 does.  Nothing is ever
downloaded.  Loaded encodings are cached per backend, and a bundled tokenizer pickles as its
name.  This module does not encode anything itself.
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
    "p50k_edit": ("p50k_base", "p50k_base",
                  {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}, None),
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


# tiktoken 0.14's model table (model_name -> encoding name), and its prefixes for versioned names
MODEL_TO_ENCODING: dict[str, str] = {
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base", "gpt-4o": "o200k_base", "gpt-4": "cl100k_base", "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base", "gpt-35-turbo": "cl100k_base", "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base", "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base", "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base", "text-davinci-002": "p50k_base", "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base", "text-babbage-001": "r50k_base", "text-ada-001": "r50k_base",
    "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base", "ada": "r50k_base",
    "code-davinci-002": "p50k_base", "code-davinci-001": "p50k_base", "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base", "davinci-codex": "p50k_base", "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": "r50k_base", "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base", "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base", "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base", "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base", "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2", "gpt-2": "gpt2",
}
MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base", "chatgpt-4o-": "o200k_base", "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base", "gpt-3.5-turbo-": "cl100k_base", "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony", "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base", "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding a model uses, as tiktoken's: exact names first, then
    prefixes of versioned names; ``KeyError`` for a model it does not know."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if isinstance(model_name, str) and model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name!r} to an encoding: pass one of "
                   f"{list_encodings()} to bpe.get_encoding")


def encoding_for_model(model_name: str) -> Tokenizer:
    """The bundled encoding a model uses (see :func:`encoding_name_for_model`)."""
    return get_encoding(encoding_name_for_model(model_name))


def list_encoding_names() -> list[str]:
    """tiktoken's name for :func:`list_encodings`."""
    return list_encodings()
