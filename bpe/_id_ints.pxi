# The int objects of ids: how a list of ids is built from an array of them.
#
# Included by _core.pyx.  It does not encode; it turns tok_t ids into a list of Python ints.
#
# Rule: an id's int object lies at a known address.  Each Encoder owns a region of
# INT_SLOT-byte slots, one per id, and slot j holds the int object of id j once j's block
# of ID_BLOCK neighbouring ids is first needed (the rest of the region stays zeroed, and
# untouched pages cost no memory).  Building a list is then one reference increment per
# id at base + id * INT_SLOT: no allocation (which keeps the part of encoding that needs
# the GIL small, so threads scale) and no table of pointers to read first.  Ids are ranks,
# so frequent tokens' objects share cache lines.  The region (6.4 MB for o200k_base) is on
# huge pages where Linux allows (bpe_big_calloc), since its reads land all over it.
#
# The objects are ordinary ints to everyone else (a copy of what PyLong_FromLong gives,
# with a reference count of its own).  The region holds one reference to each and never
# lets go of it, so no object of it ever reaches a count of 0 and is freed by Python.
# When the Encoder goes, its region is freed only if nothing else still refers to any of
# its objects; otherwise it is kept on the retired list, which is checked again whenever
# an Encoder is made or freed, and freed once its objects are unused.
#
# Where objects cannot be copied safely (a free-threaded or trace-refs build, an int
# larger than a slot), or after _set_own_ints(False), there is no region and each id's
# int is made by PyLong_FromLong as the list is built.

cdef extern from *:
    """
    /* Copies of int objects are safe only where an object is its plain header and digits. */
    #if defined(Py_GIL_DISABLED) || defined(Py_TRACE_REFS) || defined(Py_LIMITED_API)
    #  define BPE_OWN_INTS 0
    #else
    #  define BPE_OWN_INTS 1
    #endif
    static inline void bpe_int_copy(char* slot, PyObject* v, size_t size) {
        memcpy(slot, (const void*)v, size);
        ((PyObject*)slot)->ob_refcnt = 1;
    }
    """
    enum:
        BPE_OWN_INTS
    void bpe_int_copy(char* slot, PyObject* v, size_t size) noexcept


cdef enum:
    # _id_list's prefetch distance, in ids: far ahead, so that many lines are on their way
    # at once (warm o200k with other tokenizers in between, against 8: 16 +4-5%, each
    # doubling to 128 about +4% more on English, 256 no more)
    ID_AHEAD = 128
    ID_BLOCK = 64    # int objects are made for this many neighbouring ids at once
    INT_SLOT = 32    # bytes per object in the region (a one-digit int is 28 on 64-bit CPython)


ctypedef struct IdInts:
    char* objs           # slots * INT_SLOT bytes, zeroed until a block is made; NULL: no region
    void* base           # what to free for it (bpe_big_calloc: huge pages where Linux allows)
    uint8_t* made        # made[b]: block b's objects are in place
    Py_ssize_t slots     # whole blocks, covering every id
    size_t size          # bytes copied per object
    IdInts* next         # (on the retired list)


cdef bint _own_ints = True     # _set_own_ints
cdef IdInts* _retired = NULL   # regions whose Encoder has gone but some of whose objects live


def _set_own_ints(bint on):
    """For tests: whether Encoders made from now on keep a region of int objects (see
    bpe/_id_ints.pxi) or make each id's int as a list is built.  Returns the old value."""
    global _own_ints
    cdef bint old = _own_ints
    _own_ints = on
    return old


def _retired_int_regions():
    """For tests: how many freed Encoders' int regions are still kept because some of their
    objects are referred to (after freeing those now unused)."""
    _sweep_retired()
    cdef Py_ssize_t n = 0
    cdef IdInts* r = _retired
    while r != NULL:
        n += 1
        r = r.next
    return n


cdef size_t _one_digit_int_size():
    # the bytes of a one-digit int object (0: too big for a slot, or copies are unsafe)
    if not BPE_OWN_INTS:
        return 0
    cdef size_t size = (<PyTypeObject*>int).tp_basicsize + (<PyTypeObject*>int).tp_itemsize
    return size if size <= INT_SLOT else 0


cdef int ints_init(IdInts* ints, Py_ssize_t n_ids) except -1:
    # a region for ids 0..n_ids-1 (or none: see the top)
    _sweep_retired()
    ints.slots = (n_ids + ID_BLOCK) & ~(<Py_ssize_t>ID_BLOCK - 1)
    ints.size = _one_digit_int_size() if _own_ints else 0
    ints.next = NULL
    if ints.size == 0 or ints.slots > (<Py_ssize_t>1 << 30):  # (ids of one 30-bit digit)
        return 0
    ints.objs = <char*>bpe_big_calloc(ints.slots * INT_SLOT, &ints.base)
    ints.made = <uint8_t*>calloc(ints.slots // ID_BLOCK, 1)
    if ints.objs == NULL or ints.made == NULL:
        free(ints.base)
        free(ints.made)
        ints.objs = NULL
        ints.base = NULL
        ints.made = NULL
        raise MemoryError()
    return 0


cdef bint _ints_unused(const IdInts* ints) noexcept:
    # whether only the region itself refers to each of its objects (slots not yet made
    # hold none)
    cdef Py_ssize_t b, j
    cdef PyObject* o
    for b in range(ints.slots // ID_BLOCK):
        if ints.made[b]:
            for j in range(b * ID_BLOCK, (b + 1) * ID_BLOCK):
                o = <PyObject*>(ints.objs + j * INT_SLOT)
                if o.ob_type != NULL and o.ob_refcnt != 1:
                    return False
    return True


cdef void ints_free(IdInts* ints) noexcept:
    # the Encoder's region: freed now, or kept on the retired list while objects live
    global _retired
    cdef IdInts* r
    if ints.objs != NULL and not _ints_unused(ints):
        r = <IdInts*>malloc(sizeof(IdInts))
        if r != NULL:
            r[0] = ints[0]
            r.next = _retired
            _retired = r
        # (else the region is never freed: its objects must stay valid)
    elif ints.objs != NULL:
        free(ints.base)
        free(ints.made)
    ints.objs = NULL
    ints.base = NULL
    ints.made = NULL
    _sweep_retired()


cdef void _sweep_retired() noexcept:
    # frees the retired regions whose objects are no longer referred to
    global _retired
    cdef IdInts** link = &_retired
    cdef IdInts* r
    while link[0] != NULL:
        r = link[0]
        if _ints_unused(r):
            link[0] = r.next
            free(r.base)
            free(r.made)
            free(r)
        else:
            link = &r.next


cdef int _make_id_block(IdInts* ints, tok_t id) except -1:
    # puts the int objects of the ID_BLOCK ids around ``id`` in their slots
    # (the block counts as made before its first object is, so that a block left half made
    # by an error is still checked when the region is freed)
    cdef Py_ssize_t j, start = id & ~(<Py_ssize_t>ID_BLOCK - 1)
    ints.made[start // ID_BLOCK] = 1
    for j in range(start, start + ID_BLOCK):
        if (<PyObject*>(ints.objs + j * INT_SLOT)).ob_type == NULL:
            obj = PyLong_FromLong(j)
            bpe_int_copy(ints.objs + j * INT_SLOT, <PyObject*>obj, ints.size)
    return 0


cdef list _id_list(IdInts* ints, const tok_t* ids, Py_ssize_t k):
    # a list of the int objects of ids[0..k-1]; its slots start unwritten (bpe_list_unfilled)
    cdef list out = bpe_list_unfilled(k)
    cdef PyObject** items = bpe_list_items(out)
    cdef Py_ssize_t i, lead = k - ID_AHEAD if k > ID_AHEAD else 0
    cdef char* objs = ints.objs
    if objs == NULL:
        for i in range(k):
            _put_new_int(ids[i], items, i, k)
        return out
    # the objects are mostly out of cache: the first ID_AHEAD are fetched at once, then each
    # step fetches the one ID_AHEAD ids on
    for i in range(k if k < ID_AHEAD else ID_AHEAD):
        bpe_prefetch(objs + <Py_ssize_t>ids[i] * INT_SLOT)
    # (two loops: the one with the fetch ahead has no test for the list's last ids)
    for i in range(lead):
        bpe_prefetch(objs + <Py_ssize_t>ids[i + ID_AHEAD] * INT_SLOT)
        _put_region_int(ints, objs, ids, items, i, k)
    for i in range(lead, k):
        _put_region_int(ints, objs, ids, items, i, k)
    return out


cdef inline int _put_region_int(IdInts* ints, char* objs, const tok_t* ids, PyObject** items,
                                Py_ssize_t i, Py_ssize_t k) except -1:
    # items[i]: the int object of ids[i] in the region objs of ints (its block made on first
    # use; objs passed in so that it stays in a register)
    cdef PyObject* v = <PyObject*>(objs + <Py_ssize_t>ids[i] * INT_SLOT)
    if v.ob_type == NULL:
        _make_block_for(ints, ids[i], items, i, k)
    Py_INCREF(<object>v)
    items[i] = v
    return 0


cdef int _make_block_for(IdInts* ints, tok_t id, PyObject** items, Py_ssize_t i,
                         Py_ssize_t k) except -1:
    # _id_list's first use of an id's block; if making it fails, the list's unwritten slots
    # i..k-1 are cleared first (the list is then dropped, and decrefs every slot)
    try:
        _make_id_block(ints, id)
    except BaseException:
        memset(items + i, 0, (k - i) * sizeof(PyObject*))
        raise
    return 0


cdef int _put_new_int(tok_t id, PyObject** items, Py_ssize_t i, Py_ssize_t k) except -1:
    # items[i]: a new int object for id (no region); on failure as _make_block_for
    cdef object v
    try:
        v = PyLong_FromLong(id)
    except BaseException:
        memset(items + i, 0, (k - i) * sizeof(PyObject*))
        raise
    Py_INCREF(v)
    items[i] = <PyObject*>v
    return 0


cdef tuple _offsets_result(IdInts* ints, const tok_t* block, Py_ssize_t k):
    # (ids, offsets block) of a block from Encoder._encode_offsets (see encode_offsets)
    return _id_list(ints, block, k), PyBytes_FromStringAndSize(<const char*>(block + k), 3 * k * sizeof(uint32_t))
