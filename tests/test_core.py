"""The backend encoders directly: same answers on both, thread safety, limits."""

import contextlib
import gc
import random
import sys
import threading

import pytest

import bpe
from bpe import _backend
from conftest import read_text
from oracle import tiktoken_encoding


def test_backend_name_reflects_switch(backend):
    assert bpe.backend == backend
    assert bpe.Tokenizer.train(["ab"], 256).backend == backend


def test_encode_piece_bytes_with_max_rank(backend):
    enc = bpe.get_encoding("cl100k_base")
    core = enc._core
    token = " hello".encode()
    rank = enc.mergeable_ranks[token]
    assert core.encode_piece_bytes(token) == [rank]
    parts = core.encode_piece_bytes(token, rank)  # only lower ranks: the merge that made it
    assert len(parts) == 2 and all(p < rank for p in parts)
    assert b"".join(enc.decode_single_token_bytes(p) for p in parts) == token
    ranks = enc.mergeable_ranks
    assert core.encode_piece_bytes(token, 0) == [ranks[bytes([b])] for b in token]  # no merges at all


def test_shared_between_threads(backend):
    enc = bpe.get_encoding("o200k_base")
    texts = read_text("mixed.txt").splitlines() * 3
    expected = [enc.encode_ordinary(t) for t in texts]
    results = {}

    def work(k):
        results[k] = [enc.encode_ordinary(t) for t in texts]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[k] == expected for k in range(4))


def test_long_repetitive_input_matches_tiktoken(backend):
    n = 20_000 if backend == "cython" else 2_000
    enc = bpe.get_encoding("cl100k_base")
    oracle = tiktoken_encoding("cl100k_base")
    for text in ("a" * n, " " * n, "1" * n, "🙂" * (n // 4), ". " * (n // 2)):
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)


def test_decoder_bounds(backend):
    enc = bpe.get_encoding("r50k_base")
    with pytest.raises(KeyError):
        enc.decode([enc.n_vocab])
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(2**40)
    assert enc.decode_bytes([]) == b""
    assert enc.decode_bytes(iter([31373, 995])) == b"hello world"


def test_encoder_rejects_bad_tables(backend):
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(ValueError, match="single-byte"):
        _backend.active().Encoder({bytes([b]): b for b in range(255)}, {})
    if backend == "cython":  # the Tokenizer checks these before the pure encoder sees them
        with pytest.raises(ValueError, match="given twice"):
            _backend.active().Encoder(ranks, {b"<s>": 5})
        with pytest.raises(ValueError, match="given twice"):
            _backend.active().Encoder({**ranks, b"ab": 0}, {})
    with pytest.raises(ValueError, match="also the rank"):
        bpe.Tokenizer(ranks, pattern=None, special_tokens={"<s>": 5})


def test_long_pieces_agree_across_backends(cython_backend):
    """pattern=None makes whole paragraphs one piece: the heap path (pieces over LINEAR_MAX
    units, with the backtracking encoder off) must give what the reference's plain scan gives."""
    paragraphs = read_text("austen.txt").split("\n\n")
    before = _backend.active().name
    _backend.use("python")
    try:
        ref = bpe.Tokenizer.train(paragraphs[:40], 600, pattern=None)
    finally:
        _backend.use(before)
    fast = bpe.Tokenizer(ref.mergeable_ranks, pattern=None)
    fast._core._set_backtrack_min_bytes(-1)
    checked = 0
    for para in paragraphs[:400]:
        if len(para.encode()) > 300 and checked < 40:      # (over 128 units even where two bytes start as one)
            assert fast.encode_ordinary(para) == ref.encode_ordinary(para)
            checked += 1
    assert checked > 20


def test_piece_cache_is_per_encoder_and_per_thread(backend):
    """Two tokenizers encoding the same words in turn (same thread, then many threads) must each
    get their own ids: the piece cache never leaks one encoder's answer to another."""
    words = read_text("austen.txt").split()[:3000]
    text = " ".join(words)
    a = bpe.Tokenizer.train([text], 400, min_frequency=1)
    b = bpe.Tokenizer.train([text], 700, min_frequency=1)
    want_a = [a.encode_ordinary(w) for w in words]
    want_b = [b.encode_ordinary(w) for w in words]
    assert want_a != want_b
    for _ in range(2):
        assert [a.encode_ordinary(w) for w in words] == want_a
        assert [b.encode_ordinary(w) for w in words] == want_b
    errors = []

    def work(enc, want):
        for _ in range(3):
            if [enc.encode_ordinary(w) for w in words] != want:
                errors.append(enc)

    threads = [threading.Thread(target=work, args=((a, want_a) if k % 2 else (b, want_b))) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_new_encoder_never_sees_a_dead_ones_cache(backend):
    text = "zebra quagga okapi " * 50
    first = bpe.Tokenizer.train([text], 270, min_frequency=1)
    ids_first = first.encode_ordinary(text)
    del first
    second = bpe.Tokenizer.train(["completely different words here"] * 20, 290, min_frequency=1)
    reference = bpe.Tokenizer(second.mergeable_ranks, pattern="o200k_base")
    assert second.encode_ordinary(text) == reference.encode_ordinary(text)
    assert ids_first  # the first tokenizer did encode (and fill the cache)


def test_ids_past_21_bits_go_without_the_pair_cache(cython_backend):
    """The pair cache packs (left, right, rank) into one word of 21-bit fields, so an encoder
    with an id past that range has none and looks every pair up; both give the reference's
    ids, and so does one that has it."""
    from bpe import _core, _reference

    text = read_text("austen.txt")
    ranks = bpe.Tokenizer.train([text[:30_000]], 700, min_frequency=1).mergeable_ranks
    plain = _core.Encoder(ranks, {})
    wide = _core.Encoder(ranks, {b"<|far|>": (1 << 21) + 7})
    reference = _reference.Encoder(ranks, {})
    assert plain._pair_cache_slots() > 0
    assert wide._pair_cache_slots() == 0
    rng = random.Random(3)
    words = text.split()
    for _ in range(40):
        chunk = " ".join(rng.choice(words) + rng.choice(["", "x", "qu", "zz"]) for _ in range(200))
        want = reference.encode_text(chunk, "o200k_base")
        assert plain.encode_text(chunk, "o200k_base") == want
        assert wide.encode_text(chunk, "o200k_base") == want
    assert wide.decode_bytes([(1 << 21) + 7]) == b"<|far|>"


@contextlib.contextmanager
def _piece_cache_sets(sets):
    """The calling thread's piece caches made again with ``sets`` sets (see
    bpe._core._set_piece_cache_sets), then with the old size again."""
    from bpe import _core
    old = _core._set_piece_cache_sets(sets)
    try:
        yield
    finally:
        _core._set_piece_cache_sets(old)


@pytest.mark.parametrize("sets", [4096, 256, 0])
def test_piece_cache_sets_keep_their_pieces_apart(cython_backend, sets):
    """Many distinct pieces that are not tokens, repeated in a shuffled order, so that the
    two-way sets of the piece cache fill, swap and evict, the long entries (more ids, or
    15-30 bytes; with more than 7 ids, in the ring) are written over, and the ring of the
    longest pieces (31-1,024 bytes) comes round many times over entries its slots still name: every call gives the ids the merge
    loop gives without any cache.  (More pieces of each size than its cache holds: at 4,096
    sets, 2 x 4,096 and 2,048 entries and a ring of 128 KiB; at 256, a ring of 8 KiB; at 0,
    the static arrays' 2 x 256 and 256 entries and ring of 8 KiB.)"""
    with _piece_cache_sets(sets):
        _check_piece_cache_keeps_pieces_apart()


def _check_piece_cache_keeps_pieces_apart():
    enc = bpe.get_encoding("o200k_base")
    rng = random.Random(5)
    letters = "bcdfghjklmnpqrstvwxz"
    ranks = enc.mergeable_ranks
    syllables = sorted(t.decode() for t in ranks if 2 <= len(t) <= 4 and t.isalpha() and t.islower())
    pieces = set()
    for count, low, high, parts in ((50_000, 3, 14, (2, 3)), (8_000, 15, 30, (4, 7))):
        size = len(pieces)  # (of a few tokens: mostly no more ids than an entry holds)
        while len(pieces) < size + count:
            word = " " + "".join(rng.choice(syllables) for _ in range(rng.randint(*parts)))
            if low <= len(word) <= high and word.encode() not in ranks:
                pieces.add(word)
    for count, low, high in ((3_000, 4, 13), (3_000, 14, 29), (3_000, 30, 66), (300, 67, 400)):
        size = len(pieces)
        while len(pieces) < size + count:
            word = " " + "".join(rng.choice(letters) for _ in range(rng.randint(low, high)))
            if word.encode() not in ranks:
                pieces.add(word)
    pieces = sorted(pieces)
    want = {p: enc._core.encode_piece_bytes(p.encode()) for p in pieces}
    short = [p for p in pieces if len(p) <= 14]
    assert sum(len(want[p]) <= 3 for p in short) > 2 * 4_096  # for the two-way sets
    assert sum(len(want[p]) > 3 for p in short) > 100  # too many ids for them
    assert sum(15 <= len(p) <= 30 and len(want[p]) <= 7 for p in pieces) > 2_048  # too long for them
    # the longest: their entries (a head, the bytes and the ids) fill the ring 4 times over
    assert sum(8 + len(p) + 4 * len(want[p]) for p in pieces if len(p) > 30) > 4 * (128 << 10)
    order = pieces * 3
    rng.shuffle(order)
    enc._core._forget_cached_pieces()
    for start in range(0, len(order), 2000):
        chunk = order[start:start + 2000]
        assert enc._core.encode_pieces(chunk) == [i for p in chunk for i in want[p]], start


def _counting_core():
    """An o200k_base core whose merged pieces _merges counts."""
    core = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")._core
    core._set_signatures(True, 10**9)  # (so that _pieces_merged keeps counting)
    core._set_backtrack_min_bytes(-1)  # (every piece through the merge loop, which it counts)
    return core


def _merges(core, pieces):
    """Encode each piece alone (checking its ids against the merge loop's); how many of them
    went through the merge loop."""
    before = core._pieces_merged()
    for piece in pieces:
        assert core.encode_pieces([piece]) == core.encode_piece_bytes(piece.encode())
    return core._pieces_merged() - before


def test_a_short_piece_with_many_ids_is_merged_once(cython_backend):
    """A piece short enough for the two-way sets but with more ids than one of their entries
    holds (4-10 ids: both entries of its set; more: the long cache, which a miss in the sets
    looks at only where an entry's tag says it may hold that piece, bpe/_piece_cache.h) is
    found there again, not merged at every call."""
    core = _counting_core()
    many, few = " zqxjvkq", " zqxj"
    want = {p: core.encode_piece_bytes(p.encode()) for p in (many, few)}
    assert len(many.encode()) <= 14 and 3 < len(want[many]) <= 7 and len(want[few]) <= 3
    for sets in (1 << 16, 0):
        with _piece_cache_sets(sets):
            for piece in (many, few):
                merged = core._pieces_merged()
                for _ in range(3):
                    assert core.encode_pieces([piece]) == want[piece]
                assert core._pieces_merged() == merged + 1, (piece, sets)


def _pieces_of_one_set(core, kinds, seed=7):
    """Pieces of a space and 4-13 consonants (not tokens) whose hashes pick set 0 of 256, one
    for each (low, high) range of id counts in ``kinds``, in that order."""
    from bpe import _core

    rng = random.Random(seed)
    found = [None] * len(kinds)
    while None in found:
        piece = " " + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(4, 13)))
        if (_core._piece_hash(piece.encode()) >> 40) & 255 != 0 or piece in found:
            continue
        k = len(core.encode_piece_bytes(piece.encode()))
        for i, (low, high) in enumerate(kinds):
            if found[i] is None and low <= k <= high:
                found[i] = piece
                break
    return found


def test_a_piece_of_4_to_10_ids_takes_both_places_of_its_set(cython_backend):
    """A short piece of 4-10 ids is kept across both entries of its two-way set and found
    again there; one of 8-10 ids (more than a long entry holds) that a piece of few ids pushes
    out is dropped, while the piece of few ids that it pushes out in turn moves to its long
    pair and is found there."""
    core = _counting_core()
    many, few = _pieces_of_one_set(core, [(8, 10), (1, 3)])
    with _piece_cache_sets(256):
        core._forget_cached_pieces()
        assert _merges(core, [many]) == 1
        assert _merges(core, [many, many]) == 0
        assert _merges(core, [few]) == 1
        assert _merges(core, [many]) == 1    # (dropped by few)
        assert _merges(core, [few, many]) == 0


@pytest.mark.parametrize("sets", [256, 0])
def test_a_piece_pushed_out_of_its_set_is_found_in_its_long_entry(cython_backend, sets):
    """A two-way set that a third piece comes to moves the piece it pushes out (the one used
    least recently; both of its places for a piece of 4-10 ids) to the first long entry of
    that piece's hash, where a miss in the set finds it; no generation finds another's (the
    static fallback has 256 sets too)."""
    core = _counting_core()
    a, b, c, m = _pieces_of_one_set(core, [(2, 3), (2, 3), (2, 3), (4, 7)])
    with _piece_cache_sets(sets):
        core._forget_cached_pieces()
        assert _merges(core, [a, b]) == 2
        assert _merges(core, [c]) == 1        # (a to its long entry)
        assert _merges(core, [a, b, c]) == 0  # (a from there)
        assert _merges(core, [m]) == 1        # (b and c to theirs)
        assert _merges(core, [m, a, b, c, m]) == 0
        core._forget_cached_pieces()
        assert _merges(core, [a, m]) == 2


def test_a_piece_of_up_to_30_bytes_with_many_ids_is_merged_once(cython_backend):
    """A piece short enough for the long entries but with more ids than one holds (more than
    7: runs of CJK text under cl100k_base, or of consonants) keeps the piece in its long
    entry and the ids in the ring (bpe/_piece_cache.h): found again there, not merged at
    every call, at the default size and in the static fallback, whether the piece would fit
    the two-way sets by its length (14 bytes) or not (29)."""
    core = _counting_core()
    pieces = [" zqxjvkqzqxjvk", " zqxjvkqzqxjvkqzqxjvkqzqxjvkq"]
    want = {p: core.encode_piece_bytes(p.encode()) for p in pieces}
    assert [len(p.encode()) for p in pieces] == [14, 29] and all(len(w) > 7 for w in want.values())
    for sets in (1 << 16, 0):
        with _piece_cache_sets(sets):
            for piece in pieces:
                merged = core._pieces_merged()
                for _ in range(3):
                    assert core.encode_pieces([piece]) == want[piece]
                assert core._pieces_merged() == merged + 1, (piece, sets)


def test_a_piece_whose_ring_entry_is_written_over_is_merged_again(cython_backend):
    """When the ring has come round to the ids of a piece whose long entry still stands for
    it, the piece is merged again and its ids go back into the ring: then it is found
    again."""
    core = _counting_core()
    rng = random.Random(11)
    piece = " zqxjvkqzqxjvkqzqxjvkqzqxjvkq"
    want = core.encode_piece_bytes(piece.encode())
    # pieces of 31-400 bytes that fill the static fallback's 8 KiB ring many times over
    fillers = [" " + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(31, 400)))
               for _ in range(200)]
    with _piece_cache_sets(0):
        core._forget_cached_pieces()
        assert core.encode_pieces([piece]) == want
        assert core.encode_pieces(fillers) == [i for p in fillers for i in core.encode_piece_bytes(p.encode())]
        merged = core._pieces_merged()
        assert core.encode_pieces([piece]) == want
        assert core._pieces_merged() == merged + 1          # its ids were written over
        assert core.encode_pieces([piece, piece]) == want + want
        assert core._pieces_merged() == merged + 1          # and kept again


def test_a_longer_piece_has_two_places(cython_backend):
    """Pieces of 15-30 bytes (and those with their ids in the ring) have two long entries each
    (bpe/_piece_cache.h: the first from bits 20.. of the hash, the second from bits 40.. of
    the hash times a constant): a new piece goes to its first where that holds no piece of
    this generation, else to its second, whose piece goes.  Three pieces with one first place
    are all kept; a fourth with that first place and the second one's second takes its
    place."""
    from bpe import _core

    core = _counting_core()

    def first(piece):
        return (_core._piece_hash(piece.encode()) >> 20) & 127   # 128 long entries at 256 sets

    def second(piece):
        return ((_core._piece_hash(piece.encode()) * 0x9E3779B97F4A7C15) % 2**64 >> 40) & 127

    for ids in ((2, 7), (8, 99)):
        rng = random.Random(ids[0])

        def find(want):
            while True:
                piece = " " + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(15, 22)))
                if want(piece) and ids[0] <= len(core.encode_piece_bytes(piece.encode())) <= ids[1]:
                    return piece

        a = find(lambda p: first(p) != second(p))
        b = find(lambda p: first(p) == first(a) and second(p) not in (first(a), second(a)))
        c = find(lambda p: first(p) == first(a) and second(p) not in (first(a), second(a), second(b)))
        d = find(lambda p: first(p) == first(a) and second(p) == second(b))
        with _piece_cache_sets(256):
            core._forget_cached_pieces()
            assert _merges(core, (a, b, c)) == 3, ids
            assert _merges(core, (a, b, c, a, b, c)) == 0, ids
            assert _merges(core, (d,)) == 1, ids           # (in b's place)
            assert _merges(core, (a, c, d)) == 0, ids
            assert _merges(core, (b,)) == 1, ids           # (in d's place again)
            assert _merges(core, (a, b, c)) == 0, ids
            assert _merges(core, (d,)) == 1, ids


def test_pairs_of_ring_slots_hold_two_pieces(cython_backend):
    """Pieces whose hashes pick the same pair of the ring's index slots (bpe/_piece_cache.h:
    pieces of 31-1,024 bytes) are both kept: taking turns, neither is merged again; a third one
    takes the place of the one used least recently (a hit in the second place makes it the
    first)."""
    from bpe import _core

    core = _counting_core()
    rng = random.Random(31)
    pairs = {}
    with _piece_cache_sets(256):
        while True:
            piece = " " + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(31, 40)))
            same = pairs.setdefault((_core._piece_hash(piece.encode()) >> 26) & 126, [])  # 64 pairs at 256 sets
            same.append(piece)
            if len(same) == 3:
                break
        a, b, c = same

        def merges(*pieces):
            return _merges(core, pieces)

        core._forget_cached_pieces()
        assert merges(a, b) == 2
        assert merges(a, b, a, b) == 0
        assert merges(c) == 1       # (in the place of a, used least recently)
        assert merges(b, c) == 0
        assert merges(a) == 1       # (in the place of b)
        assert merges(c) == 0       # (found second: now first)
        assert merges(b) == 1       # (in the place of a)
        assert merges(c) == 0


def test_a_long_piece_is_merged_once(cython_backend):
    """Pieces of 31-1,024 bytes, whatever their number of ids, are kept in the ring
    (bpe/_piece_cache.h) and found there again, at the default size and in the static
    fallback's 8 KiB; longer ones are merged at every call."""
    core = _counting_core()
    rng = random.Random(8)
    pieces = [" " + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(n)) for n in (40, 200, 1023, 1100)]
    want = {p: core.encode_piece_bytes(p.encode()) for p in pieces}
    assert len(want[pieces[1]]) > 32 and len(pieces[2]) == 1024 and len(pieces[3]) > 1024
    for sets, ring in ((1 << 16, 2 << 20), (0, 8 << 10)):
        with _piece_cache_sets(sets):
            for piece in pieces:
                merged = core._pieces_merged()
                for _ in range(3):
                    assert core.encode_pieces([piece]) == want[piece]
                # (an entry takes a quarter of the ring at most)
                kept = len(piece) <= 1024 and 8 + len(piece) + 4 * len(want[piece]) <= ring // 4
                assert core._pieces_merged() == merged + (1 if kept else 3), (len(piece), sets)


def test_piece_cache_sizes_change_no_ids(cython_backend):
    """Every size of the piece caches, made again mid-stream, gives tiktoken's ids, cold and
    warm, on text whose pieces go to all three caches."""
    enc = bpe.get_encoding("o200k_base")
    oracle = tiktoken_encoding("o200k_base")
    texts = [read_text("austen.txt")[:30_000], read_text("mixed.txt"), "x = '=' * 90  # " + "=#" * 40]
    want = [oracle.encode_ordinary(t) for t in texts]
    for sets in (256, 0, 1 << 16, 1024):
        with _piece_cache_sets(sets):
            for _ in range(2):
                assert [enc.encode_ordinary(t) for t in texts] == want, sets


def test_piece_cache_size_setting_is_checked():
    from bpe import _core
    for bad in (128, 300, 1 << 27):
        with pytest.raises(ValueError, match="power of two from 256"):
            _core._set_piece_cache_sets(bad)
    old = _core._set_piece_cache_sets(512)
    assert _core._set_piece_cache_sets(old) == 512


@pytest.mark.parametrize("value, works", [("1024", True), ("0", True), ("lots", False), ("100", False)])
def test_piece_cache_size_from_the_environment(cython_backend, value, works, tmp_path):
    import os
    import subprocess
    import sys
    code = "from bpe import _core; print(_core._set_piece_cache_sets(256))"
    # (the same bpe as this process's, whether installed or built in place)
    home = os.path.dirname(os.path.dirname(os.path.abspath(bpe.__file__)))
    env = dict(os.environ, BPE_PIECE_CACHE_SETS=value, PYTHONPATH=home)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    if works:
        assert run.returncode == 0 and run.stdout.split() == [value], run.stderr
    else:
        assert run.returncode != 0 and f"BPE_PIECE_CACHE_SETS must be 0 or a power of two" in run.stderr
        assert repr(value) in run.stderr


def test_piece_caches_are_freed_with_their_threads(cython_backend):
    """Each thread that encodes makes its own block of piece caches, and the block goes when
    the thread ends."""
    import time
    from bpe import _core
    enc = bpe.get_encoding("o200k_base")
    enc.encode_ordinary("the calling thread's block")
    before = _core._piece_cache_blocks()
    encoded, release = threading.Barrier(5), threading.Event()

    def work():
        enc.encode_ordinary("zebra quagga okapi " * 20)
        encoded.wait()
        release.wait()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    encoded.wait()
    assert _core._piece_cache_blocks() == before + 4
    release.set()
    for t in threads:
        t.join()
    deadline = time.monotonic() + 10  # (a thread's key destructors run just after join returns)
    while _core._piece_cache_blocks() != before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _core._piece_cache_blocks() == before


def test_batch_matches_single_calls(backend, threads_for_any_batch):
    enc = bpe.get_encoding("cl100k_base")
    texts = read_text("mixed.txt").splitlines() + ["", "a\ud800b", read_text("austen.txt")]
    single = [enc.encode_ordinary(t) for t in texts]
    for threads in (1, 2, 3):
        assert enc.encode_ordinary_batch(texts, num_threads=threads) == single
    batch = enc._core.batch(texts[:-2] + texts[-1:], "cl100k_base")
    with pytest.raises(RuntimeError, match="without their id lists"):
        batch.results()
    batch.run()
    batch.run()  # nothing left to claim: a no-op
    assert batch.results() == single[:-2] + single[-1:]
    with pytest.raises(UnicodeEncodeError):
        enc._core.batch(["a\ud800b"], "cl100k_base")
    with pytest.raises(TypeError, match="one str"):
        enc.encode_ordinary_batch("not a list")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        enc.encode_ordinary_batch(["ok", b"bytes"])


def test_encode_to_array(backend):
    import array

    enc = bpe.get_encoding("o200k_base")
    for text in read_text("mixed.txt").splitlines() + ["", "a\ud800b", "x <|endoftext|> y"]:
        allowed = {"<|endoftext|>"}
        got = enc.encode_to_array(text, allowed_special=allowed)
        assert isinstance(got, array.array) and got.itemsize == 4
        assert got.tolist() == enc.encode(text, allowed_special=allowed)
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_to_array("<|endoftext|>")
    assert memoryview(enc.encode_to_array("hello world")).tolist() == enc.encode("hello world")


def test_batch_run_from_many_threads_encodes_each_text_once_in_order(backend):
    """Threads that call ``run()`` on one batch share its texts; every text is encoded by
    exactly one of them and the lists come back in text order."""
    enc = bpe.get_encoding("o200k_base")
    lines = read_text("mixed.txt").splitlines()
    texts = [f"{i}: {lines[i % len(lines)]}" for i in range(600)]
    batch = enc._core.batch(texts, "o200k_base")
    workers = [threading.Thread(target=batch.run) for _ in range(4)]
    for w in workers:
        w.start()
    batch.run()
    for w in workers:
        w.join()
    assert batch.results() == [enc.encode_ordinary(t) for t in texts]


def test_batch_helpers_hand_their_texts_to_run(backend):
    """Threads calling ``help()`` encode texts and hand them over; ``run()`` on this thread
    builds every list (those of texts it never encoded too) and returns when all are built.
    Without ``run()`` the lists are missing, and ``results()`` says so."""
    enc = bpe.get_encoding("o200k_base")
    lines = read_text("mixed.txt").splitlines()
    texts = [f"{i}: {lines[i % len(lines)]}" for i in range(600)]
    want = [enc.encode_ordinary(t) for t in texts]
    batch = enc._core.batch(texts, "o200k_base")
    helpers = [threading.Thread(target=batch.help) for _ in range(3)]
    for h in helpers:
        h.start()
    batch.run()
    assert batch.results() == want
    for h in helpers:
        h.join()
    alone = enc._core.batch(texts[:50], "o200k_base")
    alone.help()  # encodes all 50 and hands them over
    if backend == "cython":
        with pytest.raises(RuntimeError, match="50 texts without their id lists; call run"):
            alone.results()
    alone.run()  # nothing left to claim: builds the handed lists
    assert alone.results() == want[:50]


def test_small_batches_stay_on_the_calling_thread(backend, monkeypatch):
    """A few short texts are encoded without waking the pool (that would cost more than
    the texts); enough text does use it."""
    enc = bpe.get_encoding("o200k_base")
    texts = ["Hello, how are you today?"] * 10
    expected = [enc.encode_ordinary(t) for t in texts]

    def no_pool(n):
        raise AssertionError("a small batch woke the thread pool")

    with monkeypatch.context() as m:
        m.setattr(bpe.tokenizer, "_pool", no_pool)
        assert enc.encode_ordinary_batch(texts, num_threads=8) == expected
    used = []
    real_pool = bpe.tokenizer._pool
    monkeypatch.setattr(bpe.tokenizer, "_pool", lambda n: used.append(n) or real_pool(n))
    big = texts * 400  # over 64K characters: a second thread joins
    assert enc.encode_ordinary_batch(big, num_threads=2) == expected * 400
    assert used == [1]


def test_batch_after_fork(backend, threads_for_any_batch):
    """No pool thread is alive when the process forks (Python 3.12+ warns about a fork with
    threads running, and a thread holding a lock then leaves it held in the child): the
    pools stop before the fork, the parent makes them again at its next batch, and the child
    builds its own instead of waiting forever for the parent's."""
    import os
    import sys
    import threading
    import warnings

    if not hasattr(os, "fork") or sys.platform == "darwin":
        pytest.skip("needs os.fork (and a platform where forking a threaded process is safe)")
    enc = bpe.get_encoding("cl100k_base")
    texts = read_text("mixed.txt").splitlines()
    def pool_threads():
        return [t for t in threading.enumerate() if t.name.startswith("bpe")]

    expected = enc.encode_ordinary_batch(texts, num_threads=2)  # the parent's pool exists now
    assert pool_threads()  # (a pool thread is waiting for work)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pid = os.fork()
    if pid == 0:  # child
        ok = enc.encode_ordinary_batch(texts, num_threads=2) == expected
        os._exit(0 if ok else 1)
    assert not pool_threads()  # the pool's threads ended before the fork
    assert not [w for w in caught if "fork" in str(w.message)]
    assert enc.encode_ordinary_batch(texts, num_threads=2) == expected
    import signal
    import time

    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("batch encoding in a forked child hung (the parent's thread pool was reused)")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_pool_threads_are_gone_from_the_os_before_a_fork(backend, threads_for_any_batch):
    """Thread.join returns before the OS thread has finished exiting (it still frees its
    thread-local storage, under the allocator's lock); a fork in that moment left that lock
    held in the child, whose batch then hung (seen under AddressSanitizer: 2 forks in 6,000).
    The fork hook waits until Linux no longer lists the pool's threads."""
    import os

    if not os.path.isdir("/proc/self/task"):
        pytest.skip("needs Linux's /proc/self/task")
    enc = bpe.get_encoding("cl100k_base")
    listed = 0
    for _ in range(50):
        enc.encode_ordinary_batch(["hello world"] * 8, num_threads=2)
        tids = [t.native_id for t in threading.enumerate() if t.name.startswith("bpe_")]
        assert tids  # (the batch did run on a pool thread)
        bpe.tokenizer._stop_pools_before_fork()
        listed += any(os.path.exists(f"/proc/self/task/{tid}") for tid in tids)
    assert listed == 0, f"{listed} of 50 stops left a pool thread running in the OS"


def test_tokenizer_is_not_changed_by_its_arguments(backend):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    tok = bpe.Tokenizer(ranks, pattern=None)
    ranks[b"abc"] = 257
    del ranks[b"ab"]
    assert tok.mergeable_ranks == {**{bytes([b]): b for b in range(256)}, b"ab": 256}
    assert tok.encode("abc") == [256, ord("c")]


# ---------------------------------------------------------------- backtracking encoder

ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


@contextlib.contextmanager
def _core_setting(setter, value):
    """Set one of the compiled encoder's test hooks (they return the old value) for a block."""
    old = setter(value)
    try:
        yield
    finally:
        setter(old)


def _backtracking_everywhere(tok):
    """Every piece that is not a token goes through the backtracking encoder."""
    return _core_setting(tok._core._set_backtrack_min_bytes, 0)


@pytest.mark.parametrize("name", ENCODINGS)
def test_backtracking_equals_merge_loop_and_tiktoken(name, cython_backend):
    enc = bpe.get_encoding(name)
    oracle = tiktoken_encoding(name)
    text = read_text("austen.txt")[:60_000] + read_text("mixed.txt")
    merge_loop = enc.encode_ordinary(text)
    with _backtracking_everywhere(enc):
        backtracked = enc.encode_ordinary(text)
    assert backtracked == merge_loop == oracle.encode_ordinary(text)


def test_backtracking_on_a_trained_vocabulary(cython_backend):
    """Our own trainer's vocabularies (ties broken either way) satisfy what backtracking needs."""
    text = read_text("austen.txt")
    for tie_break in ("ids", "hf"):
        tok = bpe.Tokenizer.train([text[:80_000]], 1500, tie_break=tie_break)
        expected = tok.encode_ordinary(text)
        with _backtracking_everywhere(tok):
            assert tok.encode_ordinary(text) == expected
        whole = bpe.Tokenizer(tok.mergeable_ranks, pattern=None)
        for para in text.split("\n\n")[:80]:
            want = whole.encode_ordinary(para)
            with _backtracking_everywhere(whole):
                assert whole.encode_ordinary(para) == want


def test_long_tie_heavy_pieces_match_tiktoken(backend):
    """Pieces far past the backtracking threshold: runs, alternations and random long words."""
    rng = random.Random(7)
    n = 5_000 if backend == "cython" else 800
    texts = ["ab" * (n // 2), "aab" * (n // 3), " " * 500 + "x", "\t " * (n // 2), "🙂 " * (n // 4),
             "\u00e9" * n, "0" * n + "a" * n]
    for size in (300, 500, 1000):
        for alphabet in ("ab", "abc", "etaoin", "\u0430\u0431\u0432"):
            texts.append("".join(rng.choice(alphabet) for _ in range(size)))
    for name in ("cl100k_base", "o200k_base"):
        enc = bpe.get_encoding(name)
        oracle = tiktoken_encoding(name)
        for text in texts:
            assert enc.encode_ordinary(text) == oracle.encode_ordinary(text), (name, text[:20], len(text))


def test_backtracking_tables_build_once_under_threads(cython_backend):
    """A fresh encoder builds its backtracking tables on the first long piece; threads that
    meet long pieces at the same time must all wait for that one build and agree."""
    base = bpe.get_encoding("cl100k_base")
    texts = ["a" * 3_000, " " * 3_000 + "z", "ab" * 1_500, "xyz" * 1_000]
    expected = [tiktoken_encoding("cl100k_base").encode_ordinary(t) for t in texts]
    for _ in range(2):
        fresh = bpe.Tokenizer(base.mergeable_ranks, pattern=base.pattern)
        results, errors = {}, []
        barrier = threading.Barrier(4)

        def work(k):
            try:
                barrier.wait()
                results[k] = [fresh.encode_ordinary(t) for t in texts[k:] + texts[:k]]
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for k in range(4):
            assert results[k] == expected[k:] + expected[:k]


def test_backtrack_threshold_hook(cython_backend):
    enc = bpe.Tokenizer(bpe.get_encoding("r50k_base").mergeable_ranks, pattern=None)
    core = enc._core
    old = core._set_backtrack_min_bytes(-1)
    assert old > 0
    assert core._set_backtrack_min_bytes(old) == -1


def _wrong_splits(tok):
    core = tok._core
    bad = []
    for data, token in tok.mergeable_ranks.items():
        split = core._backtrack_split(token)
        if len(data) == 1:
            ok = split is None
        else:
            parts = core.encode_piece_bytes(data, token)  # the merge loop, ranks below the token
            ok = split == (tuple(parts) if len(parts) == 2 else None)
        if not ok:
            bad.append(token)
    return bad


@pytest.mark.parametrize("name", ENCODINGS)
def test_backtracking_splits_equal_the_merge_loops(name, cython_backend):
    """Each token's canonical split, built fast from valid pairs in rank order, is the pair the
    merge loop holds just before it forms the token (ranks below it only)."""
    assert _wrong_splits(bpe.get_encoding(name)) == []


def test_backtracking_splits_of_a_trained_vocabulary(cython_backend):
    trained = bpe.Tokenizer.train([read_text("austen.txt")[:50_000]], 900, special_tokens=["<|end|>"])
    assert _wrong_splits(trained) == []
    end = trained.encode("<|end|>", allowed_special="all")
    assert trained._core._backtrack_split(end[0]) is None  # special tokens are never merged


def test_forgetting_cached_pieces_changes_no_ids(cython_backend):
    enc = bpe.Tokenizer(bpe.get_encoding("cl100k_base").mergeable_ranks, pattern="cl100k_base")
    text = read_text("austen.txt")[:20_000]
    first = enc.encode_ordinary(text)
    enc._core._forget_cached_pieces()
    assert enc.encode_ordinary(text) == first == tiktoken_encoding("cl100k_base").encode_ordinary(text)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("backtrack_over", [-1, 12])
def test_batches_of_new_pieces_give_tiktokens_ids(cython_backend, name, backtrack_over):
    """Text whose batches hold several pieces to merge (new words, the same new word twice,
    words of many units, Cyrillic and Han words), encoded cold and then warm: the linear
    merge loop, the heap (over LINEAR_MAX units) and the backtracking encoder (when it takes
    pieces over 12 bytes) give tiktoken's ids, and so do the cached pieces after them."""
    enc = bpe.Tokenizer(bpe.get_encoding(name).mergeable_ranks, pattern=name)
    enc._core._set_backtrack_min_bytes(backtrack_over)
    oracle = tiktoken_encoding(name)
    rng = random.Random(7)
    alphabets = ["bcdfghjklmnpqrstvwxzaeiou", "бвгджзклмнпрстаеиоуя", "的一是不了人我在有他这中大来上"]
    words = [" " + "".join(rng.choice(alphabets[i % 3]) for _ in range(rng.choice([2, 3, 5, 8, 13, 26, 40, 150])))
             for i in range(3000)]
    common = [" the", " and", " of", ",", ".", "\n"]
    for _ in range(30):
        parts = [rng.choice(words) if rng.random() < 0.4 else rng.choice(common) for _ in range(300)]
        text = "".join(parts)
        enc._core._forget_cached_pieces()
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)  # (warm)


# ---------------------------------------------------------------- whole-character units

def _bytes_only(tok):
    """The merge loop starts every character from its bytes (no whole-character units)."""
    return _core_setting(tok._core._set_char_units, False)


@pytest.mark.parametrize("name", ENCODINGS)
def test_character_units_equal_bytes_and_tiktoken(name, cython_backend):
    enc = bpe.Tokenizer(bpe.get_encoding(name).mergeable_ranks, pattern=name)
    assert enc._core._char_units_size() > 200
    rng = random.Random(3)
    mixed = read_text("mixed.txt")
    chars = sorted(set(mixed) - set("\r\n"))
    # shuffled characters next to spaces, digits and each other: every context string gets met
    noise = "".join(rng.choice(chars + [" ", "  ", "1", "a", "'"]) for _ in range(20_000))
    for text in (read_text("austen.txt")[:20_000] + mixed, noise):
        units = enc.encode_ordinary(text)
        with _bytes_only(enc):
            assert enc.encode_ordinary(text) == units
        assert units == tiktoken_encoding(name).encode_ordinary(text)


def _random_vocabulary(rng, alphabet, size):
    """A byte-level vocabulary of random substrings (partial characters included) of random
    text over ``alphabet``, in random rank order except that most pieces of single characters
    come first: many characters can start whole, and contexts that stop them (and ranks that
    are not monotone in the merges) are common."""
    ranks = {bytes([b]): b for b in range(256)}
    sample = "".join(rng.choice(alphabet) for _ in range(4000)).encode("utf-8")
    tokens = set()
    for ch in alphabet:
        data = ch.encode("utf-8")
        tokens.update(data[i:j] for i in range(len(data)) for j in range(i + 2, len(data) + 1))
    while len(tokens) < size:
        i = rng.randrange(len(sample) - 1)
        tokens.add(sample[i:i + rng.randint(2, 7)])
    within = {data[i:j] for ch in alphabet for data in [ch.encode("utf-8")]
              for i in range(len(data)) for j in range(i + 2, len(data) + 1)}
    order = rng.sample(sorted(tokens), len(tokens))
    early = [t for t in order if t in within and rng.random() < 0.8]
    for token in early + order:
        ranks.setdefault(token, len(ranks))
    return ranks


def _reference_of(ranks, pattern=None):
    _backend.use("python")
    try:
        return bpe.Tokenizer(ranks, pattern=pattern)
    finally:
        _backend.use("cython")


def _check_units_and_bytes(fast, reference, text, round_):
    want = reference.encode_ordinary(text)
    assert fast.encode_ordinary(text) == want, (round_, text)
    with _bytes_only(fast):
        assert fast.encode_ordinary(text) == want, (round_, text)


def _units_on_random_vocabularies(seed, alphabet, vocabulary_sizes, units_size):
    """30 random vocabularies over ``alphabet`` (no pattern), 40 random texts each: the units
    of bpe/_charunits.pxi, bytes only and the pure-Python reference agree.  Returns
    ``units_size(core)`` of each vocabulary's encoder."""
    rng = random.Random(seed)
    sizes = []
    for round_ in range(30):
        ranks = _random_vocabulary(rng, alphabet, rng.choice(vocabulary_sizes))
        fast = bpe.Tokenizer(ranks, pattern=None)
        reference = _reference_of(ranks)
        sizes.append(units_size(fast._core))
        for _ in range(40):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
            _check_units_and_bytes(fast, reference, text, round_)
    return sizes


def test_character_units_on_random_vocabularies(cython_backend):
    """Random vocabularies and texts: whole-character units, bytes only and the pure-Python
    reference agree."""
    alphabet = ["同", "加", "施", "д", "о", "é", "한", "🙂", " ", "a", "1"]
    sizes = _units_on_random_vocabularies(11, alphabet, [50, 200, 600], lambda core: core._char_units_size())
    assert sum(sizes) > 30  # characters did start whole


def test_pieces_start_from_their_characters_where_units_allow(cython_backend):
    # the merge loop's start (cu_units) for words of two- and three-byte characters: one
    # unit per character, the last ones of a piece included (read byte by byte where fewer
    # than four bytes are left), and the leading space joined to the first; bytes with the
    # units off
    enc = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")
    ranks = enc.mergeable_ranks
    for word in ("привет", "的一是不了人", "ελληνικά"):
        units = enc._core._start_units(word.encode("utf-8"))
        assert units == [ranks[ch.encode("utf-8")] for ch in word]
        spaced = enc._core._start_units((" " + word).encode("utf-8"))
        assert spaced == [ranks[(" " + word[0]).encode("utf-8")]] + units[1:]
        with _bytes_only(enc):
            assert enc._core._start_units(word.encode("utf-8")) == [ranks[bytes([b])] for b in word.encode("utf-8")]


def test_leading_space_units_on_random_vocabularies(cython_backend):
    """Pieces that start with " " + a character (the leading unit of bpe/_charunits.pxi), on
    random vocabularies: fast, bytes only and the pure-Python reference agree."""
    rng = random.Random(5)
    alphabet = ["同", "加", "д", "о", "é", "한", "🙂", "a"]
    pattern = r" ?[^ ]+| +"
    spaced = []
    for round_ in range(30):
        ranks = _random_vocabulary(rng, alphabet + [" "], rng.choice([60, 200, 600]))
        for ch in alphabet:  # the leading tokens themselves, somewhere in the rank order
            data = b" " + ch.encode("utf-8")
            if rng.random() < 0.8:
                ranks.setdefault(data, len(ranks))
        fast = bpe.Tokenizer(ranks, pattern=pattern)
        reference = _reference_of(ranks, pattern)
        spaced.append(fast._core._spaced_units_size())
        for _ in range(30):
            words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
                     for _ in range(rng.randint(1, 8))]
            _check_units_and_bytes(fast, reference, " " + " ".join(words), round_)
    assert sum(spaced) > 30  # leading units were built


def test_a_token_after_the_leading_character_stops_the_leading_unit(cython_backend):
    # " " + д is a token (rank 259) but дa ranks below it: in " дa" BPE forms дa first and
    # the space stays alone, so " д" must not start as one unit there
    d, a = "д".encode("utf-8"), b"a"
    ranks = {bytes([b]): b for b in range(256)}
    for token in (d, d + a, b" " + d):
        ranks[token] = len(ranks)
    tok = bpe.Tokenizer(ranks, pattern=None)
    assert tok._core._spaced_units_size() == 1
    assert tok.encode_ordinary(" дa") == [32, ranks[d + a]]
    assert tok.encode_ordinary(" дb") == [ranks[b" " + d], ord("b")]
    assert tok.encode_ordinary(" д") == [ranks[b" " + d]]


def test_a_token_after_a_leading_ascii_letter_stops_the_leading_unit(cython_backend):
    # the same for " " + an ASCII letter, which starts whole only once non-ASCII text has
    # built the tables: " a" and "ab" below it
    ranks = {bytes([b]): b for b in range(256)}
    for token in (b"ab", b" a", "д".encode("utf-8")):
        ranks[token] = len(ranks)
    tok = bpe.Tokenizer(ranks, pattern=r" ?\S+")
    before = [tok.encode_ordinary(t) for t in (" ab", " ac", " abc")]
    assert tok._core._spaced_units_size() == 1  # builds the tables: " a" may start whole
    after = [tok.encode_ordinary(t) for t in (" ab", " ac", " abc")]
    ab, space_a = ranks[b"ab"], ranks[b" a"]
    assert before == after == [[32, ab], [space_a, ord("c")], [32, ab, ord("c")]]


def test_ascii_text_alone_never_builds_the_unit_tables(cython_backend):
    # A short English-only text merges plenty of pieces without ever building the unit
    # tables (bpe/_charunits.pxi: before the pair signatures are built, only non-ASCII text
    # pays for them); the first non-ASCII piece that needs merging builds them, and the ids
    # stay tiktoken's
    enc = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")
    enc._core._set_signatures(True, 10**9)  # (the suite's default builds them at once)
    english = read_text("austen.txt")[:20_000].encode("ascii", "ignore").decode()
    ascii_ids = enc.encode_ordinary(english)
    assert enc._core._char_units_state() == "unbuilt"
    enc.encode_ordinary(" переводится")  # a Cyrillic word that is not one token
    assert enc._core._char_units_state() == "ready"
    assert enc.encode_ordinary(english) == ascii_ids == tiktoken_encoding("o200k_base").encode_ordinary(english)


def test_ascii_text_builds_the_unit_tables_with_the_signatures(cython_backend):
    # once the pair signatures are built, the unit tables are too, so that English text
    # starts from two-byte units (bpe/_charunits.pxi, "When the tables are built")
    enc = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")
    enc._core._set_signatures(True, 30)
    english = read_text("austen.txt")[:20_000].encode("ascii", "ignore").decode()
    ids = enc.encode_ordinary(english)
    assert enc._core._signatures_state() == "ready"
    assert enc._core._char_units_state() == "ready"
    enc._core._forget_cached_pieces()
    assert enc.encode_ordinary(english) == ids == tiktoken_encoding("o200k_base").encode_ordinary(english)


def test_pieces_start_from_ascii_pairs_where_units_allow(cython_backend):
    # two ASCII bytes start as their token where bpe/_charunits.pxi allows it ("Two ASCII
    # bytes"): the units of a word spell it, some of them are two-byte tokens, and with the
    # units off every unit is a byte
    enc = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")
    assert enc._core._pair_units_size() > 300
    ranks = enc.mergeable_ranks
    decode = enc.decode_single_token_bytes
    for word in ("something", " tokenizer", " encyclopedia", "ECONOMICS"):
        data = word.encode("ascii")
        units = [decode(u) for u in enc._core._start_units(data)]
        assert b"".join(units) == data
        assert any(len(u) == 2 and u[0] != 0x20 for u in units), units
        with _bytes_only(enc):
            assert enc._core._start_units(data) == [ranks[bytes([b])] for b in data]


def _ascii_ranks(*tokens):
    """Single bytes, then ``tokens`` in the order given, then a two-byte character (whose
    merge builds the unit tables)."""
    ranks = {bytes([b]): b for b in range(256)}
    for token in tokens + ("д".encode("utf-8"),):
        ranks[token] = len(ranks)
    return ranks


def test_a_lower_token_across_an_ascii_pair_stops_the_pair_unit(cython_backend):
    # "bc" ranks below "ab": in "abc" BPE makes "bc" first, so "ab" must not start whole
    # before "c" (a right context), while "bc" may
    ranks = _ascii_ranks(b"bc", b"ab")
    tok = bpe.Tokenizer(ranks, pattern=None)
    assert tok._core._pair_units_size() == 2
    a, b, c, ab, bc = ord("a"), ord("b"), ord("c"), ranks[b"ab"], ranks[b"bc"]
    assert tok._core._start_units(b"abc") == [a, bc]
    assert tok._core._start_units(b"abd") == [ab, ord("d")]
    assert tok.encode_ordinary("abc") == [a, bc]
    assert tok.encode_ordinary("abd") == [ab, ord("d")]
    # the other way round: "ab" first, and "bc" must not start whole after "a" (a left context)
    ranks = _ascii_ranks(b"ab", b"bc")
    tok = bpe.Tokenizer(ranks, pattern=None)
    assert tok._core._start_units(b"abc") == [ranks[b"ab"], c]
    assert tok._core._start_units(b"xbc") == [ord("x"), ranks[b"bc"]]
    assert tok.encode_ordinary("abc") == [ranks[b"ab"], c]


def test_a_lower_token_holding_an_ascii_pair_stops_the_pair_unit(cython_backend):
    # "xab" ranks below "ab" and forms through "xa": after "x", "ab" must not start whole
    ranks = _ascii_ranks(b"xa", b"xab", b"ab")
    tok = bpe.Tokenizer(ranks, pattern=None)
    tok._core._pair_units_size()
    assert ranks[b"ab"] not in tok._core._start_units(b"xab")
    assert tok.encode_ordinary("xab") == [ranks[b"xab"]]
    assert tok.encode_ordinary("yab") == [ord("y"), ranks[b"ab"]]


def test_ascii_pair_units_on_random_vocabularies(cython_backend):
    """Random vocabularies and texts over a few ASCII letters (and one character that builds
    the tables): two-byte units, bytes only and the pure-Python reference agree."""
    alphabet = ["a", "b", "c", "d", " ", "é"]
    sizes = _units_on_random_vocabularies(17, alphabet, [40, 120, 400], lambda core: core._pair_units_size())
    assert sum(sizes) > 60  # pairs did start whole


def test_character_units_hook(cython_backend):
    core = bpe.Tokenizer(bpe.get_encoding("r50k_base").mergeable_ranks, pattern=None)._core
    assert core._set_char_units(False) is True
    assert core._set_char_units(True) is False


# ---------------------------------------------------------------- pair signatures

def _all_pairs_looked_up(tok):
    """The merge loop looks every pair up (no pair signatures)."""
    return _core_setting(tok._core._set_signatures, False)


@pytest.mark.parametrize("name", ENCODINGS)
def test_signatures_equal_plain_lookups_and_tiktoken(name, cython_backend):
    enc = bpe.Tokenizer(bpe.get_encoding(name).mergeable_ranks, pattern=name)
    rng = random.Random(5)
    mixed = read_text("mixed.txt")
    chars = sorted(set(mixed) - set("\r\n"))
    noise = "".join(rng.choice(chars + [" ", "1", "a"]) for _ in range(20_000))
    for text in (read_text("austen.txt")[:30_000] + mixed, noise):
        skipped = enc.encode_ordinary(text)
        assert enc._core._signatures_state() == "ready"
        with _all_pairs_looked_up(enc):
            enc._core._forget_cached_pieces()
            assert enc.encode_ordinary(text) == skipped
        assert skipped == tiktoken_encoding(name).encode_ordinary(text)


def test_signatures_pass_every_split_and_few_other_pairs(cython_backend):
    """Every canonical split passes (else a merge would be missed); of the other pairs of
    the parts most pieces are made of (low ids), few do, or the signatures would save no
    lookups (about 3.5% pass for o200k)."""
    enc = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")
    core = enc._core
    assert core._signatures_pass(300, 400) is None
    enc.encode_ordinary(read_text("austen.txt")[:5_000])
    assert core._signatures_state() == "ready"
    splits = {core._backtrack_split(token) for token in range(enc.n_vocab - len(enc.special_tokens_set))}
    splits.discard(None)
    assert len(splits) > 190_000
    assert all(core._signatures_pass(left, right) for left, right in splits)
    rng = random.Random(11)
    others = set()
    while len(others) < 20_000:
        pair = (rng.randrange(2_000), rng.randrange(2_000))
        if pair not in splits:
            others.add(pair)
    passed = sum(core._signatures_pass(left, right) for left, right in others)
    assert passed < 0.06 * len(others)


def test_linear_minimum_is_the_lowest_rank_leftmost(cython_backend):
    """The linear merge loop's keys are compared as floats (bpe_min_keys): the lowest rank
    wins, the leftmost among equals, over the whole range of ranks it takes."""
    minimum = bpe._core.Encoder._linear_minimum
    top = 16_646_144 - 1            # SHORT_RANK_LIMIT - 1 (ranks << 7: 128 indices)
    rng = random.Random(13)
    assert minimum([]) is None and minimum([None] * 128) is None
    assert minimum([top, None, top]) == (top, 0)
    assert minimum([top, 0]) == (0, 1)
    for _ in range(3_000):
        n = rng.randint(1, 128)
        pool = [0, 1, 2, top, top - 1, 1 << 18, (1 << 18) - 1, 1 << 23, rng.randrange(top + 1)]
        ranks = [rng.choice(pool + [None]) for _ in range(n)]
        present = [(r, i) for i, r in enumerate(ranks) if r is not None]
        assert minimum(ranks) == (min(present) if present else None), ranks
    with pytest.raises(ValueError):
        minimum([top + 1])


def test_split_table_answers_every_split_and_nothing_else(cython_backend):
    """The split table (built with the signatures) gives each canonical split its token's
    rank, and no rank to pairs that are no split, even where the concatenation is a token
    (the merge loop then asks it instead of the token table)."""
    enc = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")
    core = enc._core
    assert core._split_rank(300, 400) is None and core._split_table_slots() == 0
    enc.encode_ordinary(read_text("austen.txt")[:5_000])
    assert core._split_table_slots() == 1 << 18          # 2 MiB: load <= 4/5
    n = enc.n_vocab - len(enc.special_tokens_set)
    splits = {}
    for token in range(n):
        split = core._backtrack_split(token)
        if split is not None:
            splits[split] = token
    assert len(splits) > 190_000
    assert all(core._split_rank(left, right) == token for (left, right), token in splits.items())
    rng = random.Random(12)
    checked = 0
    while checked < 20_000:
        pair = (rng.randrange(2_000), rng.randrange(2_000))
        if pair not in splits:
            assert core._split_rank(*pair) is None, pair
            checked += 1
    # " the" is a token; (" ", "the") is not its canonical split (" t" + "he" is)
    the = enc.encode_single_token(b" the")
    space, word = enc.encode_single_token(b" "), enc.encode_single_token(b"the")
    assert (space, word) not in splits and core._split_rank(space, word) is None
    assert enc.encode_ordinary(" the") == [the]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="huge pages are asked for on Linux only")
def test_big_tables_are_aligned_for_huge_pages(cython_backend):
    """The token table's slots (8 MiB), o200k_base's split table (2 MiB), the ids' int
    objects (6.4 MB) and the thread's piece caches (8.5 MiB), each read at random, are 2 MiB
    aligned, so that Linux may back them with huge pages."""
    enc = bpe.Tokenizer(bpe.get_encoding("o200k_base").mergeable_ranks, pattern="o200k_base")
    core = enc._core
    assert core._big_table_offsets() == (0, None, 0, 0)
    enc.encode_ordinary(read_text("austen.txt")[:5_000])
    assert core._split_table_slots() == 1 << 18 and core._big_table_offsets() == (0, 0, 0, 0)


def test_ids_past_the_split_tables_fields(cython_backend):
    """Ids of 2**21 - 1 or more do not fit the split table's (or the pair cache's) fields:
    such a vocabulary gets signatures but no table, and encodes as the reference does."""
    ranks = {bytes([b]): b for b in range(256)}
    for x in range(65536):                         # every two bytes, then 458,752 of three
        ranks[x.to_bytes(2, "big")] = len(ranks)   # (ids this large need that many tokens)
    for x in range(7 << 16):
        ranks[x.to_bytes(3, "big")] = len(ranks)
    ranks[b"abcd"] = 2_100_000
    tok = bpe.Tokenizer(ranks, pattern=None)
    tok._core._set_signatures(True, 0)
    reference = _reference_of(ranks)
    for text in ("abcd ab \x01\x02\x03abcd\x05" * 3, "xabcdabcd", "\x04" * 40):
        assert tok.encode_ordinary(text) == reference.encode_ordinary(text)
    assert 2_100_000 in tok.encode_ordinary("xabcdabcd")
    assert tok._core._signatures_state() == "ready"
    assert tok._core._split_table_slots() == 0 and tok._core._pair_cache_slots() == 0


def test_signatures_wait_for_enough_merged_pieces(cython_backend):
    enc = bpe.Tokenizer(bpe.get_encoding("cl100k_base").mergeable_ranks, pattern="cl100k_base")
    enc._core._set_signatures(True, 50)
    rng = random.Random(4)
    words = sorted({" " + "".join(rng.choice("qzxjvk") for _ in range(7)) for _ in range(400)})[:120]
    enc.encode_ordinary("".join(words[:40]))
    assert enc._core._signatures_state() == "unbuilt"
    assert enc.encode_ordinary("".join(words[40:])) == tiktoken_encoding("cl100k_base").encode_ordinary(
        "".join(words[40:]))
    assert enc._core._signatures_state() == "ready"


def test_signatures_build_once_under_threads(cython_backend):
    """Threads that reach the build threshold together all wait for one build and agree."""
    base = bpe.get_encoding("o200k_base")
    text = read_text("mixed.txt")
    expected = tiktoken_encoding("o200k_base").encode_ordinary(text)
    for _ in range(2):
        fresh = bpe.Tokenizer(base.mergeable_ranks, pattern="o200k_base")
        fresh._core._set_signatures(True, 30)
        results, errors = [], []
        barrier = threading.Barrier(4)

        def work():
            try:
                barrier.wait()
                results.append(fresh.encode_ordinary(text))
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert results == [expected] * 4
        assert fresh._core._signatures_state() == "ready"


def test_signatures_on_trained_vocabularies(cython_backend):
    """Vocabularies made by BPE training (ranks in merge order) get signatures, and the
    merge loop with them agrees with the pure-Python reference."""
    text = read_text("mixed.txt") + read_text("austen.txt")[:30_000]
    rng = random.Random(9)
    for tie_break in ("ids", "hf"):
        tok = bpe.Tokenizer.train([text], 1200, tie_break=tie_break, pattern=None)
        whole = bpe.Tokenizer(tok.mergeable_ranks, pattern=None)
        reference = _reference_of(tok.mergeable_ranks)
        for _ in range(60):
            start = rng.randrange(len(text) - 200)
            piece = text[start:start + rng.randint(1, 200)]
            assert whole.encode_ordinary(piece) == reference.encode_ordinary(piece)
        assert whole._core._signatures_state() == "ready"


def test_out_of_order_vocabularies_use_neither_splits_nor_backtracking(cython_backend):
    """When BPE forms a token through a merge ranked above it, canonical splits say nothing
    about which pairs merge: the signatures and the backtracking encoder (pieces over 256
    bytes) must stand aside.  Long and short pieces then agree with the reference."""
    tiny = {bytes([b]): b for b in range(256)}
    tiny.update({b"ab": 300, b"abc": 299})             # "abc" forms from "ab" (300) + "c"
    tok = bpe.Tokenizer(tiny, pattern=None)
    assert tok.encode_ordinary("abc" * 200) == [299] * 200
    assert tok._core._signatures_state() == "unavailable"
    with pytest.raises(RuntimeError, match="not available"):
        tok._core._backtrack_split(299)
    rng = random.Random(5)
    alphabet = ["a", "b", "c", "\u0434", " "]
    for _ in range(12):
        ranks = _random_vocabulary(rng, alphabet, rng.choice([50, 200]))  # ranks out of merge order
        fast = bpe.Tokenizer(ranks, pattern=None)
        reference = _reference_of(ranks)
        for _ in range(6):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 600)))
            assert fast.encode_ordinary(text) == reference.encode_ordinary(text), text


def test_signatures_hook(cython_backend):
    core = bpe.Tokenizer(bpe.get_encoding("r50k_base").mergeable_ranks, pattern=None)._core
    assert core._signatures_state() == "unbuilt"
    assert core._set_signatures(False) is True
    assert core._set_signatures(True, 7) is False


# ---------------------------------------------------------------- token table slots

def test_tokens_past_255_bytes_and_past_16_mib_of_token_bytes(cython_backend):
    """A slot keeps a token's length below 255 and its place in the byte store below 8 MiB;
    longer tokens and later places are read from the full tables.  Near misses (same length,
    same first 8 bytes, other bytes) are no match either way."""
    rng = random.Random(2)
    ranks = {bytes([b]): b for b in range(256)}
    long_token = b"L" * 300
    ranks[long_token] = len(ranks)
    total = 256 + 300
    while total < (17 << 20):  # token bytes past 16 MiB
        ranks.setdefault(rng.randbytes(250), len(ranks))
        total += 250
    late = max(ranks, key=ranks.get)
    ranks[b"late-short-token"] = len(ranks)
    tok = bpe.Tokenizer(ranks, pattern=None)
    core = tok._core
    for data in (long_token, late, b"late-short-token"):
        assert core.encode_piece_bytes(data) == [ranks[data]]
        if data.isascii():
            assert tok.encode_ordinary(data.decode()) == [ranks[data]]
        near = data[:-1] + (b"Z" if data[-1:] != b"Z" else b"Y")
        assert core.encode_piece_bytes(near) != [ranks[data]]
        assert core.decode_bytes(core.encode_piece_bytes(near)) == near


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_text_path_finds_tokens_and_near_misses_as_tiktoken(name, cython_backend):
    """Pieces of text that are tokens of 9 to 16 bytes, and pieces one byte off them (the
    last byte changed, missing or added), give tiktoken's ids."""
    enc = bpe.get_encoding(name)
    ref = tiktoken_encoding(name)
    words = [t for t in enc.mergeable_ranks if 9 <= len(t) <= 16 and t[:1] == b" " and t[1:].isalpha()
             and t.isascii()]
    assert len(words) > 1000
    rng = random.Random(8)
    pieces = []
    for t in rng.sample(words, 1000):
        other = b"q" if t[-1:] != b"q" else b"x"
        pieces += [t, t[:-1] + other, t[:-1], t + other]
    text = "".join(p.decode() for p in pieces)
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    assert enc.count(text) == len(ref.encode_ordinary(text))


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_every_end_of_a_text_gives_tiktokens_ids(name, cython_backend):
    """A text cut at every length up to 400 bytes: the pieces near its end (where the scan
    reads first words with a test of where the page ends, and further from the end
    without) give tiktoken's ids, as counted too."""
    enc = bpe.get_encoding(name)
    ref = tiktoken_encoding(name)
    rng = random.Random(36)
    words = ["a", "to", " the", " of", "\n", "  ", " x", "ing", " tokenizers", " Melville",
             " =====\n", "12345", "1", " antidisestablishment", "über", " 東京", " 😀", "  \n\n",
             " abcdefgh", " abcdefghi", "(", "));", " supercalifragilistic"]
    text = "".join(rng.choice(words) for _ in range(200))
    data = text.encode()
    assert len(data) > 400
    for n in range(1, 401):
        cut = data[:n].decode("utf-8", errors="ignore")
        assert enc.encode_ordinary(cut) == ref.encode_ordinary(cut), n
        assert enc.count(cut) == len(ref.encode_ordinary(cut)), n


def _tokens_sharing_their_head(rng):
    """Byte ranks, then 400 tokens of 12 and 400 of 16 bytes that all begin "abcdefgh" (so
    that many share their first 8 bytes and length, and sit past their home slot); no merge
    reaches any of them.  12 bytes: pieces the piece cache's sets hold; 16: too long."""
    letters = b"abcdefghijklmnopqrstuvwxyz"
    ranks = {bytes([b]): b for b in range(256)}
    for length in (12, 16):
        target = len(ranks) + 400
        while len(ranks) < target:
            ranks.setdefault(b"abcdefgh" + bytes(rng.choice(letters) for _ in range(length - 8)), len(ranks))
    return ranks


def test_a_piece_in_the_home_slot_of_a_token_like_it_is_not_that_token(cython_backend):
    """The text path takes a piece of up to 16 bytes to be the token in its home slot when
    their first 8 bytes and lengths agree and, past 8 bytes, their last 8 bytes do.  Many
    tokens share their first 8 bytes and length here, so that many pieces that are none of
    them land in the slot of one; each must still be encoded by the merge rule."""
    rng = random.Random(21)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    ranks = _tokens_sharing_their_head(rng)
    tok = bpe.Tokenizer(ranks, pattern="o200k_base")   # (a run of letters is one piece)
    assert tok._on_scanner
    pieces = []
    while len(pieces) < 400:
        length = rng.choice((12, 16))
        piece = b"abcdefgh" + bytes(rng.choice(letters) for _ in range(length - 8))
        if piece not in ranks:
            pieces.append(piece)
    for piece in pieces:
        ids = tok.encode_ordinary(piece.decode())
        assert len(ids) > 1 and tok.decode_bytes(ids) == piece, piece
        assert tok.count(piece.decode()) == len(ids)


def test_tokens_placed_past_their_home_slot_come_out_whole(cython_backend):
    """A piece that is not the token in the home slot of its hash is looked for in its set of
    the piece cache, then in the rest of the table (only where its home slot is marked as
    one that a token sits past).  Here 400 tokens of each length share their first 8 bytes
    and length, so that many sit past their home slot, and no merge
    reaches any of them (only bytes are below them): each, as a piece of text, must be its
    own id, however often it comes."""
    rng = random.Random(22)
    ranks = _tokens_sharing_their_head(rng)
    tok = bpe.Tokenizer(ranks, pattern="o200k_base")   # (a run of letters is one piece)
    assert tok._on_scanner
    past, marked = tok._core._tokens_past_their_home_slot()
    assert past > 50 and 0 < marked <= past            # (each such token marks its home slot)
    words = [w for w in ranks if len(w) > 1]
    rng.shuffle(words)
    text = "\n".join(w.decode() for w in words + words[::-1])
    want = []
    for w in words + words[::-1]:
        want += [ranks[w], ranks[b"\n"]]
    assert tok.encode_ordinary(text) == want[:-1]
    assert tok.count(text) == len(want) - 1


def test_both_byte_classifiers_give_the_same_ids(cython_backend):
    """The o200k block path classifies 64 bytes at once with AVX-512BW where the CPU has it
    and with SSE2 otherwise; both give tiktoken's ids (and counts)."""
    from bpe import _core

    enc = bpe.get_encoding("o200k_base")
    ref = tiktoken_encoding("o200k_base")
    text = read_text("austen.txt")[:20_000] + read_text("mixed.txt")
    want = ref.encode_ordinary(text)
    for wide in (True, False):
        with _core_setting(_core._set_wide_classifier, wide):
            enc._core._forget_cached_pieces()
            assert enc.encode_ordinary(text) == want
            assert enc.count(text) == len(want)


# ---------------------------------------------------------------- the int objects of ids

def _region_less(tok):
    """A copy of ``tok`` whose encoder makes each id's int as a list is built."""
    from bpe import _core
    old = _core._set_own_ints(False)
    try:
        return bpe.Tokenizer(tok.mergeable_ranks, pattern="o200k_base")
    finally:
        _core._set_own_ints(old)


def test_ids_are_plain_ints_equal_to_made_ones(cython_backend):
    """The region's objects behave as the ints PyLong_FromLong makes, for every id of a
    vocabulary (0, the small ints up to 256, and past them), through every list builder."""
    import pickle
    text = read_text("austen.txt")[:6000]
    tok = bpe.Tokenizer(bpe.Tokenizer.train([text], 600, min_frequency=1).mergeable_ranks, pattern="o200k_base")
    plain = _region_less(tok)
    core = tok._core
    for token, rank in tok.mergeable_ranks.items():
        (x,) = core.encode_piece_bytes(token)
        assert type(x) is int and x == rank and hash(x) == hash(rank) and x + 0 == rank
        assert str(x) == str(rank) and x.bit_length() == rank.bit_length() and -x == -rank
        assert pickle.loads(pickle.dumps(x)) == rank and x.to_bytes(4, "little") == rank.to_bytes(4, "little")
    ids = tok.encode_ordinary(text)
    assert ids == plain.encode_ordinary(text) and max(ids) > 256 and min(ids) < 256
    assert tok.encode_ordinary_batch([text, text[:99]]) == plain.encode_ordinary_batch([text, text[:99]])
    mine, made = tok.encode_with_offsets(text), plain.encode_with_offsets(text)
    assert (mine.ids, mine.offsets) == (made.ids, made.offsets)


def test_ids_outlive_their_encoder(cython_backend):
    """An encoder's region of int objects is kept while any of its ids is still referred to
    after the encoder goes, and freed once none is."""
    from bpe import _core
    gc.collect()
    before = _core._retired_int_regions()
    text = "zebra quagga okapi tapir " * 40
    tok = bpe.Tokenizer.train([text], 300, min_frequency=1)
    ids = tok.encode_ordinary(text)
    made = [int(str(x)) for x in ids]  # ints of their own, for comparing
    del tok
    gc.collect()
    assert _core._retired_int_regions() == before + 1
    other = bpe.Tokenizer.train(["other words entirely"] * 30, 280, min_frequency=1)
    assert other.encode_ordinary(text)  # (a new encoder's region, allocated after the first's)
    assert ids == made and [x * 2 for x in ids] == [x * 2 for x in made] and sum(ids) == sum(made)
    del ids
    gc.collect()
    assert _core._retired_int_regions() == before


def test_own_ints_hook(cython_backend):
    from bpe import _core
    assert _core._set_own_ints(False) is True
    assert _core._set_own_ints(True) is False


def test_reference_heap_merge_equals_its_scan(monkeypatch):
    """The pure backend merges long pieces with a heap (O(n log n)) and short ones by scanning
    every pair (O(n^2)): on random vocabularies and pieces (runs of one letter included: the
    tie-heavy case) the two give the same ids, with and without a rank limit."""
    from bpe import _reference

    rng = random.Random(5)
    alphabet = ["a", "b", "x", " ", "é", "🙂"]
    for round_ in range(25):
        ranks = _random_vocabulary(rng, alphabet, rng.choice([40, 150, 400]))
        encoder = _reference.Encoder(ranks, {})
        for _ in range(8):
            piece = "".join(rng.choice(alphabet) * rng.randint(1, 9) for _ in range(rng.randint(1, 40))).encode()
            limit = rng.choice([-1, len(ranks) // 2])
            monkeypatch.setattr(_reference, "SCAN_MAX", 10 ** 9)
            scanned = encoder.encode_piece_bytes(piece, limit)
            monkeypatch.setattr(_reference, "SCAN_MAX", 0)
            assert encoder.encode_piece_bytes(piece, limit) == scanned, (round_, piece, limit)


def test_tokenizers_shared_by_8_threads_with_mixed_calls(backend):
    """Eight threads share three tokenizers and mix every kind of call (encode, batches on
    the pool, offsets, counts, decode, decode streams, encode_bytes); each result equals the
    one the same call gives on one thread."""
    import concurrent.futures

    toks = [bpe.get_encoding(n) for n in ("r50k_base", "cl100k_base", "o200k_base")]
    lines = [line for line in read_text("mixed.txt").splitlines() if line][:40]

    def calls(tok, line):
        stream = tok.decode_stream()
        ids = tok.encode(line, allowed_special="all")
        return (ids, tok.encode_ordinary_batch([line, line[::-1]], num_threads=2),
                tok.encode_with_offsets(line).offsets, tok.count(line), tok.decode(ids),
                "".join(filter(None, (stream.step(i) for i in ids))) + stream.flush(),
                tok.encode_bytes(line.encode()[:-1]))

    want = {(t.name, line): calls(t, line) for t in toks for line in lines}
    jobs = [(t, line) for _ in range(3) for t in toks for line in lines]
    random.Random(3).shuffle(jobs)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda job: calls(*job), jobs))
    for (t, line), result in zip(jobs, got):
        assert result == want[(t.name, line)], (t.name, line)


def test_texts_that_outgrow_the_first_id_buffer(backend, threads_for_any_batch):
    """A text of more than 64 KiB starts with room for a quarter as many ids as bytes
    (bpe/_id_buffer.pxi) and grows it; these texts give about one id per two bytes, so
    every call below grows its buffer several times (and the word marks of the offsets)."""
    rng = random.Random(7)
    alphabet = "0123456789 .,;:!?()[]{}<>-+=*/\\\"'\nαβγ中文😀"
    paragraph = "".join(rng.choice(alphabet) for _ in range(2_000))
    enc = bpe.get_encoding("o200k_base")
    eot = enc.eot_token
    one = enc.encode_ordinary(paragraph)
    copies = 150 if backend == "cython" else 12
    text = "<|endoftext|>".join([paragraph] * copies)
    assert len(one) > len(paragraph.encode()) // 3  # the buffer must grow
    want = (one + [eot]) * (copies - 1) + one
    assert enc.encode(text, allowed_special="all") == want
    assert enc.encode_to_array(text, allowed_special="all").tolist() == want
    plain = "\n".join([paragraph] * copies)
    assert enc.decode(enc.encode_ordinary(plain)) == plain
    assert enc.encode_ordinary_batch([plain, paragraph, plain], num_threads=2) == \
        [enc.encode_ordinary(plain), one, enc.encode_ordinary(plain)]
    e = enc.encode_with_offsets(text, allowed_special="all")
    single = enc.encode_with_offsets(paragraph)
    assert e.ids == want
    width = len(paragraph) + len("<|endoftext|>")
    n_words = max(single.word_ids) + 2  # the paragraph's words and the special token
    for c in (0, copies // 2, copies - 1):
        at = c * (len(one) + 1)
        assert e.offsets[at:at + len(one)] == [(s + c * width, t + c * width) for s, t in single.offsets]
        assert e.word_ids[at:at + len(one)] == [w + c * n_words for w in single.word_ids]
    batch = enc.encode_with_offsets_batch([text, paragraph], allowed_special="all", num_threads=2)
    assert (batch[0].ids, batch[0].offsets) == (e.ids, e.offsets)
    assert enc._core.encode_pieces([paragraph] * 40) == enc._core.encode_pieces([paragraph]) * 40


def test_a_long_encode_lets_other_threads_run(backend):
    """The compiled core splits and merges without the GIL (the pure backend is plain
    Python, which the interpreter switches out of): a thread that ticks every millisecond
    keeps ticking while another thread encodes a long text."""
    import time

    enc = bpe.get_encoding("cl100k_base")
    rng = random.Random(3)  # words that do not repeat, so that no cache shortens the call
    letters = bytes((b" abcdefghijklmnopqrstuvwxyz" * 10)[:256])
    size = 4_000_000 if backend == "cython" else 150_000
    text = rng.randbytes(size).translate(letters).decode()
    ticks = []
    running = threading.Event()
    stop = threading.Event()

    def tick():
        running.set()
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    running.wait()
    start = time.perf_counter()
    ids = enc.encode_ordinary(text)
    end = time.perf_counter()
    stop.set()
    ticker.join()
    during = [t for t in ticks if start < t < end]
    assert ids and len(during) >= 5, (len(during), end - start)  # (a blocked ticker: 0 or 1)


def test_ctrl_c_stops_a_loop_of_long_encodes(tmp_path):
    """SIGINT raises KeyboardInterrupt as soon as the call running returns."""
    import os
    import signal
    import subprocess
    import sys
    import time

    if not hasattr(signal, "SIGINT") or sys.platform == "win32":
        pytest.skip("POSIX signals")
    # (Python leaves SIGINT ignored in a process started with it ignored, as a shell does for
    # a command run in the background: the child puts the usual handler back.  The child runs
    # in an empty directory, which `python -c` puts first on its path, so that it imports the
    # bpe this process imported, not a source tree in the working directory.)
    script = ("import bpe, signal, sys\n"
              "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "enc = bpe.get_encoding('cl100k_base')\n"
              "text = open(bpe.sample_path(), encoding='utf-8').read() * 20\n"
              "print('ready', bpe.backend, bpe.__file__, flush=True)\n"
              "while True:\n"
              "    enc.encode_ordinary(text)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=tmp_path,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path)))
    try:
        ready = child.stdout.readline().decode().strip()
        assert ready == f"ready {bpe.backend} {bpe.__file__}"
        time.sleep(0.3)
        sent = time.perf_counter()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        waited = time.perf_counter() - sent
    finally:
        child.kill()
    assert b"KeyboardInterrupt" in err and child.returncode != 0, err[-500:]
    assert waited < 30, waited


def _text_of_kind(rng, widest, n_chars):
    """Text whose widest code point is ``widest``: ASCII runs of 0..40 characters (so that
    the 16-unit blocks of bpe/_str_utf8.h start everywhere) between wider characters."""
    wide = [c for c in ("é", "ÿ", "ß", "Ω", "中", "\uffef", "😀", "\U0010fffd") if ord(c) <= ord(widest)]
    words = []
    size = 0
    while size < n_chars:
        run = "".join(rng.choice("abc XYZ.\n'") for _ in range(rng.randrange(41)))
        words.append(run + rng.choice(wide))
        size += len(words[-1])
    return "".join(words) + widest


@pytest.mark.parametrize("widest", ["\xff", "\uffef", "\U0010fffd"])
def test_the_core_converts_every_str_kind_to_its_utf8(cython_backend, widest):
    """bpe/_str_utf8.h's conversion gives CPython's bytes for texts of each kind: ASCII runs
    of every length around single and dense runs of wider characters (the 16-unit blocks,
    their ASCII starts and the runs that follow start everywhere), at every length around a
    block, and a lone surrogate anywhere in a block still raises as CPython does."""
    from bpe import _core

    rng = random.Random(ord(widest) + 1)
    wide = [c for c in ("\x80", "\xe9", "\xff", "\u0100", "\u07ff", "\u0800", "\u4e2d", "\uffef",
                        "\U00010000", "\U0001f600", "\U0010fffd") if ord(c) <= ord(widest)]
    for trial in range(3000):
        parts = []
        for _ in range(rng.randrange(1, 8)):
            parts.append("".join(rng.choice("ab .\n") for _ in range(rng.randrange(0, 40))))
            parts.append("".join(rng.choice(wide) for _ in range(rng.choice((1, 1, 2, 5, 17, 40)))))
        text = "".join(parts)[:rng.randrange(1, 200)] + widest
        assert _core._utf8_form(text) == text.encode("utf-8"), ascii(text)
        if widest != "\xff" and trial % 10 == 0:
            at = rng.randrange(len(text) + 1)
            with pytest.raises(UnicodeEncodeError):
                _core._utf8_form(text[:at] + rng.choice("\ud800\udbff\udc00\udfff") + text[at:])
    for n in range(1, 70):
        for c in wide:
            for text in (c * n, "a" * n + c, c + "a" * n, (c + "a") * n):
                assert _core._utf8_form(text) == text.encode("utf-8"), ascii(text)


def test_a_utf8_form_that_cpython_keeps_is_read_in_place(cython_backend):
    """A str whose UTF-8 form CPython already keeps (some code asked for it through
    PyUnicode_AsUTF8AndSize) is read in place, with the same bytes and ids; encoding never
    makes that form itself (free-threaded builds convert as before)."""
    import ctypes
    import sysconfig

    from bpe import _core

    ask = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    ask.restype = ctypes.c_char_p
    ask.argtypes = [ctypes.py_object, ctypes.c_void_p]
    kept_is_read = not sysconfig.get_config_var("Py_GIL_DISABLED")
    enc = bpe.get_encoding("o200k_base")
    oracle = tiktoken_encoding("o200k_base")
    for text in ("naïve café – “quoted” " * 50, "中文的文本。" * 100, "emoji 🙂 and ÿ " * 40):
        fresh = text.encode("utf-8").decode("utf-8")
        assert not _core._utf8_in_place(fresh)
        want = enc.encode_ordinary(fresh)
        assert not _core._utf8_in_place(fresh)      # (encoding made no form to keep)
        ask(fresh, None)
        assert _core._utf8_in_place(fresh) == kept_is_read
        assert _core._utf8_form(fresh) == text.encode("utf-8")
        assert enc.encode_ordinary(fresh) == want == oracle.encode_ordinary(text)
        assert enc.encode_batch([fresh, fresh]) == [want, want]
    assert _core._utf8_in_place("plain ASCII")


@pytest.mark.parametrize("widest", ["ÿ", "\uffef", "\U0010fffd"])
def test_every_str_kind_encodes_as_its_utf8_bytes(backend, widest):
    """A str of 1-, 2- or 4-byte characters is converted to UTF-8 by the core itself
    (bpe/_str_utf8.h: ASCII runs 16 units at a time, the buffer sized for the worst case up
    to 2**20 characters and measured first above that): every call gives tiktoken's ids, and
    a lone surrogate still goes through CPython's conversion (repaired as tiktoken does)."""
    oracle = tiktoken_encoding("o200k_base")
    enc = bpe.get_encoding("o200k_base")
    rng = random.Random(ord(widest))
    texts = [_text_of_kind(rng, widest, n) for n in (1, 15, 16, 17, 33, 300, 5_000)]
    texts += [widest * n for n in (1, 8, 16, 17)]
    for text in texts:
        want = oracle.encode_ordinary(text)
        assert enc.encode_ordinary(text) == want
        assert enc.encode(text) == want
        assert enc.count(text) == len(want)
        assert enc.encode_with_offsets(text).ids == want
        assert enc.decode(want) == text
    assert enc.encode_ordinary_batch(texts, num_threads=2) == [oracle.encode_ordinary(t) for t in texts]
    for text in (texts[3][:9] + "\ud800" + texts[3][9:], "\udfff" + widest):
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)
        assert enc.encode_ordinary_batch([text, widest]) == [oracle.encode_ordinary(text), oracle.encode_ordinary(widest)]
    if backend == "cython":
        # over 2**20 characters the UTF-8 size is counted first (and the conversion runs
        # without the GIL); a surrogate at the very end must still be found
        big = _text_of_kind(rng, widest, (1 << 20) + 100)
        assert enc.encode_ordinary(big) == oracle.encode_ordinary(big)
        assert enc.encode_ordinary(big + "\udc00") == oracle.encode_ordinary(big + "\udc00")
