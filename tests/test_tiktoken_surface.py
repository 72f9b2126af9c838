"""tiktoken's public calls beyond encode/decode, against tiktoken itself (tests/oracle.py):
encode_single_token, encode_single_piece, is_special_token, token_byte_values,
encode_to_numpy, encode_bytes/_encode_bytes (drawn bytes, round trips), encode_with_unstable,
the model-name table (encoding_name_for_model / encoding_for_model), the p50k_edit and
o200k_harmony encodings, the ``Encoding(name, pat_str=..., ...)`` constructor and its
extension recipe, ``register_encoding`` and tiktoken plugins, and a tiktoken program run
with ``import bpe as tiktoken``; both backends for the encoding calls."""

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


# bytes cut anywhere: valid UTF-8 around a bad byte, a character cut short, white space before it
_BYTES = st.one_of(
    st.binary(max_size=40),
    st.lists(st.sampled_from([b"hello", b" world", b"  ", b"\n\n", b"\t", b"\xff", b"\x80", b"\xc3", b"\xe4\xb8",
                              "é".encode(), "中文".encode(), "😀".encode()[:3], b"<|endoftext|>", b"123"]),
             max_size=12).map(b"".join),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_BYTES)
def test_encode_bytes_is_tiktokens_and_round_trips(backend, data):
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        ours = bpe.get_encoding(name)
        got = ours.encode_bytes(data)
        assert got == tiktoken_encoding(name)._encode_bytes(data) == ours._encode_bytes(data)
        assert ours.decode_bytes(got) == data


def test_encode_bytes_refuses_str_and_takes_buffers():
    tok = bpe.get_encoding("cl100k_base")
    with pytest.raises(TypeError, match="encode_ordinary"):
        tok.encode_bytes("text")
    assert tok.encode_bytes(bytearray(b"ab\xff")) == tok.encode_bytes(memoryview(b"ab\xff")) == tok.encode_bytes(b"ab\xff")


_PROMPTS = st.lists(st.sampled_from(["hello", " wor", " world", "  ", "\n", "\n\n", "!", "x = 1 +", "caf", "é",
                                     "中", "\u3000", "<|endoftext|>", "12", "'s", " "]), min_size=1, max_size=6).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_PROMPTS)
@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
def test_encode_with_unstable_is_tiktokens(backend, name, text):
    ours, theirs = bpe.get_encoding(name), tiktoken_encoding(name)
    stable, completions = ours.encode_with_unstable(text, allowed_special="all")
    want_stable, want_completions = theirs.encode_with_unstable(text, allowed_special="all")
    assert stable == want_stable
    assert completions == sorted(completions)
    assert {tuple(c) for c in completions} == {tuple(c) for c in want_completions}
    # each completion continues the text: its bytes start with the text's
    data = text.encode("utf-8")
    assert all(ours.decode_bytes(stable + c).startswith(data) for c in completions)


def test_encode_with_unstable_on_o200k_and_special_rules():
    ours, theirs = bpe.get_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    for text in ["The quick bro", "hello<|endoftext|>", "def f(x):\n    ret", "¿Dónde est"]:
        got, want = ours.encode_with_unstable(text, allowed_special="all"), theirs.encode_with_unstable(text, allowed_special="all")
        assert got[0] == want[0] and {tuple(c) for c in got[1]} == {tuple(c) for c in want[1]}
    with pytest.raises(ValueError, match="endoftext"):
        ours.encode_with_unstable("hi <|endoftext|>")
    assert ours.encode_with_unstable("hi <|endoftext|>", disallowed_special=())[0] == \
        theirs.encode_with_unstable("hi <|endoftext|>", disallowed_special=())[0]


def _harmony_oracle() -> "tiktoken.Encoding":
    base = tiktoken_encoding("o200k_base")
    specials = {**base._special_tokens, "<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|reserved_200000|>": 200000,
                "<|reserved_200001|>": 200001, "<|return|>": 200002, "<|constrain|>": 200003,
                "<|reserved_200004|>": 200004, "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007,
                "<|message|>": 200008, "<|reserved_200009|>": 200009, "<|reserved_200010|>": 200010,
                "<|reserved_200011|>": 200011, "<|call|>": 200012} | {f"<|reserved_{i}|>": i for i in range(200013, 201088)}
    return tiktoken.Encoding("o200k_harmony", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                             special_tokens=specials)


def test_o200k_harmony_is_tiktokens(backend):
    ours, theirs = bpe.get_encoding("o200k_harmony"), _harmony_oracle()
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert (ours.n_vocab, ours.max_token_value) == (theirs.n_vocab, theirs.max_token_value) == (201088, 201087)
    text = ("<|start|>system<|message|>You are helpful.<|end|><|start|>user<|message|>¿Qué hora es?<|end|>"
            "<|start|>assistant<|channel|>final<|message|>Son las 3.<|return|> <|endofprompt|><|reserved_200018|>"
            "<|reserved_201087|><|call|><|constrain|>")
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    for name in ("<|endofprompt|>", "<|reserved_200018|>"):  # two names, one id
        assert ours.encode_single_token(name) == theirs.encode_single_token(name) == 200018
    with pytest.raises(ValueError, match="return"):
        ours.encode("<|return|>")
    # (tiktoken decodes 200018 as either name, by its hash map's order; bpe as the first given)
    assert ours.decode([200018, 200006]) == "<|endofprompt|><|start|>"
    assert ours.decode(ours.encode(text, allowed_special="all")) == text.replace("<|reserved_200018|>", "<|endofprompt|>")


def test_encoding_constructor_and_the_extension_recipe(backend):
    base = bpe.get_encoding("cl100k_base")
    assert isinstance(base, bpe.Encoding) and isinstance(base, bpe.Tokenizer)
    enc = bpe.Encoding(name="cl100k_im", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                       special_tokens={**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265})
    oracle = tiktoken.Encoding(name="cl100k_im", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                               special_tokens={**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265})
    text = "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n"
    assert enc.encode(text, allowed_special="all") == oracle.encode(text, allowed_special="all")
    assert (enc.name, enc.n_vocab, enc.max_token_value, enc.eot_token) == \
        (oracle.name, oracle.n_vocab, oracle.max_token_value, oracle.eot_token)
    assert repr(enc).startswith("<bpe.Encoding 'cl100k_im'")
    # what tiktoken asserts, bpe says
    with pytest.raises(ValueError, match="explicit_n_vocab=300"):
        bpe.Encoding("x", pat_str=base._pat_str, mergeable_ranks={bytes([i]): i for i in range(256)},
                     special_tokens={"<|e|>": 256}, explicit_n_vocab=300)
    small = bpe.Encoding("x", pat_str=base._pat_str, mergeable_ranks={bytes([i]): i for i in range(256)},
                         special_tokens={"<|e|>": 256}, explicit_n_vocab=257)
    assert small.n_vocab == 257 and isinstance(bpe.Encoding.train(["ab ab ab"], 260), bpe.Encoding)
    with pytest.raises(KeyError, match="endoftext"):  # tiktoken raises KeyError without one
        small.eot_token
    with pytest.raises(TypeError, match="pat_str"):
        bpe.Encoding("x", pat_str=None, mergeable_ranks=base._mergeable_ranks, special_tokens={})


def test_register_encoding(backend):
    base = bpe.get_encoding("r50k_base")
    calls = []

    def make():
        calls.append(1)
        return {"name": "r50k_extra", "pat_str": base._pat_str, "mergeable_ranks": base._mergeable_ranks,
                "special_tokens": {**base._special_tokens, "<|pad|>": 50257}}

    bpe.register_encoding("r50k_extra", make, replace=True)
    try:
        enc = bpe.get_encoding("r50k_extra")
        assert enc is bpe.get_encoding("r50k_extra") and len(calls) == 1  # built once per backend
        assert enc.encode("hi<|pad|>", allowed_special="all") == [5303, 50257]
        assert "r50k_extra" in bpe.list_encodings()
        with pytest.raises(ValueError, match="replace=True"):
            bpe.register_encoding("r50k_extra", make)
        bpe.register_encoding("r50k_extra", lambda: base, replace=True)  # a Tokenizer works too
        assert bpe.get_encoding("r50k_extra") is base
        with pytest.raises(ValueError, match="bundled"):
            bpe.register_encoding("cl100k_base", make)
        bpe.register_encoding("broken", lambda: 42, replace=True)
        with pytest.raises(TypeError, match="returned int"):
            bpe.get_encoding("broken")
    finally:
        bpe.registry._registered.pop("r50k_extra", None)
        bpe.registry._registered.pop("broken", None)
        bpe.registry._cache.clear()


_PLUGIN = '''
from bpe.registry import get_encoding
def _mine():
    base = get_encoding("r50k_base")
    return {"name": "plugged", "pat_str": base._pat_str, "mergeable_ranks": base._mergeable_ranks,
            "special_tokens": {"<|endoftext|>": 50256, "<|sep|>": 50257}}
ENCODING_CONSTRUCTORS = {"plugged": _mine, "cl100k_base": None}
'''

_PROGRAM = '''
import bpe as tiktoken

enc = tiktoken.get_encoding("cl100k_base")
assert enc.decode(enc.encode("hello world")) == "hello world"
enc = tiktoken.encoding_for_model("gpt-4o")
print(enc.name, enc.encode("hello world"), len(enc.encode("tiktoken is great!")))
cl100k_base = tiktoken.get_encoding("cl100k_base")
enc = tiktoken.Encoding(
    name="cl100k_im",
    pat_str=cl100k_base._pat_str,
    mergeable_ranks=cl100k_base._mergeable_ranks,
    special_tokens={**cl100k_base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
)
print(enc.encode("<|im_start|>hi<|im_end|>", allowed_special="all"))
print(tiktoken.get_encoding("plugged").encode("a<|sep|>", allowed_special={"<|sep|>"}))
print(sorted(tiktoken.list_encoding_names()))
'''


def test_a_tiktoken_program_runs_unchanged_with_a_plugin(tmp_path):
    """The usage tiktoken documents, with ``import bpe as tiktoken`` and a tiktoken plugin
    (a ``tiktoken_ext`` namespace module) on the path: same output as tiktoken's own run."""
    import subprocess
    import sys
    import os
    (tmp_path / "tiktoken_ext").mkdir()
    (tmp_path / "tiktoken_ext" / "bpe_test_plugin.py").write_text(_PLUGIN)
    (tmp_path / "prog.py").write_text(_PROGRAM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    o200k, cl100k, r50k = (tiktoken_encoding(n) for n in ("o200k_base", "cl100k_base", "r50k_base"))
    assert lines[0] == f"o200k_base {o200k.encode('hello world')} {len(o200k.encode('tiktoken is great!'))}"
    im = tiktoken.Encoding(name="cl100k_im", pat_str=cl100k._pat_str, mergeable_ranks=cl100k._mergeable_ranks,
                           special_tokens={**cl100k._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265})
    assert lines[1] == str(im.encode("<|im_start|>hi<|im_end|>", allowed_special="all"))
    assert lines[2] == str(r50k.encode("a") + [50257])
    assert "plugged" in lines[3] and "o200k_harmony" in lines[3]


@pytest.mark.parametrize("far", [100264, 2 ** 31 - 1, 2 ** 32 - 1])
def test_sparse_special_ids_are_tiktokens(backend, far, tmp_path):
    """Special ids far above the vocabulary (tiktoken takes any 32-bit id): no table sized by
    them (2**32 - 1 builds at once), the same ids as tiktoken in every call, and numbers that
    are only used inside the core are not tokens outside."""
    import pickle
    base = tiktoken_encoding("r50k_base")
    specials = {**base._special_tokens, "<|im_start|>": far, "<|im_end|>": far - 7, "<|near|>": 50300}
    ours = bpe.Encoding("sparse", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks, special_tokens=specials)
    theirs = tiktoken.Encoding("sparse", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                               special_tokens=specials)
    text = "<|im_start|>user\nhi there<|im_end|><|near|> <|endoftext|><|im_start|>"
    want = theirs.encode(text, allowed_special="all")
    assert ours.encode(text, allowed_special="all") == want
    assert (ours.n_vocab, ours.max_token_value) == (theirs.n_vocab, theirs.max_token_value)
    assert ours.decode(want) == theirs.decode(want) == text
    assert ours.decode_single_token_bytes(far) == b"<|im_start|>" and ours.is_special_token(far)
    assert ours.encode_batch([text, "x"], allowed_special="all", num_threads=2) == [want, theirs.encode("x")]
    e = ours.encode_with_offsets(text, allowed_special="all")
    assert e.ids == want and e.tokens[0] == "<|im_start|>" and e.offsets[0] == (0, 12)
    assert ours.encode_to_numpy(text, allowed_special="all").tolist() == want
    assert ours.encode_single_token("<|im_end|>") == far - 7
    assert pickle.loads(pickle.dumps(ours)).encode(text, allowed_special="all") == want
    ours.save(tmp_path / "sparse.bpe")
    assert bpe.Tokenizer.load(tmp_path / "sparse.bpe").encode(text, allowed_special="all") == want
    for unknown in [50301, 50302, far - 1, far + 1 if far + 1 < 2 ** 32 else 50257]:
        with pytest.raises(KeyError, match=str(unknown)):
            ours.decode([unknown])
        with pytest.raises(KeyError):
            ours.decode_single_token_bytes(unknown)


def test_load_tiktoken_bpe_checks_the_hash(tmp_path):
    import hashlib
    import tiktoken.load
    ranks = bpe.get_encoding("r50k_base").mergeable_ranks
    data = bpe.tiktoken_files.dump_tiktoken_ranks(ranks)
    path = tmp_path / "r50k.tiktoken"
    path.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    assert bpe.tiktoken_files.load_tiktoken_bpe(path, digest) == tiktoken.load.load_tiktoken_bpe(str(path), digest) == ranks
    with pytest.raises(bpe.TokenizerFileError, match="SHA-256"):
        bpe.tiktoken_files.load_tiktoken_bpe(path, "0" * 64)


def test_every_name_and_argument_of_tiktoken_encoding_exists():
    """Every attribute of tiktoken.Encoding (dunder methods aside) exists on bpe.Encoding, and
    each call takes the same parameters, by name and kind, in the same order (bpe may add
    keyword arguments with defaults after them); the module's public names too."""
    import inspect
    for name in [n for n in dir(tiktoken.Encoding) if not n.startswith("__")] + ["name", "max_token_value"]:
        ours = getattr(bpe.Encoding, name, None) if name not in ("name", "max_token_value") else \
            getattr(bpe.get_encoding("r50k_base"), name)
        assert ours is not None, name
        theirs = getattr(tiktoken.Encoding, name, None)
        if not callable(theirs) or isinstance(theirs, type):
            continue
        want = [(p.name, p.kind) for p in inspect.signature(theirs).parameters.values()]
        got = list(inspect.signature(ours).parameters.values())
        assert [(p.name, p.kind) for p in got[:len(want)]] == want, name
        assert all(p.default is not inspect.Parameter.empty for p in got[len(want):]), name
    for name in ("Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names"):
        assert callable(getattr(bpe, name)), name
