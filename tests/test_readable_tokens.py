"""Readable tokens with HF's names: ``id_to_token``, ``token_to_id``, ``get_vocab``,
``convert_ids_to_tokens``, ``convert_tokens_to_ids``, ``convert_tokens_to_string``.

For every fixture in tests/data/hf, HF ``tokenizers`` loading the same file is the oracle:
the same vocabulary (added tokens included) and the same answer for every id and every
string, absent ones too.  For a bundled encoding: byte-level display strings (``Ġ``), every
id round trips, and strings back to text equal ``decode``.
"""

from __future__ import annotations

import pytest
import tokenizers

import bpe
from hf_oracle import FIXTURES, fixture_path


@pytest.mark.parametrize("name", FIXTURES)
def test_vocabulary_and_lookups_are_hfs(backend, name):
    path = fixture_path(name)
    tok = bpe.Tokenizer.from_hf(path)
    hf = tokenizers.Tokenizer.from_file(path)
    vocab = hf.get_vocab(with_added_tokens=True)
    assert tok.get_vocab() == vocab
    for i in range(max(vocab.values()) + 3):
        assert tok.id_to_token(i) == hf.id_to_token(i), i
    for s in list(vocab) + ["not a token", "", "Ġ" * 9, "<0xZZ>"]:
        assert tok.token_to_id(s) == hf.token_to_id(s), s
    # The first and last 40 ids by value (get_vocab's order follows the hash seed).  The
    # round trip is HF's, not always the identity: HF shows a normalized added token by its
    # normalized text ("Hello" -> "hello") and looks strings up by the text as given.
    ids = sorted(vocab.values())
    ids = ids[:40] + ids[-40:]
    tokens = tok.convert_ids_to_tokens(ids)
    assert tokens == [hf.id_to_token(i) for i in ids]
    assert tok.convert_tokens_to_ids(tokens) == [hf.token_to_id(t) for t in tokens]


def test_bundled_encoding_shows_bytes_as_display_characters(backend):
    enc = bpe.get_encoding("cl100k_base")
    ids = enc.encode("hello world\n<|endoftext|> ünï", allowed_special="all")
    tokens = enc.convert_ids_to_tokens(ids)
    assert tokens[:4] == ["hello", "Ġworld", "Ċ", "<|endoftext|>"]
    assert enc.convert_tokens_to_string(tokens) == enc.decode(ids)
    assert enc.convert_ids_to_tokens(ids, skip_special_tokens=True) == tokens[:3] + tokens[4:]
    assert enc.convert_ids_to_tokens(ids[0]) == "hello" and enc.convert_tokens_to_ids("Ġworld") == ids[1]
    vocab = enc.get_vocab()
    assert len(vocab) == len(enc.mergeable_ranks) + len(enc.special_tokens)
    assert all(enc.token_to_id(s) == i and enc.id_to_token(i) == s for s, i in vocab.items())
    assert enc.id_to_token(100256) is None and enc.token_to_id("not a token") is None  # (a gap in cl100k)
    with pytest.raises(KeyError, match="100256"):
        enc.convert_ids_to_tokens([100256])
    with pytest.raises(KeyError, match="not a token"):
        enc.convert_tokens_to_string(["hello", "not a token"])
    with pytest.raises(TypeError):
        enc.token_to_id(5)
