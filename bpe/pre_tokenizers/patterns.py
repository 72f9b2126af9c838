"""Named pre-tokenization (split) patterns and how a ``pattern=`` argument is resolved.

This module knows the split regexes of the GPT-2 (r50k/p50k), GPT-4 (cl100k_base),
GPT-4o (o200k_base) and Llama 3 tokenizers, turns a user's ``pattern`` argument (a name,
``None`` or a custom regex) into a compiled ``regex`` object, and splits text into
pre-tokens with it.  It does not merge anything and does not know about special tokens.

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

#: Split patterns by name.  ``r50k_base``, ``p50k_base`` and ``gpt2`` share one pattern.
NAMED_PATTERNS = {
    "gpt2": GPT2_PATTERN,
    "r50k_base": GPT2_PATTERN,
    "p50k_base": GPT2_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k_base": O200K_PATTERN,
    "llama3": LLAMA3_PATTERN,
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
