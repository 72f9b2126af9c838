"""``encode_with_offsets`` on rank-table tokenizers (bundled encodings, trained ones) and the
``Encoding`` object; ``decode_with_offsets`` against tiktoken.

The convention (README, "Offsets"): a token's span is the characters holding its first to
last byte, so a token over part of a character spans that whole character; a word is a
pre-token, and a special token found in the text is a word of its own.  Checked here as
invariants on drawn texts: ids equal ``encode``'s, spans ordered and inside the text, a
token made of whole characters re-encodes from ``text[start:end]`` to its own bytes, a
partial one's bytes lie inside that span's bytes, the words tile the pieces of the split; and
the batch form equals the single one, on threads too.
"""

from __future__ import annotations

import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

import bpe
from bpe import _backend
from oracle import tiktoken_encoding

TEXT = st.text(st.characters(codec="utf-8"), max_size=80) | st.lists(
    st.sampled_from(["hello", " world", "  ", "\n", "😀", "é", "e\u0301", "中文", "<|endoftext|>", "123",
                     "'s", "\t", "\u00a0", "ab" * 20]), max_size=20).map("".join)


def _check_invariants(tok, text, e, allowed="all"):
    assert e.ids == tok.encode(text, allowed_special=allowed)
    offsets = e.offsets
    assert len(offsets) == len(e.ids) == len(e.word_ids) == len(e.tokens)
    previous_end = 0
    for tid, (s, t) in zip(e.ids, offsets):
        assert 0 <= s < t <= len(text)
        assert s >= previous_end - 1 and t >= previous_end  # (a partial token shares its character)
        previous_end = t
        data = tok.decode_single_token_bytes(tid)
        span = text[s:t].encode("utf-8")
        if tok.decode_bytes([tid]).decode("utf-8", "replace") == text[s:t]:
            assert span == data
        else:
            assert data in span
    words = e.word_ids
    assert words == sorted(words) and (not words or words[0] == 0)
    assert all(b - a in (0, 1) for a, b in zip(words, words[1:]))
    # the words' spans, joined, are the text (every pre-token gives at least one token)
    if words:
        spans = [e.word_to_chars(w) for w in range(words[-1] + 1)]
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXT)
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
def test_offsets_invariants_on_bundled_encodings(enc_factory, name, text):
    tok = enc_factory(name)
    e = tok.encode_with_offsets(text, allowed_special="all")
    _check_invariants(tok, text, e)
    assert e.special_tokens_mask == [0] * len(e.ids)


def test_offsets_of_a_known_text(backend):
    tok = bpe.get_encoding("cl100k_base")
    text = "héllo 😀 world<|endoftext|>  \n\n x"
    e = tok.encode_with_offsets(text, allowed_special="all")
    assert [text[s:t] for s, t in e.offsets] == ["h", "él", "lo", " 😀", " world", "<|endoftext|>", "  \n\n", " x"]
    assert e.word_ids == [0, 0, 0, 1, 2, 3, 4, 5]
    assert e.tokens[4] == "Ġworld" and e.tokens[5] == "<|endoftext|>"
    assert e.char_to_token(6) == 3 and e.char_to_word(6) == 1 and e.char_to_token(100) is None
    assert e.word_to_tokens(0) == (0, 3) and e.word_to_chars(0) == (0, 5) and e.word_to_tokens(9) is None
    assert e.token_to_chars(-1) == (30, 32) and e.token_to_word(1) == 0
    with pytest.raises(IndexError, match="out of range"):
        e.token_to_chars(8)
    # a token over part of a character spans the character
    parts = tok.encode("😀😀😀")
    e2 = tok.encode_with_offsets("😀😀😀")
    assert e2.ids == parts and all(0 <= s < t <= 3 for s, t in e2.offsets)
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        tok.encode_with_offsets("a <|endoftext|>")
    assert tok.encode_with_offsets("a <|endoftext|>", disallowed_special=()).ids == \
        tok.encode("a <|endoftext|>", disallowed_special=())
    with pytest.raises(TypeError):
        tok.encode_with_offsets(b"bytes")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(TEXT, max_size=12), st.sampled_from([1, 2, 4]))
def test_batch_offsets_equal_single(backend, threads_for_any_batch, texts, threads):
    tok = bpe.get_encoding("o200k_base")
    batch = tok.encode_with_offsets_batch(texts, allowed_special="all", num_threads=threads)
    for text, e in zip(texts, batch):
        one = tok.encode_with_offsets(text, allowed_special="all")
        assert (e.ids, e.offsets, e.word_ids) == (one.ids, one.offsets, one.word_ids)
    assert len(batch) == len(texts)


def test_custom_pattern_and_trained_tokenizer(backend):
    text = "the cat sat on the mat, the end. " * 20
    tok = bpe.Tokenizer.train([text], 300, pattern=r"\s?\w+|[^\w\s]+|\s+", special_tokens=["<|x|>"])
    e = tok.encode_with_offsets(text + "<|x|> ü", allowed_special="all")
    _check_invariants(tok, text + "<|x|> ü", e)
    plain = bpe.Tokenizer.train([text], 300, pattern=None)
    _check_invariants(plain, text, plain.encode_with_offsets(text))


def test_lone_surrogates_keep_their_places(backend):
    tok = bpe.get_encoding("cl100k_base")
    text = "a\ud800b c"
    e = tok.encode_with_offsets(text)
    assert e.ids == tok.encode(text)
    assert e.offsets[-1][1] == len(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXT)
def test_decode_with_offsets_is_tiktokens(backend, text):
    tok = bpe.get_encoding("cl100k_base")
    ref = tiktoken_encoding("cl100k_base")
    ids = ref.encode(text, allowed_special="all")
    assert tok.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
    # ids that cut a character: both raise
    broken = tok.encode("😀")[:1]
    with pytest.raises(UnicodeDecodeError):
        ref.decode_with_offsets(broken)
    with pytest.raises(UnicodeDecodeError):
        tok.decode_with_offsets(broken)


def test_encoding_lists_are_copies():
    tok = bpe.get_encoding("cl100k_base")
    e = tok.encode_with_offsets("hello world")
    e.offsets.append((9, 9))
    e.word_ids.append(9)
    assert len(e.offsets) == len(e.word_ids) == len(e) == 2
    assert e.attention_mask == [1, 1] and e.type_ids == [0, 0]
    assert "num_tokens=2" in repr(e)
    assert isinstance(tiktoken.__version__, str)


_MIXED = st.lists(st.sampled_from(["a", "bc", " ", "\n", "é", "ñ", "中", "文字", "😀", "🙂🙂", "д", "e\u0301",
                                   "<|endoftext|>", "1234", "\u00a0", "x" * 9]), max_size=40).map("".join)
_PURE = {}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_MIXED, st.sampled_from(["cl100k_base", "r50k_base"]))
def test_compiled_offsets_equal_the_references(cython_backend, text, name):
    """The compiled core counts characters with an index of continuation bytes built eight
    bytes at a time: drawn mixes of one- to four-byte characters, landing on every place in
    those blocks, give exactly the pure-Python backend's offsets and word ids."""
    if name not in _PURE:
        _backend.use("python")
        try:
            _PURE[name] = bpe.get_encoding(name)
        finally:
            _backend.use("cython")
    fast, pure = bpe.get_encoding(name), _PURE[name]
    assert fast.backend == "cython" and pure.backend == "python"
    got, want = (t.encode_with_offsets(text, allowed_special="all") for t in (fast, pure))
    assert (got.ids, got.offsets, got.word_ids) == (want.ids, want.offsets, want.word_ids)
