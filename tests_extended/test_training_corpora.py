"""Training on the shared corpora: backend agreement, determinism, the greedy property, and a
full-size 32k run over all seven corpora (about 10 MB), streamed.

Run with ``-s`` to see the wall time of the 32k run (reported, never asserted).
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
import tiktoken

import bpe
from bpe import _backend, patterns, training
from greedy import assert_greedy

CORPORA = ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt",
           "code_python.txt", "code_c.txt", "code_js.txt"]


# ---------------------------------------------------------------- samples


def head_bytes(text: str, n_bytes: int) -> str:
    """Whole lines from the start of ``text`` while they fit in ``n_bytes`` UTF-8 bytes."""
    out, size = [], 0
    for line in text.splitlines(keepends=True):
        n = len(line.encode("utf-8"))
        if size + n > n_bytes:
            break
        out.append(line)
        size += n
    return "".join(out)


def mixed_sample(corpus, scale: float) -> str:
    """Prose (en/es/pt) + code (Python/C/JS) + every block of the multilingual file
    (zh, ja, ko, ar, hi, ru, emoji); about ``200 KB * scale`` of UTF-8."""
    kb = lambda n: int(n * 1000 * scale)  # noqa: E731
    parts = [
        head_bytes(corpus("english.txt"), kb(45)),
        head_bytes(corpus("spanish.txt"), kb(25)),
        head_bytes(corpus("portuguese.txt"), kb(18)),
        head_bytes(corpus("code_python.txt"), kb(35)),
        head_bytes(corpus("code_c.txt"), kb(20)),
        head_bytes(corpus("code_js.txt"), kb(20)),
    ]
    blocks = corpus("multilingual.txt").split("\n\n")
    assert len(blocks) == 7
    parts += [head_bytes(block + "\n", kb(37) // 7) + "\n" for block in blocks]
    return "\n".join(parts)


def paragraphs_of(text: str) -> list[str]:
    """Split into paragraphs, each ending with its blank line; they join back to ``text``."""
    return list(_paragraphs(text.splitlines(keepends=True)))


def _paragraphs(lines):
    buf = []
    for line in lines:
        buf.append(line)
        if line == "\n":
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)


def stream_paragraphs(shared, names, stats):
    """A generator over the paragraphs of the corpus files, read line by line."""
    for name in names:
        with open(shared / "corpora" / name, encoding="utf-8", newline="") as f:
            for paragraph in _paragraphs(f):
                stats["paragraphs"] += 1
                stats["chars"] += len(paragraph)
                yield paragraph


@pytest.fixture(scope="module")
def sample_200k(corpus):
    text = mixed_sample(corpus, 1.0)
    size = len(text.encode("utf-8"))
    assert 190_000 <= size <= 210_000, size
    texts = paragraphs_of(text)
    assert "".join(texts) == text and len(texts) > 500
    return texts


def _train_on(backend_name: str, texts, vocab_size: int) -> bpe.Tokenizer:
    before = _backend.active().name
    _backend.use(backend_name)
    try:
        tok = bpe.Tokenizer.train(texts, vocab_size)
    finally:
        _backend.use(before)
    assert tok.backend == backend_name
    return tok


# ---------------------------------------------------------------- (a) backends agree


def test_backends_train_identical_merges_on_200kb_mixed_sample(sample_200k, cython_backend):
    fast = _train_on("cython", sample_200k, 1000)
    slow = _train_on("python", sample_200k, 1000)
    assert fast.n_vocab == slow.n_vocab == 1000
    assert len(fast.merges) >= 1000 - 256
    assert fast.merges == slow.merges
    assert fast.mergeable_ranks == slow.mergeable_ranks
    text = "".join(sample_200k[::7])
    ids = fast.encode_ordinary(text)
    assert ids == slow.encode_ordinary(text)
    assert fast.decode(ids) == text
    # the sample really is mixed: prose, code and several scripts all got learned tokens
    learned = [t.decode("utf-8", "replace") for t, r in fast.mergeable_ranks.items() if r >= 256]
    assert " the" in learned and " que" in learned and "self" in learned
    for lo, hi in [("\u0400", "\u04ff"), ("\u0600", "\u06ff"), ("\u0900", "\u097f"), ("\uac00", "\ud7a3")]:
        assert any(lo <= ch <= hi for s in learned for ch in s), (lo, hi)


# ---------------------------------------------------------------- (b) determinism


def test_training_twice_gives_identical_results(sample_200k, cython_backend):
    a = bpe.Tokenizer.train(sample_200k, 1000)
    b = bpe.Tokenizer.train(iter(sample_200k), 1000)
    c = bpe.Tokenizer.train(list(reversed(sample_200k)), 1000)
    assert a.merges == b.merges == c.merges
    assert a.mergeable_ranks == b.mergeable_ranks == c.mergeable_ranks
    text = "".join(sample_200k[:200])
    assert a.encode_ordinary(text) == b.encode_ordinary(text) == c.encode_ordinary(text)


def test_training_twice_gives_identical_results_small_sample(corpus, backend):
    texts = paragraphs_of(mixed_sample(corpus, 0.2))
    a = bpe.Tokenizer.train(texts, 500)
    b = bpe.Tokenizer.train(iter(texts), 500)
    assert a.backend == b.backend == backend
    assert a.n_vocab == 500
    assert a.merges == b.merges
    assert a.mergeable_ranks == b.mergeable_ranks


# ---------------------------------------------------------------- (c) greedy property


def test_greedy_property_against_a_recount_on_60kb_sample(corpus, backend):
    """Each merge is a most frequent pair at its step, recounted from scratch here (pairs
    overlap-counted, weighted by pre-token count), ties to the smallest (left id, right id)."""
    text = mixed_sample(corpus, 0.3)
    size = len(text.encode("utf-8"))
    assert 55_000 <= size <= 65_000, size
    texts = paragraphs_of(text)
    counts = training.count_pretokens(texts, patterns.NAMED_PATTERNS["o200k_base"])
    words = sorted(counts)
    cnts = [counts[w] for w in words]
    merges = _backend.active().train_merges(words, cnts, 150, 1)
    new_ids = [c for _, _, c in merges if c >= 256]
    assert len(set(new_ids)) == 150
    id_bytes = assert_greedy(words, cnts, merges)
    # the public API learns the same merges from the same texts
    tok = bpe.Tokenizer.train(texts, 256 + 150, min_frequency=1)
    assert tok.merges == [(id_bytes[a], id_bytes[b]) for a, b, _ in merges]


# ---------------------------------------------------------------- (d) 32k on all corpora


def test_train_32k_on_all_corpora_streamed(shared, corpus, cython_backend):
    stats = Counter()
    start = time.perf_counter()
    tok = bpe.Tokenizer.train(stream_paragraphs(shared, CORPORA, stats), 32_768)
    elapsed = time.perf_counter() - start
    total_chars = sum(len(corpus(name)) for name in CORPORA)
    print(f"\n[training] 32,768 vocab on all {len(CORPORA)} corpora ({total_chars:,} chars, "
          f"{stats['paragraphs']:,} paragraphs streamed), cython backend: {elapsed:.2f} s wall")
    assert stats["chars"] == total_chars  # the generator was read to the end, once
    assert tok.backend == "cython"
    assert tok.n_vocab == 32_768
    ranks = tok.mergeable_ranks
    assert len(ranks) == 32_768 and sorted(ranks.values()) == list(range(32_768))
    merges = tok.merges
    assert len(merges) >= 32_768 - 256
    assert all(left + right in ranks for left, right in merges)

    # round trip on every corpus, and the same ids as tiktoken running the learned ranks
    oracle = tiktoken.Encoding(name="trained-32k", pat_str=tok.pattern, mergeable_ranks=ranks,
                               special_tokens={})
    for name in CORPORA:
        text = corpus(name)
        ids = tok.encode(text)
        assert tok.decode(ids) == text, name
        assert ids == oracle.encode_ordinary(text), name
        assert len(ids) < len(text.encode("utf-8")) / 2, name  # it learned something
