"""The compiled reading of a byte-level vocabulary and merge list (bpe/_vocab_form.pxi).

``byte_level_form`` (from the parsed JSON) and ``json_model_spans`` + ``byte_level_form_json``
(from the text itself) must give exactly the tables of the general version,
``MergeBPE.byte_form`` in Python, or None; ``Tokenizer.from_hf`` then leaves the vocabulary
and the merges in the file's text (``FileVocab``, ``FileMerges``), which must behave as the
parsed dict and list.  Edits of a file's text (a byte deleted, an id changed, an escape, a
comma too many, ...) must load exactly as the whole file parsed by ``json`` and read by the
general version does, or fail as it does.
"""

from __future__ import annotations

import json
import pickle
import random

import pytest

import bpe
from bpe import _backend, _core, byte_unicode
from bpe.errors import TokenizerFileError
from bpe.io.huggingface import FileMerges, FileVocab
from bpe.models.bpe import MergeBPE
from hf_oracle import FIXTURES, fixture_path

def _text(name: str) -> bytes:
    with open(fixture_path(name), "rb") as f:
        return f.read()


def _model(data: dict) -> MergeBPE:
    m = data["model"]
    return MergeBPE(vocab=dict(m["vocab"]), merges=tuple(m["merges"]), byte_level=True)


def _fields(form) -> tuple:
    return form.tokens, form.decode_only, form.triples, form.first, form.unmade


def _forms(text: bytes):
    """(the general form, the form from the parsed JSON, the form from the text)."""
    data = json.loads(text)
    model = _model(data)
    general = model._byte_form_here() if model._plain_byte_level() else None
    parsed = _core.byte_level_form(data["model"]["vocab"], data["model"]["merges"])
    spans = _core.json_model_spans(text)
    from_text = _core.byte_level_form_json(text, *spans) if spans is not None else None
    return general, parsed, from_text


#: fixtures whose model is plain byte-level BPE: the compiled readings must not give up on them
PLAIN = ["gpt2_like", "llama3_like", "merges_strings", "qwen_like", "rules_disagree"]


@pytest.mark.parametrize("name", FIXTURES)
def test_compiled_readings_give_the_general_tables(name):
    general, parsed, from_text = _forms(_text(name))
    for form in (parsed, from_text):
        if form is not None:
            assert general is not None
            assert _fields(form) == _fields(general)
    if name in PLAIN:
        assert parsed is not None and from_text is not None
        assert len(from_text.tokens) + len(from_text.decode_only) == from_text.n_vocab


def test_spans_are_the_models_vocab_and_merges():
    vocab = {c: i for i, c in enumerate(sorted(byte_unicode.char_to_byte()))}
    vocab["ĠĠ"] = 256
    model = {"type": "BPE", "merges": ["Ġ Ġ"], "dropout": None, "vocab": vocab}
    decoy = {"vocab": {"x": 1}, "merges": ["y z"], "model": {"vocab": {}}}
    for layout in (dict(indent=2), dict(separators=(",", ":")), dict(indent="\t")):
        text = json.dumps({"decoy": decoy, "version": "1.0", "model": model, "merges": []},
                          ensure_ascii=False, **layout).encode()
        v0, v1, m0, m1 = _core.json_model_spans(text)
        assert json.loads(text[v0:v1]) == vocab and json.loads(text[m0:m1]) == ["Ġ Ġ"]
        form = _core.byte_level_form_json(text, v0, v1, m0, m1)
        assert form is not None and form.tokens[b"  "] == 256
    for not_read in (b"[]", b'{"model": {"vocab": {}}}', b'{"\\u006dodel": {"vocab": {}, "merges": []}}',
                     b'{"model": {"vocab": {}, "merges": []}, "model": {"vocab": {}, "merges": []}}', b"{"):
        assert _core.json_model_spans(not_read) is None


@pytest.mark.parametrize("name", PLAIN)
def test_a_loaded_vocabulary_stays_in_the_text_and_is_the_dict(cython_backend, name):
    data = json.loads(_text(name))
    vocab, merges = data["model"]["vocab"], data["model"]["merges"]
    tok = bpe.Tokenizer.from_hf(fixture_path(name))
    model = tok._pipeline.model
    assert isinstance(model.vocab, FileVocab) and isinstance(model.merges, FileMerges)
    assert len(model.vocab) == len(vocab) and len(model.merges) == len(merges)
    assert model.vocab.get("not a token", -5) == -5 and "\n" not in model.vocab and 3 not in model.vocab
    for key, tid in vocab.items():
        assert key in model.vocab and model.vocab[key] == tid
    assert sorted(model.vocab.ids()) == sorted(vocab.values())
    assert model.vocab._parsed is None  # none of the above parsed the text
    assert dict(model.vocab) == vocab and list(model.merges) == merges
    assert pickle.loads(pickle.dumps(model.vocab)) == vocab
    assert pickle.loads(pickle.dumps(model.merges)) == tuple(merges)
    assert pickle.loads(pickle.dumps(tok)).encode("hello world", allowed_special="all") == \
        tok.encode("hello world", allowed_special="all")


# ------------------------------------------------------------------ edits of the text

def _edit(text: bytes, spans: tuple, rng: random.Random) -> bytes:
    """One random edit inside the model's vocabulary or merges (at ``spans`` of the text
    before any edit: an edit moves them by a few bytes at most)."""
    v0, v1, m0, m1 = spans
    lo, hi = (v0, v1) if rng.random() < 0.6 else (m0, min(m1, len(text) - 3))
    i = rng.randrange(lo + 1, hi - 1)
    kind = rng.randrange(9)
    if kind == 0:
        return text[:i] + text[i + 1:]                                  # a byte deleted
    if kind == 1:
        return text[:i] + bytes([rng.choice(b'",:{}[] 0123456789\\-.e')]) + text[i:]  # a byte put in
    if kind == 2:  # a digit changed (an id)
        digits = [k for k in range(lo, hi) if 48 <= text[k] <= 57]
        k = rng.choice(digits) if digits else i
        return text[:k] + bytes([rng.choice(b"0123456789")]) + text[k + 1:]
    if kind == 3:  # a character written as a \\u escape of itself (the same JSON)
        k = text.index(b'"', i, hi) + 1 if b'"' in text[i:hi] else i
        ch = text[k:k + 4].decode("utf-8", "ignore")[:1]
        if ch and ch not in '"\\':
            return text[:k] + b"\\u%04x" % ord(ch) + text[k + len(ch.encode()):]
        return text
    if kind == 4:
        return text[:hi - 1] + b"," + text[hi - 1:]                     # a comma before the end
    if kind == 5:  # an entry repeated
        k = text.index(b",", i, hi) if b"," in text[i:hi] else i
        j = text.rfind(b",", lo, k)
        return text[:k] + text[j if j > lo else lo + 1:k] + text[k:]
    if kind == 6:
        return text[:i] + b"\n  " + text[i:]                            # whitespace (the same JSON)
    if kind == 7:  # two bytes swapped
        return text[:i] + text[i + 1:i + 2] + text[i:i + 1] + text[i + 2:]
    return text[:i] + "\u0100€\t".encode()[rng.randrange(3):][:2] + text[i:]   # other characters


def _load(path, backend: str):
    before = _backend.active().name
    _backend.use(backend)
    try:
        return bpe.Tokenizer.from_hf(path)
    except TokenizerFileError as exc:
        return exc
    finally:
        _backend.use(before)


@pytest.mark.parametrize("name", ["gpt2_like", "merges_strings", "rules_disagree"])
def test_edited_files_load_as_the_parsed_file(name, tmp_path):
    rng = random.Random(name)
    original = _text(name)
    texts = ["hello world", " the quick brown fox 123", "ünïcödé 日本語 🙂", "aaaa    bbbb\n\n"]
    spans = _core.json_model_spans(original)
    loaded = failed = in_text = 0
    for trial in range(200):
        text = original
        for _ in range(rng.randint(1, 2)):
            text = _edit(text, spans, rng)
        path = tmp_path / f"edit{trial}.json"
        path.write_bytes(text)
        fast, general = _load(path, "cython"), _load(path, "python")
        if isinstance(general, Exception):
            assert isinstance(fast, TokenizerFileError), (trial, general)
            assert str(fast) == str(general)
            failed += 1
            continue
        assert not isinstance(fast, Exception), (trial, fast)
        fm, gm = fast._pipeline.model, general._pipeline.model
        assert dict(fm.vocab) == dict(gm.vocab) and fm.pairs == gm.pairs
        for t in texts:
            assert fast.encode(t, allowed_special="all") == general.encode(t, allowed_special="all")
        loaded += 1
        in_text += isinstance(fm.vocab, FileVocab)  # (read from the text, not parsed whole)
    assert loaded >= 20 and failed >= 20 and in_text >= 10, (loaded, failed, in_text)
