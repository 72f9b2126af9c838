"""GPT-2's byte <-> display-character mapping."""

import pytest

from bpe import byte_unicode


def test_known_characters_and_round_trip():
    assert byte_unicode.to_display(b" hello\n") == "\u0120hello\u010a"  # 'Ġhello' 'Ċ'
    assert byte_unicode.byte_to_char()[ord("!")] == "!"
    everything = bytes(range(256))
    shown = byte_unicode.to_display(everything)
    assert len(set(shown)) == 256 and all(ch.isprintable() for ch in shown)
    assert byte_unicode.from_display(shown) == everything


def test_unknown_display_character():
    with pytest.raises(KeyError, match="not a GPT-2 byte display character"):
        byte_unicode.from_display("\u4e00")
