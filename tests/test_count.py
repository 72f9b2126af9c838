"""count() and count_till_limit(): the length of encode_ordinary, without the list."""

import pytest

import bpe
from conftest import read_text

TEXTS = ["", "hello", "<|endoftext|> is plain text here", "a\ud800b", " " * 300, "x" * 1000]


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_count_equals_len_of_encode_ordinary(enc_factory, name):
    enc = enc_factory(name)
    for text in TEXTS + read_text("mixed.txt").splitlines() + [read_text("austen.txt")]:
        n = len(enc.encode_ordinary(text))
        assert enc.count(text) == n
        assert enc.count_till_limit(text, n) == n
        if n:
            assert enc.count_till_limit(text, n - 1) is None


def test_count_with_custom_pattern_and_no_pattern(backend):
    text = read_text("mixed.txt")
    for pattern in (r"\w+|\W", None):
        tok = bpe.Tokenizer.train([text], 300, pattern=pattern, min_frequency=1)
        n = len(tok.encode_ordinary(text))
        assert tok.count(text) == n
        assert tok.count_till_limit(text, n) == n and tok.count_till_limit(text, n - 1) is None


def test_count_errors(backend):
    enc = bpe.get_encoding("cl100k_base")
    with pytest.raises(TypeError, match="str"):
        enc.count(b"x")
    with pytest.raises(ValueError, match="limit"):
        enc.count_till_limit("x", -1)
