# The UTF-8 bytes the compiled core encodes from a str (textually included in bpe/_core.pyx).
# An ASCII str is read in place, and so is any str whose UTF-8 form CPython already keeps
# (other code asked for it); any other canonical str is converted by bpe/_str_utf8.h into a
# buffer this call owns and frees, never kept on the str; a str with a lone surrogate, or
# one in CPython's legacy (non-compact) form, goes through PyUnicode_AsUTF8AndSize, which
# raises UnicodeEncodeError for surrogates as before (the callers in bpe/tokenizer.py repair
# them).  It does not normalize, repair or split text.

cdef extern from "_str_utf8.h":
    Py_ssize_t BPE_UTF8_SURROGATE
    Py_ssize_t bpe_utf8_size(int kind, const void* data, Py_ssize_t n) noexcept nogil
    uint8_t* bpe_utf8_write(int kind, const void* data, Py_ssize_t n, uint8_t* out) noexcept nogil
    Py_ssize_t BPE_UTF8_ROOM
    const char* bpe_utf8_kept(object s, Py_ssize_t* n) noexcept

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object s) noexcept
    bint PyUnicode_IS_COMPACT(object s) noexcept
    Py_ssize_t PyUnicode_GET_LENGTH(object s) noexcept
    int PyUnicode_KIND(object s) noexcept
    const void* PyUnicode_DATA(object s) noexcept


ctypedef struct Utf8:
    const uint8_t* p         # the text's UTF-8 bytes (valid while the str lives, or owned)
    Py_ssize_t n
    uint8_t* owned           # the buffer to free (NULL: p points into the str)


cdef enum:
    # texts of at least this many code points are converted without the GIL
    UTF8_NOGIL_CHARS = 1 << 16
    # up to this many code points the buffer is sized for the worst case (2, 3 or 4 bytes a
    # unit) and written in one pass; longer texts are measured first, so that a big text
    # never reserves more than its UTF-8 form
    UTF8_ONE_PASS_CHARS = 1 << 20


cdef int utf8_get(str text, Utf8* u) except -1:
    """Fill ``u`` with the UTF-8 form of ``text``; release it with ``utf8_release``."""
    cdef Py_ssize_t length, size
    cdef int kind
    cdef const void* data
    cdef uint8_t* end = NULL
    u.owned = NULL
    if PyUnicode_IS_ASCII(text) or not PyUnicode_IS_COMPACT(text):
        u.p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &u.n)
        return 0
    u.p = <const uint8_t*>bpe_utf8_kept(text, &u.n)
    if u.p != NULL:
        return 0
    length = PyUnicode_GET_LENGTH(text)
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    if length <= UTF8_ONE_PASS_CHARS:
        size = length * (kind + 1 if kind < 4 else 4)
    else:
        with nogil:
            size = bpe_utf8_size(kind, data, length)
    if size != BPE_UTF8_SURROGATE:
        # (the writer stores a few bytes past the form it has made so far: BPE_UTF8_ROOM;
        # the text's closing zero goes there too)
        u.owned = <uint8_t*>malloc(size + BPE_UTF8_ROOM)
        if u.owned == NULL:
            raise MemoryError()
        if length < UTF8_NOGIL_CHARS:
            end = bpe_utf8_write(kind, data, length, u.owned)
        else:
            with nogil:
                end = bpe_utf8_write(kind, data, length, u.owned)
    if end == NULL:
        # a lone surrogate: CPython's conversion raises UnicodeEncodeError
        free(u.owned)
        u.owned = NULL
        u.p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &u.n)
        return 0
    end[0] = 0
    u.p = u.owned
    u.n = end - u.owned
    return 0


cdef inline void utf8_release(Utf8* u) noexcept:
    free(u.owned)
    u.owned = NULL
