"""Hand-written pre-tokenizer: the named split patterns as direct scanners over UTF-8.

``scan_piece(pattern, s, n, i)`` returns where the pre-token that starts at byte ``i`` of the
valid UTF-8 text ``s[:n]`` ends, exactly as tiktoken's regex (leftmost alternative first,
greedy/possessive quantifiers, backtracking where the pattern needs it) would.  Character
classes come from ``_unicode_tables.h``, read off tiktoken's own regex engine by
``scripts/make_unicode_tables.py`` (Unicode 16.0 as tiktoken 0.14 sees it), so the split
agrees with tiktoken on every code point, including ones the ``regex`` module classes
differently.  Custom patterns do not come here: ``bpe.patterns`` runs them on ``regex``.

The scanning functions themselves are inline functions in ``_scanner.pxd``, compiled into each
module that uses them (the encoder, the trainer's counter); this module holds the pattern ids,
and ``split`` and ``count`` for tests and tools.  Each pattern function mirrors its regex
alternative by alternative; the comments quote the alternative being matched.  All functions
are pure C, run without the GIL and never read past ``n``.

For o200k, cl100k, Llama 3 and Qwen2 there is also a block path (``piece_bounds``): the starts
of the pieces in up to 64 bytes at once, from bit masks of the bytes' classes, where the text
is ASCII or letters of two bytes (for o200k, letters with case); the encoder and
``split``/``count`` take it where it applies and scan one piece otherwise.
``split(..., blocks=False)`` leaves it out, so that tests can hold the two against each other.
"""

# cython: language_level=3

from libc.stdint cimport uint8_t, uint32_t, uint64_t

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    char* PyBytes_AS_STRING(object b)

#: pattern name -> id understood by scan_piece (and Encoder.encode_text)
PATTERN_IDS = {"gpt2": PAT_GPT2, "r50k_base": PAT_GPT2, "p50k_base": PAT_GPT2,
               "cl100k_base": PAT_CL100K, "o200k_base": PAT_O200K, "llama3": PAT_LLAMA3,
               "qwen2": PAT_QWEN2}


cdef int _pattern_id(str pattern) except -1:
    pid = PATTERN_IDS.get(pattern)
    if pid is None:
        raise ValueError(f"the scanner has no pattern named {pattern!r}; pass one of "
                         f"{', '.join(sorted(PATTERN_IDS))} (custom patterns are split by bpe.patterns)")
    return pid


def split(str text, str pattern, bint blocks=True):
    """Split ``text`` with the scanner for a named pattern (for tests and tools); with
    ``blocks`` False, one piece at a time only (no block path: the two must agree)."""
    cdef Py_ssize_t n, i = 0, j, base
    cdef const char* p
    cdef int pid = _pattern_id(pattern)
    cdef list out = []
    cdef uint64_t m
    p = PyUnicode_AsUTF8AndSize(text, &n)
    while i < n:
        m = piece_bounds(pid, <const uint8_t*>p, n, i) if blocks else 0
        if m == 0:
            j = scan_piece(pid, <const uint8_t*>p, n, i)
            out.append(p[i:j].decode("utf-8"))
            i = j
        base = i
        while m:
            j = base + bpe_ctz64(m)
            m &= m - 1
            out.append(p[i:j].decode("utf-8"))
            i = j
    return out


def count(str text, str pattern):
    """How many pre-tokens ``split(text, pattern)`` would give, without building them (the
    scanner's own speed, for the benchmarks' split section)."""
    cdef Py_ssize_t n, i = 0, c = 0
    cdef int pid = _pattern_id(pattern)
    cdef const uint8_t* p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &n)
    cdef uint64_t m
    with nogil:
        while i < n:
            m = piece_bounds(pid, p, n, i)
            if m == 0:
                i = scan_piece(pid, p, n, i)
                c += 1
            else:
                i += bpe_top64(m)
                while m:
                    m &= m - 1
                    c += 1
    return c


def _set_wide_classifier(bint on):
    """For tests: whether this module's block path classifies bytes with AVX-512BW (where
    the CPU has it) or with SSE2; returns the old setting."""
    return bpe_set_wide_classifier(on)


def _block_classes(bytes data, bint portable=False):
    """For tests: the class masks of ``data[:64]`` that the block path reads (see
    ``_c_helpers.h``), from the build's classifier or, with ``portable``, from the
    word-at-a-time one every build has."""
    cdef bpe_ascii_masks m
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(data)
    if portable:
        bpe_classify64_words(p, len(data), &m)
    else:
        bpe_classify64(p, len(data), &m)
    return {"high": m.high, "letter": m.letter, "lower": m.lower, "digit": m.digit,
            "space": m.space, "ctl": m.ctl, "nl": m.nl, "apos": m.apos, "slash": m.slash}
