"""Inputs at the core's 32-bit limits: they raise a clear ValueError before the work (or
after a scan, for one pre-token), never crash or wrap around.  Each test builds a text of 2 to
4 GiB (the machine has 24 GiB)."""

from __future__ import annotations

import time

import pytest

import bpe


def test_offsets_of_a_text_of_4_gib_refuse_at_once(cython_backend):
    text = "a " * (2 ** 31)  # 4 GiB of ASCII: its UTF-8 is the string's own buffer
    tok = bpe.get_encoding("cl100k_base")
    start = time.perf_counter()
    with pytest.raises(ValueError, match="under 4 GiB"):
        tok.encode_with_offsets(text)
    assert time.perf_counter() - start < 5  # (refused before encoding 4 GiB, which takes minutes)
    del text


def test_one_pre_token_of_2_gib_raises(cython_backend):
    tok = bpe.get_encoding("cl100k_base")
    with pytest.raises(ValueError, match="single pre-token of 2 GiB"):
        tok.encode_ordinary("x" * (2 ** 31))
