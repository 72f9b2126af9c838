"""Every code point (but surrogates), in contexts that exercise each split alternative, gives
the same ids as tiktoken for all four encodings (compiled backend; the pure one is sampled in
tests/test_tiktoken_identity.py)."""

import pytest

import bpe

ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
CONTEXTS = ["a{c}b ", "{c}{c}'s ", "'{c}1{c} ", "A{c}a\n", " {c}\r\n", "!{c}/ "]


@pytest.mark.parametrize("backtracking", [False, True], ids=["merge-loop", "backtracking"])
@pytest.mark.parametrize("name", ENCODINGS)
def test_every_code_point_in_context(name, backtracking, cython_backend, oracle):
    """``backtracking``: every piece that is not a token goes through the backtracking
    encoder (normally it takes only pieces over 256 bytes)."""
    enc = bpe.get_encoding(name)
    tk = oracle(name)
    mismatched = []
    old = enc._core._set_backtrack_min_bytes(0 if backtracking else -1)
    try:
        for start in range(0, 0x110000, 0x8000):
            chars = [chr(cp) for cp in range(start, start + 0x8000) if not 0xD800 <= cp <= 0xDFFF]
            text = "".join(ctx.format(c=c) for c in chars for ctx in CONTEXTS)
            if enc.encode_ordinary(text) != tk.encode_ordinary(text):
                mismatched.append(hex(start))
    finally:
        enc._core._set_backtrack_min_bytes(old)
    print(f"\n[every code point] {name} ({'backtracking' if backtracking else 'merge loop'}): "
          f"{0x110000 - 0x800:,} code points x {len(CONTEXTS)} contexts, {len(mismatched)} mismatching blocks")
    assert mismatched == []
