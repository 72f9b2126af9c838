"""tiktoken's calls beyond encode on the shared corpora, against tiktoken built from the shared
rank files: the p50k_edit and o200k_harmony encodings (every corpus, whole, with every special
token allowed), ``encode_bytes`` on byte slices cut at arbitrary offsets (so most start and end
inside a character) and ``encode_with_unstable`` on prompts cut at arbitrary characters.
Run with ``-s`` for the counts."""

from __future__ import annotations

import random

import pytest
import tiktoken

import bpe


CORPORA = ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt",
           "code_python.txt", "code_c.txt", "code_js.txt"]


def _oracle_of(tok: bpe.Tokenizer, oracle) -> tiktoken.Encoding:
    """tiktoken with the shared rank file of ``tok``'s ranks and ``tok``'s special tokens."""
    base = oracle("p50k_base" if tok.name == "p50k_edit" else "o200k_base")
    return tiktoken.Encoding(name=f"oracle-{tok.name}", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                             special_tokens=dict(tok.special_tokens))


@pytest.mark.parametrize("name", ["p50k_edit", "o200k_harmony"])
def test_new_encodings_on_every_corpus(name, cython_backend, corpus, oracle, monkeypatch):
    tok = bpe.get_encoding(name)
    theirs = _oracle_of(tok, oracle)
    # the special tokens are tiktoken's own table (its plugin's constructor, with the rank file
    # it would download left out)
    from tiktoken_ext import openai_public
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    assert tok.special_tokens == getattr(openai_public, name)()["special_tokens"]
    total = 0
    for c in CORPORA:
        text = corpus(c)
        # every special token of the encoding inside the text, once
        text = text[:5000] + "".join(sorted(tok.special_tokens_set)) + text[5000:]
        want = theirs.encode(text, allowed_special="all")
        assert tok.encode(text, allowed_special="all") == want, c
        assert tok.encode_ordinary(text) == theirs.encode_ordinary(text), c
        total += len(want)
    print(f"\n[tiktoken calls] {name}: {total:,} ids over {len(CORPORA)} whole corpora, 0 differ")


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_encode_bytes_on_slices_cut_anywhere(name, backend, corpus, oracle):
    tok, theirs = bpe.get_encoding(name), oracle(name)
    rng = random.Random(name)
    per_corpus = 40 if backend == "cython" else 6
    checked = cut = 0
    for c in CORPORA:
        data = corpus(c).encode("utf-8")
        for _ in range(per_corpus):
            start = rng.randrange(len(data) - 5000)
            piece = data[start:start + rng.randrange(1, 4096)]
            if rng.random() < 0.3:  # a stray byte that is never UTF-8 inside
                at = rng.randrange(len(piece))
                piece = piece[:at] + b"\xff" + piece[at:]
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError:
                cut += 1
            ids = tok.encode_bytes(piece)
            assert ids == theirs._encode_bytes(piece), (c, start)
            assert tok.decode_bytes(ids) == piece
            checked += 1
    print(f"\n[tiktoken calls] encode_bytes {name} {backend}: {checked} slices ({cut} not valid UTF-8), 0 differ")
    assert cut > checked // 4  # (the English and code corpora are mostly ASCII: cuts there stay valid)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encode_with_unstable_on_prompts_cut_anywhere(name, cython_backend, corpus, oracle):
    tok, theirs = bpe.get_encoding(name), oracle(name)
    rng = random.Random(name)
    checked = completions = 0
    for c in CORPORA:
        text = corpus(c)
        for _ in range(6):
            start = rng.randrange(len(text) - 400)
            prompt = text[start:start + rng.randrange(1, 300)]
            stable, found = tok.encode_with_unstable(prompt)
            want_stable, want = theirs.encode_with_unstable(prompt)
            assert stable == want_stable, (c, prompt[-40:])
            assert {tuple(x) for x in found} == {tuple(x) for x in want}, (c, prompt[-40:])
            checked += 1
            completions += len(found)
    print(f"\n[tiktoken calls] encode_with_unstable {name}: {checked} prompts, {completions:,} completions, 0 differ")
