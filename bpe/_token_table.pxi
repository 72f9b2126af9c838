# The token table of bpe/_core.pyx (textually included there; its type is declared in
# _core.pxd, which bpe/_train.pyx shares): token bytes <-> id, one blob of bytes indexed by
# id and an open-addressing hash over it (see _core.pxd).  It also has the plain quadratic
# BPE of one piece that the accelerators' builders check tokens with (bpe_alone_tau).  It
# does not encode text.



cdef uint64_t hash_bytes(const uint8_t* data, Py_ssize_t n) noexcept nogil:
    # Byte strings of up to 16 bytes (most lookups) hash without branches on the length: the
    # first (up to) 8 bytes and, past 8, the last 8; longer ones eight bytes at a time (a
    # multiply-xorshift mix per word), then a final avalanche so that the low bits (the slot
    # index) are well mixed.  Values differ between little- and big-endian
    # machines, which is fine: tables are built in-process.
    if n <= 16:
        return bpe_hash16(data, n)
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ (<uint64_t>n * 0xff51afd7ed558ccdULL)
    cdef uint64_t w
    while n >= 8:
        memcpy(&w, data, 8)
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL
        h ^= h >> 29
        data += 8
        n -= 8
    if n > 0:
        w = bpe_word(data, n)
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL
        h ^= h >> 29
    h ^= h >> 32
    h *= 0xd6e8feb86659fd93ULL
    h ^= h >> 32
    return h


cdef uint64_t hash_and_head(const uint8_t* data, Py_ssize_t n, uint64_t* head) noexcept nogil:
    # hash_bytes(data, n) (n >= 1), with _head(data, n) put in head: a piece's lookups compare
    # that word, which hashing has just read
    cdef uint64_t w = bpe_word(data, n)
    head[0] = w
    if n <= 16:
        return bpe_hash16w(w, data, n)
    return hash_bytes(data, n)


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
    t.slots = <Slot*>malloc(t.n_slots * sizeof(Slot))
    t.filter = <uint64_t*>calloc(FILTER_WORDS, sizeof(uint64_t))
    if t.blob == NULL or t.off == NULL or t.length == NULL or t.slots == NULL or t.filter == NULL:
        tt_free(t)
        return _no_memory()
    cdef Py_ssize_t i
    for i in range(t.id_cap):
        t.length[i] = -1
    for i in range(t.n_slots):
        t.slots[i].token = NO_TOKEN
        t.slots[i].lenoff = 0      # (length 0: no piece matches an empty slot on its length)
    return 0


cdef void tt_free(TokenTable* t) noexcept nogil:
    free(t.blob)
    free(t.off)
    free(t.length)
    free(t.slots)
    free(t.filter)
    t.filter = NULL
    t.blob = NULL
    t.off = NULL
    t.length = NULL
    t.slots = NULL
    t.n_ids = 0
    t.n_keys = 0


cdef inline uint64_t _head(const uint8_t* data, Py_ssize_t n) noexcept nogil:
    # the first (up to) eight bytes, zero-padded: stored in the slot so that short tokens are
    # compared without touching the blob
    return bpe_word(data, n) if n > 0 else 0


cdef tok_t tt_find(const TokenTable* t, const uint8_t* data, Py_ssize_t n) noexcept nogil:
    return _tt_find_hashed(t, data, n, hash_bytes(data, n))


cdef inline tok_t _tt_find_hashed(const TokenTable* t, const uint8_t* data, Py_ssize_t n,
                                  uint64_t h) noexcept nogil:
    # the filter first: most strings the merge loop asks about are not tokens
    cdef uint64_t bit = h >> 42
    if not ((t.filter[bit >> 6] >> (bit & 63)) & 1):
        return NO_TOKEN
    return _tt_probe(t, data, n, h, _head(data, n))


cdef inline Py_ssize_t slot_blob_offset(uint32_t lenoff) noexcept nogil:
    # a slot's token's offset in the blob from its lenoff (SLOT_FAR: read t.off instead)
    return (lenoff >> 8) & SLOT_FAR


cdef inline tok_t _tt_probe(const TokenTable* t, const uint8_t* data, Py_ssize_t n,
                            uint64_t h, uint64_t head) noexcept nogil:
    # the table itself, without the filter: for strings that are mostly tokens (pre-tokens
    # of text), where the filter's word would cost more than the probes it saves (head:
    # _head(data, n))
    cdef Py_ssize_t mask = t.n_slots - 1
    cdef Py_ssize_t i = <Py_ssize_t>(h & <uint64_t>mask)
    cdef uint32_t want = <uint32_t>n if n < 255 else 255
    cdef Py_ssize_t o
    cdef const Slot* slot = &t.slots[i]
    # No token whose home slot this is sits further on unless the slot says so: a piece that
    # is not the token here is then no token, with no walk to an empty slot (whose length,
    # different for each piece, was a mispredicted branch for most pieces that are none)
    if slot.token == NO_TOKEN:
        return NO_TOKEN
    if not (slot.lenoff & SLOT_SPILLED) and (slot.head != head or (slot.lenoff & 0xFF) != want):
        return NO_TOKEN
    while True:
        slot = &t.slots[i]
        if slot.token == NO_TOKEN:
            return NO_TOKEN
        if slot.head == head and (slot.lenoff & 0xFF) == want:
            if n <= 8:
                return slot.token
            o = slot_blob_offset(slot.lenoff)
            if o == SLOT_FAR or want == 255:
                o = t.off[slot.token] if t.length[slot.token] == n else -1
            if o >= 0 and bpe_same_tail(t.blob + o, data, n):
                return slot.token
        i = (i + 1) & mask


cdef void _tt_place(Slot* slots, Py_ssize_t mask, const uint8_t* blob, Py_ssize_t off, Py_ssize_t n,
                    tok_t token) noexcept nogil:
    # token's bytes are blob[off:off + n]
    cdef const uint8_t* data = blob + off
    cdef Py_ssize_t i = <Py_ssize_t>(hash_bytes(data, n) & <uint64_t>mask)
    if slots[i].token != NO_TOKEN:
        slots[i].lenoff |= SLOT_SPILLED      # (the home slot's mark: see _tt_probe)
    while slots[i].token != NO_TOKEN:
        i = (i + 1) & mask
    slots[i].token = token
    slots[i].lenoff = (<uint32_t>n if n < 255 else 255) | (<uint32_t>(off if off < SLOT_FAR else SLOT_FAR) << 8)
    slots[i].head = _head(data, n)


cdef int _tt_rehash(TokenTable* t, Py_ssize_t n_slots) except -1 nogil:
    cdef Slot* slots = <Slot*>bpe_big_alloc(n_slots * sizeof(Slot))
    if slots == NULL:
        return _no_memory()
    cdef Py_ssize_t i
    cdef tok_t token
    for i in range(n_slots):
        slots[i].token = NO_TOKEN
        slots[i].lenoff = 0      # (length 0: no piece matches an empty slot on its length)
    for i in range(t.n_slots):
        token = t.slots[i].token
        if token != NO_TOKEN:
            _tt_place(slots, n_slots - 1, t.blob, t.off[token], t.length[token], token)
    free(t.slots)
    t.slots = slots
    t.n_slots = n_slots
    return 0


cdef int tt_copy(TokenTable* dst, const TokenTable* src) except -1 nogil:
    """Make the empty (zeroed or freed) ``dst`` a copy of ``src``."""
    dst.blob = <uint8_t*>malloc(src.blob_cap)
    dst.off = <Py_ssize_t*>malloc(src.id_cap * sizeof(Py_ssize_t))
    dst.length = <int32_t*>malloc(src.id_cap * sizeof(int32_t))
    dst.slots = <Slot*>bpe_big_alloc(src.n_slots * sizeof(Slot))
    dst.filter = <uint64_t*>malloc(FILTER_WORDS * sizeof(uint64_t))
    if dst.blob == NULL or dst.off == NULL or dst.length == NULL or dst.slots == NULL or dst.filter == NULL:
        tt_free(dst)
        return _no_memory()
    memcpy(dst.blob, src.blob, src.blob_len)
    memcpy(dst.off, src.off, src.id_cap * sizeof(Py_ssize_t))
    memcpy(dst.length, src.length, src.id_cap * sizeof(int32_t))
    memcpy(dst.slots, src.slots, src.n_slots * sizeof(Slot))
    memcpy(dst.filter, src.filter, FILTER_WORDS * sizeof(uint64_t))
    dst.blob_len = src.blob_len
    dst.blob_cap = src.blob_cap
    dst.n_ids = src.n_ids
    dst.id_cap = src.id_cap
    dst.n_slots = src.n_slots
    dst.n_keys = src.n_keys
    return 0


cdef int tt_add(TokenTable* t, tok_t token, const uint8_t* data, Py_ssize_t n, bint hashed) except -1 nogil:
    """Give id ``token`` the bytes ``data[:n]``; with ``hashed`` it can also be looked up."""
    return _tt_add(t, token, data, n, hashed, True)


cdef int _tt_add(TokenTable* t, tok_t token, const uint8_t* data, Py_ssize_t n, bint hashed,
                 bint check_bytes) except -1 nogil:
    # tt_add; without check_bytes the caller knows that no hashed token has these bytes
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
    if check_bytes and tt_find(t, data, n) != NO_TOKEN:
        t.length[token] = -1
        with gil:
            raise ValueError(f"the bytes of token id {token} are already the bytes of another token")
    if 2 * (t.n_keys + 1) > t.n_slots:
        _tt_rehash(t, t.n_slots * 2)
    _tt_place(t.slots, t.n_slots - 1, t.blob, t.off[token], n, token)
    cdef uint64_t bit = hash_bytes(data, n) >> 42
    t.filter[bit >> 6] |= (<uint64_t>1) << (bit & 63)
    t.n_keys += 1
    return 0


cdef tok_t bpe_alone_tau(const TokenTable* t, const tok_t* byte_rank, const uint8_t* p, Py_ssize_t n,
                         tok_t token, tok_t* part, int32_t* start) noexcept nogil:
    """Byte-level BPE on ``p[:n]`` alone, the plain quadratic way (for table building, not for
    encoding): the highest rank merged on the way when it ends as the single token ``token``,
    else -1.  ``part`` and ``start`` are scratch with room for n and n + 1."""
    cdef Py_ssize_t k = n, i, best_i
    cdef tok_t r, best, tau = -1
    for i in range(n):
        part[i] = byte_rank[p[i]]
        start[i] = <int32_t>i
    start[n] = <int32_t>n
    while k > 1:
        best = NO_RANK
        best_i = -1
        for i in range(k - 1):
            r = tt_find(t, p + start[i], start[i + 2] - start[i])
            if r != NO_TOKEN and r < best:
                best = r
                best_i = i
        if best_i < 0:
            return -1
        part[best_i] = best
        tau = best if best > tau else tau
        for i in range(best_i + 1, k - 1):
            part[i] = part[i + 1]
        for i in range(best_i + 1, k):
            start[i] = start[i + 1]
        k -= 1
    return tau if part[0] == token else -1
