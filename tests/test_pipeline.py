"""The planner (``bpe.pipeline.plan``): which pipelines run in the fused compiled pass and
which stage by stage, checked on the tiktoken-style constructor and on the HF fixtures (whose
ids tests/test_huggingface.py checks either way)."""

from __future__ import annotations

import pytest

import bpe
from hf_oracle import fixture_path

# fixture -> (staged, pattern name of the scanner, unicode form)
EXPECTED = {
    "gpt2_like": (False, "gpt2", None),
    "llama3_like": (False, "llama3", None),
    "qwen_like": (False, "qwen2", "NFC"),
    "merges_strings": (True, None, "NFKC"),     # ByteLevel with add_prefix_space, Digits
    "sentencepiece_like": (True, None, None),   # not byte-level: the model runs in Python
    "added_flags": (True, "gpt2", None),        # lstrip/rstrip/single_word tokens and Lowercase
    "split_removed": (True, None, None),        # a Split the scanners do not have
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_plan_of_fixtures(backend, name):
    tok = bpe.Tokenizer.from_hf(fixture_path(name))
    run = tok._plan
    staged, pattern, form = EXPECTED[name]
    assert run.staged == staged
    if not staged or pattern is not None:
        assert run.pattern_name == pattern
    assert run.unicode_form == form


def test_tiktoken_style_tokenizers_are_fused(backend):
    enc = bpe.get_encoding("cl100k_base")
    assert not enc._plan.staged and enc._plan.on_scanner and enc._plan.model_on_core
    custom = bpe.Tokenizer(enc.mergeable_ranks, pattern=r"\w+|\s+|[^\w\s]+")
    assert not custom._plan.on_scanner and not custom._plan.staged  # the regex path, model on core
    nfc = bpe.Tokenizer(enc.mergeable_ranks, pattern="cl100k_base", normalization="NFKC")
    assert nfc._plan.unicode_form == "NFKC" and not nfc._plan.staged
