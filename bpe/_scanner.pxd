# The hand-written pre-tokenizer: splits UTF-8 text exactly like tiktoken's regexes for the
# named patterns, without a regex engine (see bpe/_scanner.pyx for the whole story).
#
# The scanner lives here, as inline functions, so that the modules that cimport it (the
# encoder, the trainer's counter) compile it into their own loops: ``scan_piece`` is called
# once per pre-token, and a call across modules (through a function pointer) cost more
# than the scan of a short word.

from libc.stdint cimport uint8_t, uint32_t, uint64_t

cdef enum:
    PAT_NONE = 0      # no split: the whole text is one piece
    PAT_GPT2 = 1      # r50k_base / p50k_base / gpt2
    PAT_CL100K = 2
    PAT_O200K = 3
    PAT_LLAMA3 = 4
    PAT_QWEN2 = 5     # Qwen2 / Qwen2.5 / Qwen3: llama3 with single digits
    N_PATTERNS = 6


cdef extern from "_unicode_tables.h":
    const unsigned short bpe_uclass_index[]
    const unsigned char bpe_uclass_data[]

# character classes (see scripts/make_unicode_tables.py) as bit masks
cdef enum:
    C_OTHER = 1 << 0
    C_WS = 1 << 1
    C_N = 1 << 2
    C_LU = 1 << 3     # Lu, Lt
    C_LL = 1 << 4     # Ll
    C_LMO = 1 << 5    # Lm, Lo
    C_M = 1 << 6      # Mn, Mc, Me

    M_L = C_LU | C_LL | C_LMO                 # \p{L}
    M_PUNCT = C_OTHER | C_M                   # [^\s\p{L}\p{N}]
    M_UPPER = C_LU | C_LMO | C_M              # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    M_LOWER = C_LL | C_LMO | C_M              # [\p{Ll}\p{Lm}\p{Lo}\p{M}]
    M_PREFIX = C_OTHER | C_M | C_WS           # [^\r\n\p{L}\p{N}] (minus \r \n, checked apart)


cdef inline int _ascii_class(uint8_t b) noexcept nogil:
    """Class mask of an ASCII byte."""
    return 1 << bpe_uclass_data[(<Py_ssize_t>bpe_uclass_index[0]) * 128 + b]


cdef inline int _cls_at(const uint8_t* s, Py_ssize_t i, Py_ssize_t* width) noexcept nogil:
    """Class mask of the code point at byte i (valid UTF-8 assumed); its length in *width."""
    cdef uint8_t b0 = s[i]
    cdef uint32_t cp
    if b0 < 0x80:
        width[0] = 1
        return _ascii_class(b0)
    if b0 < 0xE0:
        cp = ((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F)
        width[0] = 2
    elif b0 < 0xF0:
        cp = ((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
        width[0] = 3
    else:
        cp = ((b0 & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
        width[0] = 4
    return 1 << bpe_uclass_data[(<Py_ssize_t>bpe_uclass_index[cp >> 7]) * 128 + (cp & 127)]


cdef inline Py_ssize_t _run(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, int mask) noexcept nogil:
    """End of the longest run of characters in ``mask`` starting at i (i if none)."""
    cdef Py_ssize_t w
    while i < n:
        if s[i] < 0x80:
            if not (_ascii_class(s[i]) & mask):
                break
            i += 1
        else:
            if not (_cls_at(s, i, &w) & mask):
                break
            i += w
    return i


cdef extern from "_c_helpers.h":
    Py_ssize_t bpe_ascii_run(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, uint8_t fold) noexcept nogil


cdef inline Py_ssize_t _letters(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """End of the run of letters (\\p{L}) starting at i: ASCII ones eight bytes at a time."""
    i = bpe_ascii_run(s, n, i, 0x20)
    if i < n and s[i] >= 0x80:
        return _run(s, n, i, M_L)
    return i


cdef inline bint _is_crlf(uint8_t b) noexcept nogil:
    return b == 13 or b == 10


cdef inline Py_ssize_t _contraction(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, bint icase) noexcept nogil:
    """End of ``'s|'t|'re|'ve|'m|'ll|'d`` at i (case-insensitive if icase), or -1."""
    if i + 1 >= n or s[i] != 39:  # "'"
        return -1
    cdef uint8_t b1 = s[i + 1], b2
    if icase:
        if 65 <= b1 <= 90:
            b1 += 32
        elif b1 == 0xC5 and i + 2 < n and s[i + 2] == 0xBF:  # U+017F LONG S folds to 's'
            return i + 3
    if b1 == 115 or b1 == 116 or b1 == 109 or b1 == 100:  # s t m d
        return i + 2
    if i + 2 >= n:
        return -1
    b2 = s[i + 2]
    if icase and 65 <= b2 <= 90:
        b2 += 32
    if (b1 == 108 and b2 == 108) or (b1 == 118 and b2 == 101) or (b1 == 114 and b2 == 101):  # ll ve re
        return i + 3
    return -1


cdef inline Py_ssize_t _whitespace(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, bint end_first,
                                   bint crlf_rule) noexcept nogil:
    """The whitespace alternatives, in the patterns' order.

    end_first: ``\\s++$`` (whole run if it reaches the end of the text);
    crlf_rule: ``\\s*[\\r\\n]+`` (up to and including the last CR/LF of the run);
    then ``\\s+(?!\\S)`` (all but the last character of a run followed by non-space) and
    finally a single ``\\s`` (the run is one character).
    """
    cdef Py_ssize_t j = i, last = i, w, last_crlf = -1
    while j < n:
        if s[j] < 0x80:
            if not (_ascii_class(s[j]) & C_WS):
                break
            if _is_crlf(s[j]):
                last_crlf = j
            last = j
            j += 1
        else:
            if not (_cls_at(s, j, &w) & C_WS):
                break
            last = j
            j += w
    if end_first and j == n:
        return n
    if crlf_rule and last_crlf >= 0:
        return last_crlf + 1
    if j == n:
        return n
    if last > i:
        return last
    return j


cdef inline Py_ssize_t _digits(const uint8_t* s, Py_ssize_t n, Py_ssize_t e) noexcept nogil:
    """``\\p{N}{1,3}`` whose first digit ends at e: up to two more digits."""
    cdef Py_ssize_t w, k
    for k in range(2):
        if e < n and (_cls_at(s, e, &w) & C_N):
            e += w
        else:
            break
    return e


cdef inline Py_ssize_t _punctuation(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, int c, bint slash) noexcept nogil:
    """`` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*`` (``[\\r\\n/]*`` if slash) at i, or -1."""
    cdef Py_ssize_t e, w
    if s[i] == 32 and i + 1 < n and (_cls_at(s, i + 1, &w) & M_PUNCT):
        e = _run(s, n, i + 1, M_PUNCT)
    elif c & M_PUNCT:
        e = _run(s, n, i, M_PUNCT)
    else:
        return -1
    while e < n and (_is_crlf(s[e]) or (slash and s[e] == 47)):
        e += 1
    return e


cdef inline Py_ssize_t _ascii_common(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, bint any_case) noexcept nogil:
    """The commonest pieces of prose and code, decided on their first bytes when those are
    ASCII, or -1 (the full scanner decides).  The ends are the same under o200k's rule
    (``any_case`` False) and the cl100k family's (True: cl100k, Llama 3, Qwen2):

    * an optional prefix (a space or ASCII punctuation) and ASCII letters, up to an ASCII
      byte that is not a letter (or the end): o200k takes upper-case letters then at least
      one lower-case one and leaves a following apostrophe (a contraction) to the full
      scanner; the cl100k family takes letters of either case, and an apostrophe prefix is
      left to it (it may start a contraction there);
    * ASCII punctuation not followed by a letter, or a space and ASCII punctuation: the
      punctuation run and the line breaks (and, for o200k, slashes) after it;
    * two or more spaces followed by ASCII that is not whitespace: all but the last space
      (``\\s+(?!\\S)``);
    * a line feed followed by ASCII that is not whitespace: the line feed alone.
    """
    cdef uint8_t b0 = s[i], b1
    cdef Py_ssize_t j = i, e, f
    cdef int c0, c1
    if i + 1 >= n:
        return -1
    b1 = s[i + 1]
    if b0 == 32 and 97 <= (b1 | (0x20 if any_case else 0)) <= 122:
        # " word", most pieces of prose: its letters at once (o200k: no upper-case run)
        e = bpe_ascii_run(s, n, i + 2, 0x20 if any_case else 0)
        if e == n or (s[e] < 0x80 and (any_case or s[e] != 39)):
            return e
        return -1
    c0 = _ascii_class(b0)
    if not (c0 & M_L):
        if b1 >= 0x80:
            return -1
        c1 = _ascii_class(b1)
        if b0 == 10 and not (c1 & C_WS):
            return i + 1
        if not (c1 & M_L):
            if b0 == 32 and b1 == 32:
                e = i + 2
                while e < n and s[e] == 32:
                    e += 1
                if e == n:
                    return n
                if s[e] < 0x80 and not (_ascii_class(s[e]) & C_WS):
                    return e - 1
                return -1
            if (b0 == 32 and (c1 & C_OTHER)) or (c0 & C_OTHER):
                # the punctuation alternative (neither letter alternative can start here)
                e = i + 1
                while e < n and s[e] < 0x80 and (_ascii_class(s[e]) & C_OTHER):
                    e += 1
                if e < n and s[e] >= 0x80:
                    return -1      # non-ASCII punctuation or a mark may go on
                while e < n and (s[e] == 10 or s[e] == 13 or (s[e] == 47 and not any_case)):
                    e += 1
                return e
            return -1
        if not (b0 == 32 or (c0 & C_OTHER)) or (any_case and b0 == 39):
            return -1
        j = i + 1
    if any_case:
        e = bpe_ascii_run(s, n, j, 0x20)
        if e < n and s[e] >= 0x80:
            return -1
        return e
    e = j
    while e < n and 65 <= s[e] <= 90:
        e += 1
    f = bpe_ascii_run(s, n, e, 0)
    if f == e or (f < n and (s[f] >= 0x80 or s[f] == 39)):
        return -1
    return f


# ---------------------------------------------------------------------------------- patterns

cdef inline Py_ssize_t _scan_gpt2(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    # '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
    cdef Py_ssize_t e, w, j = i
    cdef int c
    e = _contraction(s, n, i, False)
    if e >= 0:
        return e
    if s[i] == 32 and i + 1 < n:
        j = i + 1
    c = _cls_at(s, j, &w)
    if c & M_L:
        return _letters(s, n, j + w)
    if c & C_N:
        return _run(s, n, j, C_N)
    if c & M_PUNCT:
        return _run(s, n, j, M_PUNCT)
    return _whitespace(s, n, i, True, False)


cdef inline Py_ssize_t _scan_cl100k(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    # '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
    # |\s++$|\s*[\r\n]|\s+(?!\S)|\s
    return _scan_cl100k_like(s, n, i, True, False)


cdef inline Py_ssize_t _scan_llama3(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    # (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
    # |\s*[\r\n]+|\s+(?!\S)|\s+
    return _scan_cl100k_like(s, n, i, False, False)


cdef inline Py_ssize_t _scan_qwen2(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    # (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*
    # |\s*[\r\n]+|\s+(?!\S)|\s+
    return _scan_cl100k_like(s, n, i, False, True)


cdef inline Py_ssize_t _scan_cl100k_like(const uint8_t* s, Py_ssize_t n, Py_ssize_t i,
                                         bint end_first, bint single_digit) noexcept nogil:
    cdef Py_ssize_t e, w, w1, k
    cdef int c, c1
    if s[i] < 0x80:
        e = _ascii_common(s, n, i, True)
        if e >= 0:
            return e
    e = _contraction(s, n, i, True)
    if e >= 0:
        return e
    c = _cls_at(s, i, &w)
    # [^\r\n\p{L}\p{N}]?\p{L}+
    if c & M_L:
        return _letters(s, n, i + w)
    if (c & M_PREFIX) and not _is_crlf(s[i]) and i + w < n:
        c1 = _cls_at(s, i + w, &w1)
        if c1 & M_L:
            return _letters(s, n, i + w + w1)
    # \p{N}{1,3} (\p{N} if single_digit)
    if c & C_N:
        return i + w if single_digit else _digits(s, n, i + w)
    e = _punctuation(s, n, i, c, False)
    if e >= 0:
        return e
    return _whitespace(s, n, i, end_first, True)


cdef inline Py_ssize_t _o200k_letters(const uint8_t* s, Py_ssize_t n, Py_ssize_t i, bint upper_first) noexcept nogil:
    """From i: ``U*W+`` (upper_first False) or ``U+W*`` (True), U/W the o200k letter sets;
    return the end, or -1 if it does not match."""
    cdef Py_ssize_t j = i, w, last_lower = -1, last_lower_w = 0
    cdef int c
    # U*: the longest run of upper-set characters, remembering the last one also in W
    while j < n:
        c = _cls_at(s, j, &w)
        if not (c & M_UPPER):
            break
        if c & M_LOWER:
            last_lower = j
            last_lower_w = w
        j += w
    if upper_first:
        if j == i:
            return -1
        return _run(s, n, j, M_LOWER)
    if j < n and (_cls_at(s, j, &w) & M_LOWER):
        return _run(s, n, j, M_LOWER)
    # backtrack U* to its last character that W+ can take (the characters after it are
    # upper-only, so W+ is that one character)
    if last_lower >= 0:
        return last_lower + last_lower_w
    return -1


cdef inline Py_ssize_t _o200k_ascii_word(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The o200k letter alternatives when everything involved is ASCII (most of English and
    code): an optional prefix character, upper-case letters, then lower-case letters, ending
    on an ASCII byte or the end of the text.  -1 when that shape does not apply (the general
    scanner then decides)."""
    cdef uint8_t b = s[i]
    cdef Py_ssize_t j = i, e, f
    if not (_ascii_class(b) & M_L):
        if not (_ascii_class(b) & M_PREFIX) or _is_crlf(b) or i + 1 >= n:
            return -1
        b = s[i + 1]
        if b >= 0x80 or not (_ascii_class(b) & M_L):
            return -1
        j = i + 1
    e = j
    while e < n and s[e] < 0x80 and (_ascii_class(s[e]) & C_LU):
        e += 1
    e = bpe_ascii_run(s, n, e, 0)     # ASCII \p{Ll} is exactly a-z
    if (e < n and s[e] >= 0x80) or e == j:
        return -1      # a non-ASCII letter or mark might extend the match (or, e == j,
                       # no letter was taken: the general scanner decides)
    # lower-case letters after the upper-case run: U*W+ takes both; none: U+W* takes the
    # upper-case run alone; either may end in a contraction
    if e < n and s[e] == 39:
        f = _contraction(s, n, e, True)
        if f >= 0:
            return f
    return e


cdef inline Py_ssize_t _both_run(const uint8_t* s, Py_ssize_t n, Py_ssize_t j) noexcept nogil:
    """End of the run from j of two- and three-byte characters that are in both o200k
    letter sets (Lm, Lo, M: the letters of scripts without case, and marks).  ``_run(s, n,
    j, C_LMO | C_M)`` would do (and also take four-byte ones), but this loop, which tries
    the three-byte form first and has no ASCII case, executes 1.1 fewer instructions a byte
    of multilingual text, warm or cold."""
    cdef uint8_t b0
    cdef uint32_t cp
    cdef Py_ssize_t w
    while j < n:
        b0 = s[j]
        if (b0 & 0xF0) == 0xE0:
            cp = ((b0 & 0x0F) << 12) | ((s[j + 1] & 0x3F) << 6) | (s[j + 2] & 0x3F)
            w = 3
        elif (b0 & 0xE0) == 0xC0:
            cp = ((b0 & 0x1F) << 6) | (s[j + 1] & 0x3F)
            w = 2
        else:
            break
        if not (((C_LMO | C_M) >> bpe_uclass_data[(<Py_ssize_t>bpe_uclass_index[cp >> 7]) * 128 + (cp & 127)]) & 1):
            break
        j += w
    return j


cdef inline Py_ssize_t _o200k_caseless(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The commonest pieces of scripts without case (Arabic, Devanagari, Thai, CJK, ...),
    decided without the general scanner's alternatives, or -1 (it decides): an optional
    ASCII prefix (a space, tab or punctuation) and a run of two- and three-byte characters
    in both letter sets (``_both_run``), up to the end of the text or a character that is
    neither a letter nor a mark nor an apostrophe.  Either letter alternative takes
    exactly that: U* takes the run and, nothing of W following it, gives back its last
    character to W+; the prefix is taken as the optional one (what follows a run that
    stops at a letter, a mark or an apostrophe depends on more, hence -1)."""
    cdef Py_ssize_t j = i, e, w
    cdef uint8_t b = s[i]
    if b < 0x80:
        if not (_ascii_class(b) & M_PREFIX) or _is_crlf(b):
            return -1
        j = i + 1
    e = _both_run(s, n, j)
    if e == j:
        return -1
    if e == n:
        return e
    b = s[e]
    if b < 0x80:
        if (_ascii_class(b) & M_L) or b == 39:
            return -1
        return e
    if _cls_at(s, e, &w) & (M_L | C_M):
        return -1
    return e


cdef inline Py_ssize_t _scan_o200k(const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    # [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
    # |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
    # |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
    cdef Py_ssize_t e = -1, w, w1, k, f
    if s[i] < 0x80:
        if i + 1 < n and s[i + 1] >= 0xC0:
            e = _o200k_caseless(s, n, i)
            if e >= 0:
                return e
        e = _ascii_common(s, n, i, False)
        if e >= 0:
            return e
        e = _o200k_ascii_word(s, n, i)
        if e >= 0:
            return e
    else:
        e = _o200k_caseless(s, n, i)
        if e >= 0:
            return e
    cdef int c = _cls_at(s, i, &w)
    cdef bint prefix = (c & M_PREFIX) != 0 and not _is_crlf(s[i]) and i + w < n
    cdef int alt
    # the letter alternatives can only match if a letter or mark starts here or right after
    # the prefix; skip them at once otherwise (spaces, digits, punctuation)
    if prefix and not (c & (M_UPPER | M_LOWER)) and not (_cls_at(s, i + w, &w1) & (M_UPPER | M_LOWER)):
        prefix = False
        alt = 2
    elif not prefix and not (c & (M_UPPER | M_LOWER)):
        alt = 2
    else:
        alt = 0
    while alt < 2:  # the two letter alternatives, each with and without the prefix
        e = -1
        if prefix:
            e = _o200k_letters(s, n, i + w, alt == 1)
        if e < 0:
            e = _o200k_letters(s, n, i, alt == 1)
        if e >= 0:
            f = _contraction(s, n, e, True)
            return f if f >= 0 else e
        alt += 1
    e = -1
    if c & C_N:
        return _digits(s, n, i + w)
    e = _punctuation(s, n, i, c, True)
    if e >= 0:
        return e
    return _whitespace(s, n, i, False, True)


# ------------------------------------------------------------------- o200k, 64 bytes at once
#
# On ASCII text o200k's pieces can be told by where they start, from each byte's class and
# the runs it belongs to, with no search (tests/o200k_ascii_rules.py states the rules and
# checks them against the regex).  Here they run on 64-bit masks, one bit per byte, for the
# bytes from a piece start i: the scanner's branch on what kind of piece comes next, about
# one mispredicted branch per piece of prose, becomes straight-line code per 64 bytes.
#
# Why a block can be decided alone: the regex is matched piece after piece from the start
# of the text, and o200k's pattern looks behind nothing, so where the pieces after i start
# depends only on the text from i on.  The rules are run on the block's bytes as if the
# text ended there.  A piece start k found that way is also one in the real text when the
# piece before k ends where it does whatever follows the block, which holds for every k up
# to a bound K:
#
# * the piece before k looks one character past its end at most, except a contraction
#   (after an apostrophe, two) and whitespace (to the end of its run);
# * so K is the block's last byte, or before an apostrophe among its last two bytes, and
#   not past the start of a whitespace run that reaches the block's end.
#
# Starts past K are found again by the next block, which begins at the last start found.
#
# Non-ASCII text.  Upper- and lower-case letters (Lu/Lt, Ll: Latin, Greek, Cyrillic, ...)
# are inside the block, every byte of one marked as a letter of its case: the rules only ask
# of a letter its case and whether a letter comes before or after it, which the bytes
# answer alike.  Any other non-ASCII character ends the block, and takes part as a one-byte
# stand-in of its class where one exists (Lm/Lo as a lower-case letter, N a digit,
# whitespace a tab, the rest punctuation), so that the byte before it is decided too
# ("word” ..." ends its word at the quote).  An Lm/Lo character is in both of o200k's
# letter sets, and a letter run that holds one can end in ways no ASCII run does, but as
# the block's last character it only has to end the run before it or not, as a lower-case
# letter does.  Marks get no stand-in (they are in both letter sets and are punctuation
# too), nor does U+017F (long s), which completes the contraction 's.


cdef extern from "_c_helpers.h":
    ctypedef struct bpe_ascii_masks:
        uint64_t high, letter, lower, digit, space, ctl, nl, apos, slash
    void bpe_classify64(const uint8_t* p, Py_ssize_t n, bpe_ascii_masks* m) noexcept nogil
    void bpe_classify64_words(const uint8_t* p, Py_ssize_t n, bpe_ascii_masks* m) noexcept nogil
    bint bpe_set_wide_classifier(bint on) noexcept nogil
    int bpe_ctz64(uint64_t x) noexcept nogil
    int bpe_top64(uint64_t x) noexcept nogil
    bint bpe_long_lead8(const uint8_t* p, Py_ssize_t n) noexcept nogil


cdef inline uint64_t _fill_on(uint64_t run, uint64_t seeds) noexcept nogil:
    """The bits of ``run`` from each bit of ``seeds`` (all in ``run``) to the end of its run:
    adding a seed carries through the run above it, leaving its bits clear (the seeds'
    own bits set)."""
    return (run & ~(run + seeds)) | seeds


cdef inline uint64_t _o200k_block_starts(const uint8_t* s, Py_ssize_t e, uint64_t valid,
                                         uint64_t up, uint64_t low, uint64_t dig, uint64_t sp,
                                         uint64_t tb, uint64_t nl, uint64_t ap, uint64_t pn,
                                         uint64_t sl) noexcept nogil:
    """The piece starts (bit k: byte k of the block at s) of the block's text, as if it ended
    at bit ``valid``'s end, from its class masks; ``s[:e]`` is the block's text, without a
    stand-in (for the contractions).  The rules of tests/o200k_ascii_rules.py, numbered as
    there."""
    cdef uint64_t letter = up | low, start = 0, taken = 0, cand, tail, grew, punct, runs
    cdef uint64_t first_letters, lone, prefix, punct_starts, single, own, digit_groups, triple
    cdef uint64_t space, breaks, later, steps, last_breaks, ends
    cdef Py_ssize_t k, f
    cdef int shift
    # 1. Contractions: an apostrophe after a letter (one not itself in a contraction), in
    #    order, so that "x's's" takes only the first.
    cand = ap & (letter << 1)
    while cand:
        k = bpe_ctz64(cand)
        cand &= cand - 1
        if (taken >> (k - 1)) & 1:
            continue
        f = _contraction(s, e, k, True)
        if f >= 0:
            taken |= ((<uint64_t>1 << (f - k)) - 1) << k
            if f < 64:
                start |= <uint64_t>1 << f
    # 3 (its first part). What punctuation runs take after them: every \r, \n and / up to the
    #    next other byte.  A / taken so cuts the punctuation run it began, whose rest takes
    #    its own tail (again, until nothing more is taken).
    punct = (ap | pn) & ~taken
    tail = 0
    while True:
        runs = punct & ~tail
        grew = _fill_on(nl | sl, (runs << 1) & ~runs & (nl | sl) & ~tail) & ~tail
        tail |= grew
        if not (grew & punct):
            break
    taken |= tail
    punct &= ~tail
    # 2. Letters: upper case after lower case starts a piece; a run's first letter takes a
    #    space, tab or lone punctuation character before it as its prefix.
    start |= up & ~taken & (low << 1)
    first_letters = letter & ~taken & ~(letter << 1)
    lone = punct & ~(punct << 1) & ~(sp << 1)
    prefix = (first_letters >> 1) & (sp | tb | lone)
    start |= prefix | (first_letters & ~(prefix << 1))
    # 3. Punctuation runs that are not a prefix: from the space before them if there is one;
    #    what follows the run (or its tail) starts the next piece.
    punct_starts = punct & ~(punct << 1)
    single = punct_starts & ~(punct >> 1) & prefix
    own = punct_starts & ~single
    start |= ((own >> 1) & sp) | (own & ~(sp << 1))
    start |= ((punct << 1) & ~punct & ~tail & ~(single << 1)) | ((tail << 1) & ~tail)
    # 4. Digits in threes from the start of each run.
    triple = dig & (dig << 1) & (dig << 2)
    digit_groups = dig & ~(dig << 1)
    while digit_groups:
        start |= digit_groups
        digit_groups = (digit_groups << 3) & triple
    # 5. Whitespace runs: each starts a piece, and so does the byte after its last line break;
    #    a last tab before punctuation, or a last space or tab before a digit, is a piece of
    #    its own.  "A line break later in the run" fills down the run in doubling steps.
    space = (sp | tb | nl) & ~taken
    breaks = nl & space
    later = (breaks >> 1) & space
    steps = space & (space >> 1)
    shift = 1
    while steps and shift < 64:     # (once no steps are left, the rest would add nothing)
        later |= steps & (later >> shift)
        steps &= steps >> shift
        shift <<= 1
    last_breaks = breaks & ~later
    start |= (space & ~(space << 1)) | ((last_breaks << 1) & space)
    ends = space & ~(space >> 1) & ~nl
    start |= ends & ((tb & ((ap | pn) >> 1)) | (dig >> 1))
    return (start | 1) & valid


# ------------------------------------------------- cl100k, Llama 3 and Qwen2, 64 bytes at once
#
# The same idea for cl100k's pattern and the two that differ from it only where noted
# (Llama 3 has no "\s++$", so a run of whitespace that ends the text and holds a line break
# splits after the break; Qwen2: also single digits).  On ASCII text, and with letters of
# two bytes inside a block, the pieces start (rules as numbered in _cl100k_block_starts):
#
# 1. at an apostrophe that starts a piece and is followed by s, t, m, d, ll, ve or re (any
#    case; U+017F folds to s), and after that contraction.  An apostrophe or other
#    punctuation character starts a piece when it is the block's first byte or follows a
#    letter, digit, tab (or other non-space, non-line-break whitespace) or line break: after
#    a space it is that space's piece (" ?[^\s\p{L}\p{N}]+"), after punctuation it is in the
#    same run;
# 2. at the first letter of a run of letters, unless the byte before it is a space or tab,
#    or punctuation that starts a piece (rule 1): then the piece starts there, that byte
#    being the letters' prefix ("[^\r\n\p{L}\p{N}]?\p{L}+");
# 3. at the first digit of a run and every third after it (Qwen2: at every digit);
# 4. at the first byte of a run of punctuation, or at the space before it; after the run
#    and the line breaks that follow it ("[\r\n]*"), unless a letter follows (rule 2);
# 5. at the first byte of a run of whitespace (what a punctuation piece has not taken),
#    after its last line break ("\s*[\r\n]"), and at its last byte unless that is a line
#    break ("\s+(?!\S)" leaves the last one to the next piece, "\s" takes a single one).
#
# A block that ends the text with a run of whitespace decides the starts before that run
# only, and the scanner takes the run.  A non-ASCII character that is not a two-byte letter
# ends the block as in o200k, as a stand-in of its class (a mark is punctuation here: none of
# these patterns puts marks among the letters), and the same bound on the starts holds.

cdef inline uint64_t _cl100k_block_starts(const uint8_t* s, Py_ssize_t e, uint64_t valid,
                                          uint64_t let, uint64_t dig, uint64_t sp, uint64_t tb,
                                          uint64_t nl, uint64_t ap, uint64_t pn,
                                          bint single_digit) noexcept nogil:
    """The piece starts (bit k: byte k of the block at s) of the block's text, as if it ended
    at bit ``valid``'s end, from its class masks (each within ``valid``); ``s[:e]`` is the
    block's text, without a stand-in (for the contractions).  The rules above."""
    cdef uint64_t start = 1, taken = 0, cand, opener, prefix, firsts, punct, tail
    cdef uint64_t triple, digit_groups, space, breaks, later, steps
    cdef Py_ssize_t k, f
    cdef int shift
    # where an apostrophe or other punctuation character starts a piece (rule 1)
    opener = ((let | dig | tb | nl) << 1) | 1
    # 1. Contractions (their letters are not a run's first letters: rule 2 takes what follows)
    cand = ap & opener & (let >> 1)
    while cand:
        k = bpe_ctz64(cand)
        cand &= cand - 1
        f = _contraction(s, e, k, True)
        if f >= 0:
            taken |= ((<uint64_t>1 << (f - k)) - 1) << k
            start |= <uint64_t>1 << k
            if f < 64:
                start |= <uint64_t>1 << f
    # 2. Letters, with the byte before them as their prefix where it may be one
    firsts = let & ~taken & ~((let & ~taken) << 1)
    prefix = sp | tb | ((ap | pn) & opener)
    start |= (firsts & ~(prefix << 1)) | ((firsts >> 1) & prefix)
    # 3. Digits in threes from the start of each run (one by one for Qwen2)
    if single_digit:
        start |= dig
    else:
        triple = dig & (dig << 1) & (dig << 2)
        digit_groups = dig & ~(dig << 1)
        while digit_groups:
            start |= digit_groups
            digit_groups = (digit_groups << 3) & triple
    # 4. Punctuation runs and the line breaks right after them
    punct = (ap | pn) & ~taken
    tail = _fill_on(nl, (punct << 1) & nl)
    firsts = punct & ~(punct << 1)
    start |= (firsts & ~(sp << 1)) | ((firsts >> 1) & sp)
    start |= ((punct << 1) & ~punct & ~tail & ~let) | ((tail << 1) & ~tail)
    # 5. Whitespace runs: "a line break later in the run" fills down the run in doubling
    #    steps (as in o200k)
    space = (sp | tb | nl) & ~tail
    breaks = nl & space
    later = (breaks >> 1) & space
    steps = space & (space >> 1)
    shift = 1
    while steps and shift < 64:
        later |= steps & (later >> shift)
        steps &= steps >> shift
        shift <<= 1
    start |= (space & ~(space << 1)) | (((breaks & ~later) << 1) & space) | (space & ~(space >> 1) & ~nl)
    return start & valid


cdef inline uint64_t block_bounds(int pattern, const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """Where the pieces of ``pattern`` (o200k, cl100k, Llama 3 or Qwen2) start after byte i (a
    piece start), found on up to 64 bytes at once: bit k (1..63) set when a piece starts at
    byte i + k, for the starts that are certain (see above), and the end of the text when
    the block reaches it.  0 when none is: the caller scans one piece."""
    cdef bpe_ascii_masks m
    cdef const uint8_t* b = s + i
    cdef Py_ssize_t width
    cdef int w, size, cls, last
    cdef uint64_t up, low, tb, bits, valid, starts, spaces, before, rest
    cdef bint o200k = pattern == PAT_O200K
    # the two-byte letters a block holds: o200k's with case (Lm/Lo letters are in both of its
    # letter sets, which the rules do not model), every letter for the others
    cdef int inside = (C_LU | C_LL) if o200k else M_L
    # Pieces that start with a non-ASCII character other than such a letter, blocks that
    # would be one byte long (" " before a word of Arabic, ...) and text with a three- or
    # four-byte character in its next 8 bytes (CJK, Indic and Thai scripts, symbols, emoji;
    # Vietnamese letters and curly quotes too) go to the scanner at once.  On such text a
    # block ends within a few pieces, too few for its fixed cost: without the test, 42% of
    # the blocks o200k tried on the shared multilingual corpus found no start, and it
    # encoded about 4% slower than with no blocks; with it, English tries 15% fewer blocks
    # and they find 0.2% fewer of its pieces.
    if b[0] >= 0xE0 or bpe_long_lead8(b, n - i):
        return 0
    if b[0] >= 0x80:
        if not (_cls_at(b, 0, &width) & inside):
            return 0
    elif i + 1 < n and b[1] >= 0x80 and not (_cls_at(b, 1, &width) & inside):
        return 0
    bpe_classify64(b, n - i, &m)
    up = m.letter & ~m.lower
    low = m.letter & m.lower
    tb = m.ctl & ~m.nl
    # the block's non-ASCII letters, each byte standing for the character (see above); the
    # block ends at any other non-ASCII character, at a letter that 64 bytes cut, and at
    # the end of the text (whose bytes are marked non-ASCII)
    rest = m.high
    w = 64
    while rest:
        w = bpe_ctz64(rest)
        if i + w >= n:
            break
        cls = _cls_at(b, w, &width)
        if not (cls & inside) or w + width > 64:
            break
        bits = ((<uint64_t>1 << width) - 1) << w
        if cls & C_LU:
            up |= bits
        else:
            low |= bits
        rest &= ~bits
        w = 64
    if w == 0:
        return 0     # (not reached: byte 0 is ASCII or a letter the loop took; the masks
                     # below assume at least one byte)
    size = w
    cdef bint stand_in = False, at_end = i + w == n
    if w < 64 and not at_end and not (b[w] == 0xC5 and b[w + 1] == 0xBF):
        # what follows the block, as one byte of its class
        cls = _cls_at(b, w, &width)
        bits = <uint64_t>1 << w
        stand_in = True
        if cls & C_LU:
            up |= bits
        elif cls & (C_LL | C_LMO):
            low |= bits
        elif cls & C_N:
            m.digit |= bits
        elif cls & C_WS:
            tb |= bits
        elif o200k and not (cls & C_OTHER):
            stand_in = False      # a mark, in both of o200k's letter sets
        if stand_in:
            size = w + 1          # (a punctuation stand-in is in no mask: punctuation is the rest)
    valid = ~<uint64_t>0 if size >= 64 else (<uint64_t>1 << size) - 1
    spaces = m.space | tb | m.nl
    if o200k:
        starts = _o200k_block_starts(b, w, valid, up, low, m.digit, m.space, tb, m.nl, m.apos,
                                     valid & ~(up | low | m.digit | m.space | m.ctl | tb | m.apos), m.slash)
    else:
        starts = _cl100k_block_starts(b, w, valid, (up | low) & valid, m.digit & valid, m.space & valid,
                                      tb & valid, m.nl & valid, m.apos & valid,
                                      valid & ~(up | low | m.digit | m.space | m.ctl | tb | m.apos),
                                      pattern == PAT_QWEN2)
    if at_end and (o200k or not ((spaces >> (size - 1)) & 1)):
        # (rule 5 has more text after a run of whitespace: a run that ends the text is left
        # to the scanner by the bound below)
        return (starts & ~<uint64_t>1) | ((<uint64_t>1 << w) if w < 64 else 0)
    last = size - 1
    if not stand_in:
        if (m.apos >> last) & 1:
            last -= 1
        elif last >= 1 and (m.apos >> (last - 1)) & 1:
            last -= 2
    if (spaces >> (size - 1)) & 1:
        before = ~spaces & valid & ((<uint64_t>1 << (size - 1)) - 1)
        last = min(last, bpe_top64(before) + 1 if before else 0)
    if last <= 0:
        return 0
    return starts & ~<uint64_t>1 & (~<uint64_t>0 >> (63 - last))


cdef inline uint64_t piece_bounds(int pattern, const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """Where the pieces after the one that starts at byte i start, for a run of them at once
    (bit k: byte i + k, as ``block_bounds``), or 0: then ``scan_piece`` finds the one
    piece at i.  GPT-2's pattern has no block path."""
    if PAT_CL100K <= pattern <= PAT_QWEN2:
        return block_bounds(pattern, s, n, i)
    return 0


cdef inline Py_ssize_t scan_piece(int pattern, const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """End of the pre-token starting at byte i (i < n) of valid UTF-8 ``s[:n]``."""
    if pattern == PAT_GPT2:
        return _scan_gpt2(s, n, i)
    if pattern == PAT_CL100K:
        return _scan_cl100k(s, n, i)
    if pattern == PAT_O200K:
        return _scan_o200k(s, n, i)
    if pattern == PAT_LLAMA3:
        return _scan_llama3(s, n, i)
    if pattern == PAT_QWEN2:
        return _scan_qwen2(s, n, i)
    return n
