"""Named encodings: the ones bundled inside the package (``get_encoding(name)``,
``list_encodings()``), tiktoken's ``Encoding(name, pat_str=..., ...)`` constructor for more.

``r50k_base`` (alias ``gpt2``), ``p50k_base``, ``p50k_edit`` (p50k's ranks with the fill-in-
the-middle tokens), ``cl100k_base``, ``o200k_base`` and ``o200k_harmony`` (gpt-oss: o200k's
ranks with its chat tokens) are built from the rank tables in
``bpe/data/*.bpeb`` (see ``bpe.bundle``) with tiktoken's split patterns and special tokens;
``encoding_name_for_model`` maps model names to them as tiktoken 0.14 does.  Nothing is ever
downloaded.  Loaded encodings are cached per backend, and a bundled tokenizer pickles as its
name.  This module does not encode anything itself.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pkgutil
import threading
from typing import Callable, Optional

from . import _backend
from .errors import ArgumentError, TokenizerFileError, UnknownEncodingError, VocabularyError
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
# gpt-oss's: o200k's ranks; 200018 keeps o200k's <|endofprompt|> and is also <|reserved_200018|>
# (tiktoken's table gives both; the id decodes as the first)
ENCODINGS["o200k_harmony"] = ("o200k_base", "o200k_base", {
    ENDOFPROMPT: 200018, "<|startoftext|>": 199998, ENDOFTEXT: 199999, "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001, "<|return|>": 200002, "<|constrain|>": 200003, "<|reserved_200004|>": 200004,
    "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008,
    "<|reserved_200009|>": 200009, "<|reserved_200010|>": 200010, "<|reserved_200011|>": 200011, "<|call|>": 200012,
    **{f"<|reserved_{i}|>": i for i in range(200013, 201088)}}, None)
ALIASES = {"gpt2": "r50k_base"}

_cache: dict[tuple[str, str], Encoding] = {}
_lock = threading.RLock()  # (a constructor may call get_encoding)


class Encoding(Tokenizer):
    """A rank-table tokenizer made with tiktoken's constructor and arguments, so that code
    written for ``tiktoken.Encoding`` runs unchanged, its recipe for adding special tokens
    included::

        base = bpe.get_encoding("cl100k_base")
        enc = bpe.Encoding(name="cl100k_im", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                           special_tokens={**base._special_tokens, "<|im_start|>": 100264})

    Every :class:`~bpe.Tokenizer` call works on it, and :func:`get_encoding` returns
    instances of it.  Where tiktoken asserts (``explicit_n_vocab`` not matching), a
    ``ValueError`` says what does not match."""

    def __init__(self, name: str, *, pat_str: str, mergeable_ranks: dict[bytes, int],
                 special_tokens: dict[str, int], explicit_n_vocab: "int | None" = None):
        if not isinstance(name, str):
            raise TypeError(f"name must be a str (the encoding's name), got {type(name).__name__}")
        if not isinstance(pat_str, str):
            raise TypeError(f"pat_str must be the split pattern as a str, got {type(pat_str).__name__}")
        if explicit_n_vocab and len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab:
            raise VocabularyError(f"explicit_n_vocab={explicit_n_vocab} but there are {len(mergeable_ranks):,} mergeable "
                             f"and {len(special_tokens):,} special tokens; pass their total or None")
        super().__init__(mergeable_ranks, pattern=pat_str, special_tokens=special_tokens, name=name,
                         explicit_n_vocab=explicit_n_vocab or None)


def sample_path() -> str:
    """Path of the bundled public-domain sample text (opening chapters of *Moby-Dick*)."""
    return os.path.join(_DATA, "sample.txt")


def list_encodings() -> list[str]:
    """Names accepted by :func:`get_encoding`: the bundled ones and their aliases, then the
    registered ones and those of tiktoken plugins."""
    with _lock:
        more = set(_registered) | set(_plugin_constructors())
    return sorted(ENCODINGS) + sorted(ALIASES) + sorted(more)


#: SHA-256 of each bundle file as made by scripts/make_bundles.py (which prints them): a
#: damaged installation raises instead of loading another table
BUNDLE_SHA256 = {
    "r50k_base": "3d1e1a1b67bb5c91407e793bf94a6e2042122205ec03fc89c7f9d7bbfb9f5e8a",
    "p50k_base": "c80cf46d1cde7ae06eb4ac956291bf5ae085d90de25ba4c42f1f329a8b0df9af",
    "cl100k_base": "58924a24a80b0adc068bf9a26a552aa4d3a42e9b471e7343967d7b7494909165",
    "o200k_base": "04357c53f989e8ac2e69826aecae89834682f1de92bb8bb2a8985c940ba6c682",
}


def bundled_ranks(bundle: str, folder: str = _DATA) -> dict[bytes, int]:
    """The mergeable ranks stored in ``<folder>/<bundle>.bpeb`` (the package's data), after
    checking the file's SHA-256."""
    path = os.path.join(folder, f"{bundle}.bpeb")
    with open(path, "rb") as f:
        data = f.read()
    if hashlib.sha256(data).hexdigest() != BUNDLE_SHA256.get(bundle):
        raise TokenizerFileError(path, "the bundled rank table is damaged (its SHA-256 is not the one it was "
                                       "made with); reinstall bpe")
    header, tokens, ranks = unpack(data, path)
    table = bundled_ranks(header["extends"], folder) if header.get("extends") else {}
    table.update(zip(tokens, ranks))
    return table


def get_encoding(name: str) -> Encoding:
    """An encoding by name: a bundled one (``"gpt2"``/``"r50k_base"``, ``"p50k_base"``,
    ``"p50k_edit"``, ``"cl100k_base"``, ``"o200k_base"``, ``"o200k_harmony"``; offline, the
    data ships inside the package), one added with :func:`register_encoding`, or one from a
    tiktoken plugin (a ``tiktoken_ext`` module's ``ENCODING_CONSTRUCTORS``).  Built once per
    backend and kept."""
    key = (name, _backend.active().name)
    with _lock:
        tok = _cache.get(key)
        if tok is not None:
            return tok
        if isinstance(name, str) and ALIASES.get(name, name) in ENCODINGS:
            bundle, pattern, specials, n_vocab = ENCODINGS[ALIASES.get(name, name)]
            tok = Encoding._construct(
                bundled_ranks(bundle),
                pattern=pattern,
                special_tokens=specials,
                name=name,
                explicit_n_vocab=n_vocab,
                _reduce_as=(get_encoding, (name,)),
            )
        else:
            constructor = _registered.get(name) if isinstance(name, str) else None
            if constructor is None and isinstance(name, str):
                constructor = _plugin_constructors().get(name)
            if constructor is None:
                raise UnknownEncodingError(name, list_encodings())
            tok = _built(name, constructor)
        _cache[key] = tok
        return tok


_registered: dict[str, Callable[[], object]] = {}
_plugins: Optional[dict[str, Callable[[], object]]] = None


def register_encoding(name: str, constructor: Callable[[], object], *, replace: bool = False) -> None:
    """Make ``get_encoding(name)`` build ``constructor()``: a function returning a
    :class:`~bpe.Tokenizer`, or a tiktoken plugin's dict (``name``, ``pat_str``,
    ``mergeable_ranks``, ``special_tokens``, optionally ``explicit_n_vocab``).  It runs on the
    first ``get_encoding(name)`` of each backend.  A name that is bundled or registered
    already is refused unless ``replace=True`` (bundled names never are replaced)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    if not callable(constructor):
        raise TypeError(f"constructor must be a function of no arguments returning a Tokenizer or a "
                        f"tiktoken constructor dict, got {type(constructor).__name__}")
    if ALIASES.get(name, name) in ENCODINGS:
        raise ArgumentError(f"{name!r} is a bundled encoding; register yours under another name")
    with _lock:
        if name in _registered and not replace:
            raise ArgumentError(f"an encoding named {name!r} is registered already; pass replace=True to replace it")
        _registered[name] = constructor
        for key in [k for k in _cache if k[0] == name]:
            del _cache[key]


def _built(name: str, constructor: Callable[[], object]) -> Tokenizer:
    """The tokenizer a registered or plugin constructor gives (a Tokenizer, or tiktoken's dict)."""
    made = constructor()
    if isinstance(made, Tokenizer):
        return made
    if isinstance(made, dict):
        try:
            return Encoding(**made)
        except TypeError as exc:
            raise TypeError(f"the constructor of encoding {name!r} returned a dict that is not tiktoken's "
                            f"(name, pat_str, mergeable_ranks, special_tokens[, explicit_n_vocab]): {exc}") from None
    raise TypeError(f"the constructor of encoding {name!r} returned {type(made).__name__}; "
                    "return a bpe.Tokenizer or tiktoken's constructor dict")


def _plugin_constructors() -> dict[str, Callable[[], object]]:
    """The constructors of tiktoken plugins (modules of the ``tiktoken_ext`` namespace package,
    each with ``ENCODING_CONSTRUCTORS``), found once; none when there is no such package.  The
    names bpe bundles are its own: a plugin's constructor for them is not used."""
    global _plugins
    if _plugins is None:
        found: dict[str, Callable[[], object]] = {}
        try:
            import tiktoken_ext
        except ImportError:
            tiktoken_ext = None
        if tiktoken_ext is not None:
            for module in pkgutil.iter_modules(tiktoken_ext.__path__, tiktoken_ext.__name__ + "."):
                try:
                    constructors = importlib.import_module(module.name).ENCODING_CONSTRUCTORS
                except (ImportError, AttributeError):
                    continue
                for name, constructor in constructors.items():
                    if ALIASES.get(name, name) not in ENCODINGS:
                        found.setdefault(name, constructor)
        _plugins = found
    return _plugins


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


def encoding_for_model(model_name: str) -> Encoding:
    """The bundled encoding a model uses (see :func:`encoding_name_for_model`)."""
    return get_encoding(encoding_name_for_model(model_name))


def list_encoding_names() -> list[str]:
    """tiktoken's name for :func:`list_encodings`."""
    return list_encodings()
