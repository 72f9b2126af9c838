# Hugging Face's BPE rule for bpe/_core.pyx (textually included there): merges by a listed
# pair's priority instead of by the rank of the concatenated bytes.  It encodes one piece;
# splitting, special tokens and the id lists stay the encoder's.
#
# The rule (tokenizers' BPE model, byte-level): a piece starts as its bytes' tokens; of the
# adjacent pairs that the merge list holds, the one listed first is merged (the leftmost
# among equal entries, that is the same pair at several places), and so on until no
# adjacent pair is listed.  With ``ignore_merges`` a piece that is itself a vocabulary token
# is that token.  The pure-Python twin is ``bpe.models.bpe.MergeBPE.tokenize``.  Encoders in
# this rule reach ``ml_piece`` through the piece cache (``_piece_uncommon``), as the rank rule
# reaches its merge loop, and start from whole characters where that provably gives the
# same ids (``ml_char_units``, at the end of this file).
#
# The pairs sit in one open-addressing table of 64-bit words (linear probing, load <= 2/3),
# each (left id << 43 | right id << 22 | merge index), so that a probe reads 8 bytes and the
# table of a few hundred thousand merges stays small (it is read at random: its size is its
# cost); the token a merge makes is ``new_id[merge index]``, read only when a pair merges.
# Ids must stay below 2**21 - 1 and merge indices below 2**22 - 1 (use_merge_list checks).
# A piece is merged from a min-heap of (merge index << 32 | position): O(n log n) for n
# bytes.  An entry goes stale when either side of its pair changes; it is then skipped,
# because the pair now at that place has another index (a pair's text only grows, so it
# spells another token).

# (MergeList, the pair table, is declared in _core.pxd.)


cdef enum:
    ML_STACK = 256           # pieces up to this many bytes are merged in stack arrays


cdef enum:
    ML_ID_LIMIT = (1 << 21) - 1      # ids at or above: no merge-list table (see above)
    ML_INDEX_LIMIT = (1 << 22) - 1   # merge indices at or above: likewise


cdef uint64_t ML_EMPTY = 0xFFFFFFFFFFFFFFFFULL
cdef uint32_t ML_NONE = 0xFFFFFFFFU  # "not listed", above every merge index


cdef inline Py_ssize_t _ml_slot(uint64_t key, Py_ssize_t mask) noexcept nogil:
    return <Py_ssize_t>((key * 0x9E3779B97F4A7C15ULL) >> 40) & mask


cdef inline uint32_t ml_get(const MergeList* ml, tok_t left, tok_t right) noexcept nogil:
    """The merge index of the pair, or ML_NONE when it is not listed."""
    cdef uint64_t key = (<uint64_t>left << 21) | <uint64_t>right
    cdef Py_ssize_t i = _ml_slot(key, ml.mask)
    cdef uint64_t w
    while True:
        w = ml.slots[i]
        if (w >> 22) == key:
            return <uint32_t>(w & ML_INDEX_LIMIT)
        if w == ML_EMPTY:
            return ML_NONE
        i = (i + 1) & ml.mask


cdef inline void ml_prefetch(const MergeList* ml, tok_t left, tok_t right) noexcept nogil:
    # start fetching the line that ml_get of this pair reads first
    bpe_prefetch(&ml.slots[_ml_slot((<uint64_t>left << 21) | <uint64_t>right, ml.mask)])


cdef int ml_build(MergeList* ml, const uint32_t* triples, Py_ssize_t n, bint ignore_merges,
                  const tok_t* byte_rank) except -1:
    """Fill ``ml`` from ``n`` (left, right, new) id triples in priority order (a pair listed
    twice keeps its last index, as in tokenizers); ``byte_rank``: the id of each byte.  The
    caller has checked the ids and ``n`` against ML_ID_LIMIT and ML_INDEX_LIMIT."""
    cdef Py_ssize_t slots = 16, i, j
    cdef uint64_t key
    while 2 * slots < 3 * n + 2:   # load <= 2/3
        slots <<= 1
    ml.slots = <uint64_t*>bpe_big_alloc(slots * sizeof(uint64_t))
    ml.new_id = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
    ml.bytes2 = <uint32_t*>malloc(65536 * sizeof(uint32_t))
    if ml.slots == NULL or ml.new_id == NULL or ml.bytes2 == NULL:
        raise MemoryError()
    memset(ml.slots, 0xFF, slots * sizeof(uint64_t))
    ml.mask = slots - 1
    ml.ignore_merges = ignore_merges
    for i in range(n):
        key = (<uint64_t>triples[3 * i] << 21) | <uint64_t>triples[3 * i + 1]
        j = _ml_slot(key, ml.mask)
        while ml.slots[j] != ML_EMPTY and (ml.slots[j] >> 22) != key:
            j = (j + 1) & ml.mask
        ml.slots[j] = (key << 22) | <uint64_t>i
        ml.new_id[i] = triples[3 * i + 2]
    for i in range(65536):
        ml.bytes2[i] = ml_get(ml, byte_rank[i >> 8], byte_rank[i & 255])
    return 0


cdef void ml_free(MergeList* ml) noexcept nogil:
    free(ml.slots)
    free(ml.new_id)
    free(ml.bytes2)
    ml.slots = NULL
    ml.new_id = NULL
    ml.bytes2 = NULL


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


cdef inline uint32_t _ml_first(const MergeList* ml, const uint8_t* p, const int32_t* off,
                              const tok_t* ids, Py_ssize_t i) noexcept nogil:
    # merge index of units i and i + 1: two single bytes come from the direct table
    if off[i + 2] - off[i] == 2:
        return ml.bytes2[(<Py_ssize_t>p[off[i]] << 8) | p[off[i] + 1]]
    return ml_get(ml, ids[i], ids[i + 1])


cdef Py_ssize_t _ml_short(const MergeList* ml, const uint8_t* p, const int32_t* off, Py_ssize_t n,
                          tok_t* out) noexcept nogil:
    """``ml_piece`` for 2 <= n <= LINEAR_MAX units (unit i is ``p[off[i]:off[i+1]]`` with id
    ``out[i]`` on entry): the parts in one array, each step scans the pairs' entries for the
    lowest merge index (the leftmost among equals: the first found) and closes the gap;
    O(n^2) with small constants, as tiktoken's short pieces."""
    cdef uint32_t val[LINEAR_MAX]        # merge index of the pair (i, i + 1), ML_NONE: not listed
    cdef Py_ssize_t k = n, i, best_i
    cdef uint32_t best
    for i in range(n - 1):
        val[i] = _ml_first(ml, p, off, out, i)
    while k > 1:
        best = ML_NONE
        best_i = -1
        for i in range(k - 1):
            if val[i] < best:
                best = val[i]
                best_i = i
        if best_i < 0:
            break
        out[best_i] = <tok_t>ml.new_id[best]
        for i in range(best_i + 1, k - 1):
            out[i] = out[i + 1]
            val[i] = val[i + 1]
        k -= 1
        # both new pairs' lines on their way before the first is read
        if best_i > 0:
            ml_prefetch(ml, out[best_i - 1], out[best_i])
        if best_i < k - 1:
            ml_prefetch(ml, out[best_i], out[best_i + 1])
        if best_i > 0:
            val[best_i - 1] = ml_get(ml, out[best_i - 1], out[best_i])
        if best_i < k - 1:
            val[best_i] = ml_get(ml, out[best_i], out[best_i + 1])
    return k


cdef Py_ssize_t ml_piece(const MergeList* ml, CharUnits* cu, const TokenTable* t, const tok_t* byte_rank,
                         const uint8_t* p, Py_ssize_t n, tok_t* out) noexcept nogil:
    """Write the ids of the piece ``p[:n]`` under the merge list to ``out`` (room for n);
    returns how many, or OUT_OF_MEMORY.  It starts from the units of ``cu`` (the
    characters ``ml_char_units`` admits, else bytes)."""
    cdef tok_t whole
    cdef int32_t off_s[ML_STACK + 1]
    cdef int32_t nxt_s[ML_STACK]
    cdef int32_t prv_s[ML_STACK]
    cdef uint64_t heap_s[2 * ML_STACK]
    cdef int32_t* off = off_s
    cdef tok_t* ids = out
    cdef int32_t* nxt = nxt_s
    cdef int32_t* prv = prv_s
    cdef uint64_t* heap = heap_s
    cdef Py_ssize_t size = 0, i, k = 0, m
    cdef int32_t pos, j, q
    cdef uint32_t v
    cdef uint64_t top
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
    if n > ML_STACK:
        off = <int32_t*>malloc((n + 1) * sizeof(int32_t))
        nxt = <int32_t*>malloc(n * sizeof(int32_t))
        prv = <int32_t*>malloc(n * sizeof(int32_t))
        heap = <uint64_t*>malloc(2 * n * sizeof(uint64_t))
        if off == NULL or nxt == NULL or prv == NULL or heap == NULL:
            k = OUT_OF_MEMORY
    if k == 0:
        m = cu_units(cu, t, byte_rank, p, n, off, ids, NULL)
        if m <= LINEAR_MAX:
            k = _ml_short(ml, p, off, m, out) if m > 1 else m
        else:
            for i in range(m):
                nxt[i] = <int32_t>(i + 1)
                prv[i] = <int32_t>(i - 1)
            for i in range(m - 1):
                v = _ml_first(ml, p, off, ids, i)
                if v != ML_NONE:
                    _ml_push(heap, &size, (<uint64_t>v << 32) | <uint64_t>i)
            while size > 0:
                top = _ml_pop(heap, &size)
                pos = <int32_t>(top & 0xFFFFFFFFULL)
                j = nxt[pos]
                if prv[pos] == -2 or j >= m:           # merged into its left neighbour / last part
                    continue
                v = ml_get(ml, ids[pos], ids[j])
                if v != <uint32_t>(top >> 32):
                    continue                             # stale: that place holds another pair now
                ids[pos] = <tok_t>ml.new_id[v]
                prv[j] = -2
                nxt[pos] = nxt[j]
                if nxt[j] < m:
                    prv[nxt[j]] = pos
                q = prv[pos]
                if q >= 0:
                    ml_prefetch(ml, ids[q], ids[pos])
                if nxt[pos] < m:
                    ml_prefetch(ml, ids[pos], ids[nxt[pos]])
                if q >= 0:
                    v = ml_get(ml, ids[q], ids[pos])
                    if v != ML_NONE:
                        _ml_push(heap, &size, (<uint64_t>v << 32) | <uint64_t>q)
                if nxt[pos] < m:
                    v = ml_get(ml, ids[pos], ids[nxt[pos]])
                    if v != ML_NONE:
                        _ml_push(heap, &size, (<uint64_t>v << 32) | <uint64_t>pos)
            pos = 0
            while pos < m:                               # (in place: a part's index is never below its rank)
                out[k] = ids[pos]
                k += 1
                pos = nxt[pos]
    if off != off_s:
        free(off)
        free(nxt)
        free(prv)
        free(heap)
    return k


# --------------------------------------------------------------------------------------------
# Whole characters under the merge list
# --------------------------------------------------------------------------------------------
#
# As under the rank rule (bpe/_charunits.pxi, whose tables and unit splitter this reuses), a
# character c may start as its own token instead of its UTF-8 bytes where that gives the
# same ids; here merge indices take the place of ranks.  The conditions:
#
# 1. The merge list on c's bytes alone gives the single token c.  Let m(c) be the highest
#    merge index used on the way.
# 2. Of the parts that hold c's first byte on the way (the first byte, the prefixes formed,
#    c itself), none is listed as the right side of a pair (L, X) of index <= m(c) whose left
#    token L matches the text right before c; of those that hold c's last byte, none as the
#    left side of a pair (Y, R) of index <= m(c) whose R matches the text right after c.
#
# Why: while c is unfinished, its next merge (index <= m(c)) is available, and every pair
# that crosses into c has a larger index (by 2 none of index <= m(c) can be present), so c
# finishes exactly as on its own, and merges outside c (untouched by it) happen in the same
# order as when c starts whole: one of index below the pending merge of c is taken first in
# both; one above waits in both until c is finished, since the pairs with c itself also
# have larger indices (2 again).  After that the two are the same sequence of parts.  Ties
# (the same pair at several places) go to the leftmost in both.  The argument holds for any
# parts around c, so it applies character by character; the rest start as bytes.  The
# context strings of 2 are kept per character as the rank rule's are (masks, " " as a flag),
# and checked against the text (a superset of the places where the token L or R is a part).


cdef int ml_char_units(CharUnits* cu, const MergeList* ml, const TokenTable* t, const tok_t* byte_rank,
                       const uint32_t* triples, Py_ssize_t n_merges) except -1:
    """Fill ``cu`` with the characters that may start whole under ``ml`` (the conditions
    above), its table of " " + character units empty; then mark it ready."""
    cdef Py_ssize_t n_ids = t.n_ids, i, tid, n, k, x, e, w
    cdef int32_t* by_right = NULL     # merge indices by right part (CSR: start_r[id]..start_r[id + 1])
    cdef int32_t* by_left = NULL
    cdef int32_t* start_r = <int32_t*>calloc(n_ids + 2, sizeof(int32_t))
    cdef int32_t* start_l = <int32_t*>calloc(n_ids + 2, sizeof(int32_t))
    cdef tok_t parts[4]
    cdef uint32_t idx, best, high
    cdef Py_ssize_t best_i, count
    cdef const uint8_t* b
    cdef bytearray pool = bytearray()
    cdef list chars = [], left, right
    cdef set seen_l, seen_r, lefts, rights
    cdef bint after_space
    cdef uint32_t before, after
    cdef CharTable char_table, first_table
    memset(&char_table, 0, sizeof(CharTable))
    memset(&first_table, 0, sizeof(CharTable))
    cdef uint8_t* pool_c = NULL
    try:
        by_right = <int32_t*>malloc((n_merges + 1) * sizeof(int32_t))
        by_left = <int32_t*>malloc((n_merges + 1) * sizeof(int32_t))
        if start_r == NULL or start_l == NULL or by_right == NULL or by_left == NULL:
            raise MemoryError()
        for i in range(n_merges):
            start_l[triples[3 * i] + 2] += 1
            start_r[triples[3 * i + 1] + 2] += 1
        for i in range(2, n_ids + 2):
            start_l[i] += start_l[i - 1]
            start_r[i] += start_r[i - 1]
        for i in range(n_merges):          # (in index order, so each list comes out sorted)
            x = triples[3 * i]
            by_left[start_l[x + 1]] = <int32_t>i
            start_l[x + 1] += 1
            x = triples[3 * i + 1]
            by_right[start_r[x + 1]] = <int32_t>i
            start_r[x + 1] += 1
        for tid in range(n_ids if n_ids < (1 << CU_TOKEN_BITS) else 0):
            n = t.length[tid]
            if not 2 <= n <= 4:
                continue
            b = t.blob + t.off[tid]
            if _utf8_length(b[0]) != n or tt_find(t, b, n) != tid:
                continue
            k = 1
            while k < n and 0x80 <= b[k] < 0xC0:
                k += 1
            if k < n:
                continue
            # condition 1, recording the parts at c's two ends
            for i in range(n):
                parts[i] = byte_rank[b[i]]
            lefts = {parts[0]}
            rights = {parts[n - 1]}
            count = n
            high = 0
            while count > 1:
                best = ML_NONE
                best_i = -1
                for i in range(count - 1):
                    idx = ml_get(ml, parts[i], parts[i + 1])
                    if idx < best:
                        best = idx
                        best_i = i
                if best_i < 0:
                    break
                high = best if best > high else high
                parts[best_i] = <tok_t>ml.new_id[best]
                for i in range(best_i + 1, count - 1):
                    parts[i] = parts[i + 1]
                count -= 1
                lefts.add(parts[0])
                rights.add(parts[count - 1])
            if count != 1 or parts[0] != tid:
                continue
            # condition 2's context strings: whole tokens L before c, R after it
            left = []
            right = []
            seen_l = set()
            seen_r = set()
            for x in lefts:
                for e in range(start_r[x], start_r[x + 1]):
                    if <uint32_t>by_right[e] > high:
                        break
                    w = triples[3 * by_right[e]]
                    if w not in seen_l:
                        seen_l.add(w)
                        left += [t.length[w], w]
            for x in rights:
                for e in range(start_l[x], start_l[x + 1]):
                    if <uint32_t>by_left[e] > high:
                        break
                    w = triples[3 * by_left[e] + 1]
                    if w not in seen_r:
                        seen_r.add(w)
                        right += [t.length[w], w]
            if (len(left) > 2 * CU_MAX_CONTEXT or len(right) > 2 * CU_MAX_CONTEXT
                    or max(left[::2] + right[::2], default=0) > CU_MAX_CONTEXT):
                continue
            after_space = False
            for i in range(len(left) - 2, -1, -2):
                if left[i] == 1 and t.blob[t.off[<Py_ssize_t>left[i + 1]]] == 0x20:
                    after_space = True
                    del left[i:i + 2]
            at = len(pool)
            before = _pool_strings(pool, t, left, False)
            lb = len(pool) - at
            after = _pool_strings(pool, t, right, True)
            chars.append((_pack(b, n), tid, after_space, at, len(left) // 2, len(right) // 2, lb, before, after))
        pool_c = <uint8_t*>malloc(len(pool) + 1)
        if pool_c == NULL:
            raise MemoryError()
        if len(pool):
            memcpy(pool_c, <char*>pool, len(pool))
        _ct_fill(&char_table, chars)
        _ct_fill(&first_table, [])
    except BaseException:
        _ct_free(&char_table)
        _ct_free(&first_table)
        free(pool_c)
        raise
    finally:
        free(start_r)
        free(start_l)
        free(by_right)
        free(by_left)
    cu_free(cu)
    cu.chars = char_table
    cu.spaced = first_table
    cu.pool = pool_c
    bpe_store_release(&cu.state, CU_READY)
    return 0
