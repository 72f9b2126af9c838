"""GPT-2's byte <-> unicode display mapping (the one that shows a space as ``Ġ``).

Byte-level BPE files in the Hugging Face / GPT-2 format write token bytes as printable
characters: bytes 33-126, 161-172 and 174-255 stand for themselves, the other 68 bytes for
U+0100 onwards, in byte order.  This module gives that table both ways and converts whole
tokens.  It does not encode text.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def byte_to_char() -> dict[int, str]:
    """Byte value -> display character."""
    table, extra = {}, 0
    for b in range(256):
        if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@lru_cache(maxsize=1)
def char_to_byte() -> dict[str, int]:
    """Display character -> byte value."""
    return {ch: b for b, ch in byte_to_char().items()}


def to_display(token: bytes) -> str:
    """``b" hello"`` -> ``"Ġhello"``."""
    table = byte_to_char()
    return "".join(table[b] for b in token)


def from_display(text: str) -> bytes:
    """``"Ġhello"`` -> ``b" hello"``; a ``KeyError`` names a character outside the mapping."""
    table = char_to_byte()
    try:
        return bytes(table[ch] for ch in text)
    except KeyError as exc:
        raise KeyError(f"{exc.args[0]!r} is not a GPT-2 byte display character") from None
