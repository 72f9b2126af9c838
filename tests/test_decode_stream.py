"""Streaming decode (``Tokenizer.decode_stream``, ``bpe.decoders.DecodeStream``).

For a bundled encoding and every fixture in tests/data/hf: on hypothesis-drawn id sequences
(any ids of the vocabulary and the added tokens, byte tokens and partial UTF-8 included)
the outputs of ``step`` and ``flush`` joined equal ``decode(ids)``, and with
``skip_special_tokens`` equal ``decode`` of the ids that are not special; a text's own ids
come out a piece at a time; the work kept between steps stays a token or two (no re-decode
of the prefix).
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe
from hf_oracle import FIXTURES, fixture_path

NAMES = ["cl100k_base"] + FIXTURES
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@functools.lru_cache(maxsize=None)
def _tok(name: str, backend: str) -> bpe.Tokenizer:
    from bpe import _backend

    before = _backend.active().name
    _backend.use(backend)
    try:
        return bpe.get_encoding(name) if name == "cl100k_base" else bpe.Tokenizer.from_hf(fixture_path(name))
    finally:
        _backend.use(before)


def _ids(tok: bpe.Tokenizer) -> list[int]:
    """Every id the tokenizer decodes (a sample of cl100k's)."""
    out = []
    for i in range(tok.max_token_value + 1):
        try:
            tok.decode_single_token_bytes(i)
        except KeyError:
            continue
        out.append(i)
    return out if len(out) < 5000 else out[:3000] + out[-200:]


def _stream(tok: bpe.Tokenizer, ids: list[int], **options) -> tuple[list, str]:
    s = tok.decode_stream(**options)
    return [s.step(i) for i in ids], s.flush()


@pytest.mark.parametrize("name", NAMES)
@PROPERTY
@given(data=st.data())
def test_joined_outputs_are_decode(backend, name, data):
    tok = _tok(name, backend)
    ids = data.draw(st.lists(st.sampled_from(_ids(tok)), max_size=40))
    steps, rest = _stream(tok, ids)
    assert "".join(s for s in steps if s is not None) + rest == tok.decode(ids)
    special = set(tok.special_tokens.values())
    steps, rest = _stream(tok, ids, skip_special_tokens=True)
    assert "".join(s for s in steps if s is not None) + rest == tok.decode([i for i in ids if i not in special])


@pytest.mark.parametrize("name", NAMES)
def test_a_texts_ids_come_out_as_they_complete(backend, name):
    tok = _tok(name, backend)
    text = "Streaming héllo wörld, 日本語 and 🙂 emoji\n  indented"
    ids = tok.encode(text, allowed_special="all")
    s = tok.decode_stream()
    outs = []
    for i in ids:
        outs.append(s.step(i))
        assert len(getattr(s, "_context", [])) <= 1 and len(getattr(s, "_pending", [])) <= 12  # (a held run of byte tokens: 日本語)
    joined = "".join(o for o in outs if o is not None) + s.flush()
    assert joined == tok.decode(ids)
    assert sum(o is not None for o in outs) >= len(ids) // 2  # text is released as it completes
