"""tiktoken's public calls beyond encode/decode, against tiktoken itself (tests/oracle.py):
encode_single_token, encode_single_piece, is_special_token, token_byte_values,
encode_to_numpy, the model-name table (encoding_name_for_model / encoding_for_model) and
the p50k_edit encoding; both backends for the encoding calls."""

from __future__ import annotations

import pytest
import tiktoken
import tiktoken.model
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import bpe
from oracle import tiktoken_encoding

NAMES = ["r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]


@pytest.mark.parametrize("name", NAMES)
def test_single_tokens_and_special_ids_are_tiktokens(backend, name):
    ours, theirs = bpe.get_encoding(name), tiktoken_encoding(name)
    for token in [b"hello", b" world", b"!", b"\xe6", "<|endoftext|>", "hello", b"not one token at all",
                  b"\xff\xfe", *ours.special_tokens]:
        try:
            want = theirs.encode_single_token(token)
        except KeyError:
            with pytest.raises(KeyError):
                ours.encode_single_token(token)
            continue
        assert ours.encode_single_token(token) == want
    for i in [0, 100, 50256, 50281, 100257, 199999, 200018, 10 ** 6]:
        assert ours.is_special_token(i) == theirs.is_special_token(i)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_token_byte_values_are_tiktokens(name):
    assert bpe.get_encoding(name).token_byte_values() == tiktoken_encoding(name).token_byte_values()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(min_size=1, max_size=40), st.text(min_size=1, max_size=20)))
def test_encode_single_piece_is_tiktokens(backend, piece):
    # (tiktoken 0.14 panics on an empty piece; bpe gives no tokens: checked below)
    assert bpe.get_encoding("cl100k_base").encode_single_piece(b"") == []
    for name in ("cl100k_base", "o200k_base"):
        assert bpe.get_encoding(name).encode_single_piece(piece) == tiktoken_encoding(name)._encode_single_piece(piece)


def test_encode_to_numpy():
    import numpy as np  # (a test dependency; without it: tests/test_model_inputs.py::test_numpy_is_optional)
    ours, theirs = bpe.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    text = "hello <|endoftext|> world 日本"
    got = ours.encode_to_numpy(text, allowed_special="all")
    assert got.dtype == np.uint32 and got.tolist() == theirs.encode_to_numpy(text, allowed_special="all").tolist()
    with pytest.raises(ValueError):
        ours.encode_to_numpy(text)


def test_model_names_are_tiktokens():
    assert bpe.registry.MODEL_TO_ENCODING == tiktoken.model.MODEL_TO_ENCODING
    assert bpe.registry.MODEL_PREFIX_TO_ENCODING == tiktoken.model.MODEL_PREFIX_TO_ENCODING
    for model in ["gpt-4o", "gpt-4o-2024-05-13", "gpt-4-0314", "text-davinci-003", "code-davinci-edit-001",
                  "gpt-5-mini", "ft:gpt-4o-mini:org", "gpt2", "davinci"]:
        assert bpe.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model)
    assert bpe.encoding_for_model("gpt-4o").name == "o200k_base"
    with pytest.raises(KeyError, match="get_encoding"):
        bpe.encoding_name_for_model("no-such-model")
    assert "p50k_edit" in bpe.list_encoding_names()


def test_p50k_edit_is_tiktokens():
    ours, theirs = bpe.get_encoding("p50k_edit"), tiktoken_encoding("p50k_edit")
    text = "<|fim_prefix|>def f(x):<|fim_suffix|>    return x<|fim_middle|> <|endoftext|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.n_vocab == theirs.n_vocab and ours.special_tokens_set == theirs.special_tokens_set
