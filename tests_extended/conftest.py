"""Fixtures for the extended checks: the shared data folder, backends, tiktoken oracles.

The shared data folder is ``$BPE_SHARED_DATA`` if set, else ``<repo root>/../shared/data``.
A missing folder FAILS the run (it never skips): these checks exist to run in CI.

The tiktoken oracles are built from the shared ``.tiktoken`` files, with the split patterns
and special-token ids copied from the shared README (``tiktoken_ext/openai_public.py`` of
tiktoken 0.14.0), never from ``bpe``'s own bundle or pattern table: an oracle that borrows
our data could not catch a wrong bundle or a wrong pattern.
"""

from __future__ import annotations

import functools
import os
import pathlib
from types import SimpleNamespace

import pytest
import tiktoken
import tiktoken.load

from backend_fixtures import backend, cython_backend  # noqa: F401  (fixtures, from tests/)

try:
    from bpe import _core
except ImportError:  # pragma: no cover - the compiled core is built before the checks run
    _core = None

# As in tests/: encoders build their pair signatures at the first merged piece (normally after
# 20,000), so every check here runs with them; test_corpora_identity.py also runs without.
if _core is not None:
    _core._set_default_signatures_after(0)

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]

CORPORA = [
    "english.txt",
    "spanish.txt",
    "portuguese.txt",
    "multilingual.txt",
    "code_python.txt",
    "code_c.txt",
    "code_js.txt",
]

# ---------------------------------------------------------------- copied from the shared README

#: Split patterns, verbatim from the README's code blocks.
R50K_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PAT = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: name -> (rank file under tiktoken/, split pattern, special tokens, explicit n_vocab or None)
README_ENCODINGS: dict[str, tuple[str, str, dict[str, int], "int | None"]] = {
    "gpt2": ("r50k_base.tiktoken", R50K_PAT, {"<|endoftext|>": 50256}, 50257),
    "r50k_base": ("r50k_base.tiktoken", R50K_PAT, {"<|endoftext|>": 50256}, 50257),
    "p50k_base": ("p50k_base.tiktoken", R50K_PAT, {"<|endoftext|>": 50256}, 50281),
    "cl100k_base": (
        "cl100k_base.tiktoken",
        CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        None,
    ),
    "o200k_base": (
        "o200k_base.tiktoken",
        O200K_PAT,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        None,
    ),
}

#: README "Token counts of the corpora" (tiktoken encode_ordinary); the `gpt2` column is r50k.
README_TOKEN_COUNTS: dict[str, dict[str, int]] = {
    # corpus:            bytes,     gpt2(r50k), p50k,    cl100k,  o200k
    "english.txt": {"bytes": 1_926_423, "r50k_base": 499_664, "p50k_base": 499_391, "cl100k_base": 468_675, "o200k_base": 465_369},
    "spanish.txt": {"bytes": 2_141_649, "r50k_base": 813_389, "p50k_base": 812_300, "cl100k_base": 658_362, "o200k_base": 587_463},
    "portuguese.txt": {"bytes": 753_687, "r50k_base": 301_916, "p50k_base": 301_353, "cl100k_base": 248_507, "o200k_base": 216_994},
    "multilingual.txt": {"bytes": 1_352_492, "r50k_base": 808_121, "p50k_base": 808_121, "cl100k_base": 504_437, "o200k_base": 290_311},
    "code_python.txt": {"bytes": 2_125_862, "r50k_base": 951_026, "p50k_base": 587_485, "cl100k_base": 468_712, "o200k_base": 471_750},
    "code_c.txt": {"bytes": 1_001_710, "r50k_base": 424_206, "p50k_base": 382_619, "cl100k_base": 305_688, "o200k_base": 307_897},
    "code_js.txt": {"bytes": 801_997, "r50k_base": 323_363, "p50k_base": 267_020, "cl100k_base": 213_348, "o200k_base": 215_866},
}

# ---------------------------------------------------------------- fixtures


def _shared_dir() -> pathlib.Path:
    env = os.environ.get("BPE_SHARED_DATA")
    return pathlib.Path(env) if env else (REPO_ROOT.parent / "shared" / "data")


@pytest.fixture(scope="session")
def shared() -> pathlib.Path:
    """The shared data folder; fails (never skips) when it is missing."""
    path = _shared_dir()
    if not path.is_dir():
        pytest.fail(
            f"shared data folder not found at {path}; set BPE_SHARED_DATA to the folder that holds "
            "tiktoken/, gpt2/, corpora/ and llamacpp_vocab_tests/ (see its README.md)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def readme():
    """The constants copied from the shared README (patterns, special tokens, token counts)."""
    return SimpleNamespace(
        encodings=README_ENCODINGS,
        token_counts=README_TOKEN_COUNTS,
        patterns={name: spec[1] for name, spec in README_ENCODINGS.items()},
        special_tokens={name: dict(spec[2]) for name, spec in README_ENCODINGS.items()},
        rank_files={name: spec[0] for name, spec in README_ENCODINGS.items()},
        encoding_names=list(ENCODINGS),
        corpora=list(CORPORA),
    )


@pytest.fixture(scope="session")
def load_ranks(shared):
    """``load_ranks(filename)`` -> ``tiktoken.load.load_tiktoken_bpe(shared/tiktoken/filename)``.

    tiktoken's file cache is switched off while loading: a stale entry in its cache (keyed by
    the path only) would otherwise stand in for the file without any check.
    """

    @functools.lru_cache(maxsize=None)
    def load(filename: str) -> dict:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TIKTOKEN_CACHE_DIR", "")
            return tiktoken.load.load_tiktoken_bpe(str(shared / "tiktoken" / filename))

    def get(filename: str) -> dict:
        return dict(load(filename))

    return get


@pytest.fixture(scope="session")
def oracle(load_ranks):
    """``oracle(name)`` -> a ``tiktoken.Encoding`` built from the shared rank file and the
    README's pattern and special tokens (cached for the session)."""

    @functools.lru_cache(maxsize=None)
    def make(name: str) -> "tiktoken.Encoding":
        filename, pat, specials, n_vocab = README_ENCODINGS[name]
        return tiktoken.Encoding(
            name=f"shared-oracle-{name}",
            pat_str=pat,
            mergeable_ranks=load_ranks(filename),
            special_tokens=dict(specials),
            explicit_n_vocab=n_vocab,
        )

    return make


@pytest.fixture(scope="session")
def corpus(shared):
    """``corpus(filename)`` -> the text of ``shared/corpora/filename`` (cached)."""

    @functools.lru_cache(maxsize=None)
    def read(name: str) -> str:
        with open(shared / "corpora" / name, encoding="utf-8", newline="") as f:
            return f.read()

    return read


def cut_at_line_end(text: str, n_chars: int) -> str:
    """The first ``n_chars`` characters of ``text``, shortened to end after a newline."""
    if len(text) <= n_chars:
        return text
    head = text[:n_chars]
    end = head.rfind("\n")
    return head[: end + 1] if end >= 0 else head


@pytest.fixture(scope="session")
def head_sample():
    """``head_sample(text, n_chars)``: the first ``n_chars`` characters, cut at a line end."""
    return cut_at_line_end
