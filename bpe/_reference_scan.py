"""Pure-Python reference of the hand-written splitter (``bpe/_scanner.pxd``).

Splits text for the named patterns exactly as tiktoken's regexes do, one alternative at a
time, using tiktoken's Unicode classes (``bpe/data/unicode_classes.json``, written by
``scripts/make_unicode_tables.py``).  It works on code points where the compiled scanner works
on UTF-8 bytes; otherwise the two are line for line the same, and the tests check both against
tiktoken and the ``regex`` module.  Custom patterns never come here (``bpe.patterns`` runs them
on ``regex``).  Used by the pure-Python backend; slow but readable.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Callable

OTHER, WS, N, LU, LL, LMO, M = (1 << k for k in range(7))
L_ANY = LU | LL | LMO            # \p{L}
PUNCT = OTHER | M                # [^\s\p{L}\p{N}]
UPPER = LU | LMO | M             # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
LOWER = LL | LMO | M             # [\p{Ll}\p{Lm}\p{Lo}\p{M}]
PREFIX = OTHER | M | WS          # [^\r\n\p{L}\p{N}] (minus \r \n, checked apart)
_MASKS = {"WS": WS, "N": N, "LU": LU, "LL": LL, "LMO": LMO, "M": M}
_CRLF = "\r\n"


@lru_cache(maxsize=1)
def classes() -> bytearray:
    """Class bit of every code point (index = code point)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "unicode_classes.json")
    with open(path, encoding="utf-8") as f:
        ranges = json.load(f)["classes"]
    table = bytearray([OTHER]) * 0x110000
    for name, spans in ranges.items():
        bit = _MASKS[name]
        for a, b in spans:
            table[a : b + 1] = bytes([bit]) * (b - a + 1)
    return table


def _run(t: str, cls: bytearray, i: int, mask: int) -> int:
    n = len(t)
    while i < n and cls[ord(t[i])] & mask:
        i += 1
    return i


def _contraction(t: str, i: int, icase: bool) -> int:
    """End of ``'s|'t|'re|'ve|'m|'ll|'d`` at i (case-insensitive if icase), or -1."""
    if i + 1 >= len(t) or t[i] != "'":
        return -1
    one = t[i + 1]
    two = t[i + 1 : i + 3]
    if icase:
        one = "s" if one == "\u017f" else one.lower() if one.isascii() else one
        two = two.lower() if two.isascii() else two
    if one in ("s", "t", "m", "d"):
        return i + 2
    if len(two) == 2 and two in ("ll", "ve", "re"):
        return i + 3
    return -1


def _whitespace(t: str, cls: bytearray, i: int, end_first: bool, crlf_rule: bool) -> int:
    """``\\s++$`` (if end_first), ``\\s*[\\r\\n]+`` (if crlf_rule), ``\\s+(?!\\S)``, ``\\s``."""
    n = len(t)
    j = _run(t, cls, i, WS)
    if end_first and j == n:
        return n
    if crlf_rule:
        last_crlf = max(t.rfind("\r", i, j), t.rfind("\n", i, j))
        if last_crlf >= 0:
            return last_crlf + 1
    if j == n:
        return n
    if j - i >= 2:
        return j - 1
    return j


def _digits(t: str, cls: bytearray, i: int) -> int:
    """``\\p{N}{1,3}`` at i (a digit)."""
    e = i + 1
    while e < len(t) and e < i + 3 and cls[ord(t[e])] & N:
        e += 1
    return e


def _punctuation(t: str, cls: bytearray, i: int, trailing: str) -> int:
    """`` ?[^\\s\\p{L}\\p{N}]+`` then any of ``trailing`` at i, or -1."""
    n = len(t)
    start = i + 1 if t[i] == " " and i + 1 < n and cls[ord(t[i + 1])] & PUNCT else i
    if not cls[ord(t[start])] & PUNCT:
        return -1
    e = _run(t, cls, start, PUNCT)
    while e < n and t[e] in trailing:
        e += 1
    return e


def _gpt2(t: str, cls: bytearray, i: int) -> int:
    # '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
    e = _contraction(t, i, False)
    if e >= 0:
        return e
    j = i + 1 if t[i] == " " and i + 1 < len(t) else i
    c = cls[ord(t[j])]
    for mask in (L_ANY, N, PUNCT):
        if c & mask:
            return _run(t, cls, j, mask)
    return _whitespace(t, cls, i, True, False)


def _cl100k_like(t: str, cls: bytearray, i: int, end_first: bool, single_digit: bool) -> int:
    # cl100k: '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
    #         |\s++$|\s*[\r\n]|\s+(?!\S)|\s
    # llama3: the same without \s++$ (end_first False)
    # qwen2:  llama3 with \p{N} for \p{N}{1,3} (single_digit True)
    n = len(t)
    e = _contraction(t, i, True)
    if e >= 0:
        return e
    c = cls[ord(t[i])]
    if c & L_ANY:
        return _run(t, cls, i + 1, L_ANY)
    if c & PREFIX and t[i] not in _CRLF and i + 1 < n and cls[ord(t[i + 1])] & L_ANY:
        return _run(t, cls, i + 2, L_ANY)
    # \p{N}{1,3} (\p{N} if single_digit)
    if c & N:
        return i + 1 if single_digit else _digits(t, cls, i)
    e = _punctuation(t, cls, i, _CRLF)
    if e >= 0:
        return e
    return _whitespace(t, cls, i, end_first, True)


def _o200k_letters(t: str, cls: bytearray, i: int, upper_first: bool) -> int:
    """``U*W+`` (or ``U+W*`` if upper_first) from i, with o200k's letter sets; end or -1."""
    n = len(t)
    j, last_lower = i, -1
    while j < n and cls[ord(t[j])] & UPPER:
        if cls[ord(t[j])] & LOWER:
            last_lower = j
        j += 1
    if upper_first:
        return _run(t, cls, j, LOWER) if j > i else -1
    if j < n and cls[ord(t[j])] & LOWER:
        return _run(t, cls, j, LOWER)
    # backtrack U* to its last character that W+ can take
    return last_lower + 1 if last_lower >= 0 else -1


def _o200k(t: str, cls: bytearray, i: int) -> int:
    # [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
    # |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
    # |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
    n = len(t)
    c = cls[ord(t[i])]
    prefix = bool(c & PREFIX) and t[i] not in _CRLF and i + 1 < n
    for upper_first in (False, True):
        e = _o200k_letters(t, cls, i + 1, upper_first) if prefix else -1
        if e < 0:
            e = _o200k_letters(t, cls, i, upper_first)
        if e >= 0:
            f = _contraction(t, e, True)
            return f if f >= 0 else e
    if c & N:
        return _digits(t, cls, i)
    e = _punctuation(t, cls, i, _CRLF + "/")
    if e >= 0:
        return e
    return _whitespace(t, cls, i, False, True)


SCANNERS: dict[str, Callable[[str, bytearray, int], int]] = {
    "gpt2": _gpt2,
    "r50k_base": _gpt2,
    "p50k_base": _gpt2,
    "cl100k_base": lambda t, cls, i: _cl100k_like(t, cls, i, True, False),
    "o200k_base": _o200k,
    "llama3": lambda t, cls, i: _cl100k_like(t, cls, i, False, False),
    "qwen2": lambda t, cls, i: _cl100k_like(t, cls, i, False, True),
}


def split(text: str, pattern: str) -> list[str]:
    """Split ``text`` into pre-tokens with the named ``pattern``."""
    scan = SCANNERS[pattern]
    cls = classes()
    pieces, i = [], 0
    while i < len(text):
        j = scan(text, cls, i)
        pieces.append(text[i:j])
        i = j
    return pieces
