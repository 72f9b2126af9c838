# Finding special-token text in UTF-8, for bpe/_core.pyx (textually included there, like
# _charunits.pxi).  A Specials object holds a set of token strings, each with an id, and finds
# their leftmost occurrence in a byte string without the GIL, so that encode, encode_batch and
# the disallowed check run on the pool threads instead of in Python before them.  It does not
# decide which tokens are allowed or disallowed: bpe/special.py resolves that policy, and the
# tokenizer hands the resulting sets here.
#
# Semantics are those of bpe.special's regex (tokens joined with "|", longest first): the
# leftmost position where any token starts wins, and the longest token there.  Matching the
# UTF-8 bytes of the tokens in the UTF-8 bytes of the text finds exactly the matches of the
# str regex: UTF-8 is self-synchronising, so a byte match of whole characters starts and ends
# on character boundaries.
#
# Candidates are found with memchr when every token starts with the same byte (tiktoken's
# "<|...|>", Llama 3's, ChatML's), else with a bitmap of first bytes; a bitmap of first byte
# pairs rejects most candidates ("<" in code) before any token is compared.

cdef extern from "string.h":
    const void* memchr(const void* s, int c, size_t n) noexcept nogil


ctypedef struct SpecialSet:
    Py_ssize_t n            # how many tokens (>= 1)
    const uint8_t** data    # their UTF-8 bytes, longest first
    Py_ssize_t* lens
    tok_t* ids
    int lead                # the first byte of every token, or -1 if they differ
    uint64_t first[4]       # bit b: some token starts with byte b
    uint64_t single[4]      # bit b: the one-byte token b exists
    uint64_t* pairs         # 65536 bits: some token starts with these two bytes


cdef inline bint _bit(const uint64_t* bits, Py_ssize_t b) noexcept nogil:
    return (bits[b >> 6] >> (b & 63)) & 1


cdef inline Py_ssize_t _sp_at(const SpecialSet* s, const uint8_t* p, Py_ssize_t n,
                              Py_ssize_t j) noexcept nogil:
    """The index of the longest token at p[j:] (whose first byte is a token's), or -1."""
    cdef Py_ssize_t w, rest = n - j
    if rest >= 2 and _bit(s.pairs, (<Py_ssize_t>p[j] << 8) | p[j + 1]):
        for w in range(s.n):
            if s.lens[w] <= rest and memcmp(p + j, s.data[w], s.lens[w]) == 0:
                return w
    if _bit(s.single, p[j]):
        for w in range(s.n - 1, -1, -1):  # the one-byte tokens come last
            if s.lens[w] == 1 and s.data[w][0] == p[j]:
                return w
    return -1


cdef Py_ssize_t sp_find(const SpecialSet* s, const uint8_t* p, Py_ssize_t n, Py_ssize_t i,
                        Py_ssize_t* which) noexcept nogil:
    """The leftmost position >= i where a token of ``s`` occurs in ``p[:n]`` (the longest one
    there goes to ``which``), or ``n`` if none does."""
    cdef const uint8_t* q
    cdef Py_ssize_t j, w
    if s.lead >= 0:
        while i < n:
            q = <const uint8_t*>memchr(p + i, s.lead, <size_t>(n - i))
            if q == NULL:
                return n
            j = q - p
            w = _sp_at(s, p, n, j)
            if w >= 0:
                which[0] = w
                return j
            i = j + 1
        return n
    for j in range(i, n):
        if _bit(s.first, p[j]):
            w = _sp_at(s, p, n, j)
            if w >= 0:
                which[0] = w
                return j
    return n


cdef class Specials:
    """A set of special-token strings (UTF-8 bytes -> id) compiled for ``sp_find``; made by
    ``Encoder.specials`` and passed to ``encode_text`` and ``batch``."""

    cdef SpecialSet s
    cdef list keep              # the token bytes objects that s.data points into
    cdef readonly tuple tokens  # the token strings, longest first (for error messages)

    def __cinit__(self, dict tokens):
        memset(&self.s, 0, sizeof(SpecialSet))
        self.s.lead = -1
        cdef list order = sorted(tokens, key=lambda b: (-len(b), b))
        cdef Py_ssize_t n = len(order), w
        cdef bytes b
        if n == 0:
            raise ValueError("Specials needs at least one token; pass None for no special tokens")
        for b in order:
            if len(b) == 0:
                raise ValueError("a special token cannot be empty")
        self.keep = order
        self.tokens = tuple(b.decode("utf-8") for b in order)
        self.s.n = n
        self.s.data = <const uint8_t**>malloc(n * sizeof(uint8_t*))
        self.s.lens = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        self.s.ids = <tok_t*>malloc(n * sizeof(tok_t))
        self.s.pairs = <uint64_t*>calloc(1024, sizeof(uint64_t))
        if self.s.data == NULL or self.s.lens == NULL or self.s.ids == NULL or self.s.pairs == NULL:
            raise MemoryError()
        self.s.lead = (<bytes>order[0])[0]
        for w in range(n):
            b = order[w]
            self.s.data[w] = <const uint8_t*>PyBytes_AS_STRING(b)
            self.s.lens[w] = len(b)
            self.s.ids[w] = tokens[b]
            if b[0] != self.s.lead:
                self.s.lead = -1
            self.s.first[b[0] >> 6] |= (<uint64_t>1) << (b[0] & 63)
            if len(b) == 1:
                self.s.single[b[0] >> 6] |= (<uint64_t>1) << (b[0] & 63)
            else:
                self.s.pairs[((b[0] << 8) | b[1]) >> 6] |= (<uint64_t>1) << (b[1] & 63)

    def __dealloc__(self):
        free(self.s.data)
        free(self.s.lens)
        free(self.s.ids)
        free(self.s.pairs)

    def find(self, str text, Py_ssize_t start=0):
        """``(position, token)`` of the leftmost occurrence in ``text`` (positions in UTF-8
        bytes) at or after byte ``start``, or None."""
        cdef Py_ssize_t n, w = -1, j
        cdef const uint8_t* p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &n)
        if start < 0:
            raise ValueError(f"start must be a byte position >= 0, got {start}")
        with nogil:
            j = sp_find(&self.s, p, n, start, &w)
        return None if j >= n else (j, self.tokens[w])


cdef int _raise_disallowed(list texts, Specials disallowed) except -1:
    """Raise for the first of ``texts`` that holds a token of ``disallowed``, naming the token
    as bpe.special.check_disallowed does (the leftmost occurrence, the longest there)."""
    for text in texts:
        found = disallowed.find(text)
        if found is not None:
            raise DisallowedSpecialTokenError(found[1])
    raise RuntimeError("bpe: a disallowed special token was reported but not found again")
