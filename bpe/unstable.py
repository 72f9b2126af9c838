"""Encoding text whose end is not final: tiktoken's ``encode_with_unstable`` and byte
strings that are not (or not yet) valid UTF-8 (tiktoken's ``_encode_bytes``).

What it does: given a tokenizer, it splits an encoding into the tokens no continuation of the
text can change and the tokens of its last pre-token, which a continuation may merge with
what follows; from those it lists every way the unstable end may be tokenized once more text
arrives (``completions``), and it encodes bytes cut anywhere (``encode_bytes``).  The rules are
tiktoken 0.14's, including its approximations (noted where they apply), so the ids and the
completion sets equal tiktoken's on the same input.

What it does not do: encode or split text itself (it calls the tokenizer), or promise that
the completions are exhaustive beyond what tiktoken's rules find.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer

# Rust's char::is_whitespace (the Unicode White_Space property), which tiktoken tests the last
# character of the unstable bytes with; str.isspace also holds for U+001C..U+001F, so it is not it.
_WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                         "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SPACE_BYTES = frozenset(b" \n\t")


def split_last_piece(tok: "Tokenizer", ids: list[int], word_ids: list[int]) -> tuple[list[int], list[int]]:
    """``(stable, unstable)``: ``ids`` cut before the tokens of the last pre-token (none when
    the text ends with a special token), widened back over the tokens before it while those
    and its first token are all spaces, newlines and tabs (tiktoken's fix for patterns whose
    splits move: cl100k's ``\\s*[\\r\\n]+`` can turn ``"\\n" + " "`` into ``"\\n \\n"``)."""
    if not ids or ids[-1] in tok._added_strings:  # (a special or added token found in the text)
        return ids, []
    last = len(ids) - 1
    while last > 0 and word_ids[last - 1] == word_ids[-1]:
        last -= 1
    if _all_space(tok, ids[last]):
        while last > 0 and _all_space(tok, ids[last - 1]):
            last -= 1
    return ids[:last], ids[last:]


def _all_space(tok: "Tokenizer", token: int) -> bool:
    if token in tok._added_strings:
        return False
    return set(tok.decode_single_token_bytes(token)) <= _SPACE_BYTES


def completions(tok: "Tokenizer", unstable: bytes, sorted_tokens: list[bytes]) -> list[list[int]]:
    """Every tokenization tiktoken's rules find for text that starts with ``unstable`` (the
    bytes of the unstable tokens): each token that starts with those bytes; for every cut of
    them into a prefix and a suffix, each token that starts with the suffix appended to the
    prefix and encoded again (as text when that is valid UTF-8, else as one piece), kept up to
    the token that covers ``unstable``; and, when ``unstable`` ends with a white-space
    character, its bytes before and from that character as two pieces.  Sorted."""
    found: set[tuple[int, ...]] = set()
    if not unstable:
        return []
    for data in _starting_with(sorted_tokens, unstable):
        found.add((tok.encode_single_token(data),))
    n = len(unstable)
    for i in range(1, n):
        prefix, suffix = unstable[:i], unstable[i:]
        for data in _starting_with(sorted_tokens, suffix):
            candidate = prefix + data
            try:
                ids = tok.encode_ordinary(candidate.decode("utf-8"))
            except UnicodeDecodeError:
                ids = byte_pair_encode(tok, candidate)
            kept, covered = [], 0
            for t in ids:
                kept.append(t)
                covered += len(tok.decode_single_token_bytes(t))
                if covered >= n:
                    break
            found.add(tuple(kept))
    if n > 1:
        size = _last_character_size(unstable)
        if size and n - size > 0 and unstable[n - size:].decode("utf-8") in _WHITE_SPACE:
            found.add(tuple(byte_pair_encode(tok, unstable[:n - size]) + byte_pair_encode(tok, unstable[n - size:])))
    return [list(c) for c in sorted(found)]


def _starting_with(sorted_tokens: list[bytes], prefix: bytes):
    i = bisect.bisect_left(sorted_tokens, prefix)
    while i < len(sorted_tokens) and sorted_tokens[i].startswith(prefix):
        yield sorted_tokens[i]
        i += 1


def _last_character_size(data: bytes) -> int:
    """The byte length of the valid UTF-8 character ``data`` ends with, or 0 when it ends with
    bytes that are not one."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            if len(data[-size:].decode("utf-8")) == 1:
                return size
        except UnicodeDecodeError:
            continue
    return 0


def byte_pair_encode(tok: "Tokenizer", data: bytes) -> list[int]:
    """BPE of ``data`` as one piece, without the shortcut that takes a whole piece that is a
    token as that token (tiktoken's ``byte_pair_encode``; ``encode_single_piece`` has it)."""
    if tok._rule == "ranks":
        return tok._core.encode_piece_bytes(data, tok._max_token_value + 1)
    return tok._core.encode_piece_bytes(data)


def encode_bytes(tok: "Tokenizer", data: bytes) -> list[int]:
    """The ids of any bytes, as tiktoken's ``_encode_bytes``: valid UTF-8 is encoded as text
    (special-token text as plain text); otherwise the valid part before the first bad byte is,
    its unstable end (see :func:`split_last_piece`) is taken back, and those bytes with all the
    rest are one piece: its token, or its byte-pair encoding.  (tiktoken's own caveat holds:
    a split the pattern would have made between the valid text and the rest is not made.)"""
    try:
        return tok.encode_ordinary(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        valid = exc.start
    head = tok.encode_with_offsets(data[:valid].decode("utf-8"), disallowed_special=())
    stable, unstable = split_last_piece(tok, head.ids, head.word_ids)
    rest = tok.decode_bytes(unstable) + data[valid:]
    whole = tok._mergeable_ranks.get(rest) if tok._rule == "ranks" else None
    return stable + ([whole] if whole is not None else byte_pair_encode(tok, rest))
