"""Broken and unsupported tokenizer.json files raise ``bpe.TokenizerFileError``.

Each case copies a fixture, breaks it in one place and writes it to ``tmp_path``.  The error
must be a ``TokenizerFileError`` (a ``ValueError``) whose message names the file and the place
in the JSON (``model.merges[3]``, ``pre_tokenizer.pretokenizers[1]``, ``added_tokens[0]``, ...)
and what is there; the wording beyond that is free.  Each case also records what Hugging Face
itself does with the file: some are broken for HF too, others HF loads (a Unigram or WordPiece
model, a pre-tokenizer bpe does not implement, dropout, duplicate ids) but bpe cannot give
HF's ids for them, or would silently give wrong ones.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import tokenizers
from tokenizers import models, pre_tokenizers

import bpe
from damage import KINDS, damage
from hf_oracle import fixture_path, json_edit as _set, spec

BASE = "gpt2_like"


def _write(tmp_path, d, name="broken.json"):
    path = tmp_path / name
    path.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    return path


def _hf_loads(path) -> bool:
    try:
        tokenizers.Tokenizer.from_file(str(path)).encode("the cat sat on the mat")
    except Exception:  # tokenizers raises plain Exception for a bad file
        return False
    return True


def _broken(edit):
    d = copy.deepcopy(spec(fixture_path(BASE)))
    edit(d)
    return d




def _merge(i, value):
    def edit(d):
        d["model"]["merges"][i] = value
    return edit


def _duplicate_id(d):
    vocab = d["model"]["vocab"]
    vocab["zzzz"] = vocab["the"]


def _added_id_clash(d):
    d["added_tokens"][0]["id"] = d["model"]["vocab"]["the"]


def _pre_sequence_with(unsupported):
    def edit(d):
        d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            unsupported,
        ]}
    return edit


#: (case id, edit of gpt2_like, strings the message must contain, does HF load the file)
CASES = [
    ("no model", lambda d: d.pop("model"), ["model"], False),
    ("model null", _set("model", None), ["model"], False),
    ("dropout 0.1", _set("model", "dropout", 0.1), ["model.dropout", "0.1"], True),
    ("UnicodeScripts in a Sequence", _pre_sequence_with({"type": "UnicodeScripts"}),
     ["pre_tokenizer.pretokenizers[1]", "UnicodeScripts"], True),
    ("CharDelimiterSplit in a Sequence", _pre_sequence_with({"type": "CharDelimiterSplit", "delimiter": "x"}),
     ["pre_tokenizer.pretokenizers[1]", "CharDelimiterSplit"], True),
    ("BertPreTokenizer", _set("pre_tokenizer", {"type": "BertPreTokenizer"}), ["pre_tokenizer", "BertPreTokenizer"], True),
    ("StripAccents normalizer in a Sequence",
     _set("normalizer", {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]}),
     ["normalizer.normalizers[1]", "StripAccents"], True),
    ("BertNormalizer", _set("normalizer", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                           "strip_accents": None, "lowercase": True}),
     ["normalizer", "BertNormalizer"], True),
    ("WordPiece decoder", _set("decoder", {"type": "WordPiece", "prefix": "##", "cleanup": True}),
     ["decoder", "WordPiece"], True),
    ("CTC decoder in a Sequence", _set("decoder", {"type": "Sequence", "decoders": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True}]}),
     ["decoder.decoders[1]", "CTC"], True),
    ("merge naming a token not in the vocab", _merge(3, ["Ġt", "zzzz"]), ["model.merges[3]", "zzzz"], False),
    ("merge whose result is not in the vocab", _merge(3, ["q", "q"]), ["model.merges[3]", "qq"], False),
    ("merge of one token", _merge(3, ["Ġthe"]), ["model.merges[3]"], False),
    ("duplicate ids in the vocab", _duplicate_id, ["model.vocab"], True),
    ("added token id is another vocab token", _added_id_clash, ["added_tokens[0]"], True),
    ("added token without content", lambda d: d["added_tokens"][0].pop("content"), ["added_tokens[0]"], False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_broken_file_raises_with_the_place(case, tmp_path):
    what, edit, places, hf_loads = case
    path = _write(tmp_path, _broken(edit))
    assert _hf_loads(path) == hf_loads, f"HF {'no longer loads' if hf_loads else 'now loads'} {what}"
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(path)
    message = str(info.value)
    assert str(path) in message
    for place in places:
        assert place in message, (place, message)
    assert isinstance(info.value, ValueError) and isinstance(info.value, bpe.BPEError)


def test_merges_as_strings_with_a_bad_entry(tmp_path):
    d = copy.deepcopy(spec(fixture_path("merges_strings")))
    d["model"]["merges"][5] = "Ġthe"  # no space: not two tokens
    path = _write(tmp_path, d)
    assert not _hf_loads(path)
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(path)
    assert "model.merges[5]" in str(info.value) and str(path) in str(info.value)


def test_json_syntax_error(tmp_path):
    text = open(fixture_path(BASE), encoding="utf-8").read()
    path = tmp_path / "tokenizer.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")  # cut in the middle
    assert not _hf_loads(path)
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(path)
    assert str(path) in str(info.value)
    # a folder holding the broken file names the file too
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(tmp_path)
    assert str(path) in str(info.value)


def test_not_a_json_object(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("[1, 2, 3]\n", encoding="utf-8")
    assert not _hf_loads(path)
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(path)
    assert str(path) in str(info.value)


def test_folder_without_tokenizer_json(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    with pytest.raises((bpe.TokenizerFileError, FileNotFoundError)) as info:
        bpe.Tokenizer.from_hf(tmp_path)
    assert str(tmp_path) in str(info.value)


def _real_file(tmp_path, model, name):
    """A valid HF file with the given model (made by tokenizers, so HF loads it)."""
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / name
    tok.save(str(path))
    assert _hf_loads(path)
    return path


def test_unigram_model_is_unsupported(tmp_path):
    path = _real_file(tmp_path, models.Unigram([("<unk>", 0.0), ("the", -1.0), ("t", -2.0), ("h", -2.0),
                                                 ("e", -2.0), ("cat", -1.5)], unk_id=0), "unigram.json")
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(path)
    message = str(info.value)
    assert str(path) in message and "model" in message and "Unigram" in message


def test_wordpiece_model_is_unsupported(tmp_path):
    vocab = {"[UNK]": 0, "the": 1, "cat": 2, "##s": 3}
    path = _real_file(tmp_path, models.WordPiece(vocab, unk_token="[UNK]"), "wordpiece.json")
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(path)
    message = str(info.value)
    assert str(path) in message and "model" in message and "WordPiece" in message


def test_dropout_zero_or_null_is_fine(tmp_path):
    """dropout null (every fixture) loads; so does an explicit 0.0, which drops nothing."""
    d = copy.deepcopy(spec(fixture_path(BASE)))
    d["model"]["dropout"] = 0.0
    path = _write(tmp_path, d)
    tok = bpe.Tokenizer.from_hf(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = "the cat sat on the mat, twice: the cat sat on the mat"
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def small_json(tmp_path_factory):
    tok = bpe.Tokenizer.train(["the cat sat on the mat, 12 é 中文 " * 20], 300, special_tokens=["<|eot|>"])
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    tok.to_hf(path)
    data = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return path.read_bytes()


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, KINDS - 1), st.integers(0, 2 ** 20), st.integers(0, 2 ** 20))
def test_a_damaged_tokenizer_json_raises_a_file_error_or_loads(small_json, tmp_path_factory, op, a, b):
    """tokenizer.json carries no checksum: any one damage either raises TokenizerFileError
    (never another exception: no KeyError, IndexError, UnicodeDecodeError, ...) or loads a
    tokenizer that encodes and decodes."""
    path = tmp_path_factory.mktemp("damaged") / "tokenizer.json"
    path.write_bytes(damage(small_json, op, a, b))
    try:
        tok = bpe.Tokenizer.from_hf(path)
    except bpe.TokenizerFileError:
        return
    ids = tok.encode("the cat sat on the mat", allowed_special="all")
    assert isinstance(tok.decode(ids), str)
