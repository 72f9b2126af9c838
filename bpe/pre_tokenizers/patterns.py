"""Named pre-tokenization (split) patterns and how a ``pattern=`` argument is resolved.

This module knows the split regexes of the GPT-2 (r50k/p50k), GPT-4 (cl100k_base),
GPT-4o (o200k_base), Llama 3 and Qwen2 (also Qwen2.5 and Qwen3) tokenizers, turns a user's
``pattern`` argument (a name, ``None`` or a custom regex) into a compiled ``regex`` object, and
splits text into pre-tokens with it.  It does not merge anything and does not know about
special tokens.

The patterns are written for the ``regex`` module's syntax (possessive quantifiers,
``\\p{..}`` classes), which is also what tiktoken feeds to fancy-regex.  One translation is
needed: ``$`` in Python matches before a final newline as well as at the very end, whereas
tiktoken's engine only matches at the very end, so ``$`` is rewritten to ``\\Z``.
"""

from __future__ import annotations

import re as _stdlib_re
from functools import lru_cache
from typing import Optional, Union

import regex

from ..errors import PatternError

GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)

CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Qwen2 / Qwen2.5 / Qwen3: Llama 3's pattern with single digits (``\p{N}`` for ``\p{N}{1,3}``)
QWEN2_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Split patterns by name.  ``r50k_base``, ``p50k_base`` and ``gpt2`` share one pattern.
NAMED_PATTERNS = {
    "gpt2": GPT2_PATTERN,
    "r50k_base": GPT2_PATTERN,
    "p50k_base": GPT2_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k_base": O200K_PATTERN,
    "llama3": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
}

class RegexSource(str):
    """A string that is a regex source, never a pattern name (used when loading files)."""


# a regex source that is one of the named patterns gets its (first) name back
_NAME_OF_SOURCE: dict[str, str] = {}
for _name, _source in NAMED_PATTERNS.items():
    _NAME_OF_SOURCE.setdefault(_source, _name)

_NAME_LIKE = _stdlib_re.compile(r"[A-Za-z][A-Za-z0-9_\-]*\Z")


def to_python_syntax(pattern: str) -> str:
    """Rewrite an end-of-text ``$`` (outside classes, unescaped) as ``\\Z``."""
    out = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            # a ']' right after '[' or '[^' is a literal member of the class
            j = i + 1
            if j < len(pattern) and pattern[j] == "^":
                out.append(pattern[i : j + 1])
                i = j + 1
                if i < len(pattern) and pattern[i] == "]":
                    out.append("]")
                    i += 1
                continue
            if j < len(pattern) and pattern[j] == "]":
                out.append("[]")
                i += 2
                continue
        elif ch == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def resolve(pattern: Union[str, "regex.Pattern[str]", None]) -> tuple[Optional[str], Optional[str]]:
    """Return ``(name, pattern_string)`` for a ``pattern=`` argument.

    ``name`` is the canonical pattern name when ``pattern`` is one of :data:`NAMED_PATTERNS`
    or exactly the source of one, as a string or compiled (tiktoken's ``pat_str``: split by
    that pattern's scanner, on tiktoken's Unicode tables); else ``None``.  ``pattern_string``
    is the regex source, or ``None`` for "no split".
    """
    if pattern is None:
        return None, None
    if isinstance(pattern, regex.Pattern) or isinstance(pattern, _stdlib_re.Pattern):
        pattern = RegexSource(pattern.pattern)
    if not isinstance(pattern, str):
        raise PatternError(
            f"pattern must be a name ({', '.join(sorted(NAMED_PATTERNS))}), None for no split, "
            f"or a regex string; got {type(pattern).__name__}"
        )
    if isinstance(pattern, RegexSource):
        source = str(pattern)
        return _NAME_OF_SOURCE.get(source), source
    if pattern in NAMED_PATTERNS:
        return pattern, NAMED_PATTERNS[pattern]
    if pattern in _NAME_OF_SOURCE:  # e.g. tiktoken's pat_str of a named encoding: its scanner
        return _NAME_OF_SOURCE[pattern], pattern
    if _NAME_LIKE.match(pattern):
        raise PatternError(
            f"unknown pattern name {pattern!r}; pass one of {sorted(NAMED_PATTERNS)}, None for no "
            f"split, or a regex (to use a plain word as a regex, pass regex.compile({pattern!r}))"
        )
    if pattern == "":
        raise PatternError("pattern must not be empty; pass None for no split")
    return None, pattern


@lru_cache(maxsize=64)
def compile_pattern(pattern_string: Optional[str]) -> "Optional[regex.Pattern[str]]":
    """Compile a split regex (``None`` stays ``None``), with a clear error if it is invalid.

    This is the general path, on the ``regex`` module's Unicode tables.  Tokenizers with a named
    pattern split with the scanners instead (``bpe._scanner`` / ``bpe._reference_scan``), which
    follow tiktoken's tables.
    """
    if pattern_string is None:
        return None
    try:
        return regex.compile(to_python_syntax(pattern_string))
    except regex.error as exc:
        raise PatternError(f"invalid split regex {pattern_string!r}: {exc}") from None


def split(compiled: "Optional[regex.Pattern[str]]", text: str) -> list[str]:
    """Split ``text`` into pre-tokens; with no pattern the whole text is one pre-token.

    The pieces always add up to ``text``: stretches a custom pattern does not match become
    pre-tokens of their own.
    """
    if compiled is None:
        return [text] if text else []
    if not compiled.groups:
        pieces = compiled.findall(text)
        if sum(map(len, pieces)) == len(text):
            return pieces
    # A custom pattern that skips some text (or has capture groups): keep the unmatched
    # stretches as pre-tokens of their own, so that no character is dropped (this is what
    # Hugging Face's ``Split(behavior="isolated")`` does too).
    pieces, pos = [], 0
    for m in compiled.finditer(text):
        start, end = m.span()
        if start > pos:
            pieces.append(text[pos:start])
        if end > start:
            pieces.append(text[start:end])
        pos = max(pos, end)
    if pos < len(text):
        pieces.append(text[pos:])
    return pieces


# ---------------------------------------------------------------- Oniguruma (Hugging Face)
#
# Hugging Face `tokenizers` compiles the regexes of tokenizer.json with Oniguruma's default
# syntax, which differs from the `regex` module's in three places that occur in the wild:
#   * `X{n,m}+` is not possessive there: it repeats `X{n,m}` one or more times;
#   * `$` and `^` are line anchors (before each "\n" / after it), `\Z` is "at the end or
#     before a final newline" and `\z` the very end;
#   * possessive `?+ *+ ++` and atomic groups mean the same in both.
# `from_oniguruma` rewrites the first two for the `regex` module; `to_oniguruma` writes our
# patterns (tiktoken's syntax, `$` = the very end, `{n,m}+` possessive) for Oniguruma.

_BOUNDED_REPEAT = _stdlib_re.compile(r"\{\d+(?:,\d*)?\}")


def _atoms(pattern: str):
    """Yield ``(start, end, kind)`` of each top-level token of a regex source: ``"atom"``
    (an escape, a class, a group or one character), ``"repeat"`` (``{n,m}``), ``"other"``."""
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            j = i + 2
            if pattern[i + 1:i + 2] in ("p", "P", "x", "u", "N") and pattern[j:j + 1] == "{":
                j = pattern.index("}", j) + 1
            yield i, j, "atom"
            i = j
        elif ch == "[":
            j = i + 1
            if pattern[j:j + 1] == "^":
                j += 1
            if pattern[j:j + 1] == "]":
                j += 1
            depth = 1
            while j < n and depth:
                if pattern[j] == "\\":
                    j += 2
                    continue
                if pattern[j] == "[":
                    depth += 1
                elif pattern[j] == "]":
                    depth -= 1
                j += 1
            yield i, j, "atom"
            i = j
        elif ch == "(":
            depth, j = 0, i
            while j < n:
                if pattern[j] == "\\":
                    j += 2
                    continue
                if pattern[j] == "[":
                    j = next(_atoms(pattern[j:]))[1] + j
                    continue
                if pattern[j] == "(":
                    depth += 1
                elif pattern[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            yield i, j + 1, "group"
            i = j + 1
        elif ch == "{" and _BOUNDED_REPEAT.match(pattern, i):
            j = _BOUNDED_REPEAT.match(pattern, i).end()
            yield i, j, "repeat"
            i = j
        else:
            yield i, i + 1, "atom" if ch not in "|?*+)^$." else "other"
            i += 1


def _rewrite(pattern: str, on_repeat_plus, on_anchor) -> str:
    """Rewrite ``X{n,m}+`` with ``on_repeat_plus(X, "{n,m}")`` and each ``$``/``\\Z``/``\\z``
    with ``on_anchor(token)``, recursing into groups."""
    out: list[str] = []
    toks = list(_atoms(pattern))
    k = 0
    while k < len(toks):
        s, e, kind = toks[k]
        text = pattern[s:e]
        if kind == "group":
            head = 1
            if text.startswith("(?"):
                m = _stdlib_re.match(r"\(\?(?:[:=!>]|<[=!]|<[A-Za-z_]\w*>|P<[A-Za-z_]\w*>|[a-zA-Z\-]+:|[a-zA-Z\-]+\))",
                                     text)
                head = m.end() if m else 2
            if text[head - 1:head] == ")" and head > 1 and not text.startswith("(?:"):  # a flag group "(?i)"
                out.append(text)
                k += 1
                continue
            text = text[:head] + _rewrite(text[head:-1], on_repeat_plus, on_anchor) + ")"
        elif text in ("$", r"\Z", r"\z"):
            out.append(on_anchor(text))
            k += 1
            continue
        if (kind in ("atom", "group") and k + 2 < len(toks) and toks[k + 1][2] == "repeat"
                and pattern[toks[k + 2][0]:toks[k + 2][1]] == "+"):
            out.append(on_repeat_plus(text, pattern[toks[k + 1][0]:toks[k + 1][1]]))
            k += 3
            continue
        out.append(text)
        k += 1
    return "".join(out)


def from_oniguruma(pattern: str) -> str:
    """An Oniguruma (Hugging Face) regex source rewritten with the same meaning for the
    ``regex`` module (compiled with MULTILINE by :func:`compile_hf_regex`)."""
    anchors = {"$": "$", r"\Z": r"(?=\n?\Z)", r"\z": r"\Z"}
    return _rewrite(pattern, lambda atom, rep: f"(?:{atom}{rep})+", anchors.__getitem__)


def to_oniguruma(pattern: str) -> str:
    """One of our regex sources (tiktoken's syntax: ``$`` is the very end, ``{n,m}+``
    possessive) rewritten with the same meaning for Oniguruma."""
    anchors = {"$": r"\z", r"\Z": r"\z", r"\z": r"\z"}
    return _rewrite(pattern, lambda atom, rep: f"(?>{atom}{rep})", anchors.__getitem__)


@lru_cache(maxsize=64)
def compile_hf_regex(pattern: str) -> "regex.Pattern[str]":
    """Compile a regex from a ``tokenizer.json`` with Oniguruma's meaning."""
    try:
        return regex.compile(from_oniguruma(pattern), regex.MULTILINE)
    except (regex.error, ValueError, StopIteration) as exc:
        raise PatternError(f"invalid regex {pattern!r}: {exc}") from None


def name_of_oniguruma_source(pattern: str) -> Optional[str]:
    """The named pattern whose splits a ``tokenizer.json`` regex gives (under Oniguruma's
    meaning), or ``None``."""
    for name, source in NAMED_PATTERNS.items():
        if pattern == to_oniguruma(source) or (pattern == source and to_oniguruma(source) == source):
            return _NAME_OF_SOURCE[source]
    return None
