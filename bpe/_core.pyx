"""Compiled encoding core: the token table and rank-priority BPE over pre-tokens.

``Encoder`` owns a TokenTable (see ``_core.pxd``) and encodes a list of pre-tokens (``str``)
into token ids with exactly tiktoken's semantics: a pre-token that is itself a token is
emitted directly; otherwise, starting from single bytes, the adjacent pair whose concatenation
has the lowest rank is merged (the leftmost among equal ranks) until no adjacent pair is a
token.  The merging runs without the GIL, so threads encoding different texts run in parallel.

With the named patterns it splits text itself (``bpe._scanner``) and finds the special tokens
its caller allows or disallows (``Specials``, bpe/_specials.pxi), so that whole ``encode`` and
``encode_batch`` calls run without the GIL.  It does not decide that policy (``bpe.special``),
split with custom regexes (``bpe.patterns``) or read files; it trusts its caller to hand it
well-formed tables (checked in ``__init__``).

Performance notes
-----------------
* The merge loop starts from units: bytes, or whole characters (and a piece's leading space
  with its first character) where that provably gives the same ids (bpe/_charunits.pxi);
  on CJK, Hangul or Cyrillic text that halves the merges.
* Up to LINEAR_MAX (128) units: each merge step scans the parts for the lowest rank
  (tiktoken's own approach), O(n^2) but with tiny constants and no allocation: its minimum
  takes eight keys per pair of vector instructions, fewer instructions than the heap's
  pushes and pops up to this size (rules of '#' or '=' in code run to 60-80 units).
* More units: a min-heap of merge candidates keyed by (rank, start) with lazy
  invalidation, O(n log n), same result.
* Pairs of parts that are the canonical split of no token are skipped without a lookup,
  and the others are answered by a table of all canonical splits (bpe/_signatures.pxi);
  both built once an encoder has merged 20,000 pieces.
* Pieces are found 32 at a time and what their lookups read is prefetched before any is
  encoded.
* Each id's int object lies at a fixed place in a region the encoder owns
  (bpe/_id_ints.pxi), so a list of ids is one reference increment per id, prefetched 128
  ids ahead.
* Pieces over BT_MIN_BYTES (256) bytes (100k spaces, a whole document with
  ``pattern=None``): the backtracking encoder (see its section), linear in practice.  Its
  tables (about 20 MB for o200k_base, 0.1 s to build) are built on the first such piece.
* A text's UTF-8 bytes: an ASCII ``str`` is read in place, and so is one that already
  carries CPython's UTF-8 copy; any other is converted into a buffer freed after the call
  (bpe/_str_utf8.pxi), so the ``str`` does not keep a UTF-8 copy.
  ``encode_pieces`` reads each piece's UTF-8 form in place (CPython caches it on the object),
  gathered with the GIL held, then merges all pieces in one GIL-free pass.
"""

# cython: language_level=3

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.long cimport PyLong_FromLong
from cpython.object cimport PyTypeObject
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from bpe._scanner cimport PAT_NONE, scan_piece, piece_bounds, bpe_ctz64, bpe_set_wide_classifier

from bisect import bisect_right
from bpe._scanner import PATTERN_IDS
from bpe.errors import DisallowedSpecialTokenError, InputTooLongError, VocabularyError

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    # for decoding: an item of a list of ids, read without reference counting or exceptions
    PyObject* PyList_GET_ITEM_PTR "PyList_GET_ITEM"(object lst, Py_ssize_t i) noexcept
    bint PyLong_CheckExact_PTR "PyLong_CheckExact"(PyObject* o) noexcept
    Py_ssize_t PyLong_AsSsize_t_PTR "PyLong_AsSsize_t"(PyObject* o) noexcept
    PyObject* PyErr_Occurred() noexcept
    void PyErr_Clear() noexcept
    PyObject* PyBytes_FromStringAndSize_PTR "PyBytes_FromStringAndSize"(const char* s, Py_ssize_t n) noexcept
    char* PyBytes_AS_STRING_PTR "PyBytes_AS_STRING"(PyObject* b) noexcept
    int _PyBytes_Resize(PyObject** b, Py_ssize_t n) noexcept
    # for reading a vocabulary (bpe/_vocab_form.pxi): dict items and str characters in place
    bint PyDict_Next(object d, Py_ssize_t* pos, PyObject** key, PyObject** value) noexcept
    bint PyUnicode_CheckExact_PTR "PyUnicode_CheckExact"(PyObject* o) noexcept
    Py_ssize_t PyUnicode_GET_LENGTH_PTR "PyUnicode_GET_LENGTH"(PyObject* o) noexcept
    int PyUnicode_KIND_PTR "PyUnicode_KIND"(PyObject* o) noexcept
    const void* PyUnicode_DATA_PTR "PyUnicode_DATA"(PyObject* o) noexcept
    Py_UCS4 PyUnicode_READ_PTR "PyUnicode_READ"(int kind, const void* data, Py_ssize_t i) noexcept

# The raw C helpers (bpe/_c_helpers.h): word loads and hashing of short byte strings, big
# allocations, the pair cache's atomics, prefetch, the batch's claim counter and yield; then
# the thread-local piece caches (bpe/_piece_cache.h).
cdef extern from "_c_helpers.h":
    uint64_t bpe_word(const uint8_t* p, Py_ssize_t n) noexcept nogil
    uint64_t bpe_word_inside(const uint8_t* p, Py_ssize_t n) noexcept nogil
    uint32_t bpe_le32(uint32_t w) noexcept nogil
    int32_t bpe_min_keys(const int32_t* key, Py_ssize_t m) noexcept nogil
    void bpe_copy16(char* dst, const uint8_t* src) noexcept nogil
    uint64_t bpe_hash16(const uint8_t* p, Py_ssize_t n) noexcept nogil
    uint64_t bpe_fold_mul(uint64_t x, uint64_t y) noexcept nogil
    uint64_t bpe_hash16w(uint64_t a, const uint8_t* p, Py_ssize_t n) noexcept nogil
    uint64_t bpe_hash8w(uint64_t a, Py_ssize_t n) noexcept nogil
    object bpe_list_unfilled(Py_ssize_t n)
    PyObject** bpe_list_items(object lst) noexcept
    bint bpe_same_tail(const uint8_t* a, const uint8_t* b, Py_ssize_t n) noexcept nogil
    void* bpe_big_alloc(size_t size) noexcept nogil
    void* bpe_big_calloc(size_t size, void** base) noexcept nogil
    enum:
        BPE_PAIR_SLOTS
        BPE_PAIR_NONE
        BPE_PAIR_CACHE
    unsigned long long* bpe_pair_slot(unsigned long long* base, unsigned long long key) noexcept nogil
    unsigned long long bpe_pair_load(unsigned long long* p) noexcept nogil
    void bpe_pair_store(unsigned long long* p, unsigned long long v) noexcept nogil
    void bpe_prefetch(const void* p) noexcept nogil
    Py_ssize_t bpe_claim(Py_ssize_t* p) noexcept nogil
    void bpe_pause() noexcept nogil
    int bpe_load_acquire(const int* p) noexcept nogil          # the lazily built tables' states
    void bpe_store_release(int* p, int v) noexcept nogil
    void bpe_char_index(const uint8_t* p, Py_ssize_t n, uint64_t* index) noexcept nogil  # offsets' characters
    Py_ssize_t bpe_continuations_before(const uint64_t* index, Py_ssize_t e) noexcept nogil


cdef extern from "_piece_cache.h":
    ctypedef struct bpe_cache_entry:
        unsigned int gen
        int ids[3]
        unsigned long long head
        unsigned long long rest
    ctypedef struct bpe_long_entry:
        unsigned int gen
        unsigned char length
        unsigned char n_ids
        unsigned char bytes[30]
        int ids[7]
    ctypedef struct bpe_ring_slot:
        pass
    ctypedef struct bpe_ring_head:
        unsigned int gen
        unsigned short length
        unsigned short n_ids
    ctypedef struct bpe_caches:
        bpe_cache_entry* sets
        unsigned long long ring_size
    bpe_caches bpe_caches_of_thread() noexcept nogil
    void bpe_caches_setup() noexcept
    bpe_cache_entry* bpe_cache_set(const bpe_caches* c, unsigned long long h) noexcept nogil
    bpe_long_entry* bpe_long_first(const bpe_caches* c, unsigned long long h) noexcept nogil
    bpe_long_entry* bpe_long_second(const bpe_caches* c, unsigned long long h) noexcept nogil
    bpe_ring_slot* bpe_ring_slot_of(const bpe_caches* c, unsigned long long h) noexcept nogil
    void bpe_ring_pair_swap(bpe_ring_slot* x) noexcept nogil
    const bpe_ring_head* bpe_ring_entry(const bpe_caches* c, const bpe_ring_slot* s, unsigned long long h) noexcept nogil
    size_t bpe_ring_entry_size(size_t n, size_t k) noexcept nogil
    unsigned char* bpe_ring_bytes(const bpe_ring_head* e) noexcept nogil
    int* bpe_ring_ids(const bpe_ring_head* e) noexcept nogil
    bpe_ring_head* bpe_ring_add(const bpe_caches* c, bpe_ring_slot* s, unsigned long long h, size_t size) noexcept nogil
    bpe_ring_head* bpe_ring_append(const bpe_caches* c, size_t size, unsigned long long* pos1) noexcept nogil
    const bpe_ring_head* bpe_ring_at(const bpe_caches* c, unsigned long long pos1) noexcept nogil
    bint bpe_long_holds_short(const bpe_caches* c, const bpe_long_entry* a, unsigned char tag) noexcept nogil
    bpe_long_entry* bpe_long_place(const bpe_caches* c, unsigned long long h, unsigned int gen) noexcept nogil
    bpe_long_entry* bpe_long_short_place(const bpe_caches* c, unsigned long long h, unsigned char tag) noexcept nogil
    size_t bpe_cache_sets
    long bpe_live_blocks_now() noexcept



import operator


cdef enum:
    # The negative results of the GIL-free encoding loops (which return counts otherwise).
    OUT_OF_MEMORY = -1
    PIECE_TOO_LONG = -2      # a pre-token of 2 GiB or more (ids are counted in 32 bits)
    NOT_ENCODED = -3         # the backtracking encoder leaves the piece to the merge loop
    FOUND_DISALLOWED = -4    # _encode_split: the text holds a disallowed special token
    OFFSETS_DISAGREE = -5    # char_offsets: the word marks and token lengths disagree (a bug)
    TEXT_TOO_LONG = -6       # offsets of a text of 4 GiB or more (they are counted in 32 bits)
    PIECE_MISSED = -7        # _piece_known: not a token, nor in its set of the piece cache
    IDS_GONE = -8            # _entry_ids: the entry holds the piece, but the ring no longer its ids


cdef int _check_status(Py_ssize_t status) except -1:
    """Raise for the negative results of the GIL-free encoding loops (FOUND_DISALLOWED is
    raised by the caller, which knows the text)."""
    if status == FOUND_DISALLOWED:
        raise RuntimeError("bpe: a disallowed special token was found but not reported")
    if status == OFFSETS_DISAGREE:
        raise RuntimeError("bpe: token offsets disagree with the text (please report this input)")
    if status == PIECE_TOO_LONG:
        raise InputTooLongError("a single pre-token of 2 GiB or more cannot be encoded; split the text")
    if status == TEXT_TOO_LONG:
        raise InputTooLongError("offsets are found for texts under 4 GiB of UTF-8 (they are 32-bit); split the text, "
                         "or use encode for the ids alone")
    if status < 0:
        raise MemoryError("bpe: out of memory while encoding")
    return 0


# --------------------------------------------------------------------------------------------
# The parts, each using only what stands above it
# --------------------------------------------------------------------------------------------

include "_token_table.pxi"   # token bytes <-> id: the TokenTable of _core.pxd
include "_vocab_form.pxi"    # a tokenizer.json vocabulary and merge list read into a table
include "_id_buffer.pxi"     # the growable array the encoding loops write ids into
include "_id_ints.pxi"       # the int objects of ids, and lists of them
include "_str_utf8.pxi"      # the UTF-8 bytes of a str, converted word by word
include "_offsets.pxi"       # character offsets and word ids of encoded tokens
include "_specials.pxi"      # finding special-token text in UTF-8
include "_backtrack.pxi"     # the backtracking encoder, for pieces over 256 bytes
include "_signatures.pxi"    # pair signatures, which let the merge loop skip most pairs
include "_charunits.pxi"     # whole-character units for the merge loop
include "_merges.pxi"        # Hugging Face's merge-list rule




# --------------------------------------------------------------------------------------------
# Rank-priority BPE of one piece
# --------------------------------------------------------------------------------------------

# Each Encoder keeps a direct-mapped cache of (left id, right id) -> rank of the concatenation
# (NO_RANK: no token), so that the merge loop's repeated questions ("do these two parts make a
# token?") are answered from one word instead of hashing bytes into the large token table,
# whose lines are mostly out of the CPU's caches.  An entry is one 64-bit word,
# (left << 43) | (right << 22) | (code << 1) | 1, with 21-bit fields (code: the rank, or
# BPE_PAIR_NONE for no token) and 0 for an empty slot.  A word names its own key, so threads
# share the table without locks: words are read and written whole (relaxed atomics), and a
# word that one thread reads is always one that some thread wrote for that key, with the
# right answer (the answer depends only on the vocabulary).  Encoders whose ids need more than
# 21 bits, or builds without lock-free 64-bit atomics, have no cache and look every pair up.
# Once the split table is built (bpe/_signatures.pxi), it answers every question and the
# cache is no longer asked.
#
# 65,536 words (512 KiB).  It replaced a thread-local cache of 8,192 16-byte entries tagged
# with the encoder's generation: twice the memory per entry, and on the prose corpora about
# two thirds of its misses were pairs it had held before and lost to a collision (o200k_base,
# 2.4 MB: 91K lookups in the token table per pass, 34% of them distinct pairs).  Paired
# in-process rounds with tiktoken between them (thread CPU time, 31 rounds): o200k prose
# +4.8-5.1%; a batch of prose and code +2.9% on one thread and +2.1% on two (sharing the
# table costs the threads nothing measurable); multilingual even.


ctypedef struct Tables:
    # what encoding a piece reads: the token table, the ids of the single bytes and of the
    # two-byte tokens, and the accelerators built on first use (each in its include above)
    TokenTable table
    tok_t byte_rank[256]
    tok_t* pair2             # rank of each two-byte token (NO_RANK if none), 65536 entries
    Backtrack bt             # the backtracking encoder
    CharUnits cu             # whole-character units
    Signatures sigs          # pair signatures
    MergeList ml             # Hugging Face's merge-list rule instead of ranks (slots NULL: not used)


ctypedef struct Local:
    # what the merge functions need of the calling thread: the Encoder's generation (tags
    # piece-cache entries), the addresses of this thread's piece caches and the Encoder's
    # pair cache
    uint64_t gen
    unsigned long long* pairs    # the Encoder's pair cache (NULL: none)
    bpe_caches caches            # this thread's piece caches (bpe/_piece_cache.h)
    SplitView sv             # the signatures once built and enabled (sv.sig NULL until then)
    Signatures* sigs         # the Encoder's (NULL: none)
    const MergeList* ml      # the Encoder's merge list when it runs HF's rule, else NULL


cdef inline Local _local(uint64_t gen, Signatures* sigs, unsigned long long* pairs) noexcept nogil:
    cdef Local loc
    loc.gen = gen
    loc.pairs = pairs
    loc.caches = bpe_caches_of_thread()
    loc.sv.sig = NULL            # set by the first piece that goes through the merge loop
    loc.sv.sig_mask = 0
    loc.sv.split = NULL
    loc.sv.split_mask = 0
    loc.sv.ahead = False
    loc.sigs = sigs
    loc.ml = NULL
    return loc


cdef inline tok_t _merged_rank(const TokenTable* t, const uint8_t* p, Py_ssize_t a, Py_ssize_t b,
                               tok_t left, tok_t right, tok_t limit, Local* loc) noexcept nogil:
    # rank of the token spelled by parts p[a:m] (id left) and p[m:b] (id right), if below limit
    cdef unsigned long long* e = NULL
    cdef unsigned long long want = 0, word = 0
    cdef tok_t r
    if loc.sv.split != NULL:
        r = sig_rank(loc.sv.sig, loc.sv.sig_mask, loc.sv.split, loc.sv.split_mask, left, right)
        return r if r < limit else NO_RANK
    if loc.sv.sig != NULL and not sig_pass(loc.sv.sig, loc.sv.sig_mask, left, right):
        return NO_RANK
    if loc.pairs != NULL:
        e = bpe_pair_slot(loc.pairs, (<uint64_t><uint32_t>left << 32) | <uint32_t>right)
        want = pair_key_word(left, right)
        word = bpe_pair_load(e)
    if e != NULL and (word & ~(BPE_PAIR_NONE << 1)) == want:
        r = <tok_t>((word >> 1) & BPE_PAIR_NONE)
        if r == BPE_PAIR_NONE:
            r = NO_RANK
    else:
        r = tt_find(t, p + a, b - a)
        if r == NO_TOKEN:
            r = NO_RANK
        if e != NULL:
            bpe_pair_store(e, want | (<unsigned long long>(r if r != NO_RANK else BPE_PAIR_NONE) << 1))
    return r if r < limit else NO_RANK


cdef inline tok_t _pair2(const tok_t* pair2, const uint8_t* p, Py_ssize_t i, tok_t limit) noexcept nogil:
    # rank of the two-byte token p[i:i+2] if below `limit`, from the 64K-entry direct table
    cdef tok_t r = pair2[(<Py_ssize_t>p[i] << 8) | p[i + 1]]
    return r if r < limit else NO_RANK


cdef inline tok_t _first_rank(const Tables* tb, const uint8_t* p, const int32_t* off, const tok_t* tok,
                              Py_ssize_t i, tok_t limit, Local* loc) noexcept nogil:
    # rank of units i and i + 1 merged: two single bytes come from the direct table
    if off[i + 2] - off[i] == 2:
        return _pair2(tb.pair2, p, off[i], limit)
    return _merged_rank(&tb.table, p, off[i], off[i + 2], tok[i], tok[i + 1], limit, loc)


cdef enum:
    # _bpe_short's keys are (rank << SHORT_SHIFT | index) + SHORT_BIAS, from SHORT_BIAS up to
    # below SHORT_NONE, as bpe_min_keys needs them (see _c_helpers.h), so the linear scan
    # takes ranks below SHORT_RANK_LIMIT (16,646,144: every real vocabulary; a bigger one
    # uses the heap)
    SHORT_SHIFT = 7                       # LINEAR_MAX <= 128 indices
    SHORT_BIAS = 0x00800000
    SHORT_NONE = 0x7F800000               # no merge (above every key)
    SHORT_RANK_LIMIT = (SHORT_NONE - SHORT_BIAS) >> SHORT_SHIFT


cdef inline int32_t _short_key(tok_t rank, Py_ssize_t i) noexcept nogil:
    return SHORT_NONE if rank == NO_RANK else <int32_t>(((rank << SHORT_SHIFT) | i) + SHORT_BIAS)


ctypedef struct ShortMerge:
    # _bpe_short's state: parts stay at the index of their first unit, linked by nxt/prv;
    # key[i] = _short_key(rank of part i merged with the next part, i), SHORT_NONE for
    # "no merge" (and for indices that no longer start a part).  A struct, with each step in
    # two halves (_sm_merge, _sm_ask): the compiler's code for that ran faster than for one
    # loop over local arrays.
    const uint8_t* p
    const int32_t* off
    tok_t* out
    Py_ssize_t n
    Py_ssize_t padded
    tok_t limit
    int32_t parts             # parts left
    int32_t stop              # merging stops at this many parts (see _bpe_short)
    int32_t a                 # the merge in progress: part a absorbed part c; z is before a
    int32_t c
    int32_t z
    uint64_t hc               # with the split table: the hashes of the pairs (a, c) and (z, a)
    uint64_t hz
    int32_t key[LINEAR_MAX]
    int32_t nxt[LINEAR_MAX]
    int32_t prv[LINEAR_MAX]


# _sm_init's starting links and keys
cdef enum:
    SM_FIXED = 24      # up to this many units (nearly every piece) the copies have this size
cdef int32_t _SM_LINKS[LINEAR_MAX + 2]     # -1, 0, 1, ...: prv from [0], nxt from [2]
cdef int32_t _SM_NO_KEYS[LINEAR_MAX]       # SHORT_NONE each
for _i in range(LINEAR_MAX + 2):
    _SM_LINKS[_i] = _i - 1
for _i in range(LINEAR_MAX):
    _SM_NO_KEYS[_i] = SHORT_NONE
del _i


cdef inline void _sm_init(ShortMerge* s, const Tables* tb, const uint8_t* p, Py_ssize_t n,
                          const int32_t* off, tok_t limit, Local* loc, tok_t* out) noexcept nogil:
    # the units' pairs' keys (n <= LINEAR_MAX units; unit i is p[off[i]:off[i+1]] with id
    # out[i])
    cdef Py_ssize_t i
    cdef tok_t r
    s.p = p
    s.off = off
    s.out = out
    s.n = n
    s.limit = limit
    s.parts = <int32_t>n
    s.stop = 2 if limit == NO_RANK else 1
    s.padded = (n + 7) & ~7     # (LINEAR_MAX is a multiple of 8)
    # the links and the keys past the pairs as whole arrays: copies of a fixed size, with no
    # loop whose count follows the piece's (a loop's exit at a count that changes from piece
    # to piece is a mispredicted branch)
    if n <= SM_FIXED:
        memcpy(s.nxt, &_SM_LINKS[2], SM_FIXED * sizeof(int32_t))
        memcpy(s.prv, &_SM_LINKS[0], SM_FIXED * sizeof(int32_t))
        memcpy(s.key, _SM_NO_KEYS, SM_FIXED * sizeof(int32_t))
    else:
        memcpy(s.nxt, &_SM_LINKS[2], s.padded * sizeof(int32_t))
        memcpy(s.prv, &_SM_LINKS[0], s.padded * sizeof(int32_t))
        memcpy(s.key, _SM_NO_KEYS, s.padded * sizeof(int32_t))
    for i in range(n - 1):
        r = _first_rank(tb, p, off, out, i, limit, loc)
        s.key[i] = _short_key(r, i)
    if loc.sv.ahead and n > s.stop + 1:
        # each pair's merge would ask two questions; whichever pair merges first, its questions'
        # lines are then already on their way (see split_pair_fetch; a key with no merge
        # fetches for a made-up rank: cheaper than a branch on it, measured even; a loop of
        # its own: fetching inside the lookups' loop measured slower)
        for i in range(n - 1):
            r = <tok_t>((s.key[i] - SHORT_BIAS) >> SHORT_SHIFT)
            if i > 0:
                split_pair_fetch(&loc.sv, out[i - 1], r)
            if i + 2 < n:
                split_pair_fetch(&loc.sv, r, out[i + 2])


cdef inline bint _sm_merge(ShortMerge* s, const Local* loc) noexcept nogil:
    # the lowest key's merge (False: none left); its two new pairs' cache words are on their
    # way when this returns, and _sm_ask asks their questions
    cdef int32_t best = bpe_min_keys(s.key, s.padded)
    cdef int32_t a, c, z
    cdef tok_t* out = s.out
    if best == SHORT_NONE:
        return False
    best -= SHORT_BIAS
    # part a absorbs the part after it
    a = best & ((1 << SHORT_SHIFT) - 1)
    c = s.nxt[s.nxt[a]]
    s.key[s.nxt[a]] = SHORT_NONE
    out[a] = <tok_t>(best >> SHORT_SHIFT)
    s.nxt[a] = c
    s.parts -= 1
    if s.parts <= s.stop:
        return False
    z = s.prv[a]
    if loc.sv.split != NULL:
        # the merge raises two questions: start both table lines on their way before
        # waiting on the first (their hashes kept for _sm_ask)
        if c < s.n:
            s.hc = split_hash_fetched(loc.sv.split, loc.sv.split_mask, out[a], out[c])
        if z >= 0:
            s.hz = split_hash_fetched(loc.sv.split, loc.sv.split_mask, out[z], out[a])
    elif loc.pairs != NULL:
        # likewise the pair cache's words (o200k prose +1.1-1.5%, paired rounds; others
        # even)
        if c < s.n:
            bpe_prefetch(bpe_pair_slot(loc.pairs, (<uint64_t><uint32_t>out[a] << 32) | <uint32_t>out[c]))
        if z >= 0:
            bpe_prefetch(bpe_pair_slot(loc.pairs, (<uint64_t><uint32_t>out[z] << 32) | <uint32_t>out[a]))
    s.a = a
    s.c = c
    s.z = z
    return True


cdef inline void _sm_ask(ShortMerge* s, const TokenTable* t, Local* loc) noexcept nogil:
    # the keys of the pairs the last merge made
    cdef int32_t a = s.a, c = s.c, z = s.z
    cdef tok_t* out = s.out
    cdef tok_t r
    if loc.sv.split != NULL:
        # (the split table needs only the ids, and the hashes _sm_merge made)
        if c < s.n:
            s.prv[c] = a
            r = sig_rank_hashed(loc.sv.sig, loc.sv.sig_mask, loc.sv.split, loc.sv.split_mask,
                                 out[a], out[c], s.hc)
            s.key[a] = _short_key(r if r < s.limit else NO_RANK, a)
            if loc.sv.ahead and s.parts > s.stop + 1:
                # (the questions that merging this new pair would ask, as in _sm_init)
                if z >= 0:
                    split_pair_fetch(&loc.sv, out[z], r)
                if s.nxt[c] < s.n:
                    split_pair_fetch(&loc.sv, r, out[s.nxt[c]])
        else:
            s.key[a] = SHORT_NONE
        if z >= 0:
            r = sig_rank_hashed(loc.sv.sig, loc.sv.sig_mask, loc.sv.split, loc.sv.split_mask,
                                 out[z], out[a], s.hz)
            s.key[z] = _short_key(r if r < s.limit else NO_RANK, z)
            if loc.sv.ahead and s.parts > s.stop + 1:
                if s.prv[z] >= 0:
                    split_pair_fetch(&loc.sv, out[s.prv[z]], r)
                if c < s.n:
                    split_pair_fetch(&loc.sv, r, out[c])
        return
    if c < s.n:
        s.prv[c] = a
        s.key[a] = _short_key(_merged_rank(t, s.p, s.off[a], s.off[s.nxt[c]], out[a], out[c], s.limit, loc), a)
    else:
        s.key[a] = SHORT_NONE
    if z >= 0:
        s.key[z] = _short_key(_merged_rank(t, s.p, s.off[z], s.off[c], out[z], out[a], s.limit, loc), z)


cdef inline Py_ssize_t _sm_gather(ShortMerge* s) noexcept nogil:
    # gather the parts' ids to the front (in place: a part's index is never below its rank)
    cdef Py_ssize_t i = 0, k = 0
    while i < s.n:
        s.out[k] = s.out[i]
        k += 1
        i = s.nxt[i]
    return k


cdef Py_ssize_t _bpe_short(const Tables* tb, const uint8_t* p, Py_ssize_t n, const int32_t* off,
                           tok_t limit, Local* loc, tok_t* out) noexcept nogil:
    # Linear scan (n <= LINEAR_MAX units; unit i is p[off[i]:off[i+1]] with id out[i] on
    # entry; every rank below SHORT_RANK_LIMIT): one branch-free minimum over the n keys (see
    # ShortMerge) finds the lowest rank, leftmost among equals, and no array is ever shifted.
    # The keys are 32-bit so that the minimum runs four to a vector (as floats: see
    # bpe_min_keys).
    # With no limit the caller has found that p[:n] is not a token (every path to here looks
    # the whole piece up first), and two parts could only merge into the whole piece: so
    # merging stops at two parts, and no question is asked or fetched ahead for the pair
    # that would be left (most pieces that are not tokens end as two).  With a limit the
    # piece may be a token, and merging goes on to one part.
    cdef ShortMerge s
    if n <= 2 and limit == NO_RANK:
        return n
    _sm_init(&s, tb, p, n, off, limit, loc, out)
    while _sm_merge(&s, loc):
        _sm_ask(&s, &tb.table, loc)
    return _sm_gather(&s)


ctypedef struct Candidate:
    tok_t rank       # rank of the merged token
    int32_t left     # start of the left part
    int32_t right    # start of the right part
    int32_t end      # end of the right part


cdef inline bint _cand_before(const Candidate* x, const Candidate* y) noexcept nogil:
    # lower rank first; among equal ranks the leftmost (tiktoken's order)
    if x.rank != y.rank:
        return x.rank < y.rank
    return x.left < y.left


cdef inline void _cand_push(Candidate* heap, Py_ssize_t* size, tok_t rank, int32_t left,
                            int32_t right, int32_t end) noexcept nogil:
    cdef Candidate c
    c.rank = rank
    c.left = left
    c.right = right
    c.end = end
    cdef Py_ssize_t i = size[0], parent
    size[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not _cand_before(&c, &heap[parent]):
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = c


cdef inline Candidate _cand_pop(Candidate* heap, Py_ssize_t* size) noexcept nogil:
    cdef Candidate top = heap[0]
    cdef Candidate last
    cdef Py_ssize_t i = 0, child, n
    size[0] -= 1
    n = size[0]
    if n > 0:
        last = heap[n]
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and _cand_before(&heap[child + 1], &heap[child]):
                child += 1
            if not _cand_before(&heap[child], &last):
                break
            heap[i] = heap[child]
            i = child
        heap[i] = last
    return top


cdef Py_ssize_t _bpe_long(const Tables* tb, const uint8_t* p, Py_ssize_t n, const int32_t* off,
                          tok_t limit, Local* loc, tok_t* out) noexcept nogil:
    # Heap version for long pieces, O(n log n), same result as _bpe_short (and the same
    # units: n of them, unit i is p[off[i]:off[i+1]] with id out[i] on entry).  Parts form a
    # linked list over the indices of their first units: nxt[i] is the first unit of the part
    # after the one starting at i (n for the last part, -1 once part i has been absorbed).
    # A candidate (rank, left, right, end) is still valid iff nxt[left] == right and
    # nxt[right] == end, i.e. both parts are unchanged since it was pushed; stale candidates
    # are skipped when popped.  Up to STACK_MAX units work in stack arrays; more allocate.
    # Returns -1 when out of memory.
    cdef const TokenTable* t = &tb.table
    cdef int32_t nxt_s[STACK_MAX + 1]
    cdef int32_t prv_s[STACK_MAX + 1]
    cdef Candidate heap_s[2 * STACK_MAX + 2]
    cdef int32_t* nxt = nxt_s
    cdef int32_t* prv = prv_s
    cdef Candidate* heap = heap_s
    cdef bint on_heap = n > STACK_MAX
    cdef Py_ssize_t size = 0, k = 0
    cdef int32_t i, h, e2
    cdef tok_t r
    cdef Candidate c
    if on_heap:
        nxt = <int32_t*>malloc((n + 1) * sizeof(int32_t))
        prv = <int32_t*>malloc((n + 1) * sizeof(int32_t))
        heap = <Candidate*>malloc((2 * n + 2) * sizeof(Candidate))
        if nxt == NULL or prv == NULL or heap == NULL:
            free(nxt)
            free(prv)
            free(heap)
            return -1
    for i in range(n):
        nxt[i] = i + 1
        prv[i] = i - 1
    for i in range(n - 1):
        r = _first_rank(tb, p, off, out, i, limit, loc)
        if r != NO_RANK:
            _cand_push(heap, &size, r, i, i + 1, i + 2)
    while size > 0:
        c = _cand_pop(heap, &size)
        if nxt[c.left] != c.right or nxt[c.right] != c.end:
            continue
        i = c.left
        nxt[i] = c.end
        nxt[c.right] = -1
        if c.end < n:
            prv[c.end] = i
        out[i] = c.rank
        h = prv[i]
        if h >= 0:
            r = _merged_rank(t, p, off[h], off[c.end], out[h], out[i], limit, loc)
            if r != NO_RANK:
                _cand_push(heap, &size, r, h, i, c.end)
        if c.end < n:
            e2 = nxt[c.end]
            r = _merged_rank(t, p, off[i], off[e2], out[i], out[c.end], limit, loc)
            if r != NO_RANK:
                _cand_push(heap, &size, r, i, c.end, e2)
    i = 0
    while i < n:
        out[k] = out[i]
        k += 1
        i = nxt[i]
    if on_heap:
        free(nxt)
        free(prv)
        free(heap)
    return k


# --------------------------------------------------------------------------------------------
# Piece cache
# --------------------------------------------------------------------------------------------
#
# Natural text repeats its words, so the ids of recent pieces that are not single tokens are
# kept in three per-thread caches (bpe/_piece_cache.h), all sized by one number S (65,536 by
# default, _set_piece_cache_sets): S sets of two 32-byte entries (one cache line per set,
# 4 MiB), each entry a piece of up to 14 bytes that gives up to 3 ids, the set's last used
# entry first (a piece of 4-10 ids takes both); S / 2 64-byte entries, two places for each
# piece of 15-30 bytes (2 MiB), for pieces of up to 30 bytes and 7 ids that do not fit those (more ids, or 15-30
# bytes, as cl100k gives Cyrillic words) and for the short pieces that a set pushes out
# (a piece whose set already holds two others; each long entry has a tag byte that a short
# piece missing its set checks first, 32 KiB); and
# a ring of 32 * S bytes (2 MiB) with S / 2 index slots (512 KiB) for pieces of 31-1,024
# bytes (rules of '=' or '#' in code, runs of CJK text, which merge at hundreds of
# instructions a byte), each entry as long as its bytes and ids: 8.5 MiB at most per
# thread that encodes, whose pages are mapped as entries are first written there, and no
# more however many distinct pieces go by.  Simulated on the shared corpora (o200k), with
# half today's long entries and 256-byte entries for the longest pieces, one pass hits 57%
# of the non-token pieces of English, 71% of Spanish, 18% of multilingual and 69-78% of
# code, as a quarter of the size does (what one pass misses is mostly first sight); a second
# pass over the benchmark's 2.4 MB of prose hits 95% of them (69% at a quarter of the size),
# of its multilingual text 68% (43%), of its code 100% (97%).  The caches are per thread, so
# threads never share or lock them (an entry of 32 or 64 bytes cannot be written in one
# atomic store, unlike the pair cache's words); an entry is tagged with the low 32 bits of
# the generation number of the Encoder that wrote it (two encoders alive at once would need
# 2**32 encoders made in between to share a tag), so encoders never see each other's
# entries.

cdef enum:
    CACHE_MAX_BYTES = 14
    CACHE_MAX_IDS = 3
    SET_MAX_IDS = 10                   # a piece of 4-10 ids takes both entries of its set
    LONG_CACHE_MAX_BYTES = 30          # (the sizes of bpe/_piece_cache.h's entries)
    LONG_CACHE_MAX_IDS = 7
    LONG_IN_RING = 255                 # a long entry's n_ids when its piece's ids are in the ring
    RING_MAX_BYTES = 1024              # (longer pieces are merged at every call)

bpe_caches_setup()   # (the key that frees a thread's piece caches when it ends)


def _set_piece_cache_sets(size_t sets):
    """The size S of the per-thread piece caches that threads make from now on: S two-way
    sets of short pieces, S / 2 long entries and a ring of 32 * S bytes with S / 2 slots, 136.5
    bytes per set (the default 65,536: 8.5 MiB per thread at most); 0: small static arrays
    instead (41 KiB per thread).
    Each thread makes its caches again, empty, at its next call.  Returns the old S.  The
    environment variable BPE_PIECE_CACHE_SETS sets it at import."""
    global bpe_cache_sets
    if sets != 0 and (sets < 256 or sets > (1 << 26) or sets & (sets - 1)):
        raise ValueError(f"the piece caches' size is 0 or a power of two from 256 to {1 << 26} sets, "
                         f"not {sets}")
    cdef size_t old = bpe_cache_sets
    bpe_cache_sets = sets
    return old


def _utf8_form(str text):
    """For tests: the UTF-8 bytes the core encodes for ``text`` (bpe/_str_utf8.pxi); a lone
    surrogate raises UnicodeEncodeError (CPython's conversion)."""
    cdef Utf8 u
    utf8_get(text, &u)
    try:
        return (<const char*>u.p)[:u.n]
    finally:
        utf8_release(&u)


def _utf8_in_place(str text):
    """For tests: whether the core reads ``text``'s UTF-8 form in place (an ASCII str, or
    one whose form CPython already keeps) rather than converting it into a buffer."""
    cdef Utf8 u
    utf8_get(text, &u)
    try:
        return u.owned == NULL
    finally:
        utf8_release(&u)


def _piece_hash(bytes piece):
    """For tests: the hash the piece caches file ``piece`` under (hash_bytes, which
    hash_and_head gives too: calling hash_and_head here changed how the compiler inlined it
    into the scan, +1.6 instructions a byte of English)."""
    return hash_bytes(piece, len(piece)) if len(piece) > 0 else 0


def _set_wide_classifier(bint on):
    """For tests: whether this module's block path classifies bytes with AVX-512BW
    (where the CPU has it) or with SSE2 (see _c_helpers.h); returns the old setting."""
    return bpe_set_wide_classifier(on)


def _piece_cache_blocks():
    """For tests: how many threads' piece-cache blocks exist now (each is freed when its
    thread ends, or when the thread makes its caches again)."""
    return bpe_live_blocks_now()


def _piece_cache_sets_from_environment():
    import os
    value = os.environ.get("BPE_PIECE_CACHE_SETS", "").strip()
    if value:
        try:
            _set_piece_cache_sets(int(value))
        except (ValueError, OverflowError):
            raise ValueError(f"BPE_PIECE_CACHE_SETS must be 0 or a power of two from 256 to {1 << 26} "
                             f"(sets of the per-thread piece caches, 136 bytes each), not {value!r}") from None


_piece_cache_sets_from_environment()

cdef uint64_t _generations = 0


cdef uint64_t _new_generation() noexcept:
    # a fresh cache tag (called with the GIL held); the caches keep only the low 32 bits,
    # where 0 means "empty", so those values are skipped
    global _generations
    _generations += 1
    if (_generations & 0xFFFFFFFF) == 0:
        _generations += 1
    return _generations


cdef Py_ssize_t _merge_loop(Tables* tb, const uint8_t* p, Py_ssize_t n, tok_t limit, bint units,
                            Local* loc, tok_t* out) noexcept nogil:
    # BPE on p[:n] (n >= 1) from its units: whole characters where ``units`` and the tables
    # allow them (else bytes), then the linear scan for few units, the heap for more (-1: out
    # of memory).  ``limit`` NO_RANK: only for a piece that is not a token (the callers look
    # it up first; _bpe_short relies on it); else only tokens below ``limit`` form.
    cdef int32_t off_s[STACK_MAX + 1]
    cdef int32_t* off = off_s
    cdef Py_ssize_t m, k
    if n > STACK_MAX:
        off = <int32_t*>malloc((n + 1) * sizeof(int32_t))
        if off == NULL:
            return OUT_OF_MEMORY
    m = cu_units(&tb.cu if units else NULL, &tb.table, tb.byte_rank, p, n, off, out,
                 &loc.sv if loc.sv.ahead else NULL)
    if m <= LINEAR_MAX and tb.table.n_ids <= SHORT_RANK_LIMIT:
        k = _bpe_short(tb, p, m, off, limit, loc, out)
    else:
        k = _bpe_long(tb, p, m, off, limit, loc, out)
    if off != off_s:
        free(off)
    return k


cdef inline Py_ssize_t bpe_piece_cached(Tables* tb, Local* loc, const uint8_t* p, Py_ssize_t n, uint64_t h,
                                        uint64_t head, tok_t* out) noexcept nogil:
    """``bpe_piece`` with the whole-piece lookup, the piece cache, whole-character units and,
    for pieces longer than ``bt.min_bytes``, the backtracking encoder (linear time); no
    ``max_rank``.  ``h`` is ``hash_bytes(p, n)`` and ``head`` is ``_head(p, n)`` (both from
    ``hash_and_head``; any values when n == 0).  This part (what most pieces need) is
    inlined into the loops over pieces; ``_piece_uncommon`` is not."""
    cdef bpe_cache_entry* e = NULL
    cdef Py_ssize_t m = _piece_known(tb, loc, p, n, h, head, out, &e)
    if m != PIECE_MISSED:
        return m
    return _piece_uncommon(tb, loc, p, n, h, e, out)


cdef inline Py_ssize_t _piece_known(Tables* tb, Local* loc, const uint8_t* p, Py_ssize_t n, uint64_t h,
                                    uint64_t head, tok_t* out, bpe_cache_entry** set_out) noexcept nogil:
    """The ids of a piece that is a token or in its two-way set (their count), else
    PIECE_MISSED with ``set_out[0]`` its set (NULL: too long for the sets).

    A piece of one byte is found in the token table like any other (every byte is a token):
    a test for it first was mispredicted on a tenth of the pieces of prose."""
    cdef tok_t r
    if n == 0:
        return 0
    if loc.ml == NULL or loc.ml.ignore_merges:
        r = _tt_probe(&tb.table, p, n, h, head)
        if r != NO_TOKEN:
            out[0] = r
            return 1
    if n == 1:
        out[0] = tb.byte_rank[p[0]]    # (the merge-list rule without ignore_merges)
        return 1
    set_out[0] = NULL
    if n <= CACHE_MAX_BYTES:
        return _set_ids(loc, p, n, h, head, out, set_out)
    return PIECE_MISSED


cdef inline Py_ssize_t _set_ids(Local* loc, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t head,
                                tok_t* out, bpe_cache_entry** set_out) noexcept nogil:
    # the ids of a piece of up to CACHE_MAX_BYTES in its two-way set (their count), else
    # PIECE_MISSED; set_out[0]: the set.  The entry used last is kept first.
    cdef bpe_cache_entry* e = bpe_cache_set(&loc.caches, h)
    cdef uint64_t rest = _piece_rest(p, n)
    cdef unsigned int gen = <unsigned int>loc.gen
    cdef bpe_cache_entry swap
    set_out[0] = e
    if _entry_holds(&e[0], gen, head, rest):
        return _cached_ids(&e[0], out)
    if _entry_holds(&e[1], gen, head, rest):
        swap = e[1]
        e[1] = e[0]
        e[0] = swap
        return _cached_ids(&e[0], out)
    return PIECE_MISSED


cdef inline Py_ssize_t _piece_set_first(Tables* tb, Local* loc, const uint8_t* p, Py_ssize_t n, uint64_t h,
                                        uint64_t head, tok_t* out, bpe_cache_entry** set_out) noexcept nogil:
    """``_piece_known`` (rank BPE) for a piece that is not the token in the home slot of its
    hash (the token run's test): its set first, then the table.  Such a piece is seldom a
    token (2.6% of English's tokens are placed past their home slot), so a piece found in
    its set skips the table's probe, whose walk to an empty slot is a branch on the table's
    load."""
    cdef tok_t r
    if n <= 1 or n > CACHE_MAX_BYTES:
        return _piece_known(tb, loc, p, n, h, head, out, set_out)
    cdef Py_ssize_t k = _set_ids(loc, p, n, h, head, out, set_out)
    if k != PIECE_MISSED:
        return k
    r = _tt_probe(&tb.table, p, n, h, head)
    if r != NO_TOKEN:
        out[0] = r
        return 1
    return PIECE_MISSED


cdef inline uint64_t _piece_rest(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    # a set entry's key beyond the first 8 bytes (_head): bytes 8..13 of a piece of up to
    # CACHE_MAX_BYTES, its length at bits 48..55 (the entry keeps its id count at 56..63)
    return (bpe_word(p + 8, n - 8) if n > 8 else 0) | (<uint64_t>n << 48)


cdef inline bint _entry_holds(const bpe_cache_entry* e, unsigned int gen, uint64_t head,
                              uint64_t rest) noexcept nogil:
    return e.gen == gen and e.head == head and (e.rest & 0x00FFFFFFFFFFFFFFULL) == rest


cdef inline char* _set_more_ids(const bpe_cache_entry* e) noexcept nogil:
    # where a set's ids past the first 3 are (e: its first entry): after its second entry's
    # gen word, as bytes (read and written with memcpy, since they lie over that entry's
    # other fields)
    return <char*>&e[1] + sizeof(unsigned int)


cdef inline Py_ssize_t _cached_ids(const bpe_cache_entry* e, tok_t* out) noexcept nogil:
    # (e: a set's first entry)
    cdef Py_ssize_t k = <Py_ssize_t>(e.rest >> 56), i
    if k <= CACHE_MAX_IDS:
        for i in range(k):
            out[i] = e.ids[i]
        return k
    out[0] = e.ids[0]
    out[1] = e.ids[1]
    out[2] = e.ids[2]
    memcpy(out + CACHE_MAX_IDS, _set_more_ids(e), (k - CACHE_MAX_IDS) * sizeof(tok_t))
    return k


cdef Py_ssize_t _piece_uncommon(Tables* tb, Local* loc, const uint8_t* p, Py_ssize_t n, uint64_t h,
                                bpe_cache_entry* e, tok_t* out) noexcept nogil:
    # bpe_piece_cached for a piece that is neither a token nor in the two-way set e (NULL:
    # too long for the sets): the long entry or ring slot of its hash, else merged, the
    # result put into e if it fits an entry there, else into the long entry or the ring
    cdef bpe_long_entry* g = NULL
    cdef bpe_ring_slot* x = NULL
    cdef Py_ssize_t k = _piece_sized_entry(loc, p, n, h, out, &g, &x)
    if k >= 0:
        return k
    k = _piece_merged(tb, loc, p, n, out)
    _piece_keep(loc, p, n, h, e, g, x, out, k)
    return k


cdef inline Py_ssize_t _piece_sized_entry(Local* loc, const uint8_t* p, Py_ssize_t n, uint64_t h, tok_t* out,
                                          bpe_long_entry** g, bpe_ring_slot** x) noexcept nogil:
    # the ids of a piece in its two long entries or the ring slot of its hash, else -1;
    # g[0] (its first long entry, or the one that holds it where the ring no longer has its
    # ids) and x[0]: where a piece of its length may be kept (NULL: neither)
    cdef unsigned int gen = <unsigned int>loc.gen
    cdef Py_ssize_t k
    cdef bpe_long_entry* b
    g[0] = NULL
    x[0] = NULL
    if n <= LONG_CACHE_MAX_BYTES:
        # pieces too long for the sets, or with too many ids, or pushed out of their set
        # (short ones, kept in their first entry only, where its tag matches: most short
        # pieces that miss their set are new)
        g[0] = bpe_long_first(&loc.caches, h)
        if n <= CACHE_MAX_BYTES:
            if not bpe_long_holds_short(&loc.caches, g[0], _short_tag(h, gen)):
                return -1
            k = _entry_ids(&loc.caches, g[0], gen, p, n, out)
            return k if k >= 0 else -1
        k = _entry_ids(&loc.caches, g[0], gen, p, n, out)
        if k == -1:
            b = bpe_long_second(&loc.caches, h)
            k = _long_second(&loc.caches, b, gen, p, n, out)
            if k == IDS_GONE:
                g[0] = b
        # (IDS_GONE: the piece is merged and its ids kept again in the entry that has it)
        return k if k >= 0 else -1
    elif n <= RING_MAX_BYTES:
        # rarer still, but each costs hundreds of instructions per byte to merge (rules of
        # '=' or '#' in code, runs of CJK text)
        x[0] = bpe_ring_slot_of(&loc.caches, h)
        k = _ring_ids(&loc.caches, x[0], h, gen, p, n, out)
        return k if k >= 0 else _ring_second(&loc.caches, x[0], h, gen, p, n, out)
    return -1


cdef Py_ssize_t _long_second(const bpe_caches* c, const bpe_long_entry* b, unsigned int gen, const uint8_t* p,
                             Py_ssize_t n, tok_t* out) noexcept nogil:
    # _piece_sized_entry's look at a piece's second long entry b.  Not inline: inlined, it
    # changed how the compiler laid out the token probe of _encode_utf8 (+0.9 instructions a
    # byte of English, warm)
    return _entry_ids(c, b, gen, p, n, out)


cdef inline void _signatures_for_merge(Tables* tb, Local* loc) noexcept nogil:
    # (each piece merged while the signatures wait counts towards building them)
    if loc.sv.sig == NULL and loc.sigs != NULL:
        loc.sv.sig = sig_usable(loc.sigs, &tb.bt, &tb.table, tb.byte_rank)
        if loc.sv.sig != NULL:
            # (the unit tables pay off on any text by then: bpe/_charunits.pxi)
            cu_usable(&tb.cu, &tb.table, tb.byte_rank)
            # (written before the state that sig_usable read with acquire: not before then)
            loc.sv.sig_mask = loc.sigs.mask
            loc.sv.split = loc.sigs.split
            loc.sv.split_mask = loc.sigs.split_mask
            loc.sv.ahead = loc.sv.split != NULL and loc.sv.split_mask + 1 >= SPLIT_AHEAD_SLOTS


cdef Py_ssize_t _piece_merged(Tables* tb, Local* loc, const uint8_t* p, Py_ssize_t n, tok_t* out) noexcept nogil:
    # the ids of a piece by the encoder's rule (no cache), or OUT_OF_MEMORY
    cdef Py_ssize_t k = NOT_ENCODED
    if loc.ml != NULL:
        k = ml_piece(loc.ml, &tb.cu, &tb.table, tb.byte_rank, p, n, out)
    elif n > tb.bt.min_bytes >= 0 and bt_usable(&tb.bt, &tb.table, tb.byte_rank):
        k = _bpe_backtrack(&tb.bt, &tb.table, tb.byte_rank, p, n, out)
    if k == NOT_ENCODED:
        _signatures_for_merge(tb, loc)
        k = _merge_loop(tb, p, n, NO_RANK, True, loc, out)
    return k


cdef inline void _piece_keep(Local* loc, const uint8_t* p, Py_ssize_t n, uint64_t h, bpe_cache_entry* e,
                             bpe_long_entry* g, bpe_ring_slot* x, const tok_t* ids, Py_ssize_t k) noexcept nogil:
    # the k ids of a merged piece of hash h into its set e if they fit an entry there, else
    # into its long entry g or the ring through slot x (NULL where it is too long for them)
    cdef unsigned int gen = <unsigned int>loc.gen
    cdef Py_ssize_t i
    cdef bint spans
    if e != NULL and 0 < k <= SET_MAX_IDS:
        # into the set's first place.  Up to 3 ids: the entry there moves to the second (one
        # that spans both goes).  More: the piece spans both places, its first holding the
        # piece and 3 ids, its second's gen word 0 (it never matches) and the rest after it.
        # The pieces pushed out move to their long entries.
        spans = (e[0].rest >> 56) > CACHE_MAX_IDS
        if k > CACHE_MAX_IDS or spans:
            _set_entry_to_long(loc, e, gen, LONG_CACHE_MAX_IDS)
            if not spans:
                _set_entry_to_long(loc, &e[1], gen, CACHE_MAX_IDS)
            e[1].gen = 0
        else:
            _set_entry_to_long(loc, &e[1], gen, CACHE_MAX_IDS)
            e[1] = e[0]
        e[0].gen = gen
        e[0].head = _head(p, n)
        e[0].rest = _piece_rest(p, n) | (<uint64_t>k << 56)
        for i in range(min(k, CACHE_MAX_IDS)):
            e[0].ids[i] = ids[i]
        if k > CACHE_MAX_IDS:
            memcpy(_set_more_ids(e), ids + CACHE_MAX_IDS, (k - CACHE_MAX_IDS) * sizeof(tok_t))
    elif g != NULL and 0 < k <= LONG_CACHE_MAX_IDS:
        # into one of its two long entries (bpe_long_place)
        _entry_fill(_long_place(&loc.caches, h, gen, n), gen, p, n, ids, k)
    elif g != NULL and k > 0:
        # too many ids for the entry (runs of CJK text under cl100k_base): it holds the piece,
        # marked LONG_IN_RING, and the position of a ring entry with its ids (g is already
        # that entry where the ring had come round to the ids)
        if not (_long_holds(g, gen, p, n) and g.n_ids == LONG_IN_RING):
            g = _long_place(&loc.caches, h, gen, n)
            g.gen = gen
            g.length = <unsigned char>n
            g.n_ids = LONG_IN_RING
            memcpy(g.bytes, p, n)
        _ring_keep_at(&loc.caches, g, gen, p, n, ids, k)
    elif x != NULL and k > 0:
        _ring_keep(&loc.caches, x, h, gen, p, n, ids, k)


cdef inline bpe_long_entry* _long_place(const bpe_caches* c, uint64_t h, unsigned int gen, Py_ssize_t n) noexcept nogil:
    # the long entry where a piece of n bytes and hash h goes: a short one (n <= CACHE_MAX_BYTES)
    # into its first, with its tag; a longer one into either (bpe_long_place)
    if n <= CACHE_MAX_BYTES:
        return bpe_long_short_place(c, h, _short_tag(h, gen))
    return bpe_long_place(c, h, gen)


cdef inline unsigned char _short_tag(uint64_t h, unsigned int gen) noexcept nogil:
    # the tag of a short piece of hash h in a long entry (see bpe_long_holds_short): 7 bits of
    # the hash that no table's index uses, mixed with the generation's, and the top bit
    return <unsigned char>(0x80 | (((h >> 57) ^ gen) & 0x7F))


cdef void _set_entry_to_long(Local* loc, bpe_cache_entry* e, unsigned int gen, Py_ssize_t most) noexcept nogil:
    # the piece of set entry e (this encoder's, with at most `most` ids: only a set's first
    # entry may span both) into its first long entry, as a short piece, before the set drops
    # it
    cdef Py_ssize_t n = <Py_ssize_t>((e.rest >> 48) & 255), k = <Py_ssize_t>(e.rest >> 56), i
    cdef uint8_t b[16]
    cdef tok_t ids[SET_MAX_IDS]
    cdef uint64_t h
    if e.gen != gen or k == 0 or k > most or n > CACHE_MAX_BYTES:
        return
    for i in range(8):          # (the bytes past n are zero in both words)
        b[i] = <uint8_t>(e.head >> (8 * i))
    for i in range(6):
        b[8 + i] = <uint8_t>(e.rest >> (8 * i))
    b[14] = 0
    b[15] = 0
    k = _cached_ids(e, ids)
    h = hash_bytes(b, n)
    _entry_fill(_long_place(&loc.caches, h, gen, n), gen, b, n, ids, k)


cdef inline Py_ssize_t _entry_ids(const bpe_caches* c, const bpe_long_entry* x, unsigned int gen,
                                  const uint8_t* p, Py_ssize_t n, tok_t* out) noexcept nogil:
    # the ids of entry x if it holds p[:n] for this encoder (or the ring entry it names), else
    # -1, or IDS_GONE where x holds the piece but the ring has come round to its ids
    cdef Py_ssize_t i
    if not _long_holds(x, gen, p, n):
        return -1
    if x.n_ids == LONG_IN_RING:
        i = _ring_entry_ids(bpe_ring_at(c, _entry_ring_pos(x)), gen, p, n, out)
        return i if i >= 0 else IDS_GONE
    for i in range(x.n_ids):
        out[i] = x.ids[i]
    return x.n_ids


cdef inline bint _long_holds(const bpe_long_entry* x, unsigned int gen, const uint8_t* p,
                             Py_ssize_t n) noexcept nogil:
    # whether long entry x holds p[:n] for this encoder (its ids there or in the ring)
    return x.gen == gen and x.length == n and memcmp(x.bytes, p, n) == 0


cdef inline void _entry_fill(bpe_long_entry* x, unsigned int gen, const uint8_t* p, Py_ssize_t n,
                             const tok_t* piece_ids, Py_ssize_t k) noexcept nogil:
    # entry x now holds p[:n] and its k ids (k fits the entry)
    cdef Py_ssize_t i
    x.gen = gen
    x.length = <unsigned char>n
    x.n_ids = <unsigned char>k
    memcpy(x.bytes, p, n)
    for i in range(k):
        x.ids[i] = piece_ids[i]


cdef Py_ssize_t _ring_second(const bpe_caches* c, bpe_ring_slot* x, uint64_t h, unsigned int gen,
                             const uint8_t* p, Py_ssize_t n, tok_t* out) noexcept nogil:
    # _piece_sized_entry's look at the second slot of a ring pair, which a hit there makes
    # the first
    cdef Py_ssize_t k = _ring_ids(c, &x[1], h, gen, p, n, out)
    if k >= 0:
        bpe_ring_pair_swap(x)
    return k


cdef inline Py_ssize_t _ring_ids(const bpe_caches* c, const bpe_ring_slot* x, uint64_t h, unsigned int gen,
                                 const uint8_t* p, Py_ssize_t n, tok_t* out) noexcept nogil:
    # the ids of the ring entry slot x names if it holds p[:n] for this encoder, else -1
    return _ring_entry_ids(bpe_ring_entry(c, x, h), gen, p, n, out)


cdef inline unsigned long long _entry_ring_pos(const bpe_long_entry* x) noexcept nogil:
    # the ring position + 1 that a LONG_IN_RING entry keeps in its ids' room (the type of
    # bpe_ring_append's and bpe_ring_at's)
    cdef unsigned long long pos1
    memcpy(&pos1, x.ids, sizeof(pos1))
    return pos1


cdef inline Py_ssize_t _ring_entry_ids(const bpe_ring_head* e, unsigned int gen, const uint8_t* p, Py_ssize_t n,
                                       tok_t* out) noexcept nogil:
    # the ids of ring entry e (NULL: none) if it holds p[:n] for this encoder, else -1
    cdef const int* ids
    cdef Py_ssize_t i
    if e == NULL or e.gen != gen or e.length != n or memcmp(bpe_ring_bytes(e), p, n) != 0:
        return -1
    ids = bpe_ring_ids(e)
    for i in range(e.n_ids):
        out[i] = ids[i]
    return e.n_ids


cdef inline void _ring_keep(const bpe_caches* c, bpe_ring_slot* x, uint64_t h, unsigned int gen,
                            const uint8_t* p, Py_ssize_t n, const tok_t* piece_ids, Py_ssize_t k) noexcept nogil:
    # p[:n] and its k ids into a new ring entry that slot x names (not where the entry would
    # take over a quarter of the ring: the static fallback's is 8 KiB)
    cdef size_t size = bpe_ring_entry_size(n, k)
    if size > c.ring_size // 4:
        return
    x[1] = x[0]                      # (the pair's first slot names the new entry)
    _ring_fill(bpe_ring_add(c, x, h, size), gen, p, n, piece_ids, k)


cdef inline void _ring_keep_at(const bpe_caches* c, bpe_long_entry* g, unsigned int gen, const uint8_t* p,
                               Py_ssize_t n, const tok_t* piece_ids, Py_ssize_t k) noexcept nogil:
    # p[:n] (at most LONG_CACHE_MAX_BYTES) and its k ids into a new ring entry whose position
    # + 1 the LONG_IN_RING entry g keeps (0, which names none, where the entry would take
    # over a quarter of the ring, as _ring_keep)
    cdef size_t size = bpe_ring_entry_size(n, k)
    cdef unsigned long long pos1 = 0
    if size <= c.ring_size // 4:
        _ring_fill(bpe_ring_append(c, size, &pos1), gen, p, n, piece_ids, k)
    memcpy(g.ids, &pos1, sizeof(pos1))


cdef inline void _ring_fill(bpe_ring_head* e, unsigned int gen, const uint8_t* p, Py_ssize_t n,
                            const tok_t* piece_ids, Py_ssize_t k) noexcept nogil:
    # the new ring entry e (room for n bytes and k ids) now holds p[:n] and its ids
    cdef int* ids
    cdef Py_ssize_t i
    e.gen = gen
    e.length = <unsigned short>n
    e.n_ids = <unsigned short>k
    memcpy(bpe_ring_bytes(e), p, n)
    ids = bpe_ring_ids(e)
    for i in range(k):
        ids[i] = piece_ids[i]


cdef Py_ssize_t bpe_piece(Tables* tb, Local* loc, const uint8_t* p, Py_ssize_t n, tok_t max_rank,
                          tok_t* out) noexcept nogil:
    """Write the ids of piece ``p[:n]`` to ``out`` (room for n ids); return how many, or -1
    when out of memory.

    With ``max_rank >= 0`` only tokens below that rank may form (and there is no whole-piece
    shortcut): that recovers the merge that made a token.  Always starts from bytes.
    """
    cdef tok_t r, limit = NO_RANK
    if n == 0:
        return 0
    if n == 1:
        out[0] = tb.byte_rank[p[0]]
        return 1
    if max_rank < 0:
        r = tt_find(&tb.table, p, n)
        if r != NO_TOKEN:
            out[0] = r
            return 1
    else:
        limit = max_rank
    return _merge_loop(tb, p, n, limit, False, loc, out)


cdef enum:
    # _encode_utf8 and count_text find this many pieces (and prefetch what their lookups
    # read) before they encode any, so that a line from memory is there when its lookup
    # comes (each step up from 16 to 48 measured faster; 64 and 96 no faster than 48)
    SCAN_AHEAD = 48
    # a batch ends after the block that reaches SCAN_AHEAD pieces (piece_bounds gives up to
    # 63 at once): room for that many
    SCAN_ROOM = SCAN_AHEAD + 63


ctypedef struct ScanPiece:
    # a piece found by _scan_ahead: piece c is p[pcs[c].start:pcs[c + 1].start], with its
    # hash and first word (hash_and_head); one record for the three, so that the scan's loop
    # keeps one pointer in a register, not three
    Py_ssize_t start
    uint64_t hash
    uint64_t head


cdef inline void _hash_piece(const Slot* slots, uint64_t slot_mask, const bpe_caches* caches,
                             const uint8_t* p, Py_ssize_t n, uint64_t* h, uint64_t* head,
                             bint inside) noexcept nogil:
    # a piece's hash and first word, and what its lookups will read prefetched: its slot of
    # the token table and the piece-cache lines its length sends it to (its set, its pair of
    # long entries or its ring slot: the lines its lookup reads, which would otherwise cost a
    # whole memory access when the lookup comes to it).  The caller's copies of the
    # addresses and masks stay in registers, where the table's and the Local's own fields
    # would be read again after every store of a bound, which may alias them as far as the
    # compiler knows.  `inside`: p[0:8] lies inside the text (the first word is read without
    # a test of where the page ends).
    cdef uint64_t w, x
    cdef const void* entry
    if n <= 8:
        # most pieces: one test of the length decides the hash (no tail word) and the line
        # (a set), where the general path below tests it three times
        w = bpe_word_inside(p, n) if inside else bpe_word(p, n)
        head[0] = w
        x = bpe_hash8w(w, n)
        h[0] = x
        bpe_prefetch(&slots[x & slot_mask])
        bpe_prefetch(bpe_cache_set(caches, x))
        return
    x = hash_and_head(p, n, head)
    entry = bpe_cache_set(caches, x)
    h[0] = x
    bpe_prefetch(&slots[x & slot_mask])
    if n > CACHE_MAX_BYTES:
        if n <= LONG_CACHE_MAX_BYTES:
            # (both of its long entries: a piece not in its first is looked for in the
            # second, and a piece that is new reads both)
            entry = bpe_long_first(caches, x)
            bpe_prefetch(bpe_long_second(caches, x))
        else:
            entry = bpe_ring_slot_of(caches, x)
    bpe_prefetch(entry)


cdef Py_ssize_t _token_run(const Slot* slots, uint64_t slot_mask, const uint8_t* blob, const uint8_t* p,
                           const ScanPiece* pcs, Py_ssize_t c, Py_ssize_t count, tok_t* out) noexcept nogil:
    # From piece c of a batch of _scan_ahead on, the pieces that are the token in the home
    # slot of their hash, up to 16 bytes long (most pieces of text): their ids to out, one
    # per piece.  Returns the index of the first other piece (count if none); _piece_known
    # takes that one.  A function of its own so that its loop keeps the table's address and
    # mask in registers (inside _batch_ids' loop the compiler kept them on the stack, with
    # half again as many instructions per piece).  An empty slot has length 0, which no
    # piece has.
    cdef Py_ssize_t c0 = c, size, o
    cdef const Slot* s
    cdef uint32_t lenoff
    while c < count:
        size = pcs[c + 1].start - pcs[c].start
        s = &slots[pcs[c].hash & slot_mask]
        lenoff = s.lenoff
        if s.head != pcs[c].head or <Py_ssize_t>(lenoff & 0xFF) != size:
            break
        if size > 8:
            o = slot_blob_offset(lenoff)
            if size > 16 or o == SLOT_FAR or not bpe_same_tail(blob + o, p + pcs[c].start, size):
                break
        out[c - c0] = s.token
        c += 1
    return c


cdef Py_ssize_t _batch_ids(Tables* tb, Local* loc, const uint8_t* p, const ScanPiece* pcs,
                           Py_ssize_t count, tok_t* out) noexcept nogil:
    # The ids of the pieces of a batch of _scan_ahead (p[pcs[c].start:pcs[c + 1].start] for c
    # below count) to out, which has room for one id per byte of them; returns how many, or
    # OUT_OF_MEMORY.  Runs of tokens go through _token_run (where tokens are looked up
    # first); any other piece is looked up in its set, then merged if it must be.
    cdef Py_ssize_t c = 0, k = 0, m
    cdef bpe_cache_entry* e = NULL
    cdef bint tokens_first = loc.ml == NULL or loc.ml.ignore_merges
    cdef const Slot* slots = tb.table.slots
    cdef uint64_t slot_mask = <uint64_t>(tb.table.n_slots - 1)
    cdef const ScanPiece* q
    while c < count:
        if tokens_first:
            m = _token_run(slots, slot_mask, tb.table.blob, p, pcs, c, count, out + k)
            k += m - c
            c = m
            if c == count:
                break
        q = &pcs[c]
        if tokens_first:
            m = _piece_set_first(tb, loc, p + q.start, q[1].start - q.start, q.hash, q.head, out + k, &e)
        else:
            m = _piece_known(tb, loc, p + q.start, q[1].start - q.start, q.hash, q.head, out + k, &e)
        if m == PIECE_MISSED:
            m = _piece_uncommon(tb, loc, p + q.start, q[1].start - q.start, q.hash, e, out + k)
            if m < 0:
                return m
        k += m
        c += 1
    return k


cdef inline Py_ssize_t _scan_ahead(const TokenTable* t, const Local* loc, int pid, const uint8_t* p,
                                   Py_ssize_t n, Py_ssize_t i, ScanPiece* pcs) noexcept nogil:
    # Find up to SCAN_AHEAD pieces from p[i:] (a few more when a block gives them): piece c is
    # p[pcs[c].start:pcs[c + 1].start] with hash pcs[c].hash and first word pcs[c].head.  Their
    # token-table slots and piece-cache sets are prefetched here, so that the lookups of a
    # batch wait for memory together instead of one after another (one piece ahead was too
    # close: a piece that is a token takes about 25 ns, a line from memory about 100; and
    # between a benchmark's rounds the other tokenizers evict these tables).  Returns the
    # number of pieces, or PIECE_TOO_LONG.
    cdef Py_ssize_t c = 0, j, base
    cdef uint64_t more
    cdef ScanPiece* q
    cdef const Slot* slots = t.slots
    cdef uint64_t slot_mask = <uint64_t>(t.n_slots - 1)
    cdef bpe_caches caches = loc.caches
    pcs[0].start = i
    while c < SCAN_AHEAD and i < n:
        # the starts a block of the text decides at once (o200k), else one piece from the
        # scanner
        more = piece_bounds(pid, p, n, i)
        if more == 0:
            j = scan_piece(pid, p, n, i)
            _hash_piece(slots, slot_mask, &caches, p + i, j - i, &pcs[c].hash, &pcs[c].head, False)
            c += 1
            pcs[c].start = j
            i = j
            continue
        base = i
        if base + 72 <= n:
            # every piece of this block starts at least 8 bytes before the text's end (a
            # block gives starts below base + 64)
            q = &pcs[c]
            while more:
                j = base + bpe_ctz64(more)
                more &= more - 1
                _hash_piece(slots, slot_mask, &caches, p + i, j - i, &q.hash, &q.head, True)
                q += 1
                q.start = j
                i = j
            c = q - pcs
            continue
        while more:
            j = base + bpe_ctz64(more)
            more &= more - 1
            _hash_piece(slots, slot_mask, &caches, p + i, j - i, &pcs[c].hash, &pcs[c].head, False)
            c += 1
            pcs[c].start = j
            i = j
    if i - pcs[0].start >= 0x7FFFFFFF:
        # only a batch this long can hold a piece too long for 32-bit unit offsets
        for j in range(c):
            if pcs[j + 1].start - pcs[j].start >= 0x7FFFFFFF:
                return PIECE_TOO_LONG
    return c


# --------------------------------------------------------------------------------------------
# Python-facing encoder
# --------------------------------------------------------------------------------------------

cdef Py_ssize_t _signatures_after = SIG_AFTER


def _set_default_signatures_after(Py_ssize_t n):
    """For tests: after how many merged pieces Encoders made from now on build their pair
    signatures (bpe/_signatures.pxi; 0: at the first).  Returns the old value."""
    global _signatures_after
    cdef Py_ssize_t old = _signatures_after
    _signatures_after = n
    return old


# the states of lazily built tables (SIG_* and CU_* share these values), for the test hooks
_STATES = ("unbuilt", "ready", "unavailable")


cdef class Encoder:
    """Token table plus BPE encode/decode; see the module docstring."""

    cdef Tables tb              # the token table and what encoding reads beside it
    cdef uint64_t gen           # tags this Encoder's entries in the piece cache
    cdef IdInts ints            # the int object of each id (bpe/_id_ints.pxi)
    cdef unsigned long long* pairs  # the pair cache (NULL: none), shared by all threads
    cdef bint ready

    def __cinit__(self):
        self.ready = False
        self.tb.pair2 = NULL
        self.pairs = NULL
        memset(&self.ints, 0, sizeof(IdInts))
        memset(&self.tb.ml, 0, sizeof(MergeList))
        memset(&self.tb.bt, 0, sizeof(Backtrack))
        self.tb.bt.min_bytes = BT_MIN_BYTES
        memset(&self.tb.cu, 0, sizeof(CharUnits))
        self.tb.cu.enabled = 1
        memset(&self.tb.sigs, 0, sizeof(Signatures))
        self.tb.sigs.enabled = 1
        self.tb.sigs.after = _signatures_after
        tt_init(&self.tb.table)

    def __dealloc__(self):
        ints_free(&self.ints)
        bt_free(&self.tb.bt)
        cu_free(&self.tb.cu)
        free(self.tb.sigs.sig)
        free(self.tb.sigs.split)
        tt_free(&self.tb.table)
        free(self.tb.pair2)
        free(self.pairs)
        ml_free(&self.tb.ml)

    def __init__(self, mergeable_ranks, dict special_tokens):
        """``mergeable_ranks``: token bytes -> rank (= id), or a byte form
        (``bpe.models.bpe.MergeBPE.byte_form``) whose ``tokens`` are the ranks; the compiled
        one's table is copied as it is.  ``special_tokens`` (bytes -> id): decoded only."""
        cdef bytes token
        cdef int b
        if self.ready or self.tb.table.n_ids:
            raise RuntimeError("an Encoder is initialised once; build a new one")
        if isinstance(mergeable_ranks, VocabTables):
            tt_free(&self.tb.table)
            tt_copy(&self.tb.table, &(<VocabTables>mergeable_ranks).table)
        else:
            if not isinstance(mergeable_ranks, dict):
                mergeable_ranks = mergeable_ranks.tokens
            for token, rank in (<dict?>mergeable_ranks).items():
                tt_add(&self.tb.table, rank, <const uint8_t*>PyBytes_AS_STRING(token),
                       PyBytes_GET_SIZE(token), True)
        for token, rank in special_tokens.items():
            tt_add(&self.tb.table, rank, <const uint8_t*>PyBytes_AS_STRING(token),
                   PyBytes_GET_SIZE(token), False)
        cdef uint8_t one[8]            # (8: hashing reads a whole word where it may)
        for b in range(256):
            one[0] = <uint8_t>b
            self.tb.byte_rank[b] = tt_find(&self.tb.table, one, 1)
            if self.tb.byte_rank[b] == NO_TOKEN:
                raise VocabularyError(
                    f"mergeable_ranks lacks the single-byte token {bytes([b])!r}; "
                    "a byte-level BPE needs a rank for each of the 256 bytes")
        self.tb.pair2 = <tok_t*>malloc(65536 * sizeof(tok_t))
        if self.tb.pair2 == NULL:
            raise MemoryError()
        cdef uint8_t two[8]            # (likewise)
        cdef int x
        for x in range(65536):
            two[0] = <uint8_t>(x >> 8)
            two[1] = <uint8_t>(x & 255)
            self.tb.pair2[x] = tt_find(&self.tb.table, two, 2)
            if self.tb.pair2[x] == NO_TOKEN:
                self.tb.pair2[x] = NO_RANK
        ints_init(&self.ints, self.tb.table.n_ids)
        if BPE_PAIR_CACHE and self.tb.table.n_ids < <Py_ssize_t>BPE_PAIR_NONE:
            # (zeroed pages: untouched until the merge loop writes them)
            self.pairs = <unsigned long long*>calloc(BPE_PAIR_SLOTS, sizeof(unsigned long long))
            if self.pairs == NULL:
                raise MemoryError()
        self.gen = _new_generation()
        self.ready = True

    cdef inline Local _loc(self) noexcept nogil:
        """The calling thread's Local for encoding with this Encoder's rule."""
        cdef Local loc = _local(self.gen, &self.tb.sigs, self.pairs)
        if self.tb.ml.slots != NULL:
            loc.ml = &self.tb.ml
        return loc

    cdef int _check_ready(self) except -1:
        if not self.ready:
            raise RuntimeError("this Encoder was not initialised; build it with Encoder(ranks, specials)")
        return 0

    cdef Py_ssize_t _encode_utf8(self, int pid, const uint8_t* p, Py_ssize_t n, IdBuffer* out,
                                 Words* words) noexcept nogil:
        """Split ``p[:n]`` with pattern ``pid`` and append the ids of every piece to ``out``
        (grown as needed).  Returns how many, or OUT_OF_MEMORY / PIECE_TOO_LONG.

        Pieces are found SCAN_AHEAD at a time (``_scan_ahead``, which prefetches what their
        lookups read), then encoded by ``_batch_ids``, or one at a time where offsets are
        kept (``words``).  ``words`` (or NULL) gets the end of every piece marked (see
        _offsets.pxi), counted in tokens from ``words.k0`` ids before the first one appended
        here."""
        cdef Py_ssize_t i = 0, k = out.k, k_start = out.k, m, count, c, size
        cdef ScanPiece pcs[SCAN_ROOM + 1]
        cdef Local loc = self._loc()
        while i < n:
            count = _scan_ahead(&self.tb.table, &loc, pid, p, n, i, pcs)
            if count < 0:
                return count
            # room for the batch at once: a piece gives at most one id per byte
            if k + (pcs[count].start - i) > out.cap:
                out.k = k
                if _idb_grow(out, k + (pcs[count].start - i)) < 0:
                    return OUT_OF_MEMORY
            if words != NULL:
                for c in range(count):
                    size = pcs[c + 1].start - pcs[c].start
                    m = bpe_piece_cached(&self.tb, &loc, p + pcs[c].start, size, pcs[c].hash, pcs[c].head,
                                         out.ids + k)
                    if m < 0:
                        out.k = k
                        return OUT_OF_MEMORY
                    k += m
                    if words_mark(words, words.k0 + k - k_start, words.b0 + pcs[c + 1].start) < 0:
                        out.k = k
                        return OUT_OF_MEMORY
            else:
                m = _batch_ids(&self.tb, &loc, p, pcs, count, out.ids + k)
                if m < 0:
                    out.k = k
                    return m
                k += m
            i = pcs[count].start
        out.k = k
        return k - k_start

    cdef Py_ssize_t _encode_split(self, int pid, const uint8_t* p, Py_ssize_t n, IdBuffer* out,
                                  const SpecialSet* allowed,
                                  const SpecialSet* disallowed, Words* words) noexcept nogil:
        """``_encode_utf8`` around special tokens: FOUND_DISALLOWED if ``p[:n]`` holds a token
        of ``disallowed``; else each token of ``allowed`` becomes its id and the text between
        them is encoded on its own (as if it were a whole text).  Either set may be NULL.
        Appends to ``out`` and returns how many ids, or a negative status.
        ``words`` (or NULL): every piece's end and every special token's is marked, counted
        in tokens from the first id appended here."""
        cdef Py_ssize_t i = 0, k_start = out.k, s, m, w = 0
        if disallowed != NULL and sp_find(disallowed, p, n, 0, &w) < n:
            return FOUND_DISALLOWED
        if words != NULL:
            words.k0 = 0
            words.b0 = 0
        if allowed == NULL:
            return self._encode_utf8(pid, p, n, out, words)
        while i < n:
            s = sp_find(allowed, p, n, i, &w)
            if s > i:
                if words != NULL:
                    words.k0 = out.k - k_start
                    words.b0 = i
                m = self._encode_utf8(pid, p + i, s - i, out, words)
                if m < 0:
                    return m
            if s >= n:
                break
            if idb_reserve(out, 1) < 0:
                return OUT_OF_MEMORY
            out.ids[out.k] = allowed.ids[w]
            out.k += 1
            i = s + allowed.lens[w]
            if words != NULL and words_mark(words, out.k - k_start, i) < 0:
                return OUT_OF_MEMORY
        return out.k - k_start

    def use_merge_list(self, bytes triples, bint ignore_merges):
        """Encode by Hugging Face's rule from now on: ``triples`` holds ``(left, right, new)``
        ids in priority order, packed as native uint32 (``bpe.models.bpe.pack_ids``; see
        bpe/_merges.pxi); ``ignore_merges``: a piece that is a token of the table is that
        token.  Called once, before any encoding."""
        self._check_ready()
        if self.tb.ml.slots != NULL:
            raise RuntimeError("use_merge_list is called once per Encoder")
        cdef Py_ssize_t size = PyBytes_GET_SIZE(triples), n = size // (3 * sizeof(uint32_t)), i
        if size % (3 * sizeof(uint32_t)):
            raise ValueError(f"packed merge triples take a multiple of 12 bytes, got {size}")
        if self.tb.table.n_ids >= ML_ID_LIMIT or n >= ML_INDEX_LIMIT:
            raise OverflowError(f"the merge-list rule holds ids below {ML_ID_LIMIT:,} and fewer than "
                                f"{ML_INDEX_LIMIT:,} merges; this table has {self.tb.table.n_ids:,} ids "
                                f"and {n:,} merges")
        cdef uint32_t* ids = <uint32_t*>malloc(size + sizeof(uint32_t))
        if ids == NULL:
            raise MemoryError()
        try:
            memcpy(ids, PyBytes_AS_STRING(triples), size)
            for i in range(3 * n):
                if ids[i] >= <uint32_t>self.tb.table.n_ids:
                    raise ValueError(f"merge {i // 3} names id {ids[i]}, outside the table")
            ml_build(&self.tb.ml, ids, n, ignore_merges, self.tb.byte_rank)
            ml_char_units(&self.tb.cu, &self.tb.ml, &self.tb.table, self.tb.byte_rank, ids, n)
        except BaseException:
            ml_free(&self.tb.ml)
            raise
        finally:
            free(ids)
        self.gen = _new_generation()  # pieces cached under the rank rule are not this rule's

    def specials(self, dict tokens):
        """``tokens`` (UTF-8 bytes -> id) compiled for ``encode_text`` and ``batch``."""
        return Specials(tokens)

    def encode_text(self, str text, str pattern, bint packed=False, Specials allowed=None,
                    Specials disallowed=None):
        """Split ``text`` with the named ``pattern``'s scanner and encode it, all without the
        GIL; raises ``UnicodeEncodeError`` on lone surrogates.  With ``packed`` the ids come
        back as bytes (native-endian 32-bit integers) instead of a list.  Tokens of
        ``allowed`` become their ids; a token of ``disallowed`` anywhere in the text raises
        ``DisallowedSpecialTokenError`` (checked before encoding)."""
        self._check_ready()
        cdef int pid = PATTERN_IDS[pattern] if pattern is not None else PAT_NONE
        cdef Py_ssize_t k
        cdef const SpecialSet* a = &allowed.s if allowed is not None else NULL
        cdef const SpecialSet* d = &disallowed.s if disallowed is not None else NULL
        if len(text) == 0:
            return b"" if packed else []
        cdef Utf8 u
        cdef IdBuffer out
        utf8_get(text, &u)
        if idb_init(&out, u.n) < 0:
            utf8_release(&u)
            raise MemoryError()
        try:
            with nogil:
                k = self._encode_split(pid, u.p, u.n, &out, a, d, NULL)
            if k == FOUND_DISALLOWED:
                _raise_disallowed([text], disallowed)
            _check_status(k)
            if packed:
                return PyBytes_FromStringAndSize(<char*>out.ids, k * sizeof(tok_t))
            return _id_list(&self.ints, out.ids, k)
        finally:
            idb_free(&out)
            utf8_release(&u)

    cdef Py_ssize_t _encode_offsets(self, int pid, const uint8_t* p, Py_ssize_t n, const SpecialSet* allowed,
                                    const SpecialSet* disallowed, tok_t** result) noexcept nogil:
        """``_encode_split`` of ``p[:n]`` with every token's character offsets and word id (_offsets.pxi).  On success ``result[0]`` is one
        malloc'd block that the caller frees: the k ids, then k starts, k ends and k word ids
        (uint32); returns k, or a negative status (and ``result[0]`` is NULL)."""
        cdef Words words
        cdef IdBuffer out
        cdef Py_ssize_t k, status
        cdef tok_t* block
        cdef void* grown
        result[0] = NULL
        if n >= <Py_ssize_t>0xFFFFFFFF:
            return TEXT_TOO_LONG
        if idb_init(&out, n) < 0:
            return OUT_OF_MEMORY
        if words_alloc(&words, n) < 0:
            idb_free(&out)
            return OUT_OF_MEMORY
        k = self._encode_split(pid, p, n, &out, allowed, disallowed, &words)
        if k >= 0:
            grown = realloc(out.ids, (4 * k + 1) * sizeof(tok_t))  # room for the offsets after the ids
            if grown == NULL:
                k = OUT_OF_MEMORY
            else:
                out.ids = <tok_t*>grown
                out.cap = 4 * k + 1
                block = out.ids
                status = char_offsets(&self.tb.table, p, n, block, k, &words, <uint32_t*>(block + k),
                                      <uint32_t*>(block + 2 * k), <uint32_t*>(block + 3 * k))
                if status < 0:
                    k = status
        words_free(&words)
        if k < 0:
            idb_free(&out)
            return k
        result[0] = idb_take(&out)
        return k

    def encode_offsets(self, str text, str pattern, Specials allowed=None, Specials disallowed=None):
        """``encode_text(text, pattern, False, allowed, disallowed)`` with where each token came
        from: ``(ids, block)``, ``block`` the token starts, ends and word ids (k native uint32
        each, one after the other: ``bpe.encoding.unpack``), a token's character span being
        ``text[start:end]`` (a token over part of a character spans that whole character)
        and its word the index of its pre-token (a special token found in the text counts
        as one); all computed without the GIL, the offsets in the pass that marks the words."""
        self._check_ready()
        cdef int pid = PATTERN_IDS[pattern] if pattern is not None else PAT_NONE
        cdef Py_ssize_t n, k, status = 0
        cdef const SpecialSet* a = &allowed.s if allowed is not None else NULL
        cdef const SpecialSet* d = &disallowed.s if disallowed is not None else NULL
        cdef Words words
        cdef list ids
        cdef bytes block
        cdef uint32_t* dst
        cdef IdBuffer out
        cdef Utf8 u
        utf8_get(text, &u)
        cdef const uint8_t* p = u.p
        n = u.n
        if n >= <Py_ssize_t>0xFFFFFFFF:
            utf8_release(&u)
            _check_status(TEXT_TOO_LONG)
        if idb_init(&out, n) < 0:
            utf8_release(&u)
            raise MemoryError()
        if words_alloc(&words, n) < 0:
            idb_free(&out)
            utf8_release(&u)
            raise MemoryError()
        try:
            with nogil:
                k = self._encode_split(pid, p, n, &out, a, d, &words)
            if k == FOUND_DISALLOWED:
                _raise_disallowed([text], disallowed)
            _check_status(k)
            ids = _id_list(&self.ints, out.ids, k)
            # the offsets are written straight into the bytes object returned
            block = PyBytes_FromStringAndSize(NULL, 3 * k * sizeof(uint32_t))
            dst = <uint32_t*>PyBytes_AS_STRING(block)
            with nogil:
                status = char_offsets(&self.tb.table, p, n, out.ids, k, &words, dst, dst + k, dst + 2 * k)
            _check_status(status)
            return ids, block
        finally:
            words_free(&words)
            idb_free(&out)
            utf8_release(&u)

    def batch(self, list texts, str pattern, Specials allowed=None, Specials disallowed=None,
              bint offsets=False):
        """A ``Batch`` that encodes each of ``texts`` like ``encode_text(t, pattern, False,
        allowed, disallowed)`` (with ``offsets``: like ``encode_offsets``); call its ``run()``
        (and ``help()`` from other threads), then ``results()``.  Raises
        ``UnicodeEncodeError`` here if a text holds a lone surrogate."""
        self._check_ready()
        return Batch(self, texts, PATTERN_IDS[pattern] if pattern is not None else PAT_NONE,
                     allowed, disallowed, offsets)

    def count_text(self, str text, str pattern, Py_ssize_t limit=-1):
        """How many tokens ``encode_text`` would give, without building them; with
        ``limit >= 0`` stop as soon as the count passes it and return -1."""
        self._check_ready()
        cdef int pid = PATTERN_IDS[pattern] if pattern is not None else PAT_NONE
        cdef Py_ssize_t n, i = 0, k = 0, m = 0, cap = 256, count, size
        cdef ScanPiece pcs[SCAN_ROOM + 1]
        cdef Utf8 u
        utf8_get(text, &u)
        cdef const uint8_t* p = u.p
        n = u.n
        cdef tok_t* scratch = <tok_t*>malloc(cap * sizeof(tok_t))
        cdef void* grown
        cdef Local loc
        if scratch == NULL:
            utf8_release(&u)
            raise MemoryError()
        try:
            with nogil:
                loc = self._loc()
                while i < n and k >= 0:
                    count = _scan_ahead(&self.tb.table, &loc, pid, p, n, i, pcs)
                    if count < 0:
                        m = count
                        break
                    # (the batch's ids go to scratch, which has room for one per byte)
                    size = pcs[count].start - pcs[0].start
                    if size > cap:
                        cap = size
                        grown = realloc(scratch, cap * sizeof(tok_t))
                        if grown == NULL:
                            m = OUT_OF_MEMORY
                            break
                        scratch = <tok_t*>grown
                    m = _batch_ids(&self.tb, &loc, p, pcs, count, scratch)
                    if m < 0:
                        break
                    k += m
                    if 0 <= limit < k:
                        k = -1
                        break
                    i = pcs[count].start
            _check_status(m)
            return k
        finally:
            free(scratch)
            utf8_release(&u)

    def encode_pieces(self, list pieces):
        """Encode each pre-token ``str``; raises ``UnicodeEncodeError`` on lone surrogates."""
        self._check_ready()
        cdef Py_ssize_t n = len(pieces), i, total = 0, k = 0, m = 0, size
        cdef uint64_t h, head = 0
        cdef Local loc
        if n == 0:
            return []
        cdef const char** ptrs = <const char**>malloc(n * sizeof(char*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        cdef IdBuffer out
        out.ids = NULL
        try:
            if ptrs == NULL or lens == NULL:
                raise MemoryError()
            for i in range(n):
                ptrs[i] = PyUnicode_AsUTF8AndSize(pieces[i], &size)
                if size >= 0x7FFFFFFF:
                    _check_status(PIECE_TOO_LONG)
                lens[i] = size
                total += size
            if idb_init(&out, total) < 0:
                raise MemoryError()
            with nogil:
                loc = self._loc()
                for i in range(n):
                    m = idb_reserve(&out, lens[i])
                    if m < 0:
                        break
                    h = hash_and_head(<const uint8_t*>ptrs[i], lens[i], &head) if lens[i] > 0 else 0
                    m = bpe_piece_cached(&self.tb, &loc, <const uint8_t*>ptrs[i], lens[i], h, head,
                                         out.ids + out.k)
                    if m < 0:
                        break
                    out.k += m
            if m < 0:
                raise MemoryError()
            return _id_list(&self.ints, out.ids, out.k)
        finally:
            free(ptrs)
            free(lens)
            idb_free(&out)

    def count_pieces(self, list pieces, Py_ssize_t limit=-1):
        """How many tokens ``encode_pieces`` would give; -1 as soon as it passes ``limit``."""
        cdef Py_ssize_t total = 0
        for piece in pieces:
            total += len(self.encode_pieces([piece]))
            if 0 <= limit < total:
                return -1
        return total

    def _forget_cached_pieces(self):
        """For benchmarks: a new generation tag, so that no thread's piece cache holds anything
        for this encoder any more, and an empty pair cache (each timed round then starts
        cold)."""
        self.gen = _new_generation()
        cdef Py_ssize_t i
        if self.pairs != NULL:
            for i in range(BPE_PAIR_SLOTS):
                bpe_pair_store(&self.pairs[i], 0)

    def _pair_cache_slots(self):
        """For tests: the pair cache's number of slots (0: this encoder has none)."""
        return BPE_PAIR_SLOTS if self.pairs != NULL else 0

    def _set_backtrack_min_bytes(self, Py_ssize_t n):
        """For tests and benchmarks: pieces longer than ``n`` bytes use the backtracking
        encoder (0: every piece that is not a token; -1: none).  Returns the old value."""
        cdef Py_ssize_t old = self.tb.bt.min_bytes
        self.tb.bt.min_bytes = n
        return old

    def _set_signatures(self, bint on, Py_ssize_t after=-1):
        """For tests and benchmarks: whether the merge loop skips the pairs that fail the
        signatures (bpe/_signatures.pxi), and (``after >= 0``) after how many merged pieces
        they are built (0: at the next one).  Returns the old setting."""
        cdef bint old = self.tb.sigs.enabled
        self.tb.sigs.enabled = on
        if after >= 0:
            self.tb.sigs.after = after
        return old

    def _pieces_merged(self):
        """For tests: how many pieces went through the merge loop while the pair signatures
        waited to be built (the count stops once they are; see ``_set_signatures``)."""
        return self.tb.sigs.seen

    def _signatures_state(self):
        """For tests: "unbuilt", "ready" or "unavailable"."""
        return _STATES[self.tb.sigs.state]

    @staticmethod
    def _linear_minimum(ranks):
        """For tests: what the linear merge loop's minimum picks among pairs of these ranks
        (None: no merge), as (rank, index), or None when no pair merges (at most LINEAR_MAX
        ranks, each below SHORT_RANK_LIMIT)."""
        cdef int32_t key[LINEAR_MAX]
        cdef Py_ssize_t i, n = len(ranks)
        if n > LINEAR_MAX:
            raise ValueError(f"at most {LINEAR_MAX} ranks")
        for i in range(LINEAR_MAX):
            key[i] = SHORT_NONE
        for i in range(n):
            if ranks[i] is not None:
                if not 0 <= ranks[i] < SHORT_RANK_LIMIT:
                    raise ValueError(f"ranks lie in 0..{SHORT_RANK_LIMIT - 1}")
                key[i] = _short_key(ranks[i], i)
        cdef int32_t best = bpe_min_keys(key, (n + 7) & ~7 if n > 0 else 8)
        if best == SHORT_NONE:
            return None
        best -= SHORT_BIAS
        return (best >> SHORT_SHIFT, best & ((1 << SHORT_SHIFT) - 1))

    def _split_table_slots(self):
        """For tests: the split table's number of slots (0: none, or not built yet)."""
        return self.tb.sigs.split_mask + 1 if self.tb.sigs.split != NULL else 0

    def _big_table_offsets(self):
        """For tests: the addresses modulo 2 MiB (0: aligned for huge pages) of the token
        table's slots, the split table (None while it is not built), the region of the ids'
        int objects (None: none) and the calling thread's piece caches."""
        cdef size_t huge = 2 << 20
        cdef bpe_caches caches = bpe_caches_of_thread()
        return (<size_t>self.tb.table.slots % huge,
                <size_t>self.tb.sigs.split % huge if self.tb.sigs.split != NULL else None,
                <size_t>self.ints.objs % huge if self.ints.objs != NULL else None,
                <size_t>caches.sets % huge)

    def _tokens_past_their_home_slot(self):
        """For tests: (tokens that sit past the home slot of their hash in the token table,
        home slots marked SLOT_SPILLED)."""
        cdef Py_ssize_t i, home, past = 0, marked = 0, mask = self.tb.table.n_slots - 1
        cdef const Slot* s
        for i in range(self.tb.table.n_slots):
            s = &self.tb.table.slots[i]
            if s.token == NO_TOKEN:
                continue
            if s.lenoff & SLOT_SPILLED:
                marked += 1
            home = <Py_ssize_t>(hash_bytes(self.tb.table.blob + self.tb.table.off[s.token],
                                           self.tb.table.length[s.token]) & <uint64_t>mask)
            past += home != i
        return past, marked

    def _split_rank(self, tok_t left, tok_t right):
        """For tests: what the merge loop learns of the pair ``(left, right)`` from the
        signatures and the split table: the rank of the token it is the canonical split of,
        or None (None too while the table is not built)."""
        cdef Signatures* s = &self.tb.sigs
        if s.state != SIG_READY or s.split == NULL:
            return None
        cdef tok_t r = sig_rank(s.sig, s.mask, s.split, s.split_mask, left, right)
        return None if r == NO_RANK else r

    def _signatures_pass(self, tok_t left, tok_t right):
        """For tests: whether the signatures let the pair ``(left, right)`` through to a lookup
        (None while they are not built)."""
        if self.tb.sigs.state != SIG_READY:
            return None
        return bool(sig_pass(self.tb.sigs.sig, self.tb.sigs.mask, left, right))

    def _char_units_state(self):
        """For tests: "unbuilt", "ready" or "unavailable" (without building the tables)."""
        return _STATES[self.tb.cu.state]

    def _set_char_units(self, bint on):
        """For tests and benchmarks: whether the merge loop may start from whole characters
        (bpe/_charunits.pxi) instead of bytes.  Returns the old setting."""
        cdef bint old = self.tb.cu.enabled
        self.tb.cu.enabled = on
        return old

    def _char_units_size(self):
        """For tests: how many characters may start as one unit (built on this call if not
        yet); -1 when the table could not be built."""
        return self._units_in(&self.tb.cu.chars)

    def _char_units_with_contexts(self):
        """For tests: how many of those characters have context strings that keep them
        bytes in some places (the " " flag included); -1 when unavailable."""
        cdef Py_ssize_t i, k = 0
        if self._units_in(&self.tb.cu.chars) < 0:
            return -1
        for i in range(1 << self.tb.cu.chars.bits):
            k += (self.tb.cu.chars.slots[i].value & (CU_CONTEXTS | CU_AFTER_SPACE)) != 0
        return k

    def _start_units(self, bytes piece):
        """For tests: the ids the merge loop starts ``piece`` from (cu_units: whole
        characters, two ASCII bytes, and a leading " " + character, where
        bpe/_charunits.pxi allows them;
        else bytes), building the unit tables if they are not built yet."""
        cdef Py_ssize_t n = len(piece), m, i
        cdef int32_t* off = <int32_t*>malloc((n + 1) * sizeof(int32_t))
        cdef tok_t* tok = <tok_t*>malloc((n + 1) * sizeof(tok_t))
        try:
            if off == NULL or tok == NULL:
                raise MemoryError()
            cu_usable(&self.tb.cu, &self.tb.table, self.tb.byte_rank)
            m = cu_units(&self.tb.cu, &self.tb.table, self.tb.byte_rank, <const uint8_t*>(<char*>piece),
                         n, off, tok, NULL)
            return [tok[i] for i in range(m)]
        finally:
            free(off)
            free(tok)

    def _spaced_units_size(self):
        """For tests: for how many characters c a piece's leading " " + c may start as one
        unit (built on this call if not yet); -1 when the table could not be built."""
        return self._units_in(&self.tb.cu.spaced)

    def _pair_units_size(self):
        """For tests: for how many two-byte ASCII tokens the two bytes may start as one unit
        anywhere in a piece (built on this call if not yet); -1 when the table could not be
        built."""
        return self._units_in(&self.tb.cu.pairs)

    cdef Py_ssize_t _units_in(self, const CharTable* tab) except -2:
        # the filled slots of one of the unit tables, built first if not yet; -1 if unavailable
        cdef Py_ssize_t i, k = 0
        self._check_ready()
        cu_usable(&self.tb.cu, &self.tb.table, self.tb.byte_rank)
        if self.tb.cu.state != CU_READY:
            return -1
        if tab.slots == NULL:
            return 0                            # (a table with no entries: the pairs' may be)
        for i in range(1 << tab.bits):
            k += tab.slots[i].key != 0
        return k

    def _backtrack_split(self, Py_ssize_t token):
        """For tests: the canonical split ``(left, right)`` of a token as the backtracking
        encoder computed it, or None (single bytes, unreachable and special tokens)."""
        self._check_ready()
        if not 0 <= token < self.tb.table.n_ids:
            raise KeyError(f"token id {token!r} is not in the vocabulary of this tokenizer")
        if not bt_usable(&self.tb.bt, &self.tb.table, self.tb.byte_rank):
            raise RuntimeError("the backtracking encoder is not available for this table")
        if self.tb.bt.left[token] == NO_TOKEN:
            return None
        return (self.tb.bt.left[token], self.tb.bt.right[token])

    def encode_piece_bytes(self, bytes piece, tok_t max_rank=-1):
        """BPE-encode one pre-token given as bytes (``max_rank >= 0``: only ranks below it)."""
        self._check_ready()
        cdef Py_ssize_t n = PyBytes_GET_SIZE(piece), k
        cdef Local loc
        if n >= 0x7FFFFFFF:
            _check_status(PIECE_TOO_LONG)
        cdef tok_t* out = <tok_t*>malloc((n + 1) * sizeof(tok_t))
        try:
            if out == NULL:
                raise MemoryError()
            loc = _local(self.gen, NULL, self.pairs)
            if max_rank < 0 and self.tb.ml.slots != NULL:  # HF's rule (the canonical splits stay the rank rule's)
                k = ml_piece(&self.tb.ml, &self.tb.cu, &self.tb.table, self.tb.byte_rank,
                             <const uint8_t*>PyBytes_AS_STRING(piece), n, out)
            else:
                k = bpe_piece(&self.tb, &loc, <const uint8_t*>PyBytes_AS_STRING(piece), n, max_rank, out)
            if k < 0:
                raise MemoryError()
            return [out[i] for i in range(k)]
        finally:
            free(out)

    def first_split_mismatch(self, bytes splits):
        """For ``splits``, packed native uint32 ``(token id, left id, right id)`` triples: the
        index of the first token whose canonical split (``encode_piece_bytes(its bytes, its
        id)``) is not ``[left, right]``, or -1 when all are (one call for the whole check of
        ``bpe.models.bpe.equivalent_ranks``)."""
        self._check_ready()
        cdef Py_ssize_t size = PyBytes_GET_SIZE(splits), n = size // (3 * sizeof(uint32_t))
        cdef Py_ssize_t i, k, length
        cdef uint32_t tid, a, b
        cdef const uint8_t* data = <const uint8_t*>PyBytes_AS_STRING(splits)
        cdef tok_t out[2]
        cdef tok_t* buf = NULL
        cdef Py_ssize_t cap = 0
        cdef Local loc = _local(self.gen, NULL, self.pairs)
        cdef void* grown
        if size % (3 * sizeof(uint32_t)):
            raise ValueError(f"packed splits take a multiple of 12 bytes, got {size}")
        try:
            for i in range(n):
                memcpy(&tid, data + 12 * i, 4)
                memcpy(&a, data + 12 * i + 4, 4)
                memcpy(&b, data + 12 * i + 8, 4)
                if tid >= <uint32_t>self.tb.table.n_ids or self.tb.table.length[tid] < 0:
                    return i
                length = self.tb.table.length[tid]
                if length + 1 > cap:
                    cap = 2 * length + 16
                    grown = realloc(buf, cap * sizeof(tok_t))
                    if grown == NULL:
                        raise MemoryError()
                    buf = <tok_t*>grown
                k = bpe_piece(&self.tb, &loc, <const uint8_t*>self.tb.table.blob + self.tb.table.off[tid], length, <tok_t>tid, buf)
                if k < 0:
                    raise MemoryError()
                if k != 2 or <uint32_t>buf[0] != a or <uint32_t>buf[1] != b:
                    return i
            return -1
        finally:
            free(buf)

    cdef Py_ssize_t _id_of(self, object token) except -1:
        """``token`` (an int, or an integer type with ``__index__`` such as numpy's) as an id
        that has bytes in this table; ``TypeError`` or ``KeyError`` (saying which) if not."""
        cdef object value = token
        cdef Py_ssize_t v
        if not PyLong_CheckExact_PTR(<PyObject*>token):
            try:
                value = operator.index(token)
            except TypeError:
                raise TypeError(f"token ids must be ints, got {type(token).__name__}: {token!r}") from None
        v = PyLong_AsSsize_t_PTR(<PyObject*>value)
        if v == -1 and PyErr_Occurred() != NULL:
            PyErr_Clear()  # beyond Py_ssize_t: no such id either
        if v < 0 or v >= self.tb.table.n_ids or self.tb.table.length[v] < 0:
            raise KeyError(f"token id {value!r} is not in the vocabulary of this tokenizer")
        return v

    def decode_bytes(self, ids):
        """Concatenate the bytes of ``ids``; ``KeyError`` for an id with no bytes."""
        cdef list seq = ids if type(ids) is list else list(ids)
        cdef Py_ssize_t total = 0, i, v, n = len(seq), pos = 0, n_ids = self.tb.table.n_ids
        cdef const int32_t* length = self.tb.table.length
        cdef const Py_ssize_t* off = self.tb.table.off
        cdef const uint8_t* blob = self.tb.table.blob
        cdef Py_ssize_t blob_cap = self.tb.table.blob_cap
        cdef PyObject* item
        cdef PyObject* raw = NULL
        cdef char* dst
        cdef Py_ssize_t* tids = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if tids == NULL:
            raise MemoryError()
        try:
            # check every id and sum the lengths first: the copy loop then runs no Python code
            for i in range(n):
                item = PyList_GET_ITEM_PTR(seq, i)
                if PyLong_CheckExact_PTR(item):  # the usual case, without a call into Python
                    v = PyLong_AsSsize_t_PTR(item)
                    if <size_t>v < <size_t>n_ids and length[v] >= 0:
                        tids[i] = v
                        total += length[v]
                        continue
                    if v == -1 and PyErr_Occurred() != NULL:
                        PyErr_Clear()
                if seq is ids:
                    # Python code (an __index__ method) may run from here on and could change
                    # the caller's list: go on with a copy of it as it is now
                    seq = list(seq)
                v = self._id_of(seq[i])  # raises the right error, or takes __index__ types
                tids[i] = v
                total += length[v]
            # room for 16 bytes more, so that tokens of up to 16 bytes are copied as two
            # 8-byte words (most are; a memcpy call per token took a third of the time)
            raw = PyBytes_FromStringAndSize_PTR(NULL, total + 16)
            if raw == NULL:
                raise MemoryError()
            dst = PyBytes_AS_STRING_PTR(raw)
            for i in range(n):
                v = tids[i]
                if length[v] <= 16 and off[v] + 16 <= blob_cap:
                    bpe_copy16(dst + pos, blob + off[v])
                else:
                    memcpy(dst + pos, blob + off[v], length[v])
                pos += length[v]
            if _PyBytes_Resize(&raw, total) < 0:  # (raw is NULL then)
                raise MemoryError()
            return <object>raw
        finally:
            Py_XDECREF(raw)
            free(tids)

    def token_bytes(self, token):
        """The bytes of one token id; ``KeyError`` if it has none."""
        cdef Py_ssize_t i = self._id_of(token)
        return PyBytes_FromStringAndSize(<char*>self.tb.table.blob + self.tb.table.off[i], self.tb.table.length[i])


# --------------------------------------------------------------------------------------------
# Batch encoding on several threads
# --------------------------------------------------------------------------------------------


cdef enum:
    # a thread turns its encoded texts into lists (which needs the GIL) once it holds this
    # many ids or BATCH_TEXTS texts: often enough that the other threads keep encoding
    # meanwhile and the last list is built soon after the last text is encoded
    BATCH_IDS = 16384
    BATCH_TEXTS = 16


cdef class Batch:
    """Texts to encode, shared by the threads that call ``run()`` or ``help()``.

    Both claim texts one at a time (an atomic counter) and encode them without the GIL, so
    threads divide the texts however their speeds fall and finish together.  ``help()`` never
    takes the GIL while it works: it hands each text's ids over.  ``run()`` (the calling
    thread) takes the GIL every few texts to turn ids into lists, its own texts' and the
    handed ones', and returns once every list is built.  Building every list on one thread
    keeps the int objects' reference counts, and the lists' memory, in one core's caches and
    leaves the helpers nothing to wait for (on 2 threads, five runs alternating with each
    thread building its own lists: 2-3% more throughput in the median, and 1 reading under
    1.7x one thread's speed in 10 instead of 4).  ``results()`` gives the lists in text
    order.  Each text is encoded as ``Encoder.encode_text`` would with the same special-token
    sets (``_encode_split``), so the disallowed check and the special tokens are found on the
    encoding threads too; a disallowed token stops every thread and ``run()`` raises for the
    first text that holds one.  It does not split work inside one text."""

    cdef Encoder enc
    cdef list texts             # kept alive: ptrs of ASCII texts point into them
    cdef list out
    cdef const uint8_t** ptrs
    cdef uint8_t** owned        # the UTF-8 buffers converted for the texts (utf8_get), freed here
    cdef Py_ssize_t* lens
    cdef Py_ssize_t n
    cdef Py_ssize_t next        # the next text to claim (claimed with bpe_claim)
    cdef Py_ssize_t done        # texts whose list is built (changed with the GIL held)
    cdef Py_ssize_t status      # a negative status of _encode_split (then everyone stops)
    cdef int pid
    cdef tok_t** handed         # ids of texts that helper threads encoded, for the owner
    cdef Py_ssize_t* handed_len
    cdef int* ready             # 1 once handed[t] is complete (stored with release)
    cdef Py_ssize_t cursor      # the owner's scan position over handed texts
    cdef Specials allowed       # kept alive for a_set / d_set (or None)
    cdef Specials disallowed
    cdef const SpecialSet* a_set
    cdef const SpecialSet* d_set
    cdef bint offsets           # each result is encode_offsets's (ids, block)

    def __cinit__(self, Encoder enc, list texts, int pid, Specials allowed=None,
                  Specials disallowed=None, bint offsets=False):
        cdef Py_ssize_t t, size
        self.enc = enc
        self.offsets = offsets
        self.allowed = allowed
        self.disallowed = disallowed
        self.a_set = &allowed.s if allowed is not None else NULL
        self.d_set = &disallowed.s if disallowed is not None else NULL
        self.texts = list(texts)
        self.n = len(self.texts)
        self.pid = pid
        self.next = 0
        self.done = 0
        self.status = 0
        self.ptrs = <const uint8_t**>malloc((self.n + 1) * sizeof(uint8_t*))
        self.lens = <Py_ssize_t*>malloc((self.n + 1) * sizeof(Py_ssize_t))
        self.handed = <tok_t**>calloc(self.n + 1, sizeof(tok_t*))
        self.handed_len = <Py_ssize_t*>calloc(self.n + 1, sizeof(Py_ssize_t))
        self.ready = <int*>calloc(self.n + 1, sizeof(int))
        self.owned = <uint8_t**>calloc(self.n + 1, sizeof(uint8_t*))
        self.cursor = 0
        if (self.ptrs == NULL or self.lens == NULL or self.handed == NULL or self.handed_len == NULL
                or self.ready == NULL or self.owned == NULL):
            raise MemoryError()
        cdef Utf8 u
        for t in range(self.n):
            utf8_get(<str?>self.texts[t], &u)
            self.ptrs[t] = u.p
            self.lens[t] = u.n
            self.owned[t] = u.owned
        self.out = [None] * self.n

    def __dealloc__(self):
        cdef Py_ssize_t t
        if self.handed != NULL:
            for t in range(self.n):
                free(self.handed[t])
        if self.owned != NULL:
            for t in range(self.n):
                free(self.owned[t])
        free(self.owned)
        free(self.handed)
        free(self.handed_len)
        free(self.ready)
        free(self.ptrs)
        free(self.lens)

    cdef int _collect(self) except -1:
        # build the lists of texts handed over by help(), in text order as far as they are
        # ready (the texts of run() calls are built by those); returns whether it built any
        cdef Py_ssize_t t
        cdef int got = 0
        while self.cursor < self.n:
            t = self.cursor
            if self.out[t] is not None:
                self.cursor += 1
                continue
            if not bpe_load_acquire(&self.ready[t]):
                break
            if self.offsets:
                self.out[t] = _offsets_result(&self.enc.ints, self.handed[t], self.handed_len[t])
            else:
                self.out[t] = _id_list(&self.enc.ints, self.handed[t], self.handed_len[t])
            free(self.handed[t])
            self.handed[t] = NULL
            self.done += 1
            self.cursor += 1
            got = 1
        return got

    def help(self):
        """Encode texts until none is left unclaimed and hand their ids to ``run()``, which
        builds their lists (safe to call from many threads at once; never takes the GIL while
        it works)."""
        cdef Encoder enc = self.enc
        with nogil:
            self._hand_over(enc)

    cdef void _hand_over(self, Encoder enc) noexcept nogil:
        # help()'s work: claim texts, encode each into a buffer of its own, mark it ready
        cdef Py_ssize_t t, m
        cdef tok_t* buf
        cdef IdBuffer ids
        while self.status == 0:
            t = bpe_claim(&self.next)
            if t >= self.n:
                break
            if self.offsets:
                m = enc._encode_offsets(self.pid, self.ptrs[t], self.lens[t], self.a_set, self.d_set, &buf)
            else:
                if idb_init(&ids, self.lens[t]) < 0:
                    self.status = OUT_OF_MEMORY
                    break
                m = enc._encode_split(self.pid, self.ptrs[t], self.lens[t], &ids,
                                      self.a_set, self.d_set, NULL)
                buf = idb_take(&ids)
            if m < 0:
                free(buf)
                self.status = m
                break
            self.handed[t] = buf
            self.handed_len[t] = m
            bpe_store_release(&self.ready[t], 1)

    def run(self):
        """Encode texts until none is left unclaimed, build their lists and those of the texts
        ``help()`` handed over, and return once every text has its list (safe to call from
        many threads at once)."""
        cdef Py_ssize_t m, t, c, n_held, start
        cdef IdBuffer buf                       # the ids of the held texts, one after the other
        cdef Py_ssize_t held[BATCH_TEXTS]      # the texts encoded since the last lists
        cdef Py_ssize_t ends[BATCH_TEXTS]      # where each one's ids end in buf
        cdef Encoder enc = self.enc
        if self.offsets:  # every text's block is handed over, this thread's too
            with nogil:
                self._hand_over(enc)
        if idb_init(&buf, 0) < 0:
            raise MemoryError()
        try:
            while not self.offsets:
                n_held = 0
                buf.k = 0
                with nogil:
                    while n_held < BATCH_TEXTS and buf.k < BATCH_IDS and self.status == 0:
                        t = bpe_claim(&self.next)
                        if t >= self.n:
                            break
                        m = enc._encode_split(self.pid, self.ptrs[t], self.lens[t], &buf,
                                              self.a_set, self.d_set, NULL)
                        if m < 0:
                            self.status = m
                            break
                        held[n_held] = t
                        ends[n_held] = buf.k
                        n_held += 1
                if self.status != 0 or n_held == 0:
                    break
                start = 0
                for c in range(n_held):
                    self.out[held[c]] = _id_list(&enc.ints, buf.ids + start, ends[c] - start)
                    start = ends[c]
                self.done += n_held
                self._collect()
            # the helpers' last texts
            while self.done < self.n and self.status == 0:
                if not self._collect():
                    with nogil:
                        bpe_pause()
            self._check()
        finally:
            idb_free(&buf)

    cdef int _check(self) except -1:
        if self.status == FOUND_DISALLOWED:
            _raise_disallowed(self.texts, self.disallowed)
        return _check_status(self.status)

    def results(self):
        """The id list of every text, in order (after the ``run()`` calls have returned)."""
        self._check()
        if self.done != self.n:
            raise RuntimeError(f"the batch has {self.n - self.done} texts without their id lists; call run() first")
        return self.out
