"""Offsets and word ids (``encode_with_offsets``) against Hugging Face ``tokenizers``.

For every fixture in tests/data/hf: HF's ``Encoding`` of the same file is the oracle for ids,
offsets, word ids, the special-tokens mask and the tokens, with and without the
post-processor's tokens, on texts chosen to hit each stage (added tokens with lstrip/rstrip,
normalizers that compose, decompose, reorder, lowercase, strip, replace and prepend,
Metaspace, byte fallback, partial UTF-8 tokens, trim_offsets) and on hypothesis-drawn ones.
The Unicode-form alignments (``bpe.alignments.unicode_changes``) give exactly
``unicodedata``'s normal form, for every form.
"""

from __future__ import annotations

import unicodedata

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe
from bpe import alignments
from hf_oracle import FIXTURES, fixture_path

TEXTS = [
    "",
    "héllo 😀 world  \n\n x",
    "e\u0301 cafe\u0301s \u212b ok",
    "<|endoftext|> hi",
    "  Hello, WORLD! 123 4567 <mask> the cat [r] x <ls> y",
    "ΑΣ Straße İstanbul ﬁ ½ \u1e9b\u0323 a\u0301\u0323 \u0344 \uac00\u11a8",
    "  \t lead and trail \n ",
    "<a><b> xyzw <SEP> <NoNorm> Hello cat",
]

# pieces that exercise the stages: combining marks in and out of canonical order, Hangul
# jamo, singletons, compatibility characters, case changes that lengthen, the fixtures'
# added tokens and white space of every kind
PIECES = list("aeiouAEIOU sS  \n\t,.!?'") + [
    "e\u0301", "\u0301", "\u0323", "\u0302", "\u0308", "\u0344", "\u212b", "\u2126", "\u1100", "\u1161",
    "\u11a8", "\uac00", "ﬁ", "½", "İ", "ẞ", "ß", "Σ", "😀", "中", "\u0f73", "\u0f75", "\u0958", "\u1e9b",
    "\u0345", "\u0327", "\u031b", "<mask>", "<SEP>", "Hello", "the", "cat", "[r]", "<ls>", "<a><b>", "xyz",
    "\u00a0", "\u3000", "\u0300\u0316", "<|endoftext|>", "<s>",
]


@pytest.fixture(scope="module")
def oracles():
    return {name: tokenizers.Tokenizer.from_file(fixture_path(name)) for name in FIXTURES}


def _both(tok, hf, text, add):
    e = tok.encode_with_offsets(text, allowed_special="all", add_special_tokens=add)
    h = hf.encode(text, add_special_tokens=add)
    return ((e.ids, e.offsets, e.word_ids, e.special_tokens_mask, e.tokens),
            (h.ids, h.offsets, h.word_ids, h.special_tokens_mask, h.tokens))


@pytest.mark.parametrize("name", FIXTURES)
def test_offsets_and_words_are_hfs(backend, oracles, name):
    tok = bpe.Tokenizer.from_hf(fixture_path(name))
    for text in TEXTS:
        for add in (False, True):
            got, want = _both(tok, oracles[name], text, add)
            assert got == want, (text, add)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=16), st.booleans())
@pytest.mark.parametrize("name", FIXTURES)
def test_offsets_on_drawn_texts_are_hfs(cython_backend, oracles, name, pieces, add):
    tok = _loaded(name)
    got, want = _both(tok, oracles[name], "".join(pieces), add)
    assert got == want


_LOADED: dict = {}


def _loaded(name):
    if name not in _LOADED:
        _LOADED[name] = bpe.Tokenizer.from_hf(fixture_path(name))
    return _LOADED[name]


@pytest.mark.parametrize("name", FIXTURES)
def test_lookups_are_hfs(backend, oracles, name):
    tok = bpe.Tokenizer.from_hf(fixture_path(name))
    text = "  Hello, WORLD! e\u0301 😀 <mask> the cat xyzw"
    for add in (False, True):
        e = tok.encode_with_offsets(text, allowed_special="all", add_special_tokens=add)
        h = oracles[name].encode(text, add_special_tokens=add)
        for i in range(len(h.ids)):
            assert e.token_to_chars(i) == h.token_to_chars(i), i
            assert e.token_to_word(i) == h.token_to_word(i), i
        for c in range(len(text) + 1):
            assert e.char_to_token(c) == h.char_to_token(c), c
            assert e.char_to_word(c) == h.char_to_word(c), c
        for w in range(max([x for x in h.word_ids if x is not None], default=-1) + 2):
            assert e.word_to_tokens(w) == h.word_to_tokens(w), w
            assert e.word_to_chars(w) == h.word_to_chars(w), w


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20), st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]))
def test_unicode_alignments_give_the_normal_form(pieces, form):
    text = "".join(pieces)
    dest = alignments.unicode_changes(form, text)
    assert "".join(c for c, _ in dest) == unicodedata.normalize(form, text)
    spans = alignments.unicode_form(form, text)
    assert len(spans) == len(dest)
    assert all(0 <= s <= e <= len(text) for s, e in spans)


def test_normal_form_offsets_point_into_the_text_as_given(backend):
    # Qwen3's shape (an NFC normalizer, fused) on a text NFC changes: offsets are in the text
    # as given, the composed character spanning its first original character, as in HF
    tok = bpe.Tokenizer.from_hf(fixture_path("qwen_like"))
    hf = tokenizers.Tokenizer.from_file(fixture_path("qwen_like"))
    text = "cafe\u0301 e\u0301t\u00e9 \u212b"
    e = tok.encode_with_offsets(text)
    h = hf.encode(text, add_special_tokens=False)
    assert (e.ids, e.offsets, e.word_ids) == (h.ids, h.offsets, h.word_ids)
    assert all(0 <= s <= t <= len(text) for s, t in e.offsets)
