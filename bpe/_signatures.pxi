# Pair signatures for the merge loop of bpe/_core.pyx (textually included there, like
# _charunits.pxi).  They let the merge loop skip the lookup of most pairs of parts that make
# no token; they do not merge, split text or decide any id on their own.

# --------------------------------------------------------------------------------------------
# Why a pair can be skipped
# --------------------------------------------------------------------------------------------
#
# Whenever BPE merges two parts a and b into a token T, (a, b) is T's canonical split: the two
# parts that BPE on T's bytes alone holds just before it forms T (the splits of
# bpe/_backtrack.pxi).  No part crosses the ends of T's span before T forms, so the merges
# inside that span are exactly those of the run on T's bytes alone.  A pair (a, b) that is
# not the canonical split of any token is therefore never merged; and since the merge loop
# merges the lowest-ranked pair (leftmost among equals), a pair it never merges is never that
# minimum, so answering "no token" for it changes no choice.  This holds for character units
# too (bpe/_charunits.pxi): their merges are a subset of byte-level BPE's.
#
# The signatures are one Bloom filter over the canonical splits: each split (x, y) sets two
# bits of one 64-bit word, the word and both bits chosen by a hash of the pair.  A pair (a, b)
# with either bit clear is not a canonical split and needs no lookup: no pair cache, no
# hashing of bytes, no filter word, no slot.  The filter has at least 10 bits per id, rounded
# up to a power of two (256 KiB for o200k_base, 128 KiB for cl100k_base), so that the merge
# loop reads it from the core's own cache.  Of the pairs that are no split, about 3.5% pass
# (random pairs of o200k's 2,000 lowest ids, the parts most pieces are made of); pairs that
# pass are looked up as before.  Two bits in one word cost one read where two words would
# cost two.  Per-token signatures (a 64-bit mask of each token's partners on either side)
# were read at random from 16 bytes per id, and a frequent part's masks have most of their
# bits set: 10% of the pairs of those 2,000 ids that are no split passed them.
#
# The splits come from the backtracking encoder's first build phase.  When a table's ranks are
# not in merge order (a token that BPE makes on its own bytes has no split among lower
# ranks), that phase reports the splits unusable and the merge loop runs without signatures.
# Identity is checked by the test suite with signatures on and off, against tiktoken on the
# corpora and against the pure-Python reference on random and out-of-order vocabularies.

ctypedef struct Signatures:
    uint64_t* sig            # the filter's words (a power of two of them)
    uint64_t mask            # their number less one
    int state                # SIG_UNBUILT, SIG_READY or SIG_UNAVAILABLE (read with acquire)
    int enabled              # 0: no pair is skipped (for tests and A/B runs)
    Py_ssize_t seen          # pieces merged so far (counted up to `after`, then built)
    Py_ssize_t after         # build once this many pieces went through the merge loop


cdef enum:
    SIG_UNBUILT = 0
    SIG_READY = 1
    SIG_UNAVAILABLE = 2
    # Building the splits costs about 75 ms for o200k_base (they save some 90 ns on each
    # piece of Cyrillic that is not a token), so they wait until the encoder has merged this
    # many pieces: short texts never pay for them, long runs build them early on.
    SIG_AFTER = 20000


cdef inline uint64_t _split_hash(tok_t left, tok_t right) noexcept nogil:
    # a pair's hash: the filter word is its low bits, the two bits come from its top twelve
    return bpe_fold_mul(((<uint64_t><uint32_t>left << 32) | <uint32_t>right) ^ 0x243F6A8885A308D3ULL,
                        0x9E3779B97F4A7C15ULL)


cdef inline uint64_t _split_bits(uint64_t h) noexcept nogil:
    return ((<uint64_t>1) << ((h >> 52) & 63)) | ((<uint64_t>1) << (h >> 58))


cdef inline bint sig_pass(const uint64_t* sig, uint64_t mask, tok_t left, tok_t right) noexcept nogil:
    """Whether (left, right) may be the canonical split of some token (False: it is not);
    ``mask``: the filter's words less one."""
    cdef uint64_t h = _split_hash(left, right)
    cdef uint64_t bits = _split_bits(h)
    return (sig[h & mask] & bits) == bits


cdef int _sig_build_with_gil(Signatures* s, Backtrack* bt, const TokenTable* t,
                             const tok_t* byte_rank) noexcept:
    # build once (the GIL makes other threads wait), then publish the state
    cdef int state = s.state
    cdef Py_ssize_t i, n = t.n_ids
    cdef uint64_t h, words = 64
    cdef tok_t l, r
    cdef uint64_t* sig
    if state != SIG_UNBUILT:
        return state
    state = SIG_UNAVAILABLE                  # the merge loop then looks every pair up
    if bt_splits_usable(bt, t, byte_rank):
        while words * 64 < 10 * <uint64_t>n:    # (at least 10 bits per id)
            words <<= 1
        sig = <uint64_t*>calloc(words, sizeof(uint64_t))
        if sig != NULL:
            for i in range(n):
                l = bt.left[i]
                r = bt.right[i]
                if l != NO_TOKEN:
                    h = _split_hash(l, r)
                    sig[h & (words - 1)] |= _split_bits(h)
            s.sig = sig
            s.mask = words - 1
            state = SIG_READY
    bpe_store_release(&s.state, state)
    return state


cdef inline const uint64_t* sig_usable(Signatures* s, Backtrack* bt, const TokenTable* t,
                                       const tok_t* byte_rank) noexcept nogil:
    """The signatures, or NULL when unavailable, turned off or not built yet (called once
    per piece that goes through the merge loop; builds them on the ``after``-th call)."""
    cdef int state = bpe_load_acquire(&s.state)
    if state == SIG_UNBUILT:
        if bpe_claim(&s.seen) < s.after:
            return NULL
        with gil:
            state = _sig_build_with_gil(s, bt, t, byte_rank)
    return s.sig if state == SIG_READY and s.enabled else NULL
