"""Training: determinism, the greedy property, backend agreement, vocabulary accounting."""

import itertools
from collections import Counter

import pytest

import bpe
from bpe import _backend, _reference, patterns, training
from conftest import read_text
from greedy import assert_greedy


def test_greedy_property_against_a_recount(backend):
    """Each merge is a most frequent pair at its step (recounted from scratch here),
    and ties go to the smallest (left id, right id)."""
    text = read_text("austen.txt")
    counts = training.count_pretokens([text], patterns.NAMED_PATTERNS["o200k_base"])
    words = sorted(counts)
    cnts = [counts[w] for w in words]
    merges = _backend.active().train_merges(words, cnts, 300, 1)
    assert len({c for _, _, c in merges if c >= 256}) == 300
    assert_greedy(words, cnts, merges)


def test_backends_agree_on_merges():
    text = read_text("mixed.txt") + read_text("austen.txt")[:8000]
    for pattern in ("o200k_base", "gpt2", None):
        _, src = patterns.resolve(pattern)
        counts = training.count_pretokens(text.split("\n\n"), src)
        words = sorted(counts)
        cnts = [counts[w] for w in words]
        ref = _reference.train_merges(words, cnts, 200, 1)
        if _backend.COMPILED is not None:
            assert _backend.COMPILED.train_merges(words, cnts, 200, 1) == ref


def test_overlapping_and_duplicate_spellings():
    # "aaaa"-style runs (overlapping pairs) and pairs that spell an existing token
    words = [b"aaaaaaa", b"abababab", b"aaab", b"xyzxyzxyz", b"abcabc", b"bcbca"]
    counts = [3, 2, 5, 1, 4, 2]
    ref = _reference.train_merges(words, counts, 40, 1)
    assert ref[0] == (97, 97, 256)  # ("a", "a"): 6 x 3 + 2 x 5 = 28 overlapping occurrences
    if _backend.COMPILED is not None:
        assert _backend.COMPILED.train_merges(words, counts, 40, 1) == ref


def test_deterministic_and_order_independent(backend):
    texts = read_text("austen.txt").split("\n\n")
    a = bpe.Tokenizer.train(texts, 600)
    b = bpe.Tokenizer.train(iter(texts), 600)
    c = bpe.Tokenizer.train(list(reversed(texts)), 600)
    assert a.merges == b.merges == c.merges
    assert a.mergeable_ranks == c.mergeable_ranks


def test_vocab_size_is_exact_and_specials_follow(backend):
    texts = read_text("austen.txt").split("\n\n")
    tok = bpe.Tokenizer.train(texts, 700, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert tok.n_vocab == 700
    assert tok.special_tokens == {"<|endoftext|>": 698, "<|pad|>": 699}
    assert len(tok.mergeable_ranks) == 698
    assert sorted(tok.mergeable_ranks.values()) == list(range(698))
    assert tok.eot_token == 698
    assert tok.encode("<|pad|>x", allowed_special="all")[0] == 699


def test_training_streams_its_input(backend):
    """The iterable is consumed once, lazily; texts are never joined."""
    consumed = []

    def gen():
        for i, para in enumerate(read_text("austen.txt").split("\n\n")):
            consumed.append(i)
            yield para

    tok = bpe.Tokenizer.train(gen(), 400)
    assert tok.n_vocab == 400
    assert consumed == list(range(len(consumed))) and len(consumed) > 50


def test_special_token_text_is_not_learned(backend):
    texts = ["<|sep|>hello<|sep|>"] * 50
    tok = bpe.Tokenizer.train(texts, 300, special_tokens=["<|sep|>"], min_frequency=1)
    assert all(b"<|" not in t for t in tok.mergeable_ranks)
    assert tok.encode("<|sep|>", allowed_special="all") == [tok.special_tokens["<|sep|>"]]


def test_min_frequency_stops_early(backend):
    tok = bpe.Tokenizer.train(["abc abd abe"], 1000, min_frequency=2)
    # only " a"+"b"... pairs seen at least twice are merged
    assert tok.n_vocab < 1000
    learned = [t for t in tok.mergeable_ranks if len(t) > 1]
    assert learned and all(len(t) <= 3 for t in learned)


def test_trained_tokenizer_round_trips_and_encodes_training_words(backend):
    text = read_text("mixed.txt")
    tok = bpe.Tokenizer.train([text], 512, pattern="cl100k_base", min_frequency=1)
    assert tok.decode(tok.encode_ordinary(text)) == text
    ids = tok.encode_ordinary(text)
    assert len(ids) < len(text.encode("utf-8"))


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k_base", "o200k_base", "llama3", "qwen2", None, r"\w+|\s+"])
def test_patterns_in_training(backend, pattern):
    text = read_text("mixed.txt")
    tok = bpe.Tokenizer.train([text], 300, pattern=pattern, min_frequency=1)
    assert tok.decode(tok.encode_ordinary(text)) == text
    assert tok.n_vocab == 300


def test_normalization_applies_to_training_and_encoding(backend):
    tok = bpe.Tokenizer.train(["e\u0301" * 20], 260, normalization="NFC", min_frequency=1)
    assert tok.normalization == "NFC"
    assert tok.decode(tok.encode("e\u0301")) == "\u00e9"


def test_single_string_is_one_text(backend):
    tok = bpe.Tokenizer.train("hello hello hello", 260, min_frequency=1)
    assert tok.encode("hello") == tok.encode_ordinary("hello")
    assert len(tok.encode(" hello")) < 6


def test_merges_rebuild_the_vocabulary(backend):
    tok = bpe.Tokenizer.train(read_text("austen.txt").split("\n\n"), 500)
    built = {bytes([b]) for b in range(256)} | {a + b for a, b in tok.merges}
    assert built == set(tok.mergeable_ranks)
    firsts = list(itertools.islice(tok.merges, 3))
    assert all(isinstance(a, bytes) and isinstance(b, bytes) for a, b in firsts)


@pytest.mark.parametrize("pattern", ["o200k_base", "cl100k_base", None, r"\w+|\W+"])
def test_counts_from_shards_add_up_and_train_the_same(backend, pattern):
    paragraphs = read_text("austen.txt").split("\n\n") + read_text("mixed.txt").split("\n\n")
    whole = bpe.count_pretokens(paragraphs, pattern=pattern)
    shards = [bpe.count_pretokens(paragraphs[k::3], pattern=pattern) for k in range(3)]
    assert shards[0] + shards[1] + shards[2] == whole
    assert all(isinstance(k, bytes) for k in whole)
    direct = bpe.Tokenizer.train(paragraphs, 500, pattern=pattern, special_tokens=["<|s|>"])
    from_counts = bpe.Tokenizer.train_from_counts(sum(shards, Counter()), 500, pattern=pattern,
                                                  special_tokens=["<|s|>"])
    assert from_counts.merges == direct.merges
    assert from_counts.special_tokens == direct.special_tokens
    assert from_counts.pattern == direct.pattern


def test_counting_agrees_across_backends_and_splitters():
    """The compiled counter (scanner in C), the pure scanner and the regex path count alike."""
    text = read_text("mixed.txt") + "a\ud800b"
    before = _backend.active().name
    results = {}
    try:
        for name in ("python", "cython") if _backend.COMPILED is not None else ("python",):
            _backend.use(name)
            results[name] = bpe.count_pretokens([text, text[::-1]], pattern="o200k_base", special_tokens=["<|endoftext|>"])
    finally:
        _backend.use(before)
    assert len(set(map(lambda c: tuple(sorted(c.items())), results.values()))) == 1
    assert b"<|endoftext|>" not in results["python"]


def test_train_from_counts_rejects_bad_tables(backend):
    with pytest.raises(TypeError, match="count_pretokens"):
        bpe.Tokenizer.train_from_counts({"str": 3}, 300)
    with pytest.raises(bpe.TrainingError, match="count_pretokens"):
        bpe.Tokenizer.train_from_counts({b"ab": -1}, 300)


def test_training_curve_matches_encoding(backend):
    """The curve's last point is the token count of the training text under the final
    vocabulary, which is what encoding that text gives (plain BPE: no second spellings)."""
    paragraphs = read_text("austen.txt").split("\n\n")
    tok = bpe.Tokenizer.train(paragraphs, 700)
    curve = tok.training_curve
    assert curve[0] == (256, sum(len(p.encode("utf-8")) for p in paragraphs))
    assert [n for n, _ in curve] == list(range(256, 701))
    assert all(t1 > t2 for (_, t1), (_, t2) in zip(curve, curve[1:]))
    assert curve[-1][1] == sum(tok.count(p) for p in paragraphs)
    # the same curve, to the point, as training a smaller vocabulary
    small = bpe.Tokenizer.train(paragraphs, 400)
    assert small.training_curve == curve[: 400 - 256 + 1]


def test_compression_helper(backend):
    enc = bpe.get_encoding("cl100k_base")
    texts = read_text("mixed.txt").splitlines()
    stats = bpe.compression(enc, texts)
    tokens = sum(len(enc.encode_ordinary(t)) for t in texts)
    assert stats["tokens"] == tokens and stats["texts"] == len(texts)
    assert stats["bytes_per_token"] == pytest.approx(sum(len(t.encode()) for t in texts) / tokens)
    assert stats["tokens_per_1000_chars"] == pytest.approx(1000 * tokens / sum(map(len, texts)))


@pytest.mark.parametrize("tie_break", ["ids", "hf"])
def test_tie_break_rules_agree_across_backends(tie_break):
    words = [b"ab", b"ba", b"\x00\x01", b"!#", b"\xff\xfe", b"cd", b"dc"]
    counts = [3, 3, 3, 3, 3, 3, 3]  # every pair ties
    ref = _reference.train_merges(words, counts, 6, 1, tie_break)
    if _backend.COMPILED is not None:
        assert _backend.COMPILED.train_merges(words, counts, 6, 1, tie_break) == ref
    firsts = [(a, b) for a, b, _ in ref]
    if tie_break == "ids":
        assert firsts[0] == (0, 1)  # smallest byte values first
    else:
        assert firsts[0] == (33, 35)  # '!' '#': HF numbers printable bytes before the rest


def test_train_new_keeps_pattern_normalization_and_specials(backend):
    base = bpe.Tokenizer.train(read_text("mixed.txt").split("\n\n"), 300, pattern=r"\w+|\W+",
                               special_tokens=["<|a|>", "<|b|>"], min_frequency=1, normalization="NFKC")
    fresh = base.train_new(read_text("austen.txt").split("\n\n"), 500)
    assert fresh.pattern == base.pattern and fresh.normalization == "NFKC"
    assert fresh.special_tokens == {"<|a|>": 498, "<|b|>": 499}
    assert fresh.n_vocab == 500 and fresh.merges != base.merges
    enc = bpe.get_encoding("o200k_base").train_new(read_text("austen.txt").split("\n\n"), 600)
    assert enc.pattern == bpe.get_encoding("o200k_base").pattern
    assert set(enc.special_tokens) == {"<|endoftext|>", "<|endofprompt|>"}


def test_train_from_files_counts_like_the_whole_text(backend, tmp_path):
    text = (read_text("austen.txt") + read_text("mixed.txt")) * 3
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    chunks = list(training.read_chunks(path, chunk_chars=2000))
    assert len(chunks) > 10 and "".join(chunks) == text
    for pattern in ("gpt2", "cl100k_base", "o200k_base", "llama3", "qwen2"):
        assert bpe.count_pretokens(chunks, pattern=pattern) == bpe.count_pretokens([text], pattern=pattern)
    tok = bpe.Tokenizer.train_from_files([path], 600)
    assert tok.merges == bpe.Tokenizer.train([text], 600).merges


def test_progress_goes_to_stderr_only_when_asked(backend, capsys):
    paragraphs = read_text("austen.txt").split("\n\n")
    bpe.Tokenizer.train(paragraphs, 300)
    assert capsys.readouterr().err == ""
    bpe.Tokenizer.train(paragraphs, 300, progress=True)
    err = capsys.readouterr().err
    assert "counted pre-tokens" in err and "learned merges" in err and "44/44" in err


def test_counting_files_shows_bytes_read_and_an_eta(backend, tmp_path, monkeypatch, capsys):
    """train_from_files knows how many bytes its files hold, so its counting line is a bar
    over bytes with an ETA (texts from an iterable show characters and texts so far)."""
    texts = [read_text("austen.txt"), read_text("mixed.txt") * 4]
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text(text, encoding="utf-8")
    chunks = training.FileChunks(paths, chunk_chars=3000)
    seen = []
    for chunk in chunks:
        seen.append((chunk, chunks.done))
    total = sum(len(t.encode()) for t in texts)
    assert chunks.total == total and seen[-1][1] == total
    assert [d for _, d in seen] == sorted(d for _, d in seen) and len(set(d for _, d in seen)) > 5
    assert "".join(c for c, _ in seen) == "".join(texts)
    assert training._counting_line(50, 200, 3.0) == f"counting pre-tokens: {bpe.progress.bar(50, 200)} bytes, ETA 9 s"
    monkeypatch.setattr(bpe.progress.Progress, "__init__", _every_update(bpe.progress.Progress.__init__))
    bpe.Tokenizer.train_from_files(paths, 300, progress=True)
    err = capsys.readouterr().err
    assert f"/{total:,} bytes, ETA " in err and f"] {total:,}/{total:,} bytes" in err, err[:500]
    assert f"counted pre-tokens: {total:,} bytes in 2 files" in err


def _every_update(init):
    def every(self, enabled=True, stream=None, interval=None):
        init(self, enabled, stream, 0.0)  # no throttle: every update is written
    return every


def test_parallel_counting_gives_the_same_table(backend):
    paragraphs = (read_text("austen.txt") + read_text("mixed.txt")).split("\n") * 20
    one = bpe.count_pretokens(paragraphs, pattern="cl100k_base", special_tokens=["<|endoftext|>"])
    for threads in (2, 3):
        assert bpe.count_pretokens(iter(paragraphs), pattern="cl100k_base", special_tokens=["<|endoftext|>"],
                                   num_threads=threads) == one
    with pytest.raises(ValueError, match="num_threads"):
        bpe.count_pretokens(paragraphs, num_threads=0)


def test_read_chunks_names_the_offset_of_a_bad_byte_across_blocks(tmp_path):
    """Files are decoded block by block; a character cut by a block's end is carried over,
    and a byte that is not UTF-8 is reported at its offset in the file, whatever the block."""
    text = "héllo wörld 中文 😀\nAnd more\n" * 40
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode())
    for size in (1, 2, 3, 7, 64):
        assert "".join(training.read_chunks(path, size)) == text
    data = text.encode()
    for at in (0, 1, 5, len(data) // 2, len(data) - 1):
        broken = data[:at] + b"\xff" + data[at:]
        path.write_bytes(broken)
        for size in (1, 3, 7, 4096):
            with pytest.raises(bpe.TrainingError, match=f"t.txt is not valid UTF-8 at byte {at:,} ") as info:
                list(training.read_chunks(path, size))
            assert (info.value.path, info.value.offset, info.value.sample) == (str(path), at, broken[at:at + 4])
        assert "".join(training.read_chunks(path, 5, errors="replace")) == broken.decode("utf-8", "replace")
    path.write_bytes(data + "😀".encode()[:3])  # ends inside a character
    for size in (1, 3, 4096):
        with pytest.raises(bpe.TrainingError, match=f"at byte {len(data):,} "):
            list(training.read_chunks(path, size))
