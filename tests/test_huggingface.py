"""``bpe.Tokenizer.from_hf`` gives Hugging Face's ids, on every fixture in tests/data/hf.

The oracle is ``tokenizers`` itself, loading the same file (see hf_oracle.py).  For each
fixture, on the hand-picked texts of hf_oracle.py (whitespace, digits, contractions, composed
and decomposed accents, CJK, emoji with ZWJ, lone combining marks, every added token next to
letters, spaces and the other added tokens) and on generated text:

* ``encode(text, allowed_special="all")`` == HF ``encode(text, add_special_tokens=False).ids``;
* ``encode(text, add_special_tokens=True, allowed_special="all")`` == HF ``encode(text).ids``;
* ``encode(text)`` raises ``DisallowedSpecialTokenError`` naming the special token when HF
  matches an added token marked special, and else gives HF's ids (non-special added tokens
  are matched, as HF does);
* ``encode_ordinary(text)`` == HF on the file without its added tokens (and, where every added
  token is special, == HF with ``encode_special_tokens = True``);
* ``decode(ids)`` == HF ``decode(ids, skip_special_tokens=False)`` where the decoder is one
  bpe supports;
* ``to_hf`` writes a file that HF loads and that gives the original ids.

The fixtures and what each one exercises: scripts/make_hf_fixtures.py; the components one by
one: test_hf_components.py; broken and unsupported files: test_hf_errors.py.
"""

from __future__ import annotations

import functools
import os
import string
import unicodedata

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe
from hf_oracle import (
    FIXTURES,
    SPACES,
    WORDS,
    added_tokens,
    all_added_special,
    all_texts,
    check_text,
    expect_default_encode,
    fixture_path,
    hf_decode,
    hf_ids,
    hf_ordinary_ids,
    hf_special_as_text_ids,
    load,
    special_ids,
    spec,
    vocab_ids,
)

BYTE_LEVEL = [n for n in FIXTURES if "ByteLevel" in str(spec(fixture_path(n)).get("decoder"))]

PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def mismatches(pairs):
    """The (text, ours, theirs) triples that differ, for a readable failure."""
    return [(text, ours, theirs) for text, ours, theirs in pairs if ours != theirs]


# ------------------------------------------------------------------ the fixtures themselves


def test_fixture_files_are_small_and_load_in_hf():
    assert len(FIXTURES) >= 15
    for name in FIXTURES:
        path = fixture_path(name)
        assert os.path.getsize(path) < 100_000, name
        d = spec(path)
        assert d["model"]["type"] == "BPE" and d["model"]["dropout"] is None, name
        tok = tokenizers.Tokenizer.from_file(path)
        assert tok.get_vocab_size(with_added_tokens=True) == len(vocab_ids(path)), name


@pytest.mark.parametrize("name", [n for n in FIXTURES if added_tokens(fixture_path(n))])
def test_ordinary_oracle_agrees_with_encode_special_tokens(name):
    """The two oracles of encode_ordinary: equal where every added token is special; where
    some are not, HF's encode_special_tokens still matches those (so it is no oracle)."""
    path = fixture_path(name)
    texts = all_texts(path)
    if all_added_special(path):
        assert mismatches((t, hf_ordinary_ids(path, t), hf_special_as_text_ids(path, t)) for t in texts) == []
    else:
        vocab = spec(path)["model"]["vocab"]
        plain = [t["content"] for t in added_tokens(path)
                 if not t["special"] and not t["single_word"] and t["content"] not in vocab]
        assert plain
        for content in plain:
            text = f"a{content}b"
            assert hf_special_as_text_ids(path, text) != hf_ordinary_ids(path, text), content


# ------------------------------------------------------------------ fixed texts


# Characters on which this Python's Unicode database (unicodedata: Unicode 14 on Python 3.11)
# and HF's Rust tables agree for every normalizer the fixtures use: the Python-side stages
# follow the interpreter's tables, which differ from HF's for some recently assigned
# characters (seen: U+10D50 GARAY lowercased by HF only, U+A7F2 and U+10781 mapped by
# Python's NFKC only); that gap is the README's "Unicode tables".  The shared corpora and the
# every-code-point checks of the split patterns cover the rest.
_HF_NORMALIZERS = {form: getattr(tokenizers.normalizers, form)() for form in ("NFC", "NFD", "NFKC", "NFKD")}
_HF_PUNCTUATION = tokenizers.pre_tokenizers.Punctuation()


# combining marks of classes 1, 10 and 230 (and none): a character's own combining class shows
# only next to another mark, where canonical ordering may swap them (seen: U+10F46 SOGDIAN
# COMBINING DOT BELOW, class 220 in Python's tables and 0 in HF's, so "À𐽆" orders differently)
_MARKS = ("", "\u0334", "\u05b0", "\u0300")


@functools.lru_cache(maxsize=None)
def _tables_agree(c: str) -> bool:
    for f, hf in _HF_NORMALIZERS.items():
        for m in _MARKS:
            for text in (c + m, m + c):
                if hf.normalize_str(text) != unicodedata.normalize(f, text):
                    return False
    if tokenizers.normalizers.Lowercase().normalize_str(c) != c.lower():
        return False
    # punctuation (BERT's split): general category P* in either table (seen: U+11660 and
    # U+2E43..U+2E5D, punctuation in HF's tables only)
    split_by_hf = len(_HF_PUNCTUATION.pre_tokenize_str("a" + c + "a")) > 1
    return split_by_hf == (c in string.punctuation or unicodedata.category(c).startswith("P"))


KNOWN_CHARS = st.characters(blacklist_categories=("Cn", "Cs")).filter(_tables_agree)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixed_texts_match_hf(backend, name):
    path = fixture_path(name)
    tok = load(path, backend)
    problems = []
    for text in all_texts(path):
        problems += check_text(tok, path, text)
    assert problems == [], "\n".join(problems[:20])


@pytest.mark.parametrize("name", FIXTURES)
def test_every_added_token_alone(backend, name):
    """Each added token alone is its own id under allowed_special="all" (HF gives that id for
    it, in every fixture); a special one raises by default, naming it, a non-special one is its
    id by default; encode_ordinary encodes it as plain text."""
    path = fixture_path(name)
    tok = load(path, backend)
    for t in added_tokens(path):
        content = t["content"]
        theirs = hf_ids(path, content)
        assert tok.encode(content, allowed_special="all") == theirs == [t["id"]]
        kind, expected = expect_default_encode(path, content)
        assert kind == ("raise" if t["special"] else "ids")
        if t["special"]:
            assert expected == {content}
            with pytest.raises(bpe.DisallowedSpecialTokenError) as info:
                tok.encode(content)
            assert info.value.token == content
            assert repr(content) in str(info.value)
        else:
            assert tok.encode(content) == theirs
        assert tok.encode_ordinary(content) == hf_ordinary_ids(path, content)
        if content not in spec(path)["model"]["vocab"]:
            assert tok.encode_ordinary(content) != theirs


@pytest.mark.parametrize("name", [n for n in FIXTURES if special_ids(fixture_path(n))])
def test_special_token_in_longer_text_raises(backend, name):
    path = fixture_path(name)
    tok = load(path, backend)
    specials = special_ids(path)
    for id_, content in sorted(specials.items()):
        text = f"Some text, then {content} and more text"
        kind, expected = expect_default_encode(path, text)
        assert kind == "raise" and expected == {content}
        with pytest.raises(bpe.DisallowedSpecialTokenError) as info:
            tok.encode(text)
        assert info.value.token == content
        assert isinstance(info.value, ValueError)
        assert tok.encode(text, allowed_special="all") == hf_ids(path, text)


# ------------------------------------------------------------------ generated texts


def mixed_text():
    """Added-token strings, words and spaces strung together, with a little random text."""
    def build(path):
        pieces = [t["content"] for t in added_tokens(path)] + WORDS + SPACES
        part = st.one_of(st.sampled_from(pieces), st.text(KNOWN_CHARS, max_size=3))
        return st.lists(part, max_size=12).map("".join)
    return build


@pytest.mark.parametrize("name", FIXTURES)
@PROPERTY
@given(text=st.text(KNOWN_CHARS))
def test_any_text_matches_hf(backend, name, text):
    path = fixture_path(name)
    assert check_text(load(path, backend), path, text) == []


@pytest.mark.parametrize("name", FIXTURES)
@PROPERTY
@given(data=st.data())
def test_added_tokens_among_words_match_hf(backend, name, data):
    path = fixture_path(name)
    text = data.draw(mixed_text()(path), label="text")
    assert check_text(load(path, backend), path, text) == []


@pytest.mark.parametrize("name", BYTE_LEVEL)
@PROPERTY
@given(data=st.data())
def test_decode_of_any_ids_matches_hf(backend, name, data):
    """Any id sequence (bytes cut mid-character, added tokens anywhere) decodes as HF's
    ByteLevel decoder does: invalid UTF-8 becomes U+FFFD the way HF replaces it."""
    path = fixture_path(name)
    ids = data.draw(st.lists(st.sampled_from(vocab_ids(path)), max_size=20), label="ids")
    assert load(path, backend).decode(ids) == hf_decode(path, ids)


# ------------------------------------------------------------------ to_hf round trip


@pytest.mark.parametrize("name", FIXTURES)
def test_to_hf_round_trip(backend, name, tmp_path):
    """from_hf then to_hf: HF(original) == HF(written) == bpe, and the written file loads
    back with from_hf to the same ids."""
    path = fixture_path(name)
    tok = load(path, backend)
    out = tmp_path / "tokenizer.json"
    tok.to_hf(out)
    written = tokenizers.Tokenizer.from_file(str(out))
    again = bpe.Tokenizer.from_hf(out)
    problems = []
    for text in all_texts(path):
        original = hf_ids(path, text)
        rewritten = written.encode(text, add_special_tokens=False).ids
        ours = tok.encode(text, allowed_special="all")
        back = again.encode(text, allowed_special="all")
        if not (original == rewritten == ours == back):
            problems.append(f"{text!r}: HF {original}, HF(written) {rewritten}, bpe {ours}, bpe(written) {back}")
    assert problems == [], "\n".join(problems[:20])


def test_text_the_normalization_changes_runs_in_the_core(backend, monkeypatch):
    """An NFC file (qwen_like): a text that NFC changes and that holds no added token goes
    to the core in its normal form, single and batched (the stages are not run), and gives
    HF's ids; one that holds an added token is still cut at it before it is normalized."""
    path = fixture_path("qwen_like")
    tok = bpe.Tokenizer.from_hf(path)
    decomposed = ["Cafe\u0301 de\u0301ja\u0300 vu, nai\u0308ve", "A\u030a ro\u0308d \u1100\u1161\u11a8 ha\u0301"]
    assert all(unicodedata.normalize("NFC", t) != t for t in decomposed)
    staged = []  # calls of the Python-side paths
    for name in ("_encode_staged", "_encode_plain"):
        real = getattr(tok, name)
        monkeypatch.setattr(tok, name, lambda *a, real=real: staged.append(a) or real(*a))
    for text in decomposed:
        assert tok.encode(text, allowed_special="all") == hf_ids(path, text)
    assert tok.encode_batch(decomposed, allowed_special="all") == [hf_ids(path, t) for t in decomposed]
    assert staged == []
    with_token = "nai\u0308ve<think>x"
    assert tok._core_form(with_token) is None and tok._core_form(decomposed[0]) is not None
    assert tok.encode(with_token, allowed_special="all") == hf_ids(path, with_token)
    assert staged  # (the patch sees those paths)
