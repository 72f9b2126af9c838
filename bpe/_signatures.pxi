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
# Each token x keeps two 64-bit signatures: bit h(y) of the first is set for every token split
# as (x, y), bit h(w) of the second for every token split as (w, x), where h is 6 bits of a
# hash of the id.  A pair (a, b) whose bit is clear in a's first or b's second signature is
# not a canonical split and needs no lookup: no pair cache, no hashing of bytes, no filter
# word, no slot.  On the corpora about 96% (Cyrillic), 99% (Hangul) and 77% (English) of the
# pairs that make no token are skipped so; pairs that pass are looked up as before.  The
# signatures take 16 bytes per id (3.2 MB for o200k_base); a part's are read once it forms and
# prefetched as soon as it is a candidate.
#
# The splits come from the backtracking encoder's first build phase.  When a table's ranks are
# not in merge order (a token that BPE makes on its own bytes has no split among lower
# ranks), that phase reports the splits unusable and the merge loop runs without signatures.
# Identity is checked by the test suite with signatures on and off, against tiktoken on the
# corpora and against the pure-Python reference on random and out-of-order vocabularies.

ctypedef struct Signatures:
    uint64_t* sig            # 2 words per id: [2x] splits (x, .), [2x + 1] splits (., x)
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


cdef inline unsigned int _sig_bit(tok_t x) noexcept nogil:
    return (<uint32_t>x * 0x9E3779B1U) >> 26


cdef inline bint sig_pass(const uint64_t* sig, tok_t left, tok_t right) noexcept nogil:
    """Whether (left, right) may be the canonical split of some token (False: it is not)."""
    return ((sig[2 * left] >> _sig_bit(right)) & (sig[2 * right + 1] >> _sig_bit(left)) & 1) != 0


cdef int _sig_build_with_gil(Signatures* s, Backtrack* bt, const TokenTable* t,
                             const tok_t* byte_rank) noexcept:
    # build once (the GIL makes other threads wait), then publish the state
    cdef int state = s.state
    cdef Py_ssize_t i, n = t.n_ids
    cdef tok_t l, r
    cdef uint64_t* sig
    if state != SIG_UNBUILT:
        return state
    state = SIG_UNAVAILABLE                  # the merge loop then looks every pair up
    if bt_splits_usable(bt, t, byte_rank):
        sig = <uint64_t*>calloc(2 * n + 2, sizeof(uint64_t))
        if sig != NULL:
            for i in range(n):
                l = bt.left[i]
                r = bt.right[i]
                if l != NO_TOKEN:
                    sig[2 * l] |= (<uint64_t>1) << _sig_bit(r)
                    sig[2 * r + 1] |= (<uint64_t>1) << _sig_bit(l)
            s.sig = sig
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
