"""Special-token policy: which special tokens a call may produce, and finding them in text.

Special tokens are exact strings with fixed ids that BPE never produces by merging.  Following
tiktoken, ``encode`` raises if the text contains a special token that is *disallowed* (by default
all of them), encodes *allowed* ones as their id, and treats any other occurrence as plain text.
Names in ``allowed_special`` that are not special tokens of the tokenizer are ignored.  This
module resolves those arguments and splits text around allowed special tokens; it does not
encode the ordinary text in between.
"""

from __future__ import annotations

from functools import lru_cache
from typing import AbstractSet, Collection, Literal, Union

import regex

from .errors import DisallowedSpecialTokenError

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
