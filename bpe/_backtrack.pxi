# The backtracking encoder of bpe/_core.pyx (textually included there: it reads the same
# token table and byte ranks as the merge loop, and its calls stay inline).
# It encodes pieces over BT_MIN_BYTES in linear time; it does not split text, touch Python
# objects (except to build its tables once under the GIL) or handle max_rank encoding.

# --------------------------------------------------------------------------------------------
# Backtracking encoder
# --------------------------------------------------------------------------------------------
#
# The merge loop (bpe/_core.pyx) does one step per byte merged.  This encoder instead walks
# the piece left to right emitting whole tokens, so its work is per token, not per merge (the
# approach of GitHub's `bpe` crate, van Antwerpen & Neubeck 2024):
#
# * Each reachable token t (one that BPE on t's own bytes produces; every single byte is one)
#   has a canonical split (left[t], right[t]): the two parts BPE holds just before it forms t.
#   The splits are found once, in rank order, as the one valid pair (below) that spells t;
#   the tests check every token's split against the merge loop run with ranks below t.
# * Two tokens a, b are a *valid pair* when BPE on bytes(a) + bytes(b) gives exactly [a, b].
#   ``bt_valid`` decides this without touching bytes: it replays, newest merge first, how the
#   parts on each side of the boundary were formed (undoing the higher-ranked side first) and
#   fails if some pair across the boundary spells a token that BPE would have merged before
#   that side's next merge (ties go to the leftmost candidate, hence ``y + 1``).
# * The BPE encoding of a piece is the one tokenization in which every adjacent pair is valid.
#   It is found by taking the longest token that prefixes the rest of the piece (a trie walk),
#   trying shorter prefixes when the pair with the previous token is not valid, and
#   backtracking when none is; a position found to be a dead end is marked and never tried
#   again, so the walk stays linear in practice.
#
# Identity with the merge loop is checked by the test suite on whole corpora, on every code
# point and on long tie-heavy pieces; the merge loop remains for ``max_rank`` encoding, for
# tables the trie cannot index, and as the fallback if the search ever fails.

cdef enum:
    BT_UNBUILT = 0
    BT_READY = 1
    BT_UNAVAILABLE = 2
    # pieces longer than this use the backtracking encoder by default: below it, its larger
    # tables cost more in cache misses than the merge loop spends (measured on the corpora)
    BT_MIN_BYTES = 256

cdef enum:
    BT_NONE = 0xFFFFFFFF     # no trie node / empty trie slot
    BT_MAX_NODES = 0xFFFFFF  # node ids must fit in 24 bits (trie keys are node << 8 | byte)


ctypedef struct TrieSlot:
    uint32_t key             # node << 8 | byte, BT_NONE when empty
    uint32_t child


ctypedef struct PairSlot:
    uint32_t left
    uint32_t right
    tok_t token              # NO_TOKEN when empty


ctypedef struct Backtrack:
    tok_t* left              # canonical split of each id (NO_TOKEN for single bytes and
    tok_t* right             # unreachable tokens)
    tok_t* shorter           # the longest reachable token that is a proper prefix of each id
    uint32_t* level2         # trie node after two bytes (BT_NONE if no token starts so)
    TrieSlot* trie           # deeper trie edges, open addressing
    int trie_bits
    Py_ssize_t trie_used
    PairSlot* pairs          # (left, right) -> token, for canonical splits
    int pair_bits
    uint32_t first_free      # trie node ids below this are token ids, others are inner nodes
    Py_ssize_t min_bytes     # pieces longer than this use it (negative: never)
    int splits_state         # left, right and pairs: BT_UNBUILT, BT_READY or BT_UNAVAILABLE
    int state                # the whole encoder (trie too); both read with acquire


cdef void bt_free(Backtrack* bt) noexcept nogil:
    # release the tables; min_bytes and the states stay
    free(bt.left)
    free(bt.right)
    free(bt.shorter)
    free(bt.level2)
    free(bt.trie)
    free(bt.pairs)
    bt.left = bt.right = bt.shorter = NULL
    bt.level2 = NULL
    bt.trie = NULL
    bt.pairs = NULL


cdef int _bt_build_with_gil(Backtrack* bt, const TokenTable* t, const tok_t* byte_rank,
                            bint whole) noexcept:
    # Build the canonical splits, and with ``whole`` the trie as well, once (the GIL makes
    # other threads wait); publish each state.  Returns the state asked for.
    cdef int state = bt.splits_state
    if state == BT_UNBUILT:
        try:
            state = BT_READY if bt_build_splits(bt, t, byte_rank) == 0 else BT_UNAVAILABLE
        except MemoryError:
            state = BT_UNAVAILABLE          # the merge loop still works
        if state != BT_READY:
            bt_free(bt)
        bpe_store_release(&bt.splits_state, state)
    if not whole:
        return state
    if state != BT_READY:
        bpe_store_release(&bt.state, BT_UNAVAILABLE)
        return BT_UNAVAILABLE
    state = bt.state
    if state == BT_UNBUILT:
        try:
            state = BT_READY if bt_build_trie(bt, t, byte_rank) == 0 else BT_UNAVAILABLE
        except MemoryError:
            state = BT_UNAVAILABLE
        bpe_store_release(&bt.state, state)
    return state


cdef inline bint bt_usable(Backtrack* bt, const TokenTable* t, const tok_t* byte_rank) noexcept nogil:
    """Whether the backtracking encoder can run; builds its tables on first use."""
    cdef int state = bpe_load_acquire(&bt.state)
    if state == BT_UNBUILT:
        with gil:
            state = _bt_build_with_gil(bt, t, byte_rank, True)
    return state == BT_READY


cdef inline bint bt_splits_usable(Backtrack* bt, const TokenTable* t, const tok_t* byte_rank) noexcept nogil:
    """Whether ``bt.left``/``bt.right`` hold the canonical split of every token BPE can make
    (only the splits are built on first use, not the trie)."""
    cdef int state = bpe_load_acquire(&bt.splits_state)
    if state == BT_UNBUILT:
        with gil:
            state = _bt_build_with_gil(bt, t, byte_rank, False)
    return state == BT_READY


cdef inline Py_ssize_t _slot_of(uint64_t key, int bits) noexcept nogil:
    return <Py_ssize_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits))


cdef inline uint32_t bt_child(const Backtrack* bt, uint32_t node, uint8_t byte) noexcept nogil:
    cdef uint32_t key = (node << 8) | byte
    cdef Py_ssize_t mask = (<Py_ssize_t>1 << bt.trie_bits) - 1
    cdef Py_ssize_t i = _slot_of(key, bt.trie_bits)
    while True:
        if bt.trie[i].key == key:
            return bt.trie[i].child
        if bt.trie[i].key == BT_NONE:
            return BT_NONE
        i = (i + 1) & mask


cdef int _bt_trie_put(Backtrack* bt, uint32_t node, uint8_t byte, uint32_t child) noexcept nogil:
    # add an edge known to be absent, growing the table at load 1/2; -1 when out of memory
    cdef uint32_t key = (node << 8) | byte
    cdef Py_ssize_t size, i, j, mask
    cdef TrieSlot* old
    cdef int old_bits
    if 2 * (bt.trie_used + 1) > (<Py_ssize_t>1 << bt.trie_bits):
        old = bt.trie
        old_bits = bt.trie_bits
        bt.trie_bits += 1
        size = <Py_ssize_t>1 << bt.trie_bits
        bt.trie = <TrieSlot*>malloc(size * sizeof(TrieSlot))
        if bt.trie == NULL:
            bt.trie = old
            bt.trie_bits = old_bits
            return -1
        memset(bt.trie, 0xFF, size * sizeof(TrieSlot))
        mask = size - 1
        for j in range(<Py_ssize_t>1 << old_bits):
            if old[j].key != BT_NONE:
                i = _slot_of(old[j].key, bt.trie_bits)
                while bt.trie[i].key != BT_NONE:
                    i = (i + 1) & mask
                bt.trie[i] = old[j]
        free(old)
    mask = (<Py_ssize_t>1 << bt.trie_bits) - 1
    i = _slot_of(key, bt.trie_bits)
    while bt.trie[i].key != BT_NONE:
        i = (i + 1) & mask
    bt.trie[i].key = key
    bt.trie[i].child = child
    bt.trie_used += 1
    return 0


cdef inline tok_t bt_pair(const Backtrack* bt, tok_t left, tok_t right) noexcept nogil:
    # the token whose canonical split is (left, right), or NO_TOKEN
    cdef uint64_t key = (<uint64_t><uint32_t>left << 32) | <uint32_t>right
    cdef Py_ssize_t mask = (<Py_ssize_t>1 << bt.pair_bits) - 1
    cdef Py_ssize_t i = _slot_of(key, bt.pair_bits)
    cdef const PairSlot* s
    while True:
        s = &bt.pairs[i]
        if s.token == NO_TOKEN:
            return NO_TOKEN
        if s.left == <uint32_t>left and s.right == <uint32_t>right:
            return s.token
        i = (i + 1) & mask


cdef inline bint bt_valid(const Backtrack* bt, tok_t x, tok_t y) noexcept nogil:
    # Does BPE on bytes(x) + bytes(y) give [x, y]?  See the section comment.
    cdef tok_t limit = NO_RANK, c, s
    while True:
        c = bt_pair(bt, x, y)
        if c != NO_TOKEN and c < limit:
            return False
        if x > y:
            limit = x
            s = bt.right[x]
            if s == NO_TOKEN:
                limit = y + 1
                s = bt.left[y]
                if s == NO_TOKEN:
                    return True
                y = s
            else:
                x = s
        else:
            limit = y + 1
            s = bt.left[y]
            if s == NO_TOKEN:
                limit = x
                s = bt.right[x]
                if s == NO_TOKEN:
                    return True
                x = s
            else:
                y = s


cdef inline tok_t bt_longest(const Backtrack* bt, const tok_t* byte_rank, const uint8_t* p,
                             Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    # the longest reachable token that is a prefix of p[i:n] (i < n)
    cdef tok_t best = byte_rank[p[i]]
    cdef uint32_t node
    if i + 1 >= n:
        return best
    node = bt.level2[(<Py_ssize_t>p[i] << 8) | p[i + 1]]
    if node == BT_NONE:
        return best
    if node < bt.first_free:
        best = <tok_t>node
    i += 2
    while i < n:
        node = bt_child(bt, node, p[i])
        if node == BT_NONE:
            break
        if node < bt.first_free:
            best = <tok_t>node
        i += 1
    return best


cdef Py_ssize_t _bpe_backtrack(const Backtrack* bt, const TokenTable* t, const tok_t* byte_rank,
                               const uint8_t* p, Py_ssize_t n, tok_t* out) noexcept nogil:
    # ids of piece p[:n] (n >= 1) into out (room for n); OUT_OF_MEMORY, or NOT_ENCODED if the
    # search found no tokenization (only possible for tables that break BPE's assumptions;
    # the caller then falls back to the merge loop)
    cdef uint8_t dead_s[STACK_MAX + 1]
    cdef uint8_t* dead = dead_s
    cdef Py_ssize_t k = 0, pos = 0, end
    cdef tok_t tok, nxt
    if n > STACK_MAX:
        dead = <uint8_t*>calloc(n + 1, 1)
        if dead == NULL:
            return -1
    else:
        memset(dead, 0, n + 1)
    nxt = bt_longest(bt, byte_rank, p, n, 0)
    while True:
        tok = nxt
        while True:
            end = pos + t.length[tok]
            if not dead[end] and (k == 0 or bt_valid(bt, out[k - 1], tok)):
                out[k] = tok
                k += 1
                pos = end
                if pos < n:
                    nxt = bt_longest(bt, byte_rank, p, n, pos)
                break
            tok = bt.shorter[tok]
            if tok == NO_TOKEN:
                # no token fits here after out[k - 1]: that path is a dead end
                dead[pos] = 1
                if k == 0:
                    if n > STACK_MAX:
                        free(dead)
                    return NOT_ENCODED
                k -= 1
                pos -= t.length[out[k]]
                nxt = out[k]
                break
        if pos == n:
            break
    if n > STACK_MAX:
        free(dead)
    return k


cdef int bt_build_splits(Backtrack* bt, const TokenTable* t, const tok_t* byte_rank) except -1 nogil:
    """Fill ``bt.left``, ``bt.right`` and ``bt.pairs``.  Returns 0, or 1 when the table has
    too many ids for 24-bit trie nodes or its ranks are not in merge order (a token that BPE
    makes but that has no canonical split among lower ranks); raises MemoryError."""
    cdef int status = _bt_fill_splits(bt, t, byte_rank)
    if status < 0:
        return _no_memory()
    return status


cdef int bt_build_trie(Backtrack* bt, const TokenTable* t, const tok_t* byte_rank) except -1 nogil:
    """Fill the trie (``level2``, ``trie``, ``shorter``) from the splits.  Returns 0, or 1
    for a table too large for it; raises MemoryError."""
    cdef Py_ssize_t i, max_len = 0
    cdef Py_ssize_t* by_length = NULL
    cdef int status
    for i in range(t.n_ids):
        if t.length[i] > max_len:
            max_len = t.length[i]
    by_length = <Py_ssize_t*>malloc((t.n_ids + max_len + 2) * sizeof(Py_ssize_t))
    if by_length == NULL:
        return _no_memory()
    status = _bt_fill_trie(bt, t, byte_rank, by_length, max_len)
    free(by_length)
    if status < 0:
        return _no_memory()
    return status


cdef inline bint _bt_reachable(const Backtrack* bt, const TokenTable* t, tok_t x) noexcept nogil:
    return t.length[x] == 1 or bt.left[x] != NO_TOKEN


cdef int _bt_fill_splits(Backtrack* bt, const TokenTable* t, const tok_t* byte_rank) noexcept nogil:
    # 0: built; 1: too many ids, or ranks not in merge order (bt stays unusable); -1: out of
    # memory
    cdef Py_ssize_t n_ids = t.n_ids, i, j, n, k, size, mask, max_len = 0
    cdef tok_t l, r
    cdef const uint8_t* b
    cdef tok_t* part = NULL
    cdef int32_t* starts = NULL
    cdef int status = 0
    cdef bint unsplit = False        # some token (of BPE's, not special) has no split
    if n_ids >= BT_MAX_NODES:
        return 1
    bt.left = <tok_t*>malloc(n_ids * sizeof(tok_t))
    bt.right = <tok_t*>malloc(n_ids * sizeof(tok_t))
    bt.pair_bits = 4
    while (<Py_ssize_t>1 << bt.pair_bits) < 2 * n_ids + 2:
        bt.pair_bits += 1
    size = <Py_ssize_t>1 << bt.pair_bits
    bt.pairs = <PairSlot*>malloc(size * sizeof(PairSlot))
    if bt.left == NULL or bt.right == NULL or bt.pairs == NULL:
        return -1
    mask = size - 1
    for k in range(size):
        bt.pairs[k].token = NO_TOKEN
    for i in range(n_ids):
        bt.left[i] = NO_TOKEN
        bt.right[i] = NO_TOKEN
    # Canonical splits, in rank order: BPE on t's bytes with the ranks below t ends in two
    # parts (l, r) exactly when l + r spells t and (l, r) is a valid pair among those ranks,
    # and only one split of t can be (BPE's result is unique).  The splits and pairs of all
    # lower ranks are in place when t's turn comes.
    for i in range(n_ids):
        n = t.length[i]
        if n < 2:
            continue
        b = t.blob + t.off[i]
        if tt_find(t, b, n) != i:
            continue                     # a special token: BPE never produces it
        for k in range(n - 1, 0, -1):
            l = tt_find(t, b, k)
            if l == NO_TOKEN or l >= i or not _bt_reachable(bt, t, l):
                continue
            r = tt_find(t, b + k, n - k)
            if r == NO_TOKEN or r >= i or not _bt_reachable(bt, t, r):
                continue
            if bt_valid(bt, l, r):
                bt.left[i] = l
                bt.right[i] = r
                j = _slot_of((<uint64_t><uint32_t>l << 32) | <uint32_t>r, bt.pair_bits)
                while bt.pairs[j].token != NO_TOKEN:
                    j = (j + 1) & mask
                bt.pairs[j].left = <uint32_t>l
                bt.pairs[j].right = <uint32_t>r
                bt.pairs[j].token = <tok_t>i
                break
        if bt.left[i] == NO_TOKEN:
            unsplit = True
    # A token without a split that BPE still makes from its own bytes has a merge of a
    # higher rank on its way (ranks not in merge order): then neither this encoder nor the
    # signatures may rely on the splits.  Tables made by BPE training have none.
    if not unsplit:
        return 0
    for i in range(n_ids):
        n = t.length[i]
        if n > max_len:
            max_len = n
    part = <tok_t*>malloc((max_len + 1) * sizeof(tok_t))
    starts = <int32_t*>malloc((max_len + 1) * sizeof(int32_t))
    if part == NULL or starts == NULL:
        status = -1
    else:
        for i in range(n_ids):
            n = t.length[i]
            if n < 2 or bt.left[i] != NO_TOKEN:
                continue
            b = t.blob + t.off[i]
            if tt_find(t, b, n) != i:
                continue
            for k in range(1, n):
                if tt_find(t, b, k) != NO_TOKEN and tt_find(t, b + k, n - k) != NO_TOKEN:
                    # BPE's last merge could make it: run BPE on its bytes alone
                    if bpe_alone_tau(t, byte_rank, b, n, <tok_t>i, part, starts) >= 0:
                        status = 1
                    break
            if status:
                break
    free(part)
    free(starts)
    return status


cdef int _bt_fill_trie(Backtrack* bt, const TokenTable* t, const tok_t* byte_rank, Py_ssize_t* by_length,
                       Py_ssize_t max_len) noexcept nogil:
    # 0: built; 1: too many nodes (bt stays unusable); -1: out of memory.
    # by_length: scratch for n_ids + max_len + 2 entries.
    cdef Py_ssize_t n_ids = t.n_ids, i, j, n, k, n_tokens = 0
    cdef Py_ssize_t* start
    cdef tok_t best
    cdef uint32_t node, child, next_node
    cdef const uint8_t* b
    bt.shorter = <tok_t*>malloc(n_ids * sizeof(tok_t))
    bt.level2 = <uint32_t*>malloc(65536 * sizeof(uint32_t))
    bt.trie_bits = bt.pair_bits + 1
    bt.trie_used = 0
    bt.trie = <TrieSlot*>malloc((<Py_ssize_t>1 << bt.trie_bits) * sizeof(TrieSlot))
    if bt.shorter == NULL or bt.level2 == NULL or bt.trie == NULL:
        return -1
    memset(bt.level2, 0xFF, 65536 * sizeof(uint32_t))
    memset(bt.trie, 0xFF, (<Py_ssize_t>1 << bt.trie_bits) * sizeof(TrieSlot))
    for i in range(n_ids):
        bt.shorter[i] = NO_TOKEN
    # The trie of reachable tokens, shortest first: the node spelling a reachable token is
    # created with that token's id (so a walk knows it passed a token without a lookup); the
    # other nodes get ids from n_ids up.  Tokens are bucketed by length (counting sort).
    start = by_length + n_ids
    for k in range(max_len + 2):
        start[k] = 0
    for i in range(n_ids):
        if t.length[i] >= 2 and bt.left[i] != NO_TOKEN:
            start[t.length[i] + 1] += 1
            n_tokens += 1
    for k in range(1, max_len + 2):
        start[k] += start[k - 1]
    for i in range(n_ids):
        if t.length[i] >= 2 and bt.left[i] != NO_TOKEN:
            by_length[start[t.length[i]]] = i
            start[t.length[i]] += 1
    bt.first_free = <uint32_t>n_ids
    next_node = <uint32_t>n_ids
    for j in range(n_tokens):
        i = by_length[j]
        n = t.length[i]
        b = t.blob + t.off[i]
        best = byte_rank[b[0]]            # the longest reachable proper prefix so far
        if n == 2:
            if bt.level2[(<Py_ssize_t>b[0] << 8) | b[1]] != BT_NONE:
                return 1                  # cannot happen for a well-formed table
            bt.level2[(<Py_ssize_t>b[0] << 8) | b[1]] = <uint32_t>i
            bt.shorter[i] = best
            continue
        node = bt.level2[(<Py_ssize_t>b[0] << 8) | b[1]]
        if node == BT_NONE:
            if next_node >= BT_MAX_NODES:
                return 1
            node = next_node
            next_node += 1
            bt.level2[(<Py_ssize_t>b[0] << 8) | b[1]] = node
        elif node < bt.first_free:
            best = <tok_t>node
        for k in range(2, n - 1):
            child = bt_child(bt, node, b[k])
            if child == BT_NONE:
                if next_node >= BT_MAX_NODES:
                    return 1
                child = next_node
                next_node += 1
                if _bt_trie_put(bt, node, b[k], child) < 0:
                    return -1
            elif child < bt.first_free:
                best = <tok_t>child
            node = child
        if bt_child(bt, node, b[n - 1]) != BT_NONE:
            return 1                      # cannot happen for a well-formed table
        if _bt_trie_put(bt, node, b[n - 1], <uint32_t>i) < 0:
            return -1
        bt.shorter[i] = best
    return 0
