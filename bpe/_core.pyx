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
* Pieces of up to LINEAR_MAX (128) bytes: each merge step scans the parts for the lowest rank
  (tiktoken's own approach), O(n^2) but with tiny constants and no allocation.
* Longer pieces (100k spaces, a whole document with ``pattern=None``): a min-heap of merge
  candidates keyed by (rank, start) with lazy invalidation, O(n log n), same result.
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

cdef inline tok_t _rank_of(const TokenTable* t, const uint8_t* p, Py_ssize_t a, Py_ssize_t b,
                           tok_t limit) noexcept nogil:
    # rank of the token spelled by p[a:b] if it is below `limit`, else NO_RANK
    cdef tok_t r = tt_find(t, p + a, b - a)
    if r == NO_TOKEN or r >= limit:
        return NO_RANK
    return r


cdef Py_ssize_t _bpe_short(const TokenTable* t, const tok_t* byte_rank, const uint8_t* p,
                           Py_ssize_t n, tok_t limit, tok_t* out) noexcept nogil:
    # Linear scan (n <= LINEAR_MAX): part i is p[start[i]:start[i+1]]; rank[i] is the rank of
    # parts i and i+1 merged.  Each step merges the lowest rank, leftmost among equals.
    cdef Py_ssize_t start[LINEAR_MAX + 1]
    cdef tok_t rank[LINEAR_MAX]
    cdef Py_ssize_t i, n_parts = n, best_i
    cdef tok_t best
    for i in range(n + 1):
        start[i] = i
    for i in range(n - 1):
        rank[i] = _rank_of(t, p, i, i + 2, limit)
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
        rank[best_i] = _rank_of(t, p, start[best_i], start[best_i + 2], limit) if best_i + 1 < n_parts else NO_RANK
        if best_i > 0:
            rank[best_i - 1] = _rank_of(t, p, start[best_i - 1], start[best_i + 1], limit)
    for i in range(n_parts):
        if start[i + 1] - start[i] == 1:
            out[i] = byte_rank[p[start[i]]]
        else:
            out[i] = tt_find(t, p + start[i], start[i + 1] - start[i])
    return n_parts


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


cdef Py_ssize_t _bpe_long(const TokenTable* t, const tok_t* byte_rank, const uint8_t* p,
                          Py_ssize_t n, tok_t limit, tok_t* out) noexcept nogil:
    # Heap version for long pieces, O(n log n), same result as _bpe_short.  Parts form a linked
    # list over their start offsets: nxt[i] is the start of the part after the one starting at
    # i (n for the last part, -1 once part i has been absorbed).  A candidate (rank, left,
    # right, end) is still valid iff nxt[left] == right and nxt[right] == end, i.e. both parts
    # are unchanged since it was pushed; stale candidates are skipped when popped.
    # Returns -1 when out of memory.
    cdef int32_t* nxt = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef int32_t* prv = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef tok_t* tok = <tok_t*>malloc((n + 1) * sizeof(tok_t))
    cdef Candidate* heap = <Candidate*>malloc((2 * n + 2) * sizeof(Candidate))
    cdef Py_ssize_t size = 0, k = 0
    cdef int32_t i, h, e2
    cdef tok_t r
    cdef Candidate c
    if nxt == NULL or prv == NULL or tok == NULL or heap == NULL:
        free(nxt)
        free(prv)
        free(tok)
        free(heap)
        return -1
    for i in range(n):
        nxt[i] = i + 1
        prv[i] = i - 1
        tok[i] = byte_rank[p[i]]
    for i in range(n - 1):
        r = _rank_of(t, p, i, i + 2, limit)
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
        tok[i] = c.rank
        h = prv[i]
        if h >= 0:
            r = _rank_of(t, p, h, c.end, limit)
            if r != NO_RANK:
                _cand_push(heap, &size, r, h, i, c.end)
        if c.end < n:
            e2 = nxt[c.end]
            r = _rank_of(t, p, i, e2, limit)
            if r != NO_RANK:
                _cand_push(heap, &size, r, i, c.end, e2)
    i = 0
    while i < n:
        out[k] = tok[i]
        k += 1
        i = nxt[i]
    free(nxt)
    free(prv)
    free(tok)
    free(heap)
    return k


cdef Py_ssize_t bpe_piece(const TokenTable* t, const tok_t* byte_rank,
                          const uint8_t* p, Py_ssize_t n, tok_t max_rank, tok_t* out) noexcept nogil:
    """Write the ids of piece ``p[:n]`` to ``out`` (room for n ids); return how many, or -1
    when out of memory.

    With ``max_rank >= 0`` only tokens below that rank may form (and there is no whole-piece
    shortcut): that recovers the merge that made a token.
    """
    cdef tok_t r, limit = NO_RANK
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
    if n <= LINEAR_MAX:
        return _bpe_short(t, byte_rank, p, n, limit, out)
    return _bpe_long(t, byte_rank, p, n, limit, out)


# --------------------------------------------------------------------------------------------
# Python-facing encoder
# --------------------------------------------------------------------------------------------

cdef class Encoder:
    """Token table plus BPE encode/decode; see the module docstring."""

    cdef TokenTable table
    cdef tok_t byte_rank[256]
    cdef bint ready

    def __cinit__(self):
        self.ready = False
        tt_init(&self.table)

    def __dealloc__(self):
        tt_free(&self.table)

    def __init__(self, dict mergeable_ranks, dict special_tokens):
        cdef bytes token
        cdef int b
        if self.ready or self.table.n_ids:
            raise RuntimeError("an Encoder is initialised once; build a new one")
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
        self.ready = True

    cdef int _check_ready(self) except -1:
        if not self.ready:
            raise RuntimeError("this Encoder was not initialised; build it with Encoder(ranks, specials)")
        return 0

    def encode_pieces(self, list pieces):
        """Encode each pre-token ``str``; raises ``UnicodeEncodeError`` on lone surrogates."""
        self._check_ready()
        cdef Py_ssize_t n = len(pieces), i, total = 0, k = 0, m = 0, size
        if n == 0:
            return []
        cdef const char** ptrs = <const char**>malloc(n * sizeof(char*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        cdef tok_t* out = NULL
        try:
            if ptrs == NULL or lens == NULL:
                raise MemoryError()
            for i in range(n):
                ptrs[i] = PyUnicode_AsUTF8AndSize(pieces[i], &size)
                if size >= 0x7FFFFFFF:
                    raise ValueError("a single pre-token of 2 GiB or more cannot be encoded; split the text")
                lens[i] = size
                total += size
            out = <tok_t*>malloc((total + 1) * sizeof(tok_t))
            if out == NULL:
                raise MemoryError()
            with nogil:
                for i in range(n):
                    m = bpe_piece(&self.table, self.byte_rank, <const uint8_t*>ptrs[i], lens[i], -1, out + k)
                    if m < 0:
                        break
                    k += m
            if m < 0:
                raise MemoryError()
            return [out[i] for i in range(k)]
        finally:
            free(ptrs)
            free(lens)
            free(out)

    def encode_piece_bytes(self, bytes piece, tok_t max_rank=-1):
        """BPE-encode one pre-token given as bytes (``max_rank >= 0``: only ranks below it)."""
        self._check_ready()
        cdef Py_ssize_t n = PyBytes_GET_SIZE(piece), k
        if n >= 0x7FFFFFFF:
            raise ValueError("a single pre-token of 2 GiB or more cannot be encoded; split the text")
        cdef tok_t* out = <tok_t*>malloc((n + 1) * sizeof(tok_t))
        try:
            if out == NULL:
                raise MemoryError()
            k = bpe_piece(&self.table, self.byte_rank, <const uint8_t*>PyBytes_AS_STRING(piece),
                          n, max_rank, out)
            if k < 0:
                raise MemoryError()
            return [out[i] for i in range(k)]
        finally:
            free(out)

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
