# Hugging Face's BPE rule for bpe/_core.pyx (textually included there): merges by a listed
# pair's priority instead of by the rank of the concatenated bytes.  It encodes one piece;
# splitting, special tokens and the id lists stay the encoder's.
#
# The rule (tokenizers' BPE model, byte-level): a piece starts as its bytes' tokens; of the
# adjacent pairs that the merge list holds, the one listed first is merged (the leftmost
# among equal entries, that is the same pair at several places), and so on until no
# adjacent pair is listed.  With ``ignore_merges`` a piece that is itself a vocabulary token
# is that token.  The pure-Python twin is ``bpe.models.bpe.MergeBPE.tokenize``.  Encoders in
# this rule reach ``ml_piece`` through the piece cache (``_piece_merged``), as the rank rule
# reaches its merge loop.
#
# The pairs sit in one open-addressing table (linear probing, load <= 1/2) keyed by (left id
# << 32 | right id), whose value, beside the key, is (merge index << 32 | new id).  A piece is merged from a min-heap of
# (merge index << 32 | position): O(n log n) for n bytes.  An entry goes stale when either
# side of its pair changes; it is then skipped, because the pair now at that place has
# another index (a pair's text only grows, so it spells another token).

# (MergeList, the pair table, is declared in _core.pxd.)


cdef enum:
    ML_STACK = 256           # pieces up to this many bytes are merged in stack arrays


cdef uint64_t ML_EMPTY = 0xFFFFFFFFFFFFFFFFULL


cdef inline Py_ssize_t _ml_slot(uint64_t key, Py_ssize_t mask) noexcept nogil:
    return <Py_ssize_t>((key * 0x9E3779B97F4A7C15ULL) >> 40) & mask


cdef inline uint64_t ml_get(const MergeList* ml, tok_t left, tok_t right) noexcept nogil:
    """(merge index << 32 | new id) of the pair, or ML_EMPTY when it is not listed."""
    cdef uint64_t key = (<uint64_t>left << 32) | <uint64_t>right
    cdef Py_ssize_t i = _ml_slot(key, ml.mask)
    while True:
        if ml.slots[2 * i] == key:
            return ml.slots[2 * i + 1]
        if ml.slots[2 * i] == ML_EMPTY:
            return ML_EMPTY
        i = (i + 1) & ml.mask


cdef int ml_build(MergeList* ml, const uint32_t* triples, Py_ssize_t n, bint ignore_merges) except -1:
    """Fill ``ml`` from ``n`` (left, right, new) id triples in priority order (a pair listed
    twice keeps its last index, as in tokenizers)."""
    cdef Py_ssize_t slots = 16, i, j
    cdef uint64_t key
    while slots < 2 * n + 2:
        slots <<= 1
    ml.slots = <uint64_t*>bpe_big_alloc(2 * slots * sizeof(uint64_t))
    if ml.slots == NULL:
        raise MemoryError()
    memset(ml.slots, 0xFF, 2 * slots * sizeof(uint64_t))
    ml.mask = slots - 1
    ml.ignore_merges = ignore_merges
    for i in range(n):
        key = (<uint64_t>triples[3 * i] << 32) | <uint64_t>triples[3 * i + 1]
        j = _ml_slot(key, ml.mask)
        while ml.slots[2 * j] != ML_EMPTY and ml.slots[2 * j] != key:
            j = (j + 1) & ml.mask
        ml.slots[2 * j] = key
        ml.slots[2 * j + 1] = (<uint64_t>i << 32) | <uint64_t>triples[3 * i + 2]
    return 0


cdef void ml_free(MergeList* ml) noexcept nogil:
    free(ml.slots)
    ml.slots = NULL


cdef inline void _ml_push(uint64_t* heap, Py_ssize_t* size, uint64_t entry) noexcept nogil:
    cdef Py_ssize_t i = size[0], parent
    size[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= entry:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = entry


cdef inline uint64_t _ml_pop(uint64_t* heap, Py_ssize_t* size) noexcept nogil:
    cdef uint64_t top = heap[0], last
    cdef Py_ssize_t i = 0, child, n
    size[0] -= 1
    n = size[0]
    if n == 0:
        return top
    last = heap[n]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


cdef Py_ssize_t _ml_short(const MergeList* ml, const tok_t* byte_rank, const uint8_t* p, Py_ssize_t n,
                          tok_t* out) noexcept nogil:
    """``ml_piece`` for 2 <= n <= LINEAR_MAX bytes: the parts in one array, each step scans
    the pairs' entries for the lowest merge index (the leftmost among equals: the first
    found) and closes the gap; O(n^2) with small constants, as tiktoken's short pieces."""
    cdef uint64_t val[LINEAR_MAX]        # entry of the pair (i, i + 1), ML_EMPTY: not listed
    cdef Py_ssize_t k = n, i, best_i
    cdef uint64_t best
    for i in range(n):
        out[i] = byte_rank[p[i]]
    for i in range(n - 1):
        val[i] = ml_get(ml, out[i], out[i + 1])
    while k > 1:
        best = ML_EMPTY
        best_i = -1
        for i in range(k - 1):
            if val[i] < best:             # the index sits in the high bits: lower value first
                best = val[i]
                best_i = i
        if best_i < 0:
            break
        out[best_i] = <tok_t>(best & 0xFFFFFFFFULL)
        for i in range(best_i + 1, k - 1):
            out[i] = out[i + 1]
            val[i] = val[i + 1]
        k -= 1
        if best_i > 0:
            val[best_i - 1] = ml_get(ml, out[best_i - 1], out[best_i])
        if best_i < k - 1:
            val[best_i] = ml_get(ml, out[best_i], out[best_i + 1])
    return k


cdef Py_ssize_t ml_piece(const MergeList* ml, const TokenTable* t, const tok_t* byte_rank,
                         const uint8_t* p, Py_ssize_t n, tok_t* out) noexcept nogil:
    """Write the ids of the piece ``p[:n]`` under the merge list to ``out`` (room for n);
    returns how many, or OUT_OF_MEMORY."""
    cdef tok_t whole
    cdef tok_t ids_s[ML_STACK]
    cdef int32_t nxt_s[ML_STACK]
    cdef int32_t prv_s[ML_STACK]
    cdef uint64_t heap_s[2 * ML_STACK]
    cdef tok_t* ids = ids_s
    cdef int32_t* nxt = nxt_s
    cdef int32_t* prv = prv_s
    cdef uint64_t* heap = heap_s
    cdef Py_ssize_t size = 0, i, k = 0
    cdef int32_t pos, j, q
    cdef uint64_t v, top
    if n == 0:
        return 0
    if n == 1:
        out[0] = byte_rank[p[0]]
        return 1
    if ml.ignore_merges:
        whole = tt_find(t, p, n)
        if whole != NO_TOKEN:
            out[0] = whole
            return 1
    if n <= LINEAR_MAX:
        return _ml_short(ml, byte_rank, p, n, out)
    if n > ML_STACK:
        ids = <tok_t*>malloc(n * sizeof(tok_t))
        nxt = <int32_t*>malloc(n * sizeof(int32_t))
        prv = <int32_t*>malloc(n * sizeof(int32_t))
        heap = <uint64_t*>malloc(2 * n * sizeof(uint64_t))
        if ids == NULL or nxt == NULL or prv == NULL or heap == NULL:
            k = OUT_OF_MEMORY
    if k == 0:
        for i in range(n):
            ids[i] = byte_rank[p[i]]
            nxt[i] = <int32_t>(i + 1)
            prv[i] = <int32_t>(i - 1)
        for i in range(n - 1):
            v = ml_get(ml, ids[i], ids[i + 1])
            if v != ML_EMPTY:
                _ml_push(heap, &size, (v & 0xFFFFFFFF00000000ULL) | <uint64_t>i)
        while size > 0:
            top = _ml_pop(heap, &size)
            pos = <int32_t>(top & 0xFFFFFFFFULL)
            j = nxt[pos]
            if prv[pos] == -2 or j >= n:           # merged into its left neighbour / last part
                continue
            v = ml_get(ml, ids[pos], ids[j])
            if v == ML_EMPTY or (v >> 32) != (top >> 32):
                continue                             # stale: that place holds another pair now
            ids[pos] = <tok_t>(v & 0xFFFFFFFFULL)
            prv[j] = -2
            nxt[pos] = nxt[j]
            if nxt[j] < n:
                prv[nxt[j]] = pos
            q = prv[pos]
            if q >= 0:
                v = ml_get(ml, ids[q], ids[pos])
                if v != ML_EMPTY:
                    _ml_push(heap, &size, (v & 0xFFFFFFFF00000000ULL) | <uint64_t>q)
            if nxt[pos] < n:
                v = ml_get(ml, ids[pos], ids[nxt[pos]])
                if v != ML_EMPTY:
                    _ml_push(heap, &size, (v & 0xFFFFFFFF00000000ULL) | <uint64_t>pos)
        pos = 0
        while pos < n:
            out[k] = ids[pos]
            k += 1
            pos = nxt[pos]
    if ids != ids_s:
        free(ids)
        free(nxt)
        free(prv)
        free(heap)
    return k
