"""save/load round trips and the file format itself (errors are in test_errors.py)."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe
from bpe import fileformat
from conftest import read_text
from damage import KINDS, damage


@pytest.mark.parametrize("pattern", ["o200k_base", None, r"\w+|\s+|[^\w\s]+", "gpt2"])
def test_trained_round_trip(backend, tmp_path, pattern):
    text = read_text("mixed.txt")
    tok = bpe.Tokenizer.train([text], 400, pattern=pattern, special_tokens=["<|eot|>"], min_frequency=1,
                              normalization="NFC", name="t")
    path = tmp_path / "t.bpe"
    tok.save(path)
    back = bpe.Tokenizer.load(path)
    assert back.mergeable_ranks == tok.mergeable_ranks
    assert back.merges == tok.merges
    assert back.special_tokens == tok.special_tokens
    assert back.pattern == tok.pattern
    assert back.normalization == "NFC"
    assert back.name == "t"
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    # saving again gives the same bytes
    path2 = tmp_path / "t2.bpe"
    back.save(path2)
    assert path.read_bytes() == path2.read_bytes()


def test_bundled_round_trip(backend, tmp_path):
    enc = bpe.get_encoding("cl100k_base")
    path = tmp_path / "cl100k.bpe"
    enc.save(path)
    back = bpe.Tokenizer.load(path)
    text = read_text("mixed.txt")
    assert back.encode_ordinary(text) == enc.encode_ordinary(text)
    assert back.n_vocab == enc.n_vocab
    assert back.special_tokens == enc.special_tokens


def test_file_is_human_inspectable(tmp_path):
    tok = bpe.Tokenizer.train(["hello world"] * 3, 260, special_tokens=["<|x|>"], min_frequency=1, name="hi")
    path = tmp_path / "hi.bpe"
    tok.save(path)
    lines = path.read_text("utf-8").splitlines()
    assert lines[0] == "bpe-tokenizer 2"
    assert lines[1] == 'name "hi"'
    assert lines[2].startswith("pattern ")
    assert 'special "<|x|>" 259' in lines
    assert "ranks 259" in lines
    assert "merges 3" in lines
    assert lines[-2] == "end"
    import hashlib
    body = path.read_bytes()[: -len(lines[-1]) - 1]
    assert lines[-1] == "sha256 " + hashlib.sha256(body).hexdigest()


def test_custom_word_like_pattern_survives_save(tmp_path):
    import regex

    tok = bpe.Tokenizer.train(["abc abc"], 258, pattern=regex.compile("abc"), min_frequency=1)
    path = tmp_path / "p.bpe"
    tok.save(path)
    assert bpe.Tokenizer.load(path).pattern == "abc"


def test_loads_rejects_inconsistent_counts():
    spec = fileformat.TokenizerSpec("x", None, None, None, {}, {bytes([b]): b for b in range(256)}, None)
    data = fileformat.dumps(spec).replace(b"ranks 256", b"ranks 300")
    with pytest.raises(bpe.TokenizerFileError, match="sha256"):
        fileformat.loads(data, "mem")
    with pytest.raises(bpe.TokenizerFileError, match="announces 300 rank lines"):
        fileformat.loads(data, "mem", verify=False)


def test_pickle(backend):
    enc = bpe.get_encoding("o200k_base")
    data = pickle.dumps(enc)
    assert len(data) < 200  # a bundled encoding pickles by name
    assert pickle.loads(data) is enc  # and comes back as the cached instance
    tok = bpe.Tokenizer.train(["some text to learn from"] * 5, 270, special_tokens=["<|e|>"], min_frequency=1)
    back = pickle.loads(pickle.dumps(tok))
    assert back.merges == tok.merges and back.special_tokens == tok.special_tokens
    assert back.encode("text <|e|>", allowed_special="all") == tok.encode("text <|e|>", allowed_special="all")


_SMALL = bpe.Tokenizer.train(["the quick brown fox jumps over the lazy dog " * 20], 300, special_tokens=["<|eot|>"],
                             name="small")
_SAVED = fileformat.dumps(_SMALL._spec())


@settings(max_examples=400, deadline=None)
@given(st.integers(0, KINDS - 1), st.integers(0, 2 ** 20), st.integers(0, 2 ** 20))
def test_a_damaged_file_never_loads_as_another_tokenizer(op, a, b):
    """Any one damage of a saved file either raises TokenizerFileError or leaves the same
    tokenizer (a change the format does not read, such as a newline added at the end)."""
    damaged = damage(_SAVED, op, a, b)
    try:
        spec = fileformat.loads(damaged, "damaged.bpe")
    except bpe.TokenizerFileError:
        return
    assert spec == _SMALL._spec()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, KINDS - 1), st.integers(0, 2 ** 20), st.integers(0, 2 ** 20))
def test_a_damaged_tiktoken_file_raises_a_file_error_or_loads(tmp_path_factory, op, a, b):
    """.tiktoken files carry no checksum of their own: a damaged one raises
    TokenizerFileError (never another exception) or loads a rank table; with the
    expected_hash that tiktoken's loader takes, it never loads as anything else."""
    import hashlib
    data = bpe.tiktoken_files.dump_tiktoken_ranks(_SMALL.mergeable_ranks)
    path = tmp_path_factory.mktemp("tk") / "r.tiktoken"
    path.write_bytes(damage(data, op, a, b))
    try:
        bpe.Tokenizer.from_tiktoken(path, pattern="gpt2")
    except bpe.TokenizerFileError:
        pass
    try:
        ranks = bpe.tiktoken_files.load_tiktoken_bpe(path, hashlib.sha256(data).hexdigest())
    except bpe.TokenizerFileError:
        return
    assert ranks == _SMALL.mergeable_ranks
