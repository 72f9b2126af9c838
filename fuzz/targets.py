"""The fuzz targets: each draws one input from ``rng`` and checks bpe on it against an oracle
(tiktoken, the pure-Python backend, or "raises TokenizerFileError or is unchanged"), raising
AssertionError on any difference.  Inputs are built from pieces that reach the hard cases:
scripts of one to four UTF-8 bytes, combining marks, white space runs, digits, special-token
text (whole and cut), lone surrogates, bytes that are not UTF-8, very long runs.
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import sys
import tempfile

import tiktoken

import bpe
from bpe import _backend
from bpe.io import native

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from damage import KINDS, damage  # noqa: E402  (tests/damage.py: the damages the loader tests use too)

ENCODINGS = ("r50k_base", "cl100k_base", "o200k_base")
_PIECES = ["hello", " world", "  ", "\n", "\r\n", "\t", " \n\n ", "'s", "'LL", "123", "4567", "!", "?!", "...",
           "é", "e\u0301", "ñ", "ß", "д", "中文", "日本語", "한국어", "😀", "👩‍👩‍👧", "\u00a0", "\u3000", "\u200b",
           "<|endoftext|>", "<|endofprompt|>", "<|endof", "|>", "<|fim_prefix|>", "\ud800", "\udfff", "x" * 70,
           " " * 40, "ab" * 30, "١٢٣", "𝔘𝔫𝔦"]
_RANGES = [(0x20, 0x7F), (0xA0, 0x250), (0x300, 0x370), (0x400, 0x500), (0x4E00, 0x4F00), (0x1F300, 0x1F650),
           (0x0, 0x20), (0xE000, 0xE100), (0x10000, 0x10100)]


def text(rng: random.Random, long: bool = False) -> str:
    """A text of mixed pieces and random code points (``long``: up to about 30 K characters)."""
    out = []
    for _ in range(rng.randint(0, 400 if long else 24)):
        if rng.random() < 0.6:
            out.append(rng.choice(_PIECES) * (rng.randint(1, 200) if long and rng.random() < 0.05 else 1))
        else:
            lo, hi = rng.choice(_RANGES)
            out.append("".join(chr(rng.randrange(lo, hi)) for _ in range(rng.randint(1, 6))))
    return "".join(out)


def data(rng: random.Random) -> bytes:
    """Bytes: UTF-8 text cut anywhere, with bytes that are never UTF-8 put in."""
    raw = bytearray(text(rng).encode("utf-8", "surrogatepass"))
    if raw and rng.random() < 0.7:
        raw = raw[rng.randrange(len(raw)):][: rng.randrange(1, len(raw) + 1)]
    for _ in range(rng.randint(0, 3)):
        raw.insert(rng.randint(0, len(raw)), rng.choice([0x80, 0xBF, 0xC0, 0xC3, 0xE4, 0xF0, 0xF8, 0xFF]))
    return bytes(raw)


@functools.lru_cache(maxsize=None)
def _tiktoken(name: str) -> tiktoken.Encoding:
    ours = bpe.get_encoding(name)
    return tiktoken.Encoding(name=f"fuzz-{name}", pat_str=ours.pattern, mergeable_ranks=ours.mergeable_ranks,
                             special_tokens=ours.special_tokens)


def _on(backend: str, make):
    before = _backend.active().name
    _backend.use(backend)
    try:
        return make()
    finally:
        _backend.use(before)


@functools.lru_cache(maxsize=None)
def _pure(name: str) -> bpe.Tokenizer:
    return _on("python", lambda: bpe.get_encoding(name))


def encode(rng: random.Random) -> None:
    """Ids against tiktoken (encode with every special allowed, encode_ordinary), and on
    shorter texts against the pure backend."""
    name = rng.choice(ENCODINGS)
    ours, theirs = bpe.get_encoding(name), _tiktoken(name)
    t = text(rng, long=rng.random() < 0.2)
    want = theirs.encode(t, allowed_special="all")
    assert ours.encode(t, allowed_special="all") == want, (name, t)
    assert ours.encode_ordinary(t) == theirs.encode_ordinary(t), (name, t)
    if len(t) < 400:
        assert _pure(name).encode(t, allowed_special="all") == want, (name, t)


def encode_bytes(rng: random.Random) -> None:
    """Any bytes: tiktoken's _encode_bytes, and back to the same bytes."""
    name = rng.choice(ENCODINGS)
    ours = bpe.get_encoding(name)
    b = data(rng)
    ids = ours.encode_bytes(b)
    assert ids == _tiktoken(name)._encode_bytes(b), (name, b)
    assert ours.decode_bytes(ids) == b, (name, b)


def decode(rng: random.Random) -> None:
    """Ids, some of them not tokens (gaps in the vocabulary, negative, past the vocabulary,
    past 2**32, not ints): tiktoken's bytes where it has them; where tiktoken raises,
    KeyError or TypeError, never another exception."""
    name = rng.choice(ENCODINGS)
    ours, theirs = bpe.get_encoding(name), _tiktoken(name)
    top = ours.max_token_value
    ids = [rng.randrange(top + 1) for _ in range(rng.randint(0, 30))]
    if rng.random() < 0.3:
        ids.insert(rng.randint(0, len(ids)), rng.choice([-1, top + 1, 2**32, 2**64, 10**30, "7", 1.0, None]))
    try:
        want = theirs.decode_bytes(ids)
    except BaseException as exc:  # noqa: B036 - (pyo3 conversion errors)
        if isinstance(exc, KeyboardInterrupt):
            raise
        try:
            ours.decode_bytes(ids)
        except (KeyError, TypeError):
            return
        raise AssertionError(f"decoded ids tiktoken refuses: {ids}") from None
    assert ours.decode_bytes(ids) == want, ids
    assert ours.decode(ids) == want.decode("utf-8", "replace")


def offsets(rng: random.Random) -> None:
    """encode_with_offsets: the compiled core's offsets and word ids equal the pure backend's."""
    name = rng.choice(ENCODINGS)
    t = text(rng)
    got = bpe.get_encoding(name).encode_with_offsets(t, allowed_special="all")
    want = _pure(name).encode_with_offsets(t, allowed_special="all")
    assert (got.ids, got.offsets, got.word_ids) == (want.ids, want.offsets, want.word_ids), (name, t)


@functools.lru_cache(maxsize=None)
def _small() -> tuple:
    tok = bpe.Tokenizer.train(["the quick brown fox jumps over the lazy dog, 1234 é 中文 " * 30], 320,
                              special_tokens=["<|eot|>"], name="small")
    folder = tempfile.mkdtemp(prefix="bpe-fuzz-")
    tok.to_hf(os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "tokenizer.json"), "rb") as f:
        hf = f.read()
    return tok, native.dumps(tok._spec()), bpe.tiktoken_files.dump_tiktoken_ranks(tok.mergeable_ranks), hf, folder


def loaders(rng: random.Random) -> None:
    """A damaged file of each kind bpe reads: its own (never loads as another tokenizer), a
    .tiktoken with the expected hash (same), a tokenizer.json (a BPEError or a tokenizer,
    never another exception)."""
    tok, saved, ranks, hf, folder = _small()
    kind = rng.randrange(3)
    path = os.path.join(folder, f"damaged-{kind}")
    damaged = damage((saved, ranks, hf)[kind], rng.randrange(KINDS), rng.randrange(2**32), rng.randrange(2**32))
    with open(path, "wb") as f:
        f.write(damaged)
    try:
        if kind == 0:
            loaded = bpe.Tokenizer.load(path)
            assert loaded._spec() == tok._spec(), "a damaged file loaded as another tokenizer"
        elif kind == 1:
            table = bpe.tiktoken_files.load_tiktoken_bpe(path, hashlib.sha256(ranks).hexdigest())
            assert table == tok.mergeable_ranks, "a damaged .tiktoken loaded despite its hash"
        else:
            bpe.Tokenizer.from_hf(path)
    except bpe.BPEError:
        pass


def train(rng: random.Random) -> None:
    """Training from a random count table: the compiled trainer and the pure one agree."""
    words = [text(rng).encode("utf-8", "surrogatepass")[:12] or b"a" for _ in range(rng.randint(1, 40))]
    counts = {w: rng.randint(0, 50) for w in words}
    specials = rng.choice([(), ("<|x|>",)])
    size = rng.randint(256 + len(specials), 330)
    options = dict(special_tokens=specials, min_frequency=rng.randint(1, 3))
    fast = bpe.Tokenizer.train_from_counts(counts, size, **options)
    pure = _on("python", lambda: bpe.Tokenizer.train_from_counts(counts, size, **options))
    assert fast.mergeable_ranks == pure.mergeable_ranks and fast.merges == pure.merges, counts


TARGETS = {"encode": encode, "bytes": encode_bytes, "decode": decode, "offsets": offsets, "loaders": loaders,
           "train": train}
