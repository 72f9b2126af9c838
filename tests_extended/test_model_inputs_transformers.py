"""``tokenizer(texts, ...)`` on the shared Hugging Face files against transformers' own call.

transformers (a test-only oracle, installed by .ci/run) loads hf/gpt2 (``tokenizer.json``
alone, as ``PreTrainedTokenizerFast``), hf/llama3 and hf/qwen3 (with their
``tokenizer_config.json``, as ``AutoTokenizer``).  For batches of corpus pieces of every
shared corpus and a set of options (defaults, padding, truncation with stride and overflowing
windows, both sides, padding to a length and to a multiple, offsets, special-tokens mask,
lengths, numpy arrays), bpe's call gives the same columns, in the same order, with the same
values, and the same ``tokens(i)`` and ``word_ids(i)`` for every row.  gpt2 and llama3 have
no pad token in their files: both sides pad with the end-of-text token, named in the call.
transformers takes the truncation and padding sides from attributes of the tokenizer (as
keywords of the call it ignores them); bpe takes them from tokenizer_config.json or the call.
"""

from __future__ import annotations

import numpy
import pytest
import transformers

import bpe

FILES = {"gpt2": "<|endoftext|>", "llama3": "<|end_of_text|>", "qwen3": None}
CORPORA = ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt",
           "code_python.txt", "code_c.txt", "code_js.txt"]
OPTIONS = [
    {},
    {"padding": True},
    {"truncation": True, "max_length": 64},
    {"max_length": 40},
    {"truncation": True, "max_length": 64, "stride": 16, "return_overflowing_tokens": True, "padding": True},
    {"truncation": True, "max_length": 32, "stride": 5, "return_overflowing_tokens": True,
     "truncation_side": "left", "padding_side": "left", "padding": "longest"},
    {"padding": "max_length", "max_length": 128, "truncation": True, "pad_to_multiple_of": 8,
     "return_offsets_mapping": True, "return_special_tokens_mask": True, "return_length": True},
    {"padding": True, "pad_to_multiple_of": 16, "return_offsets_mapping": True, "add_special_tokens": False},
    {"padding": True, "return_tensors": "np", "return_offsets_mapping": True},
]


def _oracle(shared, name, pad):
    folder = shared / "hf" / name
    if (folder / "tokenizer_config.json").exists():
        ref = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    else:
        ref = transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    if pad is not None:
        ref.pad_token = pad
    return ref


def _texts(corpus) -> list[str]:
    """Eight pieces of each corpus, of 20 to 900 characters (short and long rows in one batch)."""
    out = []
    for name in CORPORA:
        text = corpus(name)
        for k, size in enumerate((20, 150, 900, 60, 400, 35, 700, 250)):
            start = (k * 7919) % max(1, len(text) - size)
            out.append(text[start:start + size])
    return out


def _plain(value):
    if isinstance(value, numpy.ndarray):
        return ("array", str(value.dtype), value.shape, value.tolist())
    return value


@pytest.mark.parametrize("name", sorted(FILES))
def test_calls_are_transformers(name, shared, corpus, cython_backend):
    pad = FILES[name]
    ref = _oracle(shared, name, pad)
    tok = bpe.Tokenizer.from_hf(shared / "hf" / name)
    texts = _texts(corpus)
    compared = rows = 0
    for options in OPTIONS:
        for batch in (texts, texts[3]):  # a batch, and one text on its own
            # (transformers takes the sides from the tokenizer: as keywords they are ignored)
            ref.truncation_side = options.get("truncation_side", "right")
            ref.padding_side = options.get("padding_side", "right")
            want = ref(batch, **{k: v for k, v in options.items() if not k.endswith("_side")})
            got = tok(batch, allowed_special="all", pad_token=pad, **options)
            assert list(got) == list(want), (name, options)
            for key in want:
                assert _plain(got[key]) == _plain(want[key]), (name, options, key)
            n = len(want["input_ids"]) if not isinstance(batch, str) or "overflow_to_sample_mapping" in want \
                or options.get("return_tensors") else 1
            for i in range(n):
                assert got.tokens(i) == want.tokens(i) and got.word_ids(i) == want.word_ids(i), (name, options, i)
            compared += 1
            rows += n
    print(f"\n[model inputs] {name}: {compared} calls ({len(OPTIONS)} option sets x batch/single), "
          f"{rows} rows, all equal to transformers {transformers.__version__}")
