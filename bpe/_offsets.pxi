# Where each token of an encoded text came from: character offsets and word ids.
#
# Included by _core.pyx after _token_table.pxi; uses only the TokenTable.  It does not encode:
# the encoding loops mark where each pre-token (a "word", Hugging Face's name; a special token
# found in the text is one too) ends, in tokens and in bytes, and char_offsets turns those
# marks and the token lengths into, for every token, the (start, end) of the characters it
# covers and the index of its word, in one forward pass over the UTF-8 text.
#
# The rule for a token that covers only some bytes of a character (byte-level BPE splits
# characters): it covers that whole character.  A token over bytes [s, e) starts at the
# character holding byte s and ends after the character holding byte e - 1, which is
# Hugging Face's (each byte of a character is aligned to the whole character there).  With
# `c` the number of characters that start in p[0:s] (bytes that are not continuation
# bytes), the start is c, or c - 1 when p[s] is a continuation byte; the end is the number
# that start in p[0:e].  Those counts come from an index of the text's continuation bytes
# built first (bpe_char_index: one entry per eight bytes), so a token costs the same few
# operations and no branch in any script: mixed text, where a branch on "is there a
# multi-byte character here" follows no pattern, costs no more than ASCII.

cdef enum:
    LENGTH_AHEAD = 16   # char_offsets' prefetch distance for token lengths


ctypedef struct Words:
    uint32_t* tok_end        # word w ends before token tok_end[w] ...
    uint32_t* byte_end       # ... and before byte byte_end[w] of the text
    Py_ssize_t n             # words marked so far
    Py_ssize_t cap           # room for this many (grown like an IdBuffer: _id_buffer.pxi)
    Py_ssize_t k0            # where the segment being encoded starts: its first token's index
    Py_ssize_t b0            # and its first byte's place in the whole text


cdef inline int words_mark(Words* w, Py_ssize_t tokens, Py_ssize_t byte_end) noexcept nogil:
    """Mark a word's end; -1 when out of memory."""
    if w.n == w.cap and _words_grow(w) < 0:
        return -1
    w.tok_end[w.n] = <uint32_t>tokens
    w.byte_end[w.n] = <uint32_t>byte_end
    w.n += 1
    return 0


cdef int words_alloc(Words* w, Py_ssize_t n_bytes) noexcept nogil:
    """Room for the marks of a text of ``n_bytes`` bytes: one per byte when the text is small,
    else one per 16 bytes to start with, grown by half when short (as ids: _id_buffer.pxi);
    -1 when out of memory."""
    w.n = 0
    w.k0 = 0
    w.b0 = 0
    w.cap = n_bytes + 1 if n_bytes <= ID_START else n_bytes // 16 + ID_START
    w.tok_end = <uint32_t*>malloc(w.cap * sizeof(uint32_t))
    w.byte_end = <uint32_t*>malloc(w.cap * sizeof(uint32_t))
    if w.tok_end == NULL or w.byte_end == NULL:
        words_free(w)
        return -1
    return 0


cdef int _words_grow(Words* w) noexcept nogil:
    cdef Py_ssize_t cap = w.cap + w.cap // 2 + 1
    cdef void* grown = realloc(w.tok_end, cap * sizeof(uint32_t))
    if grown == NULL:
        return -1
    w.tok_end = <uint32_t*>grown
    grown = realloc(w.byte_end, cap * sizeof(uint32_t))
    if grown == NULL:
        return -1
    w.byte_end = <uint32_t*>grown
    w.cap = cap
    return 0


cdef void words_free(Words* w) noexcept nogil:
    free(w.tok_end)
    free(w.byte_end)
    w.tok_end = NULL
    w.byte_end = NULL


cdef Py_ssize_t char_offsets(const TokenTable* t, const uint8_t* p, Py_ssize_t n, const tok_t* ids,
                             Py_ssize_t k, const Words* w, uint32_t* starts, uint32_t* ends,
                             uint32_t* word_ids) noexcept nogil:
    """Fill ``starts``, ``ends`` and ``word_ids`` (``k`` entries each) for the ``k`` tokens
    ``ids`` of the ``n`` bytes ``p`` whose words ``w`` marks.  Returns 0, OFFSETS_DISAGREE
    when the marks and the token lengths disagree (a token longer than its word: no such
    encoding), or OUT_OF_MEMORY.

    One pass over the tokens.  A token ends at its length past the one before, or, when it
    is the last of its word, where the word ends (a special token's length in the table
    need not be consulted), chosen without a branch (where a word ends follows no pattern a
    predictor learns)."""
    cdef Py_ssize_t pos = 0, c = 0, tok, wi = 0, e, by_length, at_end, end_chars
    cdef const int32_t* length = t.length
    cdef Py_ssize_t cap = t.id_cap
    cdef const uint32_t* tok_end = w.tok_end
    cdef const uint32_t* byte_end = w.byte_end
    cdef Py_ssize_t n_words = w.n
    cdef tok_t token
    cdef uint64_t* index
    if n_words == 0:
        return 0 if k == 0 and n == 0 else OFFSETS_DISAGREE
    index = <uint64_t*>malloc(((n >> 3) + 1) * sizeof(uint64_t))
    if index == NULL:
        return OUT_OF_MEMORY
    bpe_char_index(p, n, index)
    try:
        for tok in range(k):
            if wi >= n_words:
                return OFFSETS_DISAGREE
            token = ids[tok]
            if tok + LENGTH_AHEAD < k and <Py_ssize_t>ids[tok + LENGTH_AHEAD] < cap:
                # (the lengths of a large vocabulary are read at random, mostly out of cache)
                bpe_prefetch(&length[ids[tok + LENGTH_AHEAD]])
            by_length = pos + (length[token] if <Py_ssize_t>token < cap else 0)
            at_end = tok + 1 == <Py_ssize_t>tok_end[wi]
            e = by_length + at_end * (<Py_ssize_t>byte_end[wi] - by_length)
            if e <= pos or e > n:
                return OFFSETS_DISAGREE
            end_chars = e - bpe_continuations_before(index, e)
            starts[tok] = <uint32_t>(c - ((p[pos] & 0xC0) == 0x80))
            ends[tok] = <uint32_t>end_chars
            word_ids[tok] = <uint32_t>wi
            c = end_chars
            pos = e
            wi += at_end
        return 0 if wi == n_words and pos == n else OFFSETS_DISAGREE
    finally:
        free(index)
