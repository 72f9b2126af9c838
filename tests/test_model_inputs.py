"""``tokenizer(texts, padding=..., truncation=...)`` and ``truncate`` (bpe.model_inputs).

Hugging Face ``tokenizers`` with its own truncation and padding switched on is the oracle for
the rows (ids, attention mask, special-tokens mask, offsets, tokens, word ids, overflowing
windows with stride, from either side, padding on either side, to the longest row, to a
length, to a multiple), on every fixture in tests/data/hf and both backends.  transformers'
own calls on the shared files are compared in tests_extended/test_hf_files.py.  Errors:
each bad combination names what to pass.  ``truncate``: the prefix fits the budget, a
character more does not, and it never needs the whole text encoded.
"""

from __future__ import annotations

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe
from bpe import model_inputs
from bpe.errors import BPEError, ModelInputsError
from hf_oracle import FIXTURES, fixture_path, spec
from optional_extras import run_without

TEXTS = [
    "hello world this is a longer text with many words in it ok",
    "",
    "héllo 😀 world  \n\n x",
    "<|endoftext|> hi there, <s> cat",
    "  Hello, WORLD! 123 4567 the cat [r] x <ls> y and more words to cut",
    "a",
]

# (truncation max_length, stride, side) and (padding, length, multiple, side)
CUTS = [None, (8, 0, "right"), (8, 3, "right"), (6, 2, "left"), (5, 0, "left")]
PADS = [None, ("longest", None, None, "right"), ("longest", None, 4, "left"), ("max_length", 12, None, "left"),
        ("max_length", 10, 5, "right")]


def _pad_token(path: str) -> str:
    """A token of the file to pad with: its first added token, else the vocabulary's first."""
    d = spec(path)
    if d.get("added_tokens"):
        return d["added_tokens"][0]["content"]
    vocab = d["model"]["vocab"]
    return min(vocab, key=vocab.get)


def _hf_rows(path, texts, add, cut, pad, pad_token):
    h = tokenizers.Tokenizer.from_file(path)  # a new one: truncation and padding are its state
    if cut is not None:
        h.enable_truncation(cut[0], stride=cut[1], direction=cut[2])
    if pad is not None:
        how, length, multiple, side = pad
        h.enable_padding(direction=side, pad_id=h.token_to_id(pad_token), pad_token=pad_token,
                         length=length if how == "max_length" else None, pad_to_multiple_of=multiple)
    rows = []
    for e in h.encode_batch(texts, add_special_tokens=add):
        rows += [e] + list(e.overflowing)
    return [(r.ids, r.attention_mask, r.special_tokens_mask, r.offsets, r.tokens, r.word_ids) for r in rows]


def _rows(tok, texts, add, cut, pad, pad_token):
    kwargs = {}
    if cut is not None:
        kwargs.update(truncation=True, max_length=cut[0], stride=cut[1], truncation_side=cut[2])
    if pad is not None:
        how, length, multiple, side = pad
        kwargs.update(padding=how, pad_to_multiple_of=multiple, padding_side=side)
        if how == "max_length":
            kwargs["max_length"] = length
            if cut is not None:  # (one max_length for both: pad to the cut's length)
                kwargs["max_length"] = cut[0]
    out = tok(texts, add_special_tokens=add, return_overflowing_tokens=True, return_special_tokens_mask=True,
              return_offsets_mapping=True, allowed_special="all", pad_token=pad_token, **kwargs)
    return [(out["input_ids"][i], out["attention_mask"][i], out["special_tokens_mask"][i],
             out["offset_mapping"][i], out.tokens(i), out.word_ids(i)) for i in range(len(out["input_ids"]))]


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("add", [False, True])
def test_rows_are_hfs(backend, name, add):
    path = fixture_path(name)
    tok = bpe.Tokenizer.from_hf(path)
    pad_token = _pad_token(path)
    post = tokenizers.Tokenizer.from_file(path).post_processor
    n_added = post.num_special_tokens_to_add(False) if post is not None else 0
    for cut in CUTS:
        for pad in PADS:
            if cut is not None and add and cut[0] - n_added <= cut[1]:
                continue  # (no room for the stride: an error here, a panic in HF; tested below)
            if cut is not None and pad is not None and pad[2] and cut[0] % pad[2]:
                continue  # (a cut that is no multiple of the padding's: an error, tested below)
            hf_pad = pad
            if pad is not None and pad[0] == "max_length" and cut is not None:
                hf_pad = ("max_length", cut[0], pad[2], pad[3])
            ours = _rows(tok, TEXTS, add, cut, pad, pad_token)
            assert ours == _hf_rows(path, TEXTS, add, cut, hf_pad, pad_token), (name, add, cut, pad)


def test_overflow_sample_mapping_and_stride_windows():
    enc = bpe.get_encoding("cl100k_base")
    texts = ["a b c d e f g", "hi"]
    out = enc(texts, truncation=True, max_length=4, stride=1, return_overflowing_tokens=True)
    ids = enc.encode_batch(texts)
    assert out["input_ids"] == [ids[0][0:4], ids[0][3:7], ids[1]]
    assert out["overflow_to_sample_mapping"] == [0, 0, 1]
    left = enc(texts, truncation=True, max_length=4, stride=1, return_overflowing_tokens=True,
               truncation_side="left")
    assert left["input_ids"] == [ids[0][3:7], ids[0][0:4], ids[1]]


def test_windows_cover_every_token_with_the_stride_overlap():
    for n in range(0, 30):
        for size in range(1, 9):
            for stride in range(size):
                for left in (False, True):
                    w = model_inputs.windows(n, size, stride, left)
                    covered = sorted({i for a, b in w for i in range(a, b)})
                    assert covered == list(range(n))
                    assert all(0 < b - a <= size for a, b in w) or n == 0
                    for (a, b), (c, d) in zip(w, w[1:]):  # each overlaps the one before by stride
                        assert (b - c if not left else d - a) == stride


def test_one_text_gives_its_row_and_a_batch_gives_rows():
    enc = bpe.get_encoding("o200k_base")
    one = enc("hello world")
    assert one == {"input_ids": enc.encode("hello world"), "attention_mask": [1, 1]}
    assert one.input_ids == one["input_ids"] and one.tokens() == ["hello", "Ġworld"]
    assert one.word_ids() == [0, 1] and one.sequence_ids() == [0, 0]
    assert one.char_to_token(7) == 1 and one.token_to_chars(1) == (5, 11) and one.word_to_tokens(1) == (1, 2)
    many = enc(["hello world", "x"], return_length=True, return_token_type_ids=True)
    assert many["input_ids"] == [enc.encode("hello world"), enc.encode("x")]
    assert many["length"] == [2, 1] and many["token_type_ids"] == [[0, 0], [0]]
    assert list(many) == ["input_ids", "token_type_ids", "attention_mask", "length"]
    assert many.char_to_token(1, 0) == 0 and many.tokens(1) == ["x"]
    assert enc([]) == {"input_ids": [], "attention_mask": []}
    assert "attention_mask" not in enc("x", return_attention_mask=False)


def test_padding_fills_with_the_pad_token():
    enc = bpe.get_encoding("cl100k_base")
    eot = "<|endoftext|>"
    out = enc(["hello world", "x"], padding=True, pad_token=eot, return_special_tokens_mask=True,
              return_offsets_mapping=True)
    x = enc.encode("x")[0]
    assert out["input_ids"][1] == [x, 100257]
    assert out["attention_mask"] == [[1, 1], [1, 0]]
    assert out["special_tokens_mask"] == [[0, 0], [0, 1]]
    assert out["offset_mapping"][1] == [(0, 1), (0, 0)]
    assert out.tokens(1) == ["x", eot] and out.word_ids(1) == [0, None]
    left = enc(["hello world", "x"], padding="max_length", max_length=4, pad_to_multiple_of=4, pad_token=eot,
               padding_side="left")
    assert left["input_ids"][1] == [100257, 100257, 100257, x]
    assert left.encodings[1].char_to_token(0) == 3


def test_numpy_arrays():
    import numpy as np  # (a test dependency; the call without it: the next test)
    enc = bpe.get_encoding("cl100k_base")
    out = enc(["hello world", "x"], padding=True, pad_token="<|endoftext|>", return_tensors="np",
              return_offsets_mapping=True)
    assert out["input_ids"].dtype == np.int64 and out["input_ids"].shape == (2, 2)
    assert out["offset_mapping"].shape == (2, 2, 2)
    assert enc("hi", return_tensors="np")["input_ids"].shape == (1, 1)
    with pytest.raises(ModelInputsError, match="padding=True"):
        enc(["hello world", "x"], return_tensors="np")


def test_numpy_is_optional():
    stdout = run_without("numpy", (
        "import bpe\n"
        "enc = bpe.get_encoding('cl100k_base')\n"
        "print(enc(['hi', 'there'])['input_ids'])\n"
        "try:\n"
        "    enc('hi', return_tensors='np')\n"
        "except bpe.errors.ModelInputsError as e:\n"
        "    print('error:', e)\n"
        "try:\n"
        "    enc.encode_to_numpy('hi')\n"
        "except ImportError as e:\n"
        "    print('error:', e)\n"))
    assert stdout.count("pip install numpy") == 2 and "[[6151], [19041]]" in stdout


def test_special_tokens_follow_the_encode_policy():
    enc = bpe.get_encoding("cl100k_base")
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        enc("hi <|endoftext|>")
    assert enc("hi <|endoftext|>", allowed_special="all")["input_ids"][-1] == 100257
    assert enc("hi <|endoftext|>", disallowed_special=())["input_ids"] == enc.encode_ordinary("hi <|endoftext|>")


@pytest.mark.parametrize("kwargs, message", [
    (dict(padding=True), "padding needs a pad token"),
    (dict(padding=True, pad_token="<nope>"), "'<nope>' is not a token"),
    (dict(truncation=True), "no model_max_length: pass max_length"),
    (dict(padding="max_length", pad_token="<|endoftext|>"), "no model_max_length"),
    (dict(truncation=True, max_length=4, stride=4), "pass stride <= 3"),
    (dict(truncation=True, max_length=0), "max_length must be an int >= 1"),
    (dict(padding="yes"), "padding='yes' is not one of"),
    (dict(truncation="only_second", max_length=3), "pairs of texts are not supported"),
    (dict(truncation=True, max_length=6, padding=True, pad_to_multiple_of=4, pad_token="<|endoftext|>"),
     "multiple of pad_to_multiple_of"),
    (dict(return_tensors="pt"), "pass 'np'"),
    (dict(padding_side="top"), "'left' or 'right'"),
    (dict(stride=-1), "stride must be an int >= 0"),
])
def test_bad_arguments_say_what_to_pass(kwargs, message):
    enc = bpe.get_encoding("cl100k_base")
    with pytest.raises(ModelInputsError, match=message) as info:
        enc(["hello world"], **kwargs)
    assert isinstance(info.value, BPEError)


def test_max_length_must_leave_room_for_text():
    tok = bpe.Tokenizer.from_hf(fixture_path("bert_processing"))  # [CLS] ... [SEP]
    with pytest.raises(ModelInputsError, match="pass max_length >= 3, or add_special_tokens=False"):
        tok("hello world", truncation=True, max_length=2)
    assert len(tok("hello world", truncation=True, max_length=3)["input_ids"]) == 3
    assert len(tok("hello world", truncation=True, max_length=2, add_special_tokens=False)["input_ids"]) == 2


def test_max_length_alone_truncates_as_in_transformers():
    enc = bpe.get_encoding("cl100k_base")
    assert enc("a b c d e", max_length=2)["input_ids"] == enc.encode("a b c d e")[:2]
    assert enc("a b c d e", max_length=2, truncation=False)["input_ids"] == enc.encode("a b c d e")


def test_model_max_length_and_pad_token_come_from_the_config(tmp_path):
    import json
    import shutil
    shutil.copy(fixture_path("gpt2_like"), tmp_path / "tokenizer.json")
    pad = _pad_token(fixture_path("gpt2_like"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"model_max_length": 3, "pad_token": pad, "padding_side": "left"}))
    tok = bpe.Tokenizer.from_hf(tmp_path)
    out = tok(["hello world there", "a"], truncation=True, padding="max_length")
    assert [len(r) for r in out["input_ids"]] == [3, 3]
    assert out["attention_mask"][1][0] == 0  # padded on the left
    assert out["input_ids"][1][0] == tok.token_to_id(pad)


# ------------------------------------------------------------------ truncate


def _count(tok, text):
    return len(tok.encode(text, allowed_special="all"))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(list("ab  \n.,'é😀中") + ["hello", " world", "<|endoftext|>", "12345"]),
                max_size=30).map("".join), st.integers(0, 25))
def test_truncate_gives_the_longest_prefix_that_fits(backend, text, k):
    tok = bpe.get_encoding("cl100k_base")
    cut = tok.truncate(text, k, allowed_special="all")
    assert text.startswith(cut)
    assert _count(tok, cut) <= k
    if cut != text:
        ends = [e for _, e in tok.encode_with_offsets(text, allowed_special="all").offsets]
        # no longer prefix fits, up to the end of the first token past the budget
        for stop in range(len(cut) + 1, max(ends[min(k, len(ends) - 1)], len(cut) + 1) + 1):
            assert _count(tok, text[:stop]) > k, (text, k, cut, stop)


def test_truncate_reads_only_near_the_cut():
    tok = bpe.get_encoding("o200k_base")

    class Watched(str):  # records the length of every slice truncate takes of it
        taken: list = []

        def __getitem__(self, key):
            part = str.__getitem__(self, key)
            Watched.taken.append(len(part))
            return part

    text = Watched("The quick brown fox jumps over the lazy dog. " * 20000)  # 900 KB
    cut = tok.truncate(text, 50)
    assert len(tok.encode(cut)) == 50 and text.startswith(cut)
    assert Watched.taken and max(Watched.taken) < 1000


def test_truncate_errors():
    tok = bpe.get_encoding("cl100k_base")
    with pytest.raises(ValueError, match="max_tokens must be an int >= 0"):
        tok.truncate("x", -1)
    with pytest.raises(TypeError):
        tok.truncate(b"x", 3)
    # it raises as encode of the prefix would: only when the prefix holds the token
    assert tok.truncate("x <|endoftext|> y", 1) == "x"
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        tok.truncate("x <|endoftext|> y", 20)
    two = tok.encode_ordinary("x <|endoftext|> y")[:2]
    assert tok.truncate("x <|endoftext|> y", 2, disallowed_special=()) == tok.decode(two)
