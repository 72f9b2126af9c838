"""Special-token policy: which special tokens a call may produce, and finding them in text.

Special tokens are exact strings with fixed ids that BPE never produces by merging.  Following
tiktoken, ``encode`` raises if the text contains a special token that is *disallowed* (by default
all of them), encodes *allowed* ones as their id, and treats any other occurrence as plain text.
Names in ``allowed_special`` that are not special tokens of the tokenizer are ignored.  This
module resolves those arguments and splits text around allowed special tokens; it does not
encode the ordinary text in between.  ``AddedToken`` and ``split_added`` are the added tokens
of Hugging Face files (special or not, with their matching flags) and HF's way of finding them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import AbstractSet, Collection, Literal, Optional, Union

import regex

from .errors import DisallowedSpecialTokenError
from .normalizers import WHITE_SPACE as _WHITE_SPACE

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str]]


@lru_cache(maxsize=256)
def special_regex(tokens: frozenset) -> "regex.Pattern[str]":
    """A regex matching any of ``tokens``; longer tokens win where one is a prefix of another."""
    ordered = sorted(tokens, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def _as_set(value: object, argument: str) -> frozenset:
    if isinstance(value, str):
        raise TypeError(
            f"{argument} must be 'all' or a collection of special-token strings, got the string "
            f"{value!r}; to name one token pass a set, e.g. {argument}={{{value!r}}}"
        )
    try:
        return frozenset(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"{argument} must be 'all' or a collection of special-token strings, got {type(value).__name__}"
        ) from None


def resolve(
    special_tokens: AbstractSet[str],
    allowed_special: AllowedSpecial,
    disallowed_special: DisallowedSpecial,
) -> tuple[frozenset, frozenset]:
    """Return ``(allowed, disallowed)`` as sets of this tokenizer's special tokens."""
    if allowed_special == "all":
        allowed = frozenset(special_tokens)
    else:
        allowed = _as_set(allowed_special, "allowed_special") & special_tokens
    if disallowed_special == "all":
        disallowed = frozenset(special_tokens) - allowed
    else:
        disallowed = _as_set(disallowed_special, "disallowed_special")
    return allowed, disallowed


def check_disallowed(text: str, disallowed: frozenset) -> None:
    """Raise :class:`DisallowedSpecialTokenError` if ``text`` contains a disallowed token."""
    if disallowed:
        match = special_regex(disallowed).search(text)
        if match is not None:
            raise DisallowedSpecialTokenError(match.group())


def split(text: str, allowed: frozenset) -> list[tuple[str, bool]]:
    """Cut ``text`` into ``(segment, is_special)`` around occurrences of ``allowed`` tokens."""
    if not allowed:
        return [(text, False)]
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in special_regex(allowed).finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], False))
        out.append((m.group(), True))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out


# ---------------------------------------------------------------- added tokens (Hugging Face)


@dataclass(frozen=True)
class AddedToken:
    """A token matched in the text before any splitting, as in a ``tokenizer.json``:
    ``special`` ones follow the allowed/disallowed policy above, others are always matched
    by ``encode`` (never by ``encode_ordinary``).  ``normalized``: matched in the normalized
    text instead of the raw one; ``lstrip``/``rstrip``: the white space before/after it is
    part of the match; ``single_word``: only matched where no word character touches it."""

    content: str
    id: int
    special: bool = True
    normalized: bool = False
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False

    @property
    def plain(self) -> bool:
        """Matched as an exact string with nothing around it (the compiled core can find it)."""
        return not (self.lstrip or self.rstrip or self.single_word)

    def to_hf(self) -> dict:
        return {"id": self.id, "content": self.content, "single_word": self.single_word,
                "lstrip": self.lstrip, "rstrip": self.rstrip, "normalized": self.normalized,
                "special": self.special}


_WORD_CHAR = regex.compile(r"\w")


def _is_word_char(c: str) -> bool:
    """Whether ``c`` is a word character (regex ``\\w``: letters, marks, digits, connectors),
    as HF's single_word test has it."""
    return _WORD_CHAR.match(c) is not None


def find_added(text: str, tokens: dict) -> list[tuple[int, int, Optional[AddedToken]]]:
    """HF's matching of ``tokens`` (content -> AddedToken) in ``text``: leftmost-longest, then
    ``single_word``, ``lstrip`` and ``rstrip``; returns spans tiling the text."""
    out: list[tuple[int, int, Optional[AddedToken]]] = []
    if not tokens or not text:
        return [(0, len(text), None)] if text else []
    pos = 0
    for m in special_regex(frozenset(tokens)).finditer(text):
        start, stop = m.span()
        tok = tokens[m.group()]
        if tok.single_word:
            if (start > 0 and _is_word_char(text[start - 1])) or (stop < len(text) and _is_word_char(text[stop])):
                continue
        if tok.lstrip:
            s = start
            while s > 0 and text[s - 1] in _WHITE_SPACE:
                s -= 1
            start = max(s, pos)
        if tok.rstrip:
            while stop < len(text) and text[stop] in _WHITE_SPACE:
                stop += 1
        if start > pos:
            out.append((pos, start, None))
        out.append((start, stop, tok))
        pos = stop
    if pos < len(text):
        out.append((pos, len(text), None))
    return out


def split_added(text: str, tokens: "list[AddedToken]", normalize) -> list[tuple[str, Optional[AddedToken]]]:
    """Cut ``text`` around ``tokens`` as HF does: tokens with ``normalized=False`` are found
    in the raw text, the stretches between them are normalized (``normalize``, or None), and
    tokens with ``normalized=True`` are then found in those.  Returns ``(text, token)`` pairs
    where ``token`` is None for ordinary (normalized) text."""
    raw = {t.content: t for t in tokens if not t.normalized or normalize is None}
    # a normalized token is looked for in its normalized form (HF normalizes its content too)
    normed = {normalize(t.content): t for t in tokens if t.normalized and normalize is not None}
    out: list[tuple[str, Optional[AddedToken]]] = []
    for s, e, tok in find_added(text, raw):
        if tok is not None:
            out.append((text[s:e], tok))
            continue
        segment = normalize(text[s:e]) if normalize is not None else text[s:e]
        for s2, e2, tok2 in find_added(segment, normed):
            out.append((segment[s2:e2], tok2))
    return out
