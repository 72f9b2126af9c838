"""Ids identical to tiktoken for the four bundled encodings, on both backends.

The oracle is tiktoken itself, fed our bundled rank tables (tests_extended/ checks that those
tables are byte-for-byte OpenAI's files and repeats this on the full shared corpora).
"""

import json
import os
import random

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


def _class_boundaries():
    """Every code point at the edge of a character class of the splitter, and its neighbours."""
    path = os.path.join(os.path.dirname(bpe.__file__), "data", "unicode_classes.json")
    with open(path, encoding="utf-8") as f:
        classes = json.load(f)["classes"]
    points = set()
    for spans in classes.values():
        for a, b in spans:
            points.update((a - 1, a, b, b + 1))
    return sorted(p for p in points if 0 <= p < 0x110000 and not 0xD800 <= p <= 0xDFFF)


def test_code_points_in_context(backend):
    """Every class boundary code point (and every 251st code point) in several contexts, for
    all four encodings.  Unassigned code points are included: the splitter follows tiktoken's
    Unicode tables, not the newer ones of the `regex` module."""
    step = 251 if backend == "cython" else 2003
    points = sorted(set(_class_boundaries()) | set(range(0, 0x110000, step)) - set(range(0xD800, 0xE000)))
    if backend == "python":
        points = points[::7]
    for name in ENCODINGS:
        enc = bpe.get_encoding(name)
        oracle = tiktoken_encoding(name)
        chunk = []
        for cp in points:
            c = chr(cp)
            chunk += [c, " " + c, "a" + c + "b", c + c + "'s", "'" + c, "1" + c + "2", "\n" + c + " ", "A" + c + "a", c + "\r\n"]
        text = "|".join(chunk)
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)
