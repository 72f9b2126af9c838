"""Compiled encoding core: the token table and rank-priority BPE over pre-tokens.

``Encoder`` owns a TokenTable (see ``_core.pxd``) and encodes a list of pre-tokens (``str``)
into token ids with exactly tiktoken's semantics: a pre-token that is itself a token is
emitted directly; otherwise, starting from single bytes, the adjacent pair whose concatenation
has the lowest rank is merged (the leftmost among equal ranks) until no adjacent pair is a
token.  The merging runs without the GIL, so threads encoding different texts run in parallel.

It does not split text (``bpe.patterns``), apply special-token policy (``bpe.special``) or
read files; it trusts its caller to hand it well-formed tables (checked in ``__init__``).

Performance notes
-----------------
* Each merge step scans the parts of the piece for the lowest rank (tiktoken's own approach):
  O(n^2) in the length of one pre-token, which is small for the standard split patterns.
* The UTF-8 form of each ``str`` piece is read in place (CPython caches it on the object),
  gathered with the GIL held, then all pieces are merged in one GIL-free pass.
"""

# cython: language_level=3

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memmove

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL


# --------------------------------------------------------------------------------------------
# Token table
# --------------------------------------------------------------------------------------------

cdef uint64_t hash_bytes(const uint8_t* data, Py_ssize_t n) noexcept nogil:
    # FNV-1a, then a final avalanche so that the low bits (the slot index) are well mixed.
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ data[i]) * 1099511628211ULL
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    return h


cdef int _no_memory() except -1 nogil:
    with gil:
        raise MemoryError("bpe: out of memory while building the token table")


cdef int tt_init(TokenTable* t) except -1 nogil:
    t.blob_len = 0
    t.blob_cap = 1024
    t.n_ids = 0
    t.id_cap = 512
    t.n_keys = 0
    t.n_slots = 1024
    t.blob = <uint8_t*>malloc(t.blob_cap)
    t.off = <Py_ssize_t*>malloc(t.id_cap * sizeof(Py_ssize_t))
    t.length = <int32_t*>malloc(t.id_cap * sizeof(int32_t))
    t.slots = <tok_t*>malloc(t.n_slots * sizeof(tok_t))
    if t.blob == NULL or t.off == NULL or t.length == NULL or t.slots == NULL:
        tt_free(t)
        return _no_memory()
    cdef Py_ssize_t i
    for i in range(t.id_cap):
        t.length[i] = -1
    for i in range(t.n_slots):
        t.slots[i] = NO_TOKEN
    return 0


cdef void tt_free(TokenTable* t) noexcept nogil:
    free(t.blob)
    free(t.off)
    free(t.length)
    free(t.slots)
    t.blob = NULL
    t.off = NULL
    t.length = NULL
    t.slots = NULL
    t.n_ids = 0
    t.n_keys = 0


cdef tok_t tt_find(const TokenTable* t, const uint8_t* data, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t mask = t.n_slots - 1
    cdef Py_ssize_t i = <Py_ssize_t>(hash_bytes(data, n) & <uint64_t>mask)
    cdef tok_t token
    while True:
        token = t.slots[i]
        if token == NO_TOKEN:
            return NO_TOKEN
        if t.length[token] == n and memcmp(t.blob + t.off[token], data, n) == 0:
            return token
        i = (i + 1) & mask


cdef int _tt_rehash(TokenTable* t, Py_ssize_t n_slots) except -1 nogil:
    cdef tok_t* slots = <tok_t*>malloc(n_slots * sizeof(tok_t))
    if slots == NULL:
        return _no_memory()
    cdef Py_ssize_t i, j, mask = n_slots - 1
    for i in range(n_slots):
        slots[i] = NO_TOKEN
    for i in range(t.n_slots):
        if t.slots[i] != NO_TOKEN:
            j = <Py_ssize_t>(hash_bytes(t.blob + t.off[t.slots[i]], t.length[t.slots[i]]) & <uint64_t>mask)
            while slots[j] != NO_TOKEN:
                j = (j + 1) & mask
            slots[j] = t.slots[i]
    free(t.slots)
    t.slots = slots
    t.n_slots = n_slots
    return 0


cdef int tt_add(TokenTable* t, tok_t token, const uint8_t* data, Py_ssize_t n, bint hashed) except -1 nogil:
    """Give id ``token`` the bytes ``data[:n]``; with ``hashed`` it can also be looked up."""
    cdef Py_ssize_t cap, i
    cdef void* p
    if token < 0:
        with gil:
            raise ValueError(f"token ids must be non-negative, got {token}")
    if token >= t.id_cap:
        cap = t.id_cap
        while cap <= token:
            cap *= 2
        p = realloc(t.off, cap * sizeof(Py_ssize_t))
        if p == NULL:
            return _no_memory()
        t.off = <Py_ssize_t*>p
        p = realloc(t.length, cap * sizeof(int32_t))
        if p == NULL:
            return _no_memory()
        t.length = <int32_t*>p
        for i in range(t.id_cap, cap):
            t.length[i] = -1
        t.id_cap = cap
    if t.length[token] >= 0:
        with gil:
            raise ValueError(f"token id {token} is given twice")
    if t.blob_len + n > t.blob_cap:
        cap = t.blob_cap
        while cap < t.blob_len + n:
            cap *= 2
        p = realloc(t.blob, cap)
        if p == NULL:
            return _no_memory()
        t.blob = <uint8_t*>p
        t.blob_cap = cap
    memcpy(t.blob + t.blob_len, data, n)
    t.off[token] = t.blob_len
    t.length[token] = <int32_t>n
    t.blob_len += n
    if token >= t.n_ids:
        t.n_ids = token + 1
    if not hashed:
        return 0
    if tt_find(t, data, n) != NO_TOKEN:
        t.length[token] = -1
        with gil:
            raise ValueError(f"the bytes of token id {token} are already the bytes of another token")
    if 2 * (t.n_keys + 1) > t.n_slots:
        _tt_rehash(t, t.n_slots * 2)
    cdef Py_ssize_t mask = t.n_slots - 1
    i = <Py_ssize_t>(hash_bytes(data, n) & <uint64_t>mask)
    while t.slots[i] != NO_TOKEN:
        i = (i + 1) & mask
    t.slots[i] = token
    t.n_keys += 1
    return 0


# --------------------------------------------------------------------------------------------
# Rank-priority BPE of one piece
# --------------------------------------------------------------------------------------------

cdef inline tok_t _pair_rank(const TokenTable* t, const uint8_t* p, Py_ssize_t* start,
                             Py_ssize_t i, Py_ssize_t n_parts, tok_t limit) noexcept nogil:
    # rank of the token spelled by parts i and i+1, or NO_RANK
    if i + 1 >= n_parts:
        return NO_RANK
    cdef tok_t r = tt_find(t, p + start[i], start[i + 2] - start[i])
    if r == NO_TOKEN or r >= limit:
        return NO_RANK
    return r


cdef Py_ssize_t bpe_piece(const TokenTable* t, const tok_t* byte_rank,
                          const uint8_t* p, Py_ssize_t n, tok_t max_rank,
                          Py_ssize_t* start, tok_t* rank, tok_t* out) noexcept nogil:
    """Write the ids of piece ``p[:n]`` to ``out``; return how many.

    ``start`` needs room for n + 1 entries and ``rank`` for n.  Part i is
    ``p[start[i]:start[i + 1]]``; ``rank[i]`` is the rank of parts i and i+1 merged.  With
    ``max_rank >= 0`` only tokens below that rank may form (and no whole-piece shortcut).
    """
    cdef Py_ssize_t i, n_parts, best_i
    cdef tok_t best, r, limit = NO_RANK
    if n == 0:
        return 0
    if n == 1:
        out[0] = byte_rank[p[0]]
        return 1
    if max_rank < 0:
        r = tt_find(t, p, n)
        if r != NO_TOKEN:
            out[0] = r
            return 1
    else:
        limit = max_rank
    n_parts = n
    for i in range(n + 1):
        start[i] = i
    for i in range(n - 1):
        rank[i] = _pair_rank(t, p, start, i, n_parts, limit)
    rank[n - 1] = NO_RANK
    while n_parts > 1:
        best = NO_RANK
        best_i = -1
        for i in range(n_parts - 1):
            if rank[i] < best:
                best = rank[i]
                best_i = i
        if best_i < 0:
            break
        # part best_i absorbs part best_i + 1
        memmove(start + best_i + 1, start + best_i + 2, (n_parts - best_i - 1) * sizeof(Py_ssize_t))
        memmove(rank + best_i + 1, rank + best_i + 2, (n_parts - best_i - 2) * sizeof(tok_t))
        n_parts -= 1
        rank[n_parts - 1] = NO_RANK
        rank[best_i] = _pair_rank(t, p, start, best_i, n_parts, limit)
        if best_i > 0:
            rank[best_i - 1] = _pair_rank(t, p, start, best_i - 1, n_parts, limit)
    for i in range(n_parts):
        if start[i + 1] - start[i] == 1:
            out[i] = byte_rank[p[start[i]]]
        else:
            out[i] = tt_find(t, p + start[i], start[i + 1] - start[i])
    return n_parts


# --------------------------------------------------------------------------------------------
# Python-facing encoder
# --------------------------------------------------------------------------------------------

cdef class Encoder:
    """Token table plus BPE encode/decode; see the module docstring."""

    cdef TokenTable table
    cdef tok_t byte_rank[256]

    def __cinit__(self):
        tt_init(&self.table)

    def __dealloc__(self):
        tt_free(&self.table)

    def __init__(self, dict mergeable_ranks, dict special_tokens):
        cdef bytes token
        cdef int b
        for token, rank in mergeable_ranks.items():
            tt_add(&self.table, rank, <const uint8_t*>PyBytes_AS_STRING(token),
                   PyBytes_GET_SIZE(token), True)
        for token, rank in special_tokens.items():
            tt_add(&self.table, rank, <const uint8_t*>PyBytes_AS_STRING(token),
                   PyBytes_GET_SIZE(token), False)
        cdef uint8_t one
        for b in range(256):
            one = <uint8_t>b
            self.byte_rank[b] = tt_find(&self.table, &one, 1)
            if self.byte_rank[b] == NO_TOKEN:
                raise ValueError(
                    f"mergeable_ranks lacks the single-byte token {bytes([b])!r}; "
                    "a byte-level BPE needs a rank for each of the 256 bytes")

    def encode_pieces(self, list pieces):
        """Encode each pre-token ``str``; raises ``UnicodeEncodeError`` on lone surrogates."""
        cdef Py_ssize_t n = len(pieces), i, total = 0, longest = 0, k = 0, size
        if n == 0:
            return []
        cdef const char** ptrs = <const char**>malloc(n * sizeof(char*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        cdef tok_t* out = NULL
        cdef Py_ssize_t* start = NULL
        cdef tok_t* rank = NULL
        try:
            if ptrs == NULL or lens == NULL:
                raise MemoryError()
            for i in range(n):
                ptrs[i] = PyUnicode_AsUTF8AndSize(pieces[i], &size)
                lens[i] = size
                total += size
                if size > longest:
                    longest = size
            out = <tok_t*>malloc((total + 1) * sizeof(tok_t))
            start = <Py_ssize_t*>malloc((longest + 1) * sizeof(Py_ssize_t))
            rank = <tok_t*>malloc((longest + 1) * sizeof(tok_t))
            if out == NULL or start == NULL or rank == NULL:
                raise MemoryError()
            with nogil:
                for i in range(n):
                    k += bpe_piece(&self.table, self.byte_rank, <const uint8_t*>ptrs[i], lens[i],
                                   -1, start, rank, out + k)
            return [out[i] for i in range(k)]
        finally:
            free(ptrs)
            free(lens)
            free(out)
            free(start)
            free(rank)

    def encode_piece_bytes(self, bytes piece, tok_t max_rank=-1):
        """BPE-encode one pre-token given as bytes (``max_rank >= 0``: only ranks below it)."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(piece), k
        cdef tok_t* out = <tok_t*>malloc((n + 1) * sizeof(tok_t))
        cdef Py_ssize_t* start = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef tok_t* rank = <tok_t*>malloc((n + 1) * sizeof(tok_t))
        try:
            if out == NULL or start == NULL or rank == NULL:
                raise MemoryError()
            k = bpe_piece(&self.table, self.byte_rank, <const uint8_t*>PyBytes_AS_STRING(piece),
                          n, max_rank, start, rank, out)
            return [out[i] for i in range(k)]
        finally:
            free(out)
            free(start)
            free(rank)

    cdef inline Py_ssize_t _length_of(self, object token) except -1:
        cdef Py_ssize_t i
        if not isinstance(token, int):
            raise TypeError(f"token ids must be ints, got {type(token).__name__}: {token!r}")
        if token < 0 or token >= self.table.n_ids:
            raise KeyError(f"token id {token!r} is not in the vocabulary of this tokenizer")
        i = token
        if self.table.length[i] < 0:
            raise KeyError(f"token id {token!r} is not in the vocabulary of this tokenizer")
        return self.table.length[i]

    def decode_bytes(self, ids):
        """Concatenate the bytes of ``ids``; ``KeyError`` for an id with no bytes."""
        cdef list seq = ids if type(ids) is list else list(ids)
        cdef Py_ssize_t total = 0, i, n = len(seq), pos = 0
        cdef char* dst
        cdef Py_ssize_t* tids = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if tids == NULL:
            raise MemoryError()
        try:
            # validate and copy first: the copy loop below then runs no Python code
            for i in range(n):
                total += self._length_of(seq[i])
                tids[i] = seq[i]
            result = PyBytes_FromStringAndSize(NULL, total)
            dst = PyBytes_AS_STRING(result)
            for i in range(n):
                memcpy(dst + pos, self.table.blob + self.table.off[tids[i]], self.table.length[tids[i]])
                pos += self.table.length[tids[i]]
            return result
        finally:
            free(tids)

    def token_bytes(self, token):
        """The bytes of one token id; ``KeyError`` if it has none."""
        cdef Py_ssize_t n = self._length_of(token)
        cdef Py_ssize_t i = token
        return PyBytes_FromStringAndSize(<char*>self.table.blob + self.table.off[i], n)
