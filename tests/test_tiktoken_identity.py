"""Ids identical to tiktoken for the four bundled encodings, on both backends.

The oracle is tiktoken itself, fed our bundled rank tables (tests_extended/ checks that those
tables are byte-for-byte OpenAI's files and repeats this on the full shared corpora).
"""

import random
import unicodedata

import pytest

import bpe
from conftest import read_text
from oracle import tiktoken_encoding

ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
FIXTURES = ["austen.txt", "mixed.txt"]


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixture_texts(enc_factory, name, fixture):
    text = read_text(fixture)
    enc = enc_factory(name)
    expected = tiktoken_encoding(name).encode_ordinary(text)
    assert enc.encode_ordinary(text) == expected
    assert enc.decode(expected) == text


@pytest.mark.parametrize("name", ENCODINGS)
def test_line_by_line(enc_factory, name):
    # many short texts: exercises text starts/ends (the `\s++$` branch) hundreds of times
    enc = enc_factory(name)
    oracle = tiktoken_encoding(name)
    for line in read_text("mixed.txt").splitlines(keepends=True):
        for text in (line, line.rstrip("\n"), line + "  ", " " + line):
            assert enc.encode_ordinary(text) == oracle.encode_ordinary(text), repr(text)


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_tie_heavy_pieces(enc_factory, name):
    """Pieces of hundreds of bytes where many pairs share the lowest rank."""
    enc = enc_factory(name)
    oracle = tiktoken_encoding(name)
    rng = random.Random(1234)
    texts = [" " * 500, "a" * 700, "ab" * 400, "\n" * 300, "0" * 600, "!" * 513, "é" * 300, "🙂" * 100]
    for _ in range(12):
        n = rng.randint(500, 1000)
        texts.append("".join(rng.choice("aabcdeeinorst") for _ in range(n)))
        texts.append("".join(rng.choice("xyzXYZ") for _ in range(n)))
    for text in texts:
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text), text[:30]


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_single_byte_token_roundtrips(enc_factory, name):
    enc = enc_factory(name)
    ranks = enc.mergeable_ranks
    for b in range(256):
        rank = ranks[bytes([b])]
        assert enc.decode_single_token_bytes(rank) == bytes([b])
        assert enc.encode_ordinary(bytes([b]).decode("latin-1")) == tiktoken_encoding(name).encode_ordinary(
            bytes([b]).decode("latin-1"))


@pytest.mark.parametrize("name", ENCODINGS)
def test_whole_piece_tokens_are_emitted_directly(enc_factory, name):
    """A piece that is a token comes out as that token, even where merging would not reach it."""
    enc = enc_factory(name)
    oracle = tiktoken_encoding(name)
    rng = random.Random(7)
    tokens = rng.sample(sorted(enc.mergeable_ranks), 400)
    for token in tokens:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)


def test_code_points_in_context(backend):
    """Every 97th code point (and block edges) in a few contexts, cl100k and o200k.

    Code points that Python's own Unicode data (14.0 on 3.11) lists as unassigned are left out:
    the ``regex`` module's tables are newer than tiktoken's and class some of them as letters
    or marks where tiktoken does not (measured: 4,657 such code points for cl100k and 4,699 for
    o200k, all unassigned in Unicode 14.0).  Every assigned code point agrees.
    """
    points = list(range(0, 0x30000, 97)) + [0x2FF, 0x300, 0x36F, 0x370, 0xFFFF, 0x10000, 0x1F600]
    for name in ("cl100k_base", "o200k_base"):
        enc = bpe.get_encoding(name)
        oracle = tiktoken_encoding(name)
        chunk = []
        for cp in points:
            if unicodedata.category(chr(cp)) in ("Cs", "Cn"):
                continue
            c = chr(cp)
            chunk += [c, " " + c, "a" + c + "b", c + c + "'s", "1" + c + "2", "\n" + c + " "]
        text = "|".join(chunk)
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)
