"""llama.cpp's GPT-2 tokenizer test vectors (``ggml-vocab-gpt-2.gguf.{inp,out}``).

llama.cpp's generator (convert_hf_to_gguf_update.py) writes every test text followed by
``"\\n__ggml_vocab_test__\\n"`` and one ``.out`` line (`` id id ...``) per text.  Splitting the
``.inp`` on the separator therefore leaves one empty piece after the last separator, and the
``.out`` text split on ``"\\n"`` one empty string after the last newline.  The shared README
counts that empty pair as a 47th vector; the files hold 46 real ones (the 46 strings of
llama.cpp's test list).  Both are checked here, so the count is pinned either way.
"""

from __future__ import annotations

import pytest

import bpe

SEP = "\n__ggml_vocab_test__\n"


@pytest.fixture(scope="module")
def vectors(shared):
    folder = shared / "llamacpp_vocab_tests"
    inp = (folder / "ggml-vocab-gpt-2.gguf.inp").read_text(encoding="utf-8")
    out = (folder / "ggml-vocab-gpt-2.gguf.out").read_text(encoding="utf-8")
    pieces = inp.split(SEP)
    lines = out.split("\n")
    # the README's recipe: 47 pieces, the last one with a trailing separator removed
    assert len(pieces) == len(lines) == 47
    last = pieces[-1]
    if last.endswith("\n__ggml_vocab_test__"):
        last = last[: -len("\n__ggml_vocab_test__")]
    assert last == "" and lines[-1] == ""  # the 47th pair is the empty tail of both files
    texts, expected = pieces[:-1], [[int(x) for x in line.split()] for line in lines[:-1]]
    assert inp.count("__ggml_vocab_test__") == len(texts) == len(expected) == 46
    return list(zip(texts, expected))


def test_vector_files_look_right(vectors):
    texts = [t for t, _ in vectors]
    assert texts[0] == "ied 4 ½ months" and texts[2] == "" and texts[-2] == " discards"
    assert "" in texts and " " in texts and "\t" in texts and "\n\n" in texts
    assert vectors[2][1] == [] and vectors[3][1] == [220]


def test_all_llamacpp_gpt2_vectors(vectors, backend, oracle):
    tok = bpe.get_encoding("gpt2")
    assert tok.backend == backend
    enc = oracle("gpt2")
    failures = []
    for i, (text, expected) in enumerate(vectors):
        assert enc.encode_ordinary(text) == expected, f"oracle disagrees with llama.cpp on #{i} {text!r}"
        ids = tok.encode_ordinary(text)
        if ids != expected:
            failures.append(f"#{i} {text[:40]!r}: got {ids}, llama.cpp expects {expected}")
        elif tok.decode(ids) != text:
            failures.append(f"#{i} {text[:40]!r}: decode does not give the text back")
    # the README's 47th (empty) vector
    assert tok.encode_ordinary("") == []
    assert not failures, "\n".join(failures)
    assert len(vectors) == 46
