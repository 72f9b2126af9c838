# Pair signatures and the split table for the merge loop of bpe/_core.pyx (textually included
# there, like _charunits.pxi).  The signatures let the merge loop skip the lookup of most pairs
# of parts that make no token; the split table answers the others.  They do not merge or
# split text.

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
    uint64_t* split          # the split table (see below; NULL: none, ask the pair cache)
    uint64_t split_mask      # its slots less one
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


# --------------------------------------------------------------------------------------------
# The split table
# --------------------------------------------------------------------------------------------
#
# By the rule above, the pairs that can merge are exactly the canonical splits, one per token
# that has one, so a table of all of them answers every pair question of the merge loop:
# (a, b) -> the rank of the token it splits, or "no token" when absent.  A pair that passes
# the filter is looked up there, one probe into a table that lives in the L2/L3 caches,
# instead of the pair cache and, on its misses, hashing the parts' bytes into the much larger
# token table.  Slots are 64-bit words, (left << 43) | (right << 22) | (rank << 1) | 1 (the
# pair cache's form), 0 for an empty one; linear probing from bits of the filter's hash,
# at most 4/5 full (o200k_base: 262,144 slots, 2 MiB; cl100k_base: 1 MiB).  Tables whose
# ids need more than 21 bits have none.  A table of 2 MiB or more is allocated like the token
# table (bpe_big_alloc: 2 MiB aligned, huge pages where Linux allows), so that its lookups,
# which land anywhere in it, do not also miss the TLB.


cdef enum:
    SPLIT_ID_LIMIT = 0x1FFFFF        # ranks and ids below this fit the table's fields


cdef inline uint64_t _split_slot(uint64_t h, uint64_t mask) noexcept nogil:
    # (bits that neither the filter's word index nor its two bits use)
    return (h >> 20) & mask


cdef inline uint64_t pair_key_word(tok_t left, tok_t right) noexcept nogil:
    """A pair's word with no answer in it: the split table's and the pair cache's form."""
    return (<uint64_t><uint32_t>left << 43) | (<uint64_t><uint32_t>right << 22) | 1


cdef inline tok_t sig_rank(const uint64_t* sig, uint64_t sig_mask, const uint64_t* split,
                           uint64_t split_mask, tok_t left, tok_t right) noexcept nogil:
    """The rank of the token whose canonical split is (left, right), else NO_RANK, from the
    filter (``sig``, its words less one) and then the split table (``split``, its slots less
    one)."""
    return sig_rank_hashed(sig, sig_mask, split, split_mask, left, right, _split_hash(left, right))


cdef inline tok_t sig_rank_hashed(const uint64_t* sig, uint64_t sig_mask, const uint64_t* split,
                                  uint64_t split_mask, tok_t left, tok_t right, uint64_t h) noexcept nogil:
    # sig_rank with the pair's hash (split_hash) already known
    cdef uint64_t bits = _split_bits(h)
    cdef uint64_t want, w, i
    if (sig[h & sig_mask] & bits) != bits:
        return NO_RANK
    want = pair_key_word(left, right)
    i = _split_slot(h, split_mask)
    while True:
        w = split[i]
        if (w & ~(<uint64_t>SPLIT_ID_LIMIT << 1)) == want:
            return <tok_t>((w >> 1) & SPLIT_ID_LIMIT)
        if w == 0:
            return NO_RANK
        i = (i + 1) & split_mask


cdef inline uint64_t split_hash_fetched(const uint64_t* split, uint64_t split_mask, tok_t left,
                                        tok_t right) noexcept nogil:
    """The pair's hash for sig_rank_hashed, with the split-table line it reads first on its
    way."""
    cdef uint64_t h = _split_hash(left, right)
    bpe_prefetch(&split[_split_slot(h, split_mask)])
    return h


ctypedef struct SplitView:
    # what the merge loop reads of an Encoder's signatures (copied into each call's Local once
    # they are built and enabled)
    const uint64_t* sig      # Signatures.sig, else NULL
    uint64_t sig_mask        # Signatures.mask (with sig)
    const uint64_t* split    # Signatures.split with sig, else NULL
    uint64_t split_mask      # Signatures.split_mask (with split)
    bint ahead               # whether the merge loop fetches lines ahead (split_pair_fetch)


cdef enum:
    # the merge loop fetches ahead (split_pair_fetch) where the split table has this many
    # slots or more (2 MiB: o200k_base), whose lines are mostly out of the core's own cache;
    # cl100k_base's 1 MiB table mostly answers from it, and fetching ahead there cost
    # multilingual text about 2.5% (paired rounds, both orders)
    SPLIT_AHEAD_SLOTS = 1 << 18


cdef inline void split_pair_fetch(const SplitView* v, tok_t left, tok_t right) noexcept nogil:
    """Start the filter word and the split-table line of the pair (left, right) on their way,
    for a question the merge loop may ask soon (``v.ahead`` set).  The merge loop's steps wait
    on each other's answers, so a line fetched only when its question comes puts the whole
    memory latency on that chain; a pair that is never asked costs a hash and two prefetches.
    The filter word too: its 256 KiB are not all in the nearest cache either."""
    cdef uint64_t h = _split_hash(left, right)
    bpe_prefetch(&v.sig[h & v.sig_mask])
    bpe_prefetch(&v.split[_split_slot(h, v.split_mask)])


cdef void _split_table_build(Signatures* s, const Backtrack* bt, Py_ssize_t n) noexcept nogil:
    # the table of the n tokens' splits (none when an id is too large or memory is short)
    cdef Py_ssize_t i, count = 0
    cdef uint64_t slots = 16, j, h
    cdef tok_t l, r
    if n >= SPLIT_ID_LIMIT:
        return
    for i in range(n):
        if bt.left[i] != NO_TOKEN:
            count += 1
    while 4 * slots < 5 * <uint64_t>count:    # load <= 4/5
        slots <<= 1
    s.split = <uint64_t*>bpe_big_alloc(slots * sizeof(uint64_t))
    if s.split == NULL:
        return
    memset(s.split, 0, slots * sizeof(uint64_t))
    s.split_mask = slots - 1
    for i in range(n):
        l = bt.left[i]
        r = bt.right[i]
        if l == NO_TOKEN:
            continue
        h = _split_hash(l, r)
        j = _split_slot(h, s.split_mask)
        while s.split[j] != 0:
            j = (j + 1) & s.split_mask
        s.split[j] = pair_key_word(l, r) | (<uint64_t>i << 1)


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
            _split_table_build(s, bt, n)
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
