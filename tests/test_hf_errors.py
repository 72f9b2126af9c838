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
from hf_oracle import fixture_path, json_edit, spec

_set = json_edit

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
    ("a list as a stage's type", _set("pre_tokenizer", "type", ["ByteLevel"]), ["pre_tokenizer", "['ByteLevel']"],
     False),
    ("added_tokens not a list", _set("added_tokens", 5), ["added_tokens", "a list"], False),
    ("a vocab id past 32 bits", _set("model", "vocab", "the", 2 ** 70), ["model.vocab['the']", "2**32"], False),
    ("dropout true", _set("model", "dropout", True), ["model.dropout", "True"], False),
    ("ByteLevel decoder flag not a bool", _set("decoder", "trim_offsets", "yes"), ["decoder.trim_offsets"], False),
]

_TEMPLATE = ("post_processor", "processors", 1)
_BOS = {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}

#: (case id, fixture, edit, strings the message must contain, does HF load the file): files of
#: other shapes, found broken by the loader's fuzzing.  Those HF loads, it reads its own way:
#: a template without its sequence gives no ids, one with it twice gives it twice, and HF finds
#: empty matches of a pattern at places Python's regex engine does not.
OTHER_CASES = [
    ("special token named by a list", "llama3_like",
     _set(*_TEMPLATE, "single", [{"SpecialToken": {"id": [], "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]),
     ["post_processor.processors[1].single[0]", "[]"], False),
    ("template without the sequence", "llama3_like", _set(*_TEMPLATE, "single", [_BOS]),
     ["post_processor.processors[1].single", "none"], True),
    ("template with the sequence twice", "llama3_like",
     _set(*_TEMPLATE, "single", [_BOS, {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]),
     ["post_processor.processors[1].single", "['A', 'A']"], True),
    ("template special token id -1", "llama3_like", _set(*_TEMPLATE, "special_tokens", "<|begin_of_text|>", "ids", [-1]),
     ["post_processor.processors[1].special_tokens['<|begin_of_text|>'].ids[0]", "-1"], False),
    ("template type_id -1", "llama3_like", _set(*_TEMPLATE, "single", 0, "SpecialToken", "type_id", -1),
     ["post_processor.processors[1].single[0].type_id", "-1"], False),
    ("Bert sep id -1", "bert_processing", _set("post_processor", "sep", 1, -1), ["post_processor.sep[1]", "-1"], False),
    ("Metaspace prepend_scheme null", "metaspace_first", _set("pre_tokenizer", "prepend_scheme", None),
     ["pre_tokenizer.prepend_scheme", "null"], False),
    ("Metaspace decoder scheme unknown", "metaspace_first", _set("decoder", "prepend_scheme", "sometimes"),
     ["decoder", "prepend_scheme", "sometimes"], False),
    ("Metaspace decoder replacement empty", "metaspace_first", _set("decoder", "replacement", ""),
     ["decoder", "replacement", "one character"], False),
    ("Strip decoder start -1", "sentencepiece_like", _set("decoder", "decoders", 3, "start", -1),
     ["decoder.decoders[3].start", "-1"], False),
    ("Replace normalizer with an empty string", "normalizers_mix", _set("normalizer", "normalizers", 3, "pattern",
                                                                         {"String": ""}),
     ["normalizer.normalizers[3]", "empty string"], True),
    ("Replace normalizer with a regex matching nothing", "normalizers_mix",
     _set("normalizer", "normalizers", 3, "pattern", {"Regex": "`*"}), ["normalizer.normalizers[3]", "empty string"],
     True),
    ("Split on an empty string", "split_isolated", _set("pre_tokenizer", "pretokenizers", 0, "pattern", {"String": ""}),
     ["pre_tokenizer.pretokenizers[0]", "empty literal"], True),
]


#: every broken-file case as (case id, fixture, edit, places, does HF load the file)
ALL_CASES = [(what, BASE, edit, places, hf_loads) for what, edit, places, hf_loads in CASES] + OTHER_CASES


@pytest.mark.parametrize("case", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_broken_file_raises_with_the_place(case, tmp_path):
    what, fixture, edit, places, hf_loads = case
    d = copy.deepcopy(spec(fixture_path(fixture)))
    edit(d)
    path = _write(tmp_path, d)
    assert _hf_loads(path) == hf_loads, f"HF {'no longer loads' if hf_loads else 'now loads'} {what}"
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(path)
    message = str(info.value)
    assert str(path) in message
    for place in places:
        assert place in message, (place, message)
    assert isinstance(info.value, ValueError) and isinstance(info.value, bpe.BPEError)


def _nodes(node, path=()):
    """Every place in a tokenizer.json's data, but only the first entries of long tables."""
    yield path
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
    for k, v in items[:4] if path[-1:] in (("vocab",), ("merges",)) else items:
        yield from _nodes(v, path + (k,))


#: values of every JSON kind, some out of any id's range
_WRONG = [[], ["x"], {}, {"a": 1}, -1, 2 ** 70, 1.5, "", "x", None, True]


@pytest.mark.parametrize("fixture", ["gpt2_like", "llama3_like", "bert_processing", "metaspace_first",
                                     "normalizers_mix", "sentencepiece_like", "split_isolated"])
def test_any_value_anywhere_raises_a_file_error_or_loads(fixture, tmp_path):
    """Each place of the file in turn holding a value of each JSON kind: bpe raises
    TokenizerFileError or loads a tokenizer that encodes and decodes (never a TypeError from
    an unhashable type, an OverflowError from a large id, ...)."""
    base = spec(fixture_path(fixture))
    path, tried = tmp_path / "tokenizer.json", 0
    for place in list(_nodes(base))[1:]:
        for value in _WRONG:
            d = copy.deepcopy(base)
            json_edit(*place, value)(d)
            path.write_text(json.dumps(d), encoding="utf-8")
            try:
                tok = bpe.Tokenizer.from_hf(path)
            except bpe.TokenizerFileError:
                continue
            finally:
                tried += 1
            ids = tok.encode("the cat sat on the mat é 中文", allowed_special="all")
            assert isinstance(tok.decode(ids), str), (place, value)
    assert tried > 200


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


# ------------------------------------------------------------------ tokenizer_config.json

#: (field, a value of the wrong kind, strings the message must contain besides the field)
CONFIG_CASES = [
    ("bos_token", ["<|endoftext|>"], ["a list"]),
    ("eos_token", {"content": 5}, ["eos_token.content", "an integer"]),
    ("pad_token", 0, ["an integer"]),
    ("add_bos_token", "yes", ["true or false"]),
    ("model_max_length", "1024", ["'1024'"]),
    ("model_max_length", -1, ["-1"]),
    ("model_max_length", 1.5, ["1.5"]),
    ("padding_side", "middle", ["'middle'"]),
    ("truncation_side", ["left"], ["['left']"]),
    ("model_input_names", {"content": 5}, ["a list of strings"]),
    ("chat_template", [{"name": "default"}], ["chat_template", "template"]),
    ("tokenizer_class", 1, ["an integer"]),
]


@pytest.mark.parametrize("case", CONFIG_CASES, ids=[f"{c[0]}={c[1]!r}" for c in CONFIG_CASES])
def test_a_config_field_of_the_wrong_kind_raises_at_load(case, tmp_path):
    """A field of tokenizer_config.json that bpe uses, of a kind transformers never writes
    there, raises TokenizerFileError naming the config file and the field when the folder is
    loaded (it used to raise TypeError at the first call, or to be taken as not set)."""
    key, value, words = case
    (tmp_path / "tokenizer.json").write_bytes(open(fixture_path(BASE), "rb").read())
    config = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "model_max_length": 1024, key: value}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.from_hf(tmp_path)
    message = str(info.value)
    for word in [str(tmp_path / "tokenizer_config.json"), key, *words]:
        assert word in message, (word, message)


def test_config_fields_of_the_kinds_transformers_writes_load(tmp_path):
    """Null fields are not set; a whole float length (int(1e30) written by another JSON
    writer) is read as an int; named chat templates are a list of objects."""
    (tmp_path / "tokenizer.json").write_bytes(open(fixture_path(BASE), "rb").read())
    config = {"bos_token": None, "eos_token": {"content": "<|endoftext|>", "special": True}, "add_bos_token": False,
              "model_max_length": 1e30, "padding_side": "left", "model_input_names": ["input_ids"],
              "chat_template": [{"name": "default", "template": "{{ messages[0]['content'] }}"}]}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    cfg = bpe.Tokenizer.from_hf(tmp_path).hf_config
    assert "bos_token" not in cfg and cfg["eos_token"] == "<|endoftext|>" and cfg["add_bos_token"] is False
    assert cfg["model_max_length"] == int(1e30) and isinstance(cfg["model_max_length"], int)
    assert cfg["padding_side"] == "left" and cfg["chat_template"] == config["chat_template"]


def test_a_config_that_is_not_an_object_raises(tmp_path):
    (tmp_path / "tokenizer.json").write_bytes(open(fixture_path(BASE), "rb").read())
    (tmp_path / "tokenizer_config.json").write_text("[]", encoding="utf-8")
    with pytest.raises(bpe.TokenizerFileError, match="tokenizer_config.json.*expected an object"):
        bpe.Tokenizer.from_hf(tmp_path)
