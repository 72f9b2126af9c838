"""Id-for-id identity with tiktoken on the shared corpora (about 10 MB of text).

Cython backend: every corpus file, whole.  Python backend (slow by design): the first
100,000 characters of each file, cut at a line end.  The token counts are also checked
against the README's table, which was made with tiktoken 0.14.0 itself, so a wrong oracle
(wrong pattern, wrong rank file) fails here too.  Run with ``-s`` to see the summary lines.
"""

from __future__ import annotations

import pytest

import bpe

ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
CORPORA = ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt",
           "code_python.txt", "code_c.txt", "code_js.txt"]
PY_SAMPLE_CHARS = 100_000


def _diff(ours: list[int], theirs: list[int]) -> tuple[int, int]:
    """(number of mismatched positions, first mismatch index or -1)."""
    bad = sum(1 for a, b in zip(ours, theirs) if a != b) + abs(len(ours) - len(theirs))
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), -1)
    if first < 0 and len(ours) != len(theirs):
        first = min(len(ours), len(theirs))
    return bad, first


def _compare(name, backend, texts, oracle, readme=None):
    tok = bpe.get_encoding(name)
    assert tok.backend == backend
    enc = oracle(name)
    total, mismatches, problems = 0, 0, []
    for corpus_name, text in texts:
        ours = tok.encode_ordinary(text)
        theirs = enc.encode_ordinary(text)
        bad, first = _diff(ours, theirs)
        total += len(theirs)
        mismatches += bad
        if bad:
            problems.append(f"{corpus_name}: {bad} mismatched ids, first at {first}: "
                            f"ours {ours[max(first - 2, 0):first + 3]} vs tiktoken {theirs[max(first - 2, 0):first + 3]}")
        if readme is not None:
            expected = readme.token_counts[corpus_name][name]
            if len(theirs) != expected:
                problems.append(f"{corpus_name}: tiktoken oracle gives {len(theirs)} tokens, README says {expected}")
            if len(ours) != expected:
                problems.append(f"{corpus_name}: bpe gives {len(ours)} tokens, README says {expected}")
        if tok.decode(ours) != text:
            problems.append(f"{corpus_name}: decode(encode_ordinary(text)) != text")
        if tok.decode_bytes(ours) != text.encode("utf-8"):
            problems.append(f"{corpus_name}: decode_bytes(encode_ordinary(text)) != text bytes")
    return total, mismatches, problems


@pytest.mark.parametrize("name", ENCODINGS)
def test_whole_corpora_identical_to_tiktoken_on_cython(name, cython_backend, corpus, oracle, readme):
    texts = [(c, corpus(c)) for c in CORPORA]
    total, mismatches, problems = _compare(name, "cython", texts, oracle, readme)
    print(f"\n[corpora identity] {name} cython: {total:,} tokens compared over {len(texts)} whole "
          f"corpora, {mismatches} mismatches")
    assert total == sum(readme.token_counts[c][name] for c in CORPORA)
    assert not problems, "\n".join(problems)
    assert mismatches == 0


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpus_samples_identical_to_tiktoken(name, backend, corpus, oracle, head_sample):
    """Both backends on the samples (the python backend's only corpus check)."""
    texts = [(c, head_sample(corpus(c), PY_SAMPLE_CHARS)) for c in CORPORA]
    for c, text in texts:
        assert text.endswith("\n") and len(text) <= PY_SAMPLE_CHARS and len(text) > PY_SAMPLE_CHARS - 2000, c
    total, mismatches, problems = _compare(name, backend, texts, oracle)
    print(f"\n[corpora identity] {name} {backend}: {total:,} tokens compared over {len(texts)} "
          f"samples of {PY_SAMPLE_CHARS:,} chars, {mismatches} mismatches")
    assert total > 0
    assert not problems, "\n".join(problems)
    assert mismatches == 0


@pytest.mark.parametrize("name", ENCODINGS)
def test_encode_with_endoftext_between_corpus_chunks(name, backend, corpus, oracle, head_sample):
    tok = bpe.get_encoding(name)
    assert tok.backend == backend
    enc = oracle(name)
    eot = enc.eot_token
    total = 0
    texts, expected_all = [], []
    for first, second in zip(CORPORA, CORPORA[1:] + CORPORA[:1]):
        a = head_sample(corpus(first), 12_000)
        b_text = corpus(second)
        b = head_sample(b_text[len(b_text) // 2:], 12_000)
        for text in (a + "<|endoftext|>" + b, a.rstrip("\n") + "<|endoftext|>" + b + "<|endoftext|>"):
            expected = enc.encode(text, allowed_special="all")
            assert expected.count(eot) == text.count("<|endoftext|>")
            ids = tok.encode(text, allowed_special="all")
            assert ids == expected, (first, second, _diff(ids, expected))
            assert tok.decode(ids) == text
            total += len(ids)
            texts.append(text)
            expected_all.append(expected)
    # the batch finds the special tokens on its threads: same ids, and the same refusal
    assert tok.encode_batch(texts, num_threads=2, allowed_special="all") == expected_all
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        tok.encode_batch(texts, num_threads=2)
    print(f"\n[corpora identity] {name} {backend}: encode(allowed_special='all') on "
          f"{len(CORPORA) * 2} chunk pairs joined by <|endoftext|>: {total:,} tokens, 0 mismatches")


@pytest.mark.parametrize("name", ENCODINGS)
def test_whole_corpora_with_backtracking_everywhere(name, cython_backend, corpus, oracle, readme):
    """The backtracking encoder normally takes only pieces over 256 bytes; here it takes every
    piece that is not a token, over the whole corpora."""
    tok = bpe.get_encoding(name)
    old = tok._core._set_backtrack_min_bytes(0)
    try:
        total, mismatches, problems = _compare(name, "cython", [(c, corpus(c)) for c in CORPORA], oracle, readme)
    finally:
        tok._core._set_backtrack_min_bytes(old)
    print(f"\n[corpora identity] {name} cython, backtracking on every piece: {total:,} tokens, "
          f"{mismatches} mismatches")
    assert not problems, "\n".join(problems)
    assert mismatches == 0


@pytest.mark.parametrize("name", ENCODINGS)
def test_whole_corpora_as_single_pieces(name, cython_backend, corpus, oracle):
    """pattern=None: each ~8 KB chunk is one piece, far past the backtracking threshold; the
    merge loop (threshold off) is the reference."""
    ranks = bpe.get_encoding(name).mergeable_ranks
    whole = bpe.Tokenizer(ranks, pattern=None)
    chunks = [text[i:i + 8000] for c in CORPORA[::2] for text in [corpus(c)[:200_000]]
              for i in range(0, len(text), 8000)]
    backtracked = [whole.encode_ordinary(c) for c in chunks]
    whole._core._set_backtrack_min_bytes(-1)
    merged = [whole.encode_ordinary(c) for c in chunks]
    bad = sum(a != b for a, b in zip(backtracked, merged))
    print(f"\n[whole-chunk identity] {name}: {len(chunks)} chunks of 8,000 characters, {bad} differ")
    assert bad == 0


def _fresh_encoder_on_all_corpora(name, corpus, oracle, setting):
    """A fresh encoder of ``name`` with one test hook set (``setting(core)``) encodes every
    corpus whole; each must give tiktoken's ids.  Returns the encoder and the tokens compared."""
    tok = bpe.Tokenizer(bpe.get_encoding(name).mergeable_ranks, pattern=name)
    setting(tok._core)
    enc = oracle(name)
    total = 0
    for c in CORPORA:
        text = corpus(c)
        theirs = enc.encode_ordinary(text)
        bad, first = _diff(tok.encode_ordinary(text), theirs)
        assert bad == 0, f"{c}: {bad} mismatched ids, first at {first}"
        total += len(theirs)
    return tok, total


@pytest.mark.parametrize("name", ENCODINGS)
def test_whole_corpora_from_bytes_only_on_cython(name, cython_backend, corpus, oracle):
    """The same with whole-character units off (every piece merged from its bytes), so that
    both starting points of the merge loop are checked against tiktoken on everything."""
    def bytes_only(core):
        assert core._set_char_units(False) is True

    _, total = _fresh_encoder_on_all_corpora(name, corpus, oracle, bytes_only)
    print(f"\n[corpora identity] {name} cython, bytes only: {total:,} tokens compared, 0 mismatches")


@pytest.mark.parametrize("name", ENCODINGS)
def test_whole_corpora_without_pair_signatures_on_cython(name, cython_backend, corpus, oracle):
    """The same with the pair signatures off (every pair of parts looked up), so that the merge
    loop is checked against tiktoken on everything with and without them."""
    def every_pair_looked_up(core):
        assert core._set_signatures(False) is True

    tok, total = _fresh_encoder_on_all_corpora(name, corpus, oracle, every_pair_looked_up)
    assert tok._core._signatures_state() == "ready"     # built, but turned off
    print(f"\n[corpora identity] {name} cython, no pair signatures: {total:,} tokens compared, 0 mismatches")
