# The growable array that the encoding loops write ids into.
#
# Included by _core.pyx before _offsets.pxi.  It does not encode; it only holds ids.
#
# Rule: memory follows the output, not the input.  A text of n bytes can give up to n ids,
# but usually gives n/3 to n/5 (and a run of spaces n/100), so an array sized for the worst
# case (4 bytes of scratch per input byte) would be several times the result for a large
# text.  The array starts with room for one id per byte only when the text is small
# (ID_START bytes or fewer), and otherwise for one per 16 bytes; a loop reserves room for a
# piece's worst case (one id per byte) before writing it, and the array grows by half when
# that is short.  So it holds room for at most n/16 + ID_START ids, or 1.5 times the ids
# written plus the longest piece, whichever is more.  Growing copies each id about twice
# in all (large arrays are moved by the system without a copy), which is noise next to
# encoding them.

cdef enum:
    ID_START = 65536     # texts of up to this many bytes get room for one id per byte at once


ctypedef struct IdBuffer:
    tok_t* ids
    Py_ssize_t k         # ids written
    Py_ssize_t cap       # room for this many


cdef int idb_init(IdBuffer* b, Py_ssize_t n_bytes) noexcept nogil:
    """Room for the ids of a text of ``n_bytes`` bytes, as above; -1 when out of memory."""
    b.k = 0
    b.cap = n_bytes + 1 if n_bytes <= ID_START else n_bytes // 16 + ID_START
    b.ids = <tok_t*>malloc(b.cap * sizeof(tok_t))
    return 0 if b.ids != NULL else -1


cdef inline int idb_reserve(IdBuffer* b, Py_ssize_t more) noexcept nogil:
    """Room for ``more`` ids after the ``k`` written; -1 (the ids kept) when out of memory."""
    if b.k + more <= b.cap:
        return 0
    return _idb_grow(b, b.k + more)


cdef int _idb_grow(IdBuffer* b, Py_ssize_t need) noexcept nogil:
    cdef Py_ssize_t cap = b.cap + b.cap // 2
    cdef void* grown
    if cap < need:
        cap = need
    grown = realloc(b.ids, cap * sizeof(tok_t))
    if grown == NULL:
        return -1
    b.ids = <tok_t*>grown
    b.cap = cap
    return 0


cdef tok_t* idb_take(IdBuffer* b) noexcept nogil:
    """The array, now the caller's to free; ``b`` is left empty."""
    cdef tok_t* ids = b.ids
    b.ids = NULL
    b.k = 0
    b.cap = 0
    return ids


cdef void idb_free(IdBuffer* b) noexcept nogil:
    free(b.ids)
    b.ids = NULL
    b.k = 0
    b.cap = 0
