# Character units for the merge loop of bpe/_core.pyx (textually included there, like
# _backtrack.pxi).  It decides, per character of a piece, whether the merge loop may start
# from that character's token instead of its UTF-8 bytes, and whether a piece's leading space
# and first character may start as one token; it does not merge, split text or touch Python
# objects (except to build its tables once under the GIL).

# --------------------------------------------------------------------------------------------
# Why and when a character may start as one unit
# --------------------------------------------------------------------------------------------
#
# Byte-level BPE starts from single bytes, so a CJK character costs two merges before it
# meets its neighbours and a Cyrillic one costs one; on non-Latin text most merges are of
# that kind.  Starting such a character c as its own token gives the same ids when:
#
# 1. BPE on c's bytes alone gives the single token c.  Let tau(c) be the highest rank among
#    those merges.
# 2. No token that holds all of c plus other bytes, *and matches the text around c*, ranks at
#    or below tau(c).  (o200k_base has " \u0915" below the rank that completes \u0915.)
# 3. No token that holds a proper part of c plus bytes outside c, *and matches the text
#    around c*, ranks at or below tau(c).  Such tokens exist: o200k_base has " \xe5" (a space
#    and the first byte of many CJK characters) at rank 1222, below the ranks that complete
#    those characters, so after a space they must start as bytes.
#
# Sketch of the proof.  While c is unfinished, its next merge (rank <= tau(c)) is available,
# and by (3) every pair that crosses into c ranks higher, so c finishes exactly as on its own
# and never merges partly with its neighbours.  After that, only tokens holding all of c can
# form.  The remaining merges then happen in the same order as when c starts whole: the
# lowest-ranked pair P there is also available in byte-level BPE when its turn comes,
# because P's token matches the text around every character inside it, so by (2) each of
# them finishes (rank <= tau) before P's rank, and any
# pair byte-level BPE could take instead is also available when c starts whole.  Ties go to
# the leftmost pair in both.  Characters that fail a condition start as bytes, which is
# exactly byte-level BPE for them, so a piece may mix both kinds.
#
# Condition 1 is per character and checked once.  For (2) and (3) each character keeps the
# context strings that would break it: X for a token X + (proper prefix of c) or X + c + Y,
# Y for a token (proper suffix of c) + Y or c + Y, each ranked <= tau(c) (for X + c + Y only
# X is checked: a superset of the places where it matches).  Most characters have none or
# one or two (" ", mostly), and a piece checks them with a few byte compares.  Some have
# dozens (o200k_base: tokens that end in a Cyrillic lead byte after another letter), so each
# character's slot also keeps two 32-bit masks of their outer bytes (bit b & 31 for the last
# byte b of each left string, for the first byte of each right one; " " alone before the
# character, the commonest context, is a flag in the slot, tested exactly).  When neither of
# the text's bytes around the character is in its mask and the flag does not apply, which is
# most of the time, it starts whole after one test, without a branch per kind of context
# (branching on "has contexts", true for a quarter of the characters of the multilingual
# corpus, was mispredicted often enough to cost about 5% of the encode time there); only the
# rest read their strings.
#
# On the shared multilingual corpus (o200k_base) the merge loop then starts from half as many
# units and does a quarter of the merges.  The table has 16-byte slots (256 KiB for
# o200k_base's 5,136 characters, 64 KiB for cl100k_base's 1,228) so that it stays in cache;
# the strings sit in a pool reached through a parallel array.
#
# A piece's leading space.  The argument above never uses that c is one character: any
# stretch of the text whose bytes BPE alone turns into one token, and that no matching token
# crosses at or below its tau, may start as that token.  Space-separated scripts give most of
# their pieces the shape " " + c + ..., and " " + c is nearly always a token, formed by one or
# two merges of rank below any other in the piece: so where " " + c passes the conditions it
# starts as one unit.  At the start of a piece nothing lies to its left (BPE never looks past
# a piece), so only right contexts exist: Y for the tokens " " + c + Y, c + Y and (proper
# suffix of c) + Y ranked <= tau(" " + c).  o200k_base has 2,062 such units with a non-ASCII
# c and they apply to about 70% of the multilingual corpus's pieces that are not tokens,
# cutting one or two merges from each (+8% on that corpus); cl100k_base has 359.  " " + an
# ASCII letter (52 more) gains less, 1-3% on Spanish and Portuguese prose (those merges are
# the cheapest, from the direct two-byte table), so it is used only once the tables are built
# (see below).  The table has the characters' layout (keyed by c, no left strings, no space
# flag).
#
# Two ASCII bytes.  The same argument lets two ASCII bytes xy anywhere in a piece start as
# their token, merged alone at tau = its rank: they are broken by the tokens ranked <= tau
# that hold x at their end after other bytes (left string: the rest), y at their start
# before other bytes (right string: the rest), or xy and more (X + xy + Y: X before it, else
# Y after it).  Each such unit costs a lookup and a context test, and its pairs with its
# neighbours come from the split table instead of the direct two-byte table, so only tokens
# ranked below PAIR_TAU_MAX with at most PAIR_MAX_CONTEXTS context strings are kept
# (o200k_base: 521 of its 1,249 two-byte ASCII tokens there; cl100k_base: 542 of 1,512).  On
# the distinct pieces of the shared prose corpora that are not tokens (o200k_base, 42,669 of
# them) the merge loop then starts from 29% fewer units and makes 42% fewer merges (232K ->
# 135K; cl100k_base likewise).  Units are taken left to right: any choice of units that pass
# gives the same ids.
#
# When the tables are built.  The first piece that needs merging and holds a non-ASCII
# character builds them; so does the first piece merged after the pair signatures are built
# (bpe/_signatures.pxi: once the encoder has merged 20,000 pieces), since the pairs pay off
# on English too.  Short texts in ASCII never pay their build (about 63 ms for o200k_base,
# 15 ms for cl100k_base).
#
# Identity with byte-level BPE is checked by the test suite: units on and off against
# tiktoken on the whole corpora, units on against tiktoken on every code point in several
# contexts; against the backtracking encoder on trained vocabularies; against the
# pure-Python reference on random vocabularies built to break the conditions above, with
# and without a pre-tokenizer that makes pieces start with a space.

cdef enum:
    CU_UNBUILT = 0
    CU_READY = 1
    CU_UNAVAILABLE = 2
    CU_MAX_CONTEXT = 255     # a longer context string, or more of them on one side, and the
                             # character stays bytes (the pool stores lengths in one byte)
    # two ASCII bytes start whole only when their token ranks below PAIR_TAU_MAX and has at
    # most PAIR_MAX_CONTEXTS context strings (benchmarks.ab --in-process, cold, o200k prose,
    # 61 rounds, B/A against no pair units: at most 4 strings 1.066, 8: 1.058, 12: 1.053,
    # 16: 1.058 (101 rounds), 20: 1.074, 32: 1.053, 64: 1.020, 255: 0.955, where most units
    # meet a string to compare; only PAIR_TAU_MAX 16,384 -> all ids: 521 -> 533 pairs)
    PAIR_TAU_MAX = 16384
    PAIR_MAX_CONTEXTS = 16
    # at most this many pairs (the lowest ranked), so that their table's slots (at most
    # 16,384) fit the pair index's 16-bit entries; o200k_base and cl100k_base have about 500
    PAIR_MAX_UNITS = 8191
    # entries of the tables by two ASCII bytes x, y at x | y << 7 (the pair index, the taus
    # of _pair_units)
    PAIR_INDEX_SIZE = 128 * 128


ctypedef struct CharSlot:
    uint32_t key             # the character's UTF-8 bytes, little-endian; 0: empty slot
    uint32_t value           # its token id (low 24 bits), CU_AFTER_SPACE, CU_CONTEXTS
    uint32_t before          # bit b & 31 for the last byte b of each left string
    uint32_t after           # bit b & 31 for the first byte b of each right string


ctypedef struct CharContexts:
    uint32_t offset          # of its context strings in the pool, [length][bytes] each: the
                             # left ones, then the right ones
    uint16_t n_left          # strings that must not end right before it
    uint16_t n_right         # strings that must not start right after it
    uint32_t left_bytes      # pool bytes of the left strings (to skip them)


cdef enum:
    CU_TOKEN_BITS = 24       # tables with more ids than fit here get no character units
    CU_AFTER_SPACE = 1 << 30 # the commonest context, kept in the slot: it never follows " "
    CU_CONTEXTS = 1 << 29    # other context strings: contexts[slot]


ctypedef struct CharTable:
    # units keyed by a character (open addressing, linear probing, load <= 1/2)
    CharSlot* slots          # 16-byte slots (a small table that stays in cache)
    CharContexts* contexts   # parallel to slots, read only when a mask bit matches
    int bits


ctypedef struct CharUnits:
    CharTable chars          # characters that may start as one unit
    CharTable spaced         # " " + character, at the start of a piece, by the character
    CharTable pairs          # two ASCII bytes anywhere in a piece (slots NULL: none)
    uint16_t* pair_index     # by x | y << 7: 1 + the slot of xy in pairs, 0 for none (NULL: no
                             # pairs); most pairs of text have no unit, and this answers every
                             # pair with one read of 32 KiB, without hashing
    uint8_t* pool            # the context strings of all three
    int enabled              # 0: every character starts as bytes (for tests and A/B runs)
    int state                # CU_UNBUILT, CU_READY or CU_UNAVAILABLE (read with acquire)


cdef void _ct_free(CharTable* tab) noexcept nogil:
    free(tab.slots)
    free(tab.contexts)
    tab.slots = NULL
    tab.contexts = NULL


cdef void cu_free(CharUnits* cu) noexcept nogil:
    free(cu.pair_index)
    cu.pair_index = NULL
    _ct_free(&cu.chars)
    _ct_free(&cu.spaced)
    _ct_free(&cu.pairs)
    free(cu.pool)
    cu.pool = NULL


cdef inline int _utf8_length(uint8_t lead) noexcept nogil:
    # bytes in the character that starts with `lead`; 0 for a continuation or invalid byte
    if lead < 0x80:
        return 1
    if lead < 0xC2:
        return 0
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    if lead < 0xF5:
        return 4
    return 0


cdef inline uint32_t _pack(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    # up to four bytes, little-endian (never 0 for bytes >= 0x80)
    cdef uint32_t k = 0
    cdef Py_ssize_t i
    for i in range(n):
        k |= (<uint32_t>p[i]) << (8 * i)
    return k


cdef uint32_t[5] _PACK_MASKS = [0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF]


cdef inline uint32_t _pack_within(const uint8_t* p, Py_ssize_t n, Py_ssize_t i, Py_ssize_t L) noexcept nogil:
    # _pack(p + i, L) for 1 <= L <= 4 in the piece p[:n]: one load of four bytes where the
    # piece has them, else byte by byte
    cdef uint32_t w
    if i + 4 <= n:
        memcpy(&w, p + i, 4)
        return bpe_le32(w) & _PACK_MASKS[L]
    return _pack(p + i, L)


cdef inline Py_ssize_t cu_find(const CharTable* tab, uint32_t key) noexcept nogil:
    # the slot of a character, or -1
    return _cu_slot(tab.slots, tab.bits, key)


cdef inline Py_ssize_t _cu_slot(const CharSlot* slots, int bits, uint32_t key) noexcept nogil:
    # cu_find with the table's slots and size in the caller's registers
    cdef Py_ssize_t mask = (<Py_ssize_t>1 << bits) - 1
    cdef Py_ssize_t i = <Py_ssize_t>((key * 0x9E3779B1U) >> (32 - bits))
    while True:
        if slots[i].key == key:
            return i
        if slots[i].key == 0:
            return -1
        i = (i + 1) & mask


cdef inline bint _cu_blocked(const CharTable* tab, const uint8_t* pool, Py_ssize_t slot,
                             const uint8_t* p, Py_ssize_t n, Py_ssize_t i, Py_ssize_t L) noexcept nogil:
    # whether a context of the unit in `slot` matches around p[i:i+L] in the piece p[:n]: the
    # masks clear most units with one test (selects, not branches, on the piece's ends), the
    # others are checked exactly
    cdef const CharSlot* cs = &tab.slots[slot]
    cdef uint32_t before = cs.before if i > 0 else 0
    cdef uint32_t after = cs.after if i + L < n else 0
    cdef uint32_t x = p[i - 1] if i > 0 else 0
    cdef uint32_t y = p[i + L] if i + L < n else 0
    cdef uint32_t space = <uint32_t>((cs.value & CU_AFTER_SPACE) != 0) & <uint32_t>(x == 0x20)
    if ((before >> (x & 31)) | (after >> (y & 31)) | space) & 1:
        return _cu_blocked_exactly(tab, pool, slot, p, n, i, L)
    return False


cdef bint _cu_blocked_exactly(const CharTable* tab, const uint8_t* pool, Py_ssize_t slot,
                              const uint8_t* p, Py_ssize_t n, Py_ssize_t i, Py_ssize_t L) noexcept nogil:
    # _cu_blocked past the masks: the space flag, then the strings
    cdef uint32_t v = tab.slots[slot].value
    cdef const CharContexts* c
    cdef const uint8_t* q
    cdef Py_ssize_t k, m
    if (v & CU_AFTER_SPACE) and i > 0 and p[i - 1] == 0x20:
        return True
    if not (v & CU_CONTEXTS):
        return False
    c = &tab.contexts[slot]
    q = pool + c.offset
    if i > 0:
        for k in range(c.n_left):
            m = q[0]
            if m <= i and p[i - 1] == q[m] and memcmp(p + i - m, q + 1, m) == 0:
                return True
            q += 1 + m
    else:
        q += c.left_bytes
    if i + L >= n:
        return False
    for k in range(c.n_right):
        m = q[0]
        if i + L + m <= n and p[i + L] == q[1] and memcmp(p + i + L, q + 1, m) == 0:
            return True
        q += 1 + m
    return False


cdef Py_ssize_t cu_units(CharUnits* cu, const TokenTable* t, const tok_t* byte_rank,
                         const uint8_t* p, Py_ssize_t n, int32_t* off, tok_t* tok,
                         const SplitView* ahead) noexcept nogil:
    """The units the merge loop starts from for piece ``p[:n]``: unit i is ``p[off[i]:off[i+1]]``
    with id ``tok[i]`` (a byte, or a whole character or two ASCII bytes where that gives the
    same ids; only bytes when ``cu`` is NULL or units are off).  Returns
    the number of units m and sets ``off[m] = n``; ``off`` and ``tok`` have room for n + 1.
    With ``ahead`` (NULL: off), each whole character or two-byte unit starts the lines of
    its pair with the unit before it on their way (split_pair_fetch), and so does an ASCII
    byte after such a unit, so that the merge loop's first questions find them close (a byte
    after a byte is asked of the direct two-byte table instead)."""
    cdef Py_ssize_t i = 0, m = 0, L, j, s
    if n > 2 and p[0] == 0x20 and cu != NULL and (
            cu_usable(cu, t, byte_rank) if p[1] >= 0xC2 else (0x41 <= p[1] < 0x80 and _cu_ready(cu))):
        # the leading space and the first character as one unit, where that gives the same ids
        # (" " + an ASCII letter only once non-ASCII text has built the tables: English alone
        # never pays for them)
        L = _utf8_length(p[1])
        if L > 0 and 1 + L <= n:
            s = cu_find(&cu.spaced, _pack(p + 1, L))
            if s >= 0 and not _cu_blocked(&cu.spaced, cu.pool, s, p, n, 0, 1 + L):
                off[0] = 0
                tok[0] = <tok_t>(cu.spaced.slots[s].value & ((1 << CU_TOKEN_BITS) - 1))
                m = 1
                i = 1 + L
    cdef const CharSlot* slots
    cdef const CharSlot* pairs = cu.pairs.slots if cu != NULL and _cu_ready(cu) else NULL
    cdef const uint16_t* pair_index = cu.pair_index if pairs != NULL else NULL
    cdef int bits
    while pair_index == NULL and i < n and p[i] < 0x80:
        off[m] = <int32_t>i
        tok[m] = byte_rank[p[i]]
        i += 1
        m += 1
    if i < n and cu != NULL and cu_usable(cu, t, byte_rank):
        # (the tables' addresses and sizes as locals: read through cu, they were loaded again
        # after every store to off and tok, which may alias them as far as the compiler knows)
        slots = cu.chars.slots
        bits = cu.chars.bits
        while i < n:
            if p[i] < 0x80:
                # ASCII (most of prose and code): two bytes at once where the pair index has
                # them and their contexts allow, else one
                if pair_index != NULL and i + 1 < n and p[i + 1] < 0x80:
                    s = <Py_ssize_t>pair_index[p[i] | (<Py_ssize_t>p[i + 1] << 7)] - 1
                    if s >= 0 and not _cu_blocked(&cu.pairs, cu.pool, s, p, n, i, 2):
                        off[m] = <int32_t>i
                        tok[m] = <tok_t>(pairs[s].value & ((1 << CU_TOKEN_BITS) - 1))
                        if m > 0 and ahead != NULL:
                            split_pair_fetch(ahead, tok[m - 1], tok[m])
                        m += 1
                        i += 2
                        continue
                off[m] = <int32_t>i
                tok[m] = byte_rank[p[i]]
                if ahead != NULL and m > 0 and i - off[m - 1] > 1:
                    # (a byte after a longer unit: the split table answers their pair)
                    split_pair_fetch(ahead, tok[m - 1], tok[m])
                m += 1
                i += 1
                continue
            L = _utf8_length(p[i])
            if L > 1 and i + L <= n:
                s = _cu_slot(slots, bits, _pack_within(p, n, i, L))
                if s >= 0 and not _cu_blocked(&cu.chars, cu.pool, s, p, n, i, L):
                    off[m] = <int32_t>i
                    tok[m] = <tok_t>(slots[s].value & ((1 << CU_TOKEN_BITS) - 1))
                    if m > 0 and ahead != NULL:
                        split_pair_fetch(ahead, tok[m - 1], tok[m])
                    m += 1
                    i += L
                    continue
            if L == 0 or i + L > n:
                L = 1                        # not valid UTF-8 here: one byte at a time
            for j in range(L):
                off[m] = <int32_t>i
                tok[m] = byte_rank[p[i]]
                m += 1
                i += 1
    while i < n:
        off[m] = <int32_t>i
        tok[m] = byte_rank[p[i]]
        m += 1
        i += 1
    off[m] = <int32_t>n
    return m


cdef inline bint _cu_ready(CharUnits* cu) noexcept nogil:
    # whether the units are on and built, without building them
    return bpe_load_acquire(&cu.state) == CU_READY and cu.enabled


cdef inline bint cu_usable(CharUnits* cu, const TokenTable* t, const tok_t* byte_rank) noexcept nogil:
    """Whether whole-character units are on; builds the table on first use."""
    cdef int state = bpe_load_acquire(&cu.state)
    if state == CU_UNBUILT:
        with gil:
            state = _cu_build_with_gil(cu, t, byte_rank)
    return state == CU_READY and cu.enabled


cdef int _cu_build_with_gil(CharUnits* cu, const TokenTable* t, const tok_t* byte_rank) noexcept:
    # build once (the GIL makes other threads wait), then publish the state
    cdef int state = cu.state
    if state != CU_UNBUILT:
        return state
    try:
        _cu_build(cu, t, byte_rank)
        state = CU_READY
    except BaseException:                    # MemoryError; then every character starts as bytes
        cu_free(cu)
        state = CU_UNAVAILABLE
    bpe_store_release(&cu.state, state)
    return state


cdef int _cu_build(CharUnits* cu, const TokenTable* t, const tok_t* byte_rank) except -1:
    # First single[c] = (id, tau(c)) for the characters that pass condition 1.  Then one
    # pass over the tokens (in rank order, so the lists below come out sorted) finds
    #   held[c]     (offset of c, id) of longer tokens holding all of c, ranked <= tau(c)
    #               (condition 2: they break c where they match the text around it),
    #   ends[p]     ids of tokens ending in a proper character prefix p, after other bytes,
    #   starts[s]   ids of tokens starting with a proper character suffix s, before other bytes;
    # and, for the leading units " " + c (see "A piece's leading space"),
    #   spaced[c]   the id of the token " " + c,
    #   spaced_starts[c], char_starts[c]   ids of tokens " " + c + Y and c + Y (Y not empty);
    # then each character, and each " " + c, gets its context strings for (2) and (3).
    cdef dict single = {}, held = {}, ends = {}, starts = {}
    cdef dict spaced = {}, spaced_starts = {}, char_starts = {}
    cdef Py_ssize_t tid, n, i, j, lead, L, c_start
    cdef const uint8_t* b
    cdef uint32_t key
    cdef tok_t tau
    cdef tok_t part[5]                       # scratch of bpe_alone_tau (" " and a character)
    cdef int32_t part_start[6]
    cdef object entry
    # " " + an ASCII letter: only tokens ranked at most the highest of their taus can stop them
    cdef uint8_t pair[8]                     # (8: hashing reads a whole word where it may)
    cdef tok_t ascii_tau = -1
    pair[0] = 0x20
    for i in range(0x41, 0x7B):
        if 0x5A < i < 0x61:
            continue
        pair[1] = <uint8_t>i
        tid = tt_find(t, pair, 2)
        tau = bpe_alone_tau(t, byte_rank, pair, 2, <tok_t>tid, part, part_start) if tid >= 0 else -1
        if tau >= 0:
            spaced[i] = tid
            ascii_tau = max(ascii_tau, tau)
    for tid in range(t.n_ids):
        n = t.length[tid]
        if 2 <= n <= 4:
            b = t.blob + t.off[tid]
            if _utf8_length(b[0]) == n and tt_find(t, b, n) == tid:
                j = 1
                while j < n and 0x80 <= b[j] < 0xC0:
                    j += 1
                if j == n:
                    # BPE on the character's bytes alone: the highest rank it merges, -1 if it
                    # does not end as this token
                    tau = bpe_alone_tau(t, byte_rank, b, n, <tok_t>tid, part, part_start)
                    if tau >= 0:
                        key = _pack(b, n)
                        single[key] = (tid, tau)
    for tid in range(t.n_ids):
        n = t.length[tid]
        if n < 2:
            continue
        b = t.blob + t.off[tid]
        if tt_find(t, b, n) != tid:
            continue                         # special tokens, which BPE never forms
        lead = 0
        while lead < n and lead < 4 and 0x80 <= b[lead] < 0xC0:
            lead += 1
        if lead == 4:
            continue                         # no character has four continuation bytes
        i = lead
        c_start = -1
        while i < n:
            L = _utf8_length(b[i])
            if L == 0:
                break                        # cannot occur in valid UTF-8 text
            if i + L > n:
                c_start = i                  # ends in a proper prefix of a character
                break
            j = 1
            while j < L and 0x80 <= b[i + j] < 0xC0:
                j += 1
            if j < L:
                break
            if 1 < L < n:
                key = _pack(b + i, L)
                entry = single.get(key)
                if entry is not None and tid <= entry[1]:
                    held.setdefault(key, []).append((i, tid))
                if i == 0:
                    char_starts.setdefault(key, []).append(tid)
                elif i == 1 and b[0] == 0x20:
                    if n == 1 + L:
                        spaced[key] = tid
                    else:
                        spaced_starts.setdefault(key, []).append(tid)
            elif L == 1 and i <= 1 and tid <= ascii_tau and b[i] in spaced:
                if i == 0:
                    char_starts.setdefault(b[0], []).append(tid)
                elif b[0] == 0x20 and n > 2:
                    spaced_starts.setdefault(b[1], []).append(tid)
            i += L
        if i < n and c_start < 0:
            continue                         # invalid inside: never matches text
        if c_start >= 0:
            j = c_start + 1
            while j < n and 0x80 <= b[j] < 0xC0:
                j += 1
            if j < n:
                continue
            if c_start > 0:
                ends.setdefault(_pack(b + c_start, n - c_start), []).append(tid)
        if 0 < lead < n:
            starts.setdefault(_pack(b, lead), []).append(tid)

    cdef bytearray pool = bytearray()
    cdef list chars = []
    cdef tok_t token
    cdef list left, right
    cdef object other, at
    cdef const uint8_t* c
    for key, (token, tau) in single.items():
        n = t.length[token]
        c = t.blob + t.off[token]
        left = []
        right = []
        for at, other in held.get(key, ()):
            # a token X + c + Y: X (its first `at` bytes) before c, or else Y after it (a
            # superset of the places where the whole token matches)
            if at > 0:
                left.append(at)
                left.append(other)
            else:
                right.append(t.length[<Py_ssize_t>other] - n)
                right.append(other)
        for j in range(1, n):
            _add_contexts(left, ends.get(_pack(c, j), ()), tau, j, t)
            _add_contexts(right, starts.get(_pack(c + j, n - j), ()), tau, n - j, t)
        entry = _unit_entry(pool, t, key, token, left, right, 2 * CU_MAX_CONTEXT)
        if entry is not None:
            chars.append(entry)

    # " " + c as one unit at the start of a piece: no left context; on the right, tokens that
    # start with " " + c, with c or with a proper suffix of c and go on, ranked <= tau(" " + c)
    cdef list firsts = []
    for key, token in spaced.items():
        n = t.length[token]
        c = t.blob + t.off[token]
        tau = bpe_alone_tau(t, byte_rank, c, n, token, part, part_start)
        if tau < 0:
            continue                         # condition 1 fails
        right = []
        _add_contexts(right, spaced_starts.get(key, ()), tau, n, t)
        _add_contexts(right, char_starts.get(key, ()), tau, n - 1, t)
        for j in range(2, n):
            _add_contexts(right, starts.get(_pack(c + j, n - j), ()), tau, n - j, t)
        entry = _unit_entry(pool, t, key, token, [], right, 2 * CU_MAX_CONTEXT)
        if entry is not None:
            firsts.append(entry)

    cdef list pairs = _pair_units(t, byte_rank, pool)
    del pairs[PAIR_MAX_UNITS:]
    if t.n_ids > (1 << CU_TOKEN_BITS):
        chars = []                           # ids too large for the slots: no units
        firsts = []
        pairs = []
    cdef CharTable char_table, first_table, pair_table
    memset(&char_table, 0, sizeof(CharTable))
    memset(&first_table, 0, sizeof(CharTable))
    memset(&pair_table, 0, sizeof(CharTable))
    cdef uint8_t* pool_c = <uint8_t*>malloc(len(pool) + 1)
    try:
        if pool_c == NULL:
            raise MemoryError()
        if len(pool):
            memcpy(pool_c, <char*>pool, len(pool))
        _ct_fill(&char_table, chars)
        _ct_fill(&first_table, firsts)
        if pairs:
            _ct_fill(&pair_table, pairs)
    except BaseException:
        _ct_free(&char_table)
        _ct_free(&first_table)
        _ct_free(&pair_table)
        free(pool_c)
        raise
    cu_free(cu)
    cu.chars = char_table
    cu.spaced = first_table
    cu.pairs = pair_table
    cu.pool = pool_c
    cdef Py_ssize_t k
    if pair_table.slots != NULL:
        cu.pair_index = <uint16_t*>calloc(PAIR_INDEX_SIZE, sizeof(uint16_t))
        if cu.pair_index == NULL:
            raise MemoryError()              # (the caller frees the rest)
        for k in range(<Py_ssize_t>1 << pair_table.bits):
            key = pair_table.slots[k].key
            if key != 0:
                cu.pair_index[(key & 0x7F) | ((key >> 8) << 7)] = <uint16_t>(k + 1)
    return 0


cdef list _pair_units(const TokenTable* t, const tok_t* byte_rank, bytearray pool):
    # The entries (as _ct_fill takes them; their strings appended to pool) of the two-byte
    # ASCII tokens xy that may start as one unit anywhere in a piece ("Two ASCII bytes"
    # above).  Tokens are visited in rank order, so each list of ids comes out sorted.
    cdef list ends = [[] for _ in range(128)], starts = [[] for _ in range(128)]
    cdef list singles = [], entries = [], left, right
    cdef dict held = {}
    cdef Py_ssize_t tid, n, i, top = -1, limit = min(t.n_ids, PAIR_TAU_MAX)
    cdef const uint8_t* b
    cdef uint32_t key
    cdef tok_t tau, token
    cdef tok_t part[3]                       # scratch of bpe_alone_tau
    cdef int32_t part_start[4]
    cdef int32_t taus[PAIR_INDEX_SIZE]       # by x | y << 7: tau of a pair still in the running, else -1
    cdef object other, at, entry
    for tid in range(limit):
        n = t.length[tid]
        if n < 2:
            continue
        b = t.blob + t.off[tid]
        if tt_find(t, b, n) != tid:
            continue                         # special tokens, which BPE never forms
        if b[n - 1] < 0x80:
            ends[b[n - 1]].append(tid)       # x at the end after other bytes
        if b[0] < 0x80:
            starts[b[0]].append(tid)         # y at the start before other bytes
        # (key 0 marks an empty slot: no unit for two NUL bytes)
        if n == 2 and b[0] < 0x80 and b[1] < 0x80 and (b[0] | b[1]):
            tau = bpe_alone_tau(t, byte_rank, b, 2, <tok_t>tid, part, part_start)
            if tau >= 0:
                singles.append((b[0], b[1], tid, tau))
    memset(taus, 0xFF, sizeof(taus))
    for x, y, token, tau in singles:
        # (counted before any string is made: most pairs have too many)
        if bisect_right(ends[x], tau) + bisect_right(starts[y], tau) <= PAIR_MAX_CONTEXTS + 1:
            taus[x | (y << 7)] = tau
            top = max(top, tau)
    for tid in range(top + 1):               # tokens holding xy and more
        n = t.length[tid]
        b = t.blob + t.off[tid]
        for i in range(n - 1 if n > 2 else 0):
            if b[i] < 0x80 and b[i + 1] < 0x80 and tid <= taus[b[i] | (b[i + 1] << 7)]:
                if tt_find(t, b, n) == tid:
                    held.setdefault(b[i] | (b[i + 1] << 7), []).append((i, tid))
    for x, y, token, tau in singles:
        if taus[x | (y << 7)] < 0:
            continue
        left = []
        right = []
        for at, other in held.get(x | (y << 7), ()):
            if at > 0:
                left.append(at)
                left.append(other)
            else:
                right.append(t.length[<Py_ssize_t>other] - 2)
                right.append(other)
        _add_contexts(left, ends[x], tau, 1, t)
        _add_contexts(right, starts[y], tau, 1, t)
        entry = _unit_entry(pool, t, x | (y << 8), token, left, right, PAIR_MAX_CONTEXTS)
        if entry is not None:
            entries.append(entry)
    return entries


cdef object _unit_entry(bytearray pool, const TokenTable* t, uint32_t key, tok_t token, list left,
                        list right, Py_ssize_t most):
    # The entry (as _ct_fill takes it) of a unit with the context strings left and right (as
    # _add_contexts makes them), its strings appended to pool; None (no unit) with more than
    # CU_MAX_CONTEXT strings on a side, one longer than that, or more than `most` strings in
    # all.  " " alone before the unit is kept as a flag in its slot, not as a string.
    cdef Py_ssize_t i, at, lb
    cdef uint32_t before, after
    cdef bint after_space = False
    if (len(left) > 2 * CU_MAX_CONTEXT or len(right) > 2 * CU_MAX_CONTEXT
            or max(left[::2] + right[::2], default=0) > CU_MAX_CONTEXT):
        return None
    for i in range(len(left) - 2, -1, -2):
        if left[i] == 1 and t.blob[t.off[<Py_ssize_t>left[i + 1]]] == 0x20:
            after_space = True
            del left[i:i + 2]
    if len(left) + len(right) > 2 * most:
        return None
    at = len(pool)
    before = _pool_strings(pool, t, left, False)
    lb = len(pool) - at
    after = _pool_strings(pool, t, right, True)
    return (key, token, after_space, at, len(left) // 2, len(right) // 2, lb, before, after)


cdef int _add_contexts(list out, object ids, tok_t tau, Py_ssize_t shared, const TokenTable* t) except -1:
    # Append (length, id) for each token of `ids` (ascending) ranked <= tau: the length of
    # its context string, the bytes it has beyond the `shared` ones it has in common with the
    # unit (alternating, as _pool_strings reads them).
    cdef Py_ssize_t other
    for other in ids:
        if other > tau:
            break
        out.append(t.length[other] - shared)
        out.append(other)
    return 0


cdef uint32_t _pool_strings(bytearray pool, const TokenTable* t, list strings, bint right) except *:
    # Append context strings to the pool as [length][bytes]; `strings` alternates a length ctx
    # and a token id: a left string X of a token X + (part of) c is the token's first ctx
    # bytes, a right string Y of a token (part of) c + Y its last ctx bytes.  Returns the mask
    # of their outer bytes (bit b & 31 for the byte next to the unit: a left string's last, a
    # right string's first).
    cdef uint32_t mask = 0
    cdef Py_ssize_t i, ctx, src, at
    for i in range(0, len(strings), 2):
        ctx = strings[i]
        src = strings[i + 1]
        at = t.off[src] + (t.length[src] - ctx if right else 0)
        pool.append(ctx)
        pool += PyBytes_FromStringAndSize(<char*>t.blob + at, ctx)
        mask |= (<uint32_t>1) << (pool[len(pool) - ctx if right else len(pool) - 1] & 31)
    return mask


cdef int _ct_fill(CharTable* tab, list entries) except -1:
    # a table of `entries` (key, token, after_space, pool offset, n_left, n_right, left_bytes,
    # before mask, after mask)
    cdef int bits = 4
    while (1 << bits) < 2 * len(entries) + 2:
        bits += 1
    tab.slots = <CharSlot*>calloc(<size_t>1 << bits, sizeof(CharSlot))
    tab.contexts = <CharContexts*>calloc(<size_t>1 << bits, sizeof(CharContexts))
    tab.bits = bits
    if tab.slots == NULL or tab.contexts == NULL:
        raise MemoryError()
    cdef Py_ssize_t mask = (<Py_ssize_t>1 << bits) - 1, n, i, j
    cdef uint32_t key, before, after
    cdef tok_t token
    cdef bint space
    for key, token, space, at, i, j, lb, before, after in entries:
        n = <Py_ssize_t>((key * 0x9E3779B1U) >> (32 - bits)) & mask
        while tab.slots[n].key != 0:
            n = (n + 1) & mask
        tab.slots[n].key = key
        tab.slots[n].value = <uint32_t>token | (CU_AFTER_SPACE if space else 0) | (CU_CONTEXTS if i + j else 0)
        tab.slots[n].before = before
        tab.slots[n].after = after
        tab.contexts[n].offset = <uint32_t>at
        tab.contexts[n].n_left = <uint16_t>i
        tab.contexts[n].n_right = <uint16_t>j
        tab.contexts[n].left_bytes = <uint32_t>lb
    return 0
