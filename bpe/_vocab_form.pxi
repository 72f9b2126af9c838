# Reading a byte-level vocabulary and merge list (a tokenizer.json model) into the tables
# the encoder is built from, for bpe/_core.pyx (textually included there, after the token
# table it uses).  It loads; it does not encode.
#
# The general version is ``bpe.models.bpe.MergeBPE.byte_form`` in Python; this one does the
# common file in C-level passes (about a hundred thousand tokens and a few hundred thousand
# merges: Python-level loops over them take longer than Hugging Face's whole load).  It reads
# either the parsed JSON (``byte_level_form``) or, skipping the million small objects a
# parse makes, the JSON text itself (``json_model_spans`` finds the vocabulary and the
# merges in it, ``byte_level_form_json`` reads them).  Either returns None wherever the file
# is not the common one, and the general version then decides (and names what is wrong):
# an id that is not a plain non-negative int, sparse or repeated ids, a vocabulary string or
# merge part that is not byte-level, a merge not written "a b" or ["a", "b"] or naming an
# absent token, a missing single byte, JSON it does not read (a key written with escapes).
# Where it returns tables, they are the general version's (tests/test_models_bpe.py and
# tests/test_huggingface.py compare them).
#
# A byte-level string writes each byte as one display character (bpe.byte_unicode): bytes
# 33-126, 161-172 and 174-255 as themselves, the other 68 as U+0100 onwards in byte order.
# The mapping is one to one, so a merge's parts and its result are found by their bytes.

cdef int16_t _DISPLAY_BYTE[324]   # display code point -> byte (-1: not a display character)


cdef void _fill_display_bytes() noexcept:
    cdef int b, extra = 0
    for b in range(324):
        _DISPLAY_BYTE[b] = -1
    for b in range(256):
        if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255:
            _DISPLAY_BYTE[b] = b
        else:
            _DISPLAY_BYTE[256 + extra] = b
            extra += 1


_fill_display_bytes()


cdef class VocabTables:
    """What ``byte_level_form`` read, with the attributes of ``bpe.models.bpe.ByteForm``.
    It holds the byte-level strings in a token table, which an ``Encoder`` built on it
    copies (instead of adding each token again); ``tokens``, the same as a dict, is made
    on first use."""

    cdef TokenTable table
    cdef readonly dict decode_only
    cdef readonly bytes triples
    cdef readonly object first
    cdef readonly list unmade
    cdef readonly Py_ssize_t n_vocab        # vocabulary strings read
    cdef readonly bint merges_as_strings    # (from JSON text) the first merge is written "a b"
    cdef dict _tokens

    def __cinit__(self):
        memset(&self.table, 0, sizeof(TokenTable))

    def __dealloc__(self):
        tt_free(&self.table)

    @property
    def tokens(self):
        """Bytes -> id of every byte-level vocabulary string."""
        cdef Py_ssize_t i
        cdef dict out
        if self._tokens is None:
            out = {}
            for i in range(self.table.n_ids):
                if self.table.length[i] >= 0:
                    out[PyBytes_FromStringAndSize(<char*>self.table.blob + self.table.off[i],
                                                  self.table.length[i])] = i
            self._tokens = out
        return self._tokens

    def id_of(self, str s):
        """The id of the byte-level string ``s``, or -1 when the table does not hold it."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH_PTR(<PyObject*>s)
        cdef uint8_t small[64]
        cdef uint8_t* buf = &small[0]
        if n > 64:
            buf = <uint8_t*>malloc(n)
        if buf == NULL:
            raise MemoryError()
        try:
            n = _display_decode(s, 0, n, buf)
            return -1 if n <= 0 else tt_find(&self.table, buf, n)
        finally:
            if buf != &small[0]:
                free(buf)

    def ids(self):
        """Every id read (the table's and the decode-only strings')."""
        cdef Py_ssize_t i
        out = [i for i in range(self.table.n_ids) if self.table.length[i] >= 0]
        out.extend(self.decode_only.values())
        return out


# ------------------------------------------------------------------ building the tables

ctypedef struct FormBuild:
    uint8_t* made            # by id: 1 a vocabulary id, 2 made by a merge (NULL: none yet)
    Py_ssize_t limit         # ids at or beyond: none of this reader's (too sparse or too big)
    uint32_t* out            # (left, right, new) per merge
    uint32_t* firsts         # (id, left, right) per merged token, its first merge
    Py_ssize_t n_merges, n_first, room
    uint64_t* pairs          # the pairs seen, while the list is rank-shaped (open addressing)
    Py_ssize_t mask
    uint32_t last            # the id the previous merge made
    bint rank_shape          # merge ids never decrease and no pair repeats, so far


cdef int _fb_init(FormBuild* fb, Py_ssize_t n_vocab, Py_ssize_t n_merges) except -1:
    memset(fb, 0, sizeof(FormBuild))
    fb.limit = 4 * n_vocab + 65536   # beyond: "too sparse" (Tokenizer), decided in Python
    fb.made = <uint8_t*>calloc(fb.limit + 1, 1)
    fb.room = n_merges
    fb.out = <uint32_t*>malloc((3 * n_merges + 1) * sizeof(uint32_t))
    fb.firsts = <uint32_t*>malloc((3 * n_merges + 1) * sizeof(uint32_t))
    fb.mask = 16
    while fb.mask < 2 * n_merges + 2:
        fb.mask <<= 1
    fb.pairs = <uint64_t*>malloc(fb.mask * sizeof(uint64_t))
    if fb.made == NULL or fb.out == NULL or fb.firsts == NULL or fb.pairs == NULL:
        raise MemoryError()
    memset(fb.pairs, 0xFF, fb.mask * sizeof(uint64_t))
    fb.mask -= 1
    fb.rank_shape = True
    return 0


cdef void _fb_free(FormBuild* fb) noexcept:
    free(fb.made)
    free(fb.out)
    free(fb.firsts)
    free(fb.pairs)


cdef bint _fb_token(FormBuild* fb, TokenTable* t, Py_ssize_t tid, const uint8_t* data, Py_ssize_t n,
                    bint maybe_seen) except -1:
    """Record the vocabulary string of id ``tid`` (its bytes ``data[:n]``); False when the
    id is out of range or given twice, or (``maybe_seen``) the bytes are another id's."""
    if tid < 0 or tid >= fb.limit or fb.made[tid] or n == 0:
        return False
    if maybe_seen and tt_find(t, data, n) != NO_TOKEN:
        return False
    fb.made[tid] = 1
    _tt_add(t, <tok_t>tid, data, n, True, False)
    return True


cdef bint _fb_merge(FormBuild* fb, const TokenTable* t, const uint8_t* buf, Py_ssize_t left,
                    Py_ssize_t n) noexcept:
    """Record the merge of ``buf[:left]`` and ``buf[left:n]``; False when a part or the
    result is not a token."""
    cdef uint32_t a = <uint32_t>tt_find(t, buf, left)
    cdef uint32_t b = <uint32_t>tt_find(t, buf + left, n - left)
    cdef uint32_t c = <uint32_t>tt_find(t, buf, n)
    cdef Py_ssize_t i = fb.n_merges, slot
    cdef uint64_t key
    if a == <uint32_t>NO_TOKEN or b == <uint32_t>NO_TOKEN or c == <uint32_t>NO_TOKEN or i >= fb.room:
        return False
    fb.out[3 * i] = a
    fb.out[3 * i + 1] = b
    fb.out[3 * i + 2] = c
    fb.n_merges += 1
    if fb.made[c] != 2:
        fb.made[c] = 2
        fb.firsts[3 * fb.n_first] = c
        fb.firsts[3 * fb.n_first + 1] = a
        fb.firsts[3 * fb.n_first + 2] = b
        fb.n_first += 1
    if not fb.rank_shape:
        return True
    if c < fb.last:
        fb.rank_shape = False
        return True
    fb.last = c
    key = (<uint64_t>a << 32) | b
    slot = <Py_ssize_t>((key * 0x9E3779B97F4A7C15ULL) >> 40) & fb.mask
    while fb.pairs[slot] != 0xFFFFFFFFFFFFFFFFULL and fb.pairs[slot] != key:
        slot = (slot + 1) & fb.mask
    if fb.pairs[slot] == key:
        fb.rank_shape = False  # listed twice
    fb.pairs[slot] = key
    return True


cdef object _fb_finish(FormBuild* fb, VocabTables form, dict decode_only, Py_ssize_t n_vocab):
    """The tables, or None when a single byte is missing."""
    cdef TokenTable* t = &form.table
    cdef uint8_t one[8]            # (8: hashing reads a whole word where it may)
    cdef int k
    cdef Py_ssize_t tid
    for k in range(256):
        one[0] = <uint8_t>k
        if tt_find(t, one, 1) == NO_TOKEN:
            return None
    form.unmade = [PyBytes_FromStringAndSize(<char*>t.blob + t.off[tid], t.length[tid])
                   for tid in range(t.n_ids) if t.length[tid] > 1 and fb.made[tid] != 2]
    form.triples = PyBytes_FromStringAndSize(<char*>fb.out, 3 * fb.n_merges * sizeof(uint32_t))
    form.first = PyBytes_FromStringAndSize(<char*>fb.firsts, 3 * fb.n_first * sizeof(uint32_t)) \
        if fb.rank_shape else None
    form.decode_only = decode_only
    form.n_vocab = n_vocab
    return form


# ------------------------------------------------------------------ from parsed JSON

cdef Py_ssize_t _display_decode(object s, Py_ssize_t start, Py_ssize_t stop, uint8_t* out) noexcept:
    """The bytes that characters ``start:stop`` of the str ``s`` stand for, written to ``out``
    (room for stop - start); their count, or -1 if one is not a display character."""
    cdef int kind = PyUnicode_KIND_PTR(<PyObject*>s)
    cdef const void* data = PyUnicode_DATA_PTR(<PyObject*>s)
    cdef Py_ssize_t i
    cdef Py_UCS4 c
    for i in range(start, stop):
        c = PyUnicode_READ_PTR(kind, data, i)
        if c >= 324 or _DISPLAY_BYTE[c] < 0:
            return -1
        out[i - start] = <uint8_t>_DISPLAY_BYTE[c]
    return stop - start


cdef Py_ssize_t _merge_parts(object m, uint8_t* buf, Py_ssize_t cap, Py_ssize_t* left) noexcept:
    """A merge written "a b" or ["a", "b"], decoded into ``buf`` as a's bytes then b's; the
    total count (``left``: a's), -1 if it is not that shape of display strings, -2 if it
    needs more than ``cap`` bytes."""
    cdef Py_ssize_t n, i, space = -1, la, lb
    cdef int kind
    cdef const void* data
    if type(m) is str:
        n = PyUnicode_GET_LENGTH_PTR(<PyObject*>m)
        if n > cap:
            return -2
        kind = PyUnicode_KIND_PTR(<PyObject*>m)
        data = PyUnicode_DATA_PTR(<PyObject*>m)
        for i in range(n):
            if PyUnicode_READ_PTR(kind, data, i) == 32:
                if space >= 0:
                    return -1  # a second space: not two parts
                space = i
        if space <= 0 or space == n - 1:
            return -1
        la = _display_decode(m, 0, space, buf)
        lb = _display_decode(m, space + 1, n, buf + space) if la >= 0 else -1
    elif type(m) is list and len(<list>m) == 2 and type((<list>m)[0]) is str and type((<list>m)[1]) is str:
        a = (<list>m)[0]
        b = (<list>m)[1]
        la = PyUnicode_GET_LENGTH_PTR(<PyObject*>a)
        lb = PyUnicode_GET_LENGTH_PTR(<PyObject*>b)
        if la + lb > cap:
            return -2
        if la == 0 or lb == 0:
            return -1
        la = _display_decode(a, 0, la, buf)
        lb = _display_decode(b, 0, lb, buf + la) if la >= 0 else -1
    else:
        return -1
    if la < 0 or lb < 0:
        return -1
    left[0] = la
    return la + lb


def byte_level_form(dict vocab, merges):
    """A ``VocabTables`` of a byte-level model with every byte (``vocab``: str -> id;
    ``merges``: "a b" strings or ["a", "b"] lists), equal to what ``MergeBPE.byte_form``
    computes, or None where that general version must decide."""
    if type(merges) is not list and type(merges) is not tuple:
        return None
    cdef Py_ssize_t n_merges = len(merges), pos = 0, i, tid, length, la, cap = 1024
    cdef PyObject* key
    cdef PyObject* value
    cdef VocabTables form = VocabTables()
    cdef dict decode_only = {}
    cdef FormBuild fb
    cdef uint8_t* buf = NULL
    memset(&fb, 0, sizeof(FormBuild))
    try:
        _fb_init(&fb, len(vocab), n_merges)
        tt_init(&form.table)
        buf = <uint8_t*>malloc(cap)
        if buf == NULL:
            raise MemoryError()
        while PyDict_Next(vocab, &pos, &key, &value):
            if not PyUnicode_CheckExact_PTR(key) or not PyLong_CheckExact_PTR(value):
                return None
            tid = PyLong_AsSsize_t_PTR(value)
            if tid == -1:
                PyErr_Clear()
            length = PyUnicode_GET_LENGTH_PTR(key)
            if length > cap:
                cap = 2 * length
                free(buf)
                buf = <uint8_t*>malloc(cap)
                if buf == NULL:
                    raise MemoryError()
            length = _display_decode(<object>key, 0, length, buf)
            if length < 0:  # not byte-level: decoded from its UTF-8 bytes
                if tid < 0 or tid >= fb.limit or fb.made[tid]:
                    return None
                fb.made[tid] = 1
                decode_only[(<str>key).encode("utf-8")] = <object>value
            elif not _fb_token(&fb, &form.table, tid, buf, length, False):  # (distinct strings: distinct bytes)
                return None
        for i in range(n_merges):
            m = merges[i]
            length = _merge_parts(m, buf, cap, &la)
            if length == -2:
                cap = 2 * (len(m) if type(m) is str else len(m[0]) + len(m[1]))
                free(buf)
                buf = <uint8_t*>malloc(cap)
                if buf == NULL:
                    raise MemoryError()
                length = _merge_parts(m, buf, cap, &la)
            if length < 0 or not _fb_merge(&fb, &form.table, buf, la, length):
                return None
        return _fb_finish(&fb, form, decode_only, len(vocab))
    finally:
        _fb_free(&fb)
        free(buf)


# ------------------------------------------------------------------ from the JSON text
# Only what a tokenizer.json writer emits is read here: whitespace, strings (escapes
# included), integers, and the nesting of the values skipped over.  Anything else (and any
# key written with an escape) returns None, and the file is parsed whole instead.

cdef inline Py_ssize_t _ws(const uint8_t* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (p[i] == 32 or p[i] == 10 or p[i] == 13 or p[i] == 9):
        i += 1
    return i


cdef Py_ssize_t _skip_string(const uint8_t* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The position after the string starting at ``p[i] == '"'``, or -1."""
    i += 1
    while i < n:
        if p[i] == 34:
            return i + 1
        i += 2 if p[i] == 92 else 1
    return -1


cdef Py_ssize_t _skip_value(const uint8_t* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The position after the value starting at ``p[i]``, or -1 (nesting is counted, not
    checked: the parse of what is skipped checks it)."""
    cdef Py_ssize_t depth = 0
    while i < n:
        if p[i] == 34:
            i = _skip_string(p, i, n)
            if i < 0:
                return -1
            if depth == 0:
                return i
            continue
        if p[i] == 123 or p[i] == 91:
            depth += 1
        elif p[i] == 125 or p[i] == 93:
            if depth == 0:
                return i  # a scalar's end
            depth -= 1
            if depth == 0:
                return i + 1
        elif depth == 0 and (p[i] == 44 or p[i] == 32 or p[i] == 10 or p[i] == 13 or p[i] == 9):
            return i
        i += 1
    return -1 if depth else i


cdef Py_ssize_t _key(const uint8_t* p, Py_ssize_t i, Py_ssize_t n, Py_ssize_t* end) noexcept nogil:
    """A key at ``p[i] == '"'`` without escapes: sets ``end`` past its colon (and whitespace)
    and returns the key's length (its text starts at i + 1), or -1."""
    cdef Py_ssize_t j = i + 1
    while j < n and p[j] != 34:
        if p[j] == 92:
            return -1
        j += 1
    if j >= n:
        return -1
    end[0] = _ws(p, j + 1, n)
    if end[0] >= n or p[end[0]] != 58:
        return -1
    end[0] = _ws(p, end[0] + 1, n)
    return j - i - 1


def json_model_spans(bytes text):
    """``(vocab start, vocab end, merges start, merges end)``: where the values of
    ``model.vocab`` (an object) and ``model.merges`` (an array) lie in a tokenizer.json's
    UTF-8 text, or None."""
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(text)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(text), i, j, k, after, depth_start
    cdef Py_ssize_t spans[4]
    cdef bint in_model = False, found_model = False
    spans[0] = spans[1] = spans[2] = spans[3] = -1
    i = _ws(p, 0, n)
    if i >= n or p[i] != 123:
        return None
    i = _ws(p, i + 1, n)
    while i < n and p[i] != 125:
        if p[i] != 34:
            return None
        k = _key(p, i, n, &after)
        if k < 0:
            return None
        j = after
        if not in_model and k == 5 and memcmp(p + i + 1, b"model", 5) == 0:
            if found_model or j >= n or p[j] != 123:
                return None
            found_model = in_model = True
            i = _ws(p, j + 1, n)
            continue
        if in_model and k == 5 and memcmp(p + i + 1, b"vocab", 5) == 0:
            if spans[0] >= 0 or j >= n or p[j] != 123:
                return None
            spans[0] = j
        elif in_model and k == 6 and memcmp(p + i + 1, b"merges", 6) == 0:
            if spans[2] >= 0 or j >= n or p[j] != 91:
                return None
            spans[2] = j
        i = _skip_value(p, j, n)
        if i < 0:
            return None
        if spans[0] == j:
            spans[1] = i
        elif spans[2] == j:
            spans[3] = i
        i = _ws(p, i, n)
        if i < n and p[i] == 125 and in_model:  # the end of the model object
            in_model = False
            i = _ws(p, i + 1, n)
        if i < n and p[i] == 44:
            i = _ws(p, i + 1, n)
        elif i < n and p[i] != 125:
            return None
    if in_model or spans[1] < 0 or spans[3] < 0:
        return None
    return spans[0], spans[1], spans[2], spans[3]


cdef Py_ssize_t _hex4(const uint8_t* p) noexcept nogil:
    cdef Py_ssize_t v = 0, k
    cdef uint8_t c
    for k in range(4):
        c = p[k]
        if 48 <= c <= 57:
            v = 16 * v + c - 48
        elif 97 <= c <= 102:
            v = 16 * v + c - 87
        elif 65 <= c <= 70:
            v = 16 * v + c - 55
        else:
            return -1
    return v


cdef Py_ssize_t _json_display(const uint8_t* p, Py_ssize_t i, Py_ssize_t n, uint8_t* out,
                              Py_ssize_t* end, Py_ssize_t* space) noexcept nogil:
    """The string at ``p[i] == '"'`` decoded (JSON escapes, then UTF-8) and read as display
    characters into ``out`` (room: its length in the text); their count, with ``end`` past
    the closing quote.  With ``space`` non-NULL one U+0020 is allowed and its place in
    ``out`` set (-1 if none).  -1 for anything else: a character that is not a display
    character, a second space, bad escapes or UTF-8, a raw control character."""
    cdef Py_ssize_t j = i + 1, k = 0
    cdef Py_ssize_t cp
    cdef uint8_t c
    if space != NULL:
        space[0] = -1
    while j < n:
        c = p[j]
        if c == 34:
            end[0] = j + 1
            return k
        if c == 92:
            if j + 1 >= n:
                return -1
            c = p[j + 1]
            j += 2
            if c == 34 or c == 92 or c == 47:
                cp = c
            elif c == 98:
                cp = 8
            elif c == 102:
                cp = 12
            elif c == 110:
                cp = 10
            elif c == 114:
                cp = 13
            elif c == 116:
                cp = 9
            elif c == 117 and j + 4 <= n:
                cp = _hex4(p + j)
                j += 4
            else:
                return -1
        elif c < 32:
            return -1
        elif c < 128:
            cp = c
            j += 1
        elif (c & 0xE0) == 0xC0 and j + 1 < n and (p[j + 1] & 0xC0) == 0x80:
            cp = ((c & 0x1F) << 6) | (p[j + 1] & 0x3F)
            if cp < 128:
                return -1  # overlong
            j += 2
        else:
            return -1  # three- and four-byte characters are no display characters
        if cp == 32 and space != NULL and space[0] < 0:
            space[0] = k
            continue
        if cp < 0 or cp >= 324 or _DISPLAY_BYTE[cp] < 0:
            return -1
        out[k] = <uint8_t>_DISPLAY_BYTE[cp]
        k += 1
    return -1


cdef Py_ssize_t _count_items(const uint8_t* p, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """How many items the object or array ``p[i:end]`` holds (its commas at depth one,
    plus one), for sizing the tables; -1 if a string does not end."""
    cdef Py_ssize_t depth = 0, commas = 0
    cdef bint empty = True
    while i < end:
        if p[i] == 34:
            i = _skip_string(p, i, end)
            if i < 0:
                return -1
            empty = False
            continue
        if p[i] == 123 or p[i] == 91:
            depth += 1
            if depth > 1:
                empty = False
        elif p[i] == 125 or p[i] == 93:
            depth -= 1
        elif p[i] == 44 and depth == 1:
            commas += 1
        elif depth == 1 and p[i] > 32:
            empty = False
        i += 1
    return 0 if empty else commas + 1


def byte_level_form_json(bytes text, Py_ssize_t vocab_start, Py_ssize_t vocab_end,
                         Py_ssize_t merges_start, Py_ssize_t merges_end):
    """``byte_level_form`` of the vocabulary and merges at these places of a tokenizer.json's
    text (from ``json_model_spans``), read from the text itself; or None."""
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(text)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(text)
    if not (0 <= vocab_start < vocab_end <= n and 0 <= merges_start < merges_end <= n):
        raise ValueError("the spans lie outside the text")
    cdef Py_ssize_t n_vocab = _count_items(p, vocab_start, vocab_end)
    cdef Py_ssize_t n_merges = _count_items(p, merges_start, merges_end)
    cdef Py_ssize_t i, j, k, tid, length, left, part, count = 0
    cdef VocabTables form = VocabTables()
    cdef FormBuild fb
    cdef uint8_t* buf = <uint8_t*>malloc(max(vocab_end - vocab_start, merges_end - merges_start) + 1)
    memset(&fb, 0, sizeof(FormBuild))
    try:
        if buf == NULL:
            raise MemoryError()
        if n_vocab < 0 or n_merges < 0:
            return None
        _fb_init(&fb, n_vocab, n_merges)
        tt_init(&form.table)
        # the vocabulary: {"string": id, ...}
        i = _ws(p, vocab_start + 1, vocab_end)
        while i < vocab_end and p[i] != 125:
            if p[i] != 34:
                return None
            length = _json_display(p, i, vocab_end, buf, &j, NULL)
            if length <= 0:
                return None
            j = _ws(p, j, vocab_end)
            if j >= vocab_end or p[j] != 58:
                return None
            j = _ws(p, j + 1, vocab_end)
            tid = 0
            k = j
            while j < vocab_end and 48 <= p[j] <= 57 and tid < fb.limit:
                tid = 10 * tid + p[j] - 48
                j += 1
            if j == k or (p[k] == 48 and j > k + 1) or j >= vocab_end:
                return None  # no digits, or a leading zero
            if not _fb_token(&fb, &form.table, tid, buf, length, True):
                return None
            count += 1
            i = _ws(p, j, vocab_end)
            if i < vocab_end and p[i] == 44:
                i = _ws(p, i + 1, vocab_end)
                if i >= vocab_end or p[i] != 34:
                    return None  # (a comma before the end)
            elif i >= vocab_end or p[i] != 125:
                return None  # (also a fraction or an exponent after the digits)
        if i + 1 != vocab_end or count != n_vocab:
            return None
        # the merges: ["a b", ...] or [["a", "b"], ...]
        i = _ws(p, merges_start + 1, merges_end)
        form.merges_as_strings = i < merges_end and p[i] == 34
        while i < merges_end and p[i] != 93:
            if p[i] == 34:
                length = _json_display(p, i, merges_end, buf, &j, &left)
                if length < 0 or left <= 0 or left >= length:
                    return None  # (no space, or one at either end)
            elif p[i] == 91:
                i = _ws(p, i + 1, merges_end)
                if i >= merges_end or p[i] != 34:
                    return None
                left = _json_display(p, i, merges_end, buf, &j, NULL)
                j = _ws(p, j, merges_end)
                if left <= 0 or j >= merges_end or p[j] != 44:
                    return None
                j = _ws(p, j + 1, merges_end)
                if j >= merges_end or p[j] != 34:
                    return None
                part = _json_display(p, j, merges_end, buf + left, &j, NULL)
                j = _ws(p, j, merges_end)
                if part <= 0 or j >= merges_end or p[j] != 93:
                    return None
                j += 1
                length = left + part
            else:
                return None
            if not _fb_merge(&fb, &form.table, buf, left, length):
                return None
            i = _ws(p, j, merges_end)
            if i < merges_end and p[i] == 44:
                i = _ws(p, i + 1, merges_end)
                if i >= merges_end or p[i] == 93:
                    return None  # (a comma before the end)
            elif i >= merges_end or p[i] != 93:
                return None
        if i + 1 != merges_end or fb.n_merges != n_merges:
            return None
        return _fb_finish(&fb, form, {}, count)
    finally:
        _fb_free(&fb)
        free(buf)
