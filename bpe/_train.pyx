"""Compiled BPE training: pre-token counting, and greedy merges with incremental pair counts
and a lazy max-heap.

``PieceCounter`` splits texts with the scanner (``bpe._scanner``) and counts distinct
pre-tokens in C.  ``Trainer`` takes the table of unique pre-tokens (bytes) with their counts
and learns merges ``(left_id, right_id, merged_id)`` in order, resumably (``run(n)`` learns n
more tokens, so callers can show progress), recording how many symbols the corpus has after
each merge (a compression curve).  It produces exactly what ``bpe._reference.Trainer``
produces (the test suite checks this), only without recounting: see that class for the rules,
repeated here briefly.

* Symbols start as bytes, ids 0..255.  Every merge takes the most frequent adjacent pair,
  counting overlapping pairs and weighting each word by its count.
* Tie-break, deterministic on every platform and run: higher count first, then the smaller
  left id, then the smaller right id (or Hugging Face's id order for bytes: TIE_BREAKS).
* The merged symbol gets the next new id unless its bytes are already a token (two pairs can
  spell the same bytes), in which case that id is reused and no new token is counted.
* Occurrences are replaced left to right (so ``a a a`` with pair ``(a, a)`` becomes ``aa a``).

Data layout
-----------
All words live in one flat symbol array with ``prev``/``next`` links (-1 at word ends); a
merge keeps the left position and unlinks the right one (its symbol becomes -1).  Every pair
has a 64-bit count and a list of positions where it was seen; a list may hold stale entries,
which are checked (and skipped) when the pair is merged.  After each merge the pairs whose
count went up (those with the new symbol) are pushed with their new count; pairs whose count
went down keep their old, higher entry.  A popped entry is valid when it holds the pair's
current count; one holding more is requeued with the current count, one holding less (an
older entry of a pair pushed again since) is dropped.  So the heap's top entry is always an
upper bound, and the first valid entry popped is a true maximum (lazy invalidation).

Cost: one merge costs O(occurrences of the pair + log heap); the whole run is about
O(total symbols * log) instead of O(merges * total symbols) for a recount.  The loop runs
without the GIL.  Reading files, special tokens and normalization are ``bpe.training``'s job.
"""

# cython: language_level=3

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memcpy

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE

from bpe._core cimport NO_TOKEN, TokenTable, tok_t, tt_add, tt_find, tt_free, tt_init
from bpe._scanner cimport PAT_NONE, scan_piece

from bpe._reference import TIE_BREAKS
from bpe.errors import TrainingError
from bpe._scanner import PATTERN_IDS

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL


ctypedef struct PosList:
    Py_ssize_t* data
    Py_ssize_t len
    Py_ssize_t cap

ctypedef struct HeapEntry:
    int64_t count
    int32_t ka       # ordering keys of the left and right ids (see TIE_BREAKS)
    int32_t kb
    int32_t pair


cdef int _no_memory() except -1 nogil:
    with gil:
        raise MemoryError("bpe: out of memory during training")


cdef inline bint _better(const HeapEntry* x, const HeapEntry* y) noexcept nogil:
    # the merge order: higher count, then smaller left key, then smaller right key
    if x.count != y.count:
        return x.count > y.count
    if x.ka != y.ka:
        return x.ka < y.ka
    return x.kb < y.kb


cdef inline uint64_t _mix(uint64_t k) noexcept nogil:
    k ^= k >> 33
    k *= 0xff51afd7ed558ccdULL
    k ^= k >> 33
    k *= 0xc4ceb9fe1a85ec53ULL
    k ^= k >> 33
    return k


cdef int _cmp_pos(const void* x, const void* y) noexcept nogil:
    cdef Py_ssize_t u = (<const Py_ssize_t*>x)[0]
    cdef Py_ssize_t v = (<const Py_ssize_t*>y)[0]
    return (u > v) - (u < v)


cdef int _grow(void** ptr, Py_ssize_t* cap, Py_ssize_t need, size_t item) except -1 nogil:
    """Make room for ``need`` items of size ``item`` in ``*ptr`` (doubling)."""
    if need <= cap[0]:
        return 0
    cdef Py_ssize_t new_cap = cap[0] * 2 if cap[0] > 0 else 16
    while new_cap < need:
        new_cap *= 2
    cdef void* p = realloc(ptr[0], new_cap * item)
    if p == NULL:
        return _no_memory()
    ptr[0] = p
    cap[0] = new_cap
    return 0


cdef class _Trainer:
    # words, flattened
    cdef int32_t* sym
    cdef Py_ssize_t* nxt
    cdef Py_ssize_t* prv
    cdef int32_t* wid
    cdef int64_t* wcount
    cdef Py_ssize_t n_pos
    # pairs: map (a, b) -> pair index, and per-pair arrays
    cdef uint64_t* map_keys
    cdef int32_t* map_vals
    cdef Py_ssize_t map_slots
    cdef int32_t* pa
    cdef int32_t* pb
    cdef int64_t* pcount
    cdef int64_t* pstamp
    cdef int64_t* pold      # a touched pair's count before this step
    cdef PosList* occ
    cdef Py_ssize_t n_pairs
    cdef Py_ssize_t pair_cap
    # heap and bookkeeping
    cdef HeapEntry* heap
    cdef Py_ssize_t heap_len
    cdef Py_ssize_t heap_cap
    cdef int32_t* touched
    cdef Py_ssize_t n_touched
    cdef Py_ssize_t touched_cap
    cdef int64_t step
    cdef TokenTable tokens
    cdef int32_t* merges
    cdef Py_ssize_t n_merges
    cdef Py_ssize_t merges_cap
    cdef int64_t* after         # weighted symbol count (corpus tokens) after each merge
    cdef Py_ssize_t after_cap
    cdef int64_t total          # weighted symbol count now
    cdef int64_t initial        # ... before any merge (= corpus bytes)
    cdef int32_t byte_key[256]  # ordering key of each byte id in ties
    cdef int32_t next_id
    cdef bint started
    cdef bint finished
    cdef uint8_t* buf
    cdef Py_ssize_t buf_cap

    def __cinit__(self):
        tt_init(&self.tokens)
        self.next_id = 256
        cdef int i
        for i in range(256):
            self.byte_key[i] = i

    def __dealloc__(self):
        cdef Py_ssize_t i
        free(self.sym)
        free(self.nxt)
        free(self.prv)
        free(self.wid)
        free(self.wcount)
        free(self.map_keys)
        free(self.map_vals)
        free(self.pa)
        free(self.pb)
        free(self.pcount)
        free(self.pstamp)
        free(self.pold)
        if self.occ != NULL:
            for i in range(self.n_pairs):
                free(self.occ[i].data)
        free(self.occ)
        free(self.heap)
        free(self.touched)
        free(self.merges)
        free(self.after)
        free(self.buf)
        tt_free(&self.tokens)

    # ---- pairs ---------------------------------------------------------------------------

    cdef int _map_resize(self, Py_ssize_t slots) except -1 nogil:
        cdef uint64_t* keys = <uint64_t*>malloc(slots * sizeof(uint64_t))
        cdef int32_t* vals = <int32_t*>malloc(slots * sizeof(int32_t))
        cdef Py_ssize_t i, j, mask = slots - 1
        if keys == NULL or vals == NULL:
            free(keys)
            free(vals)
            return _no_memory()
        for i in range(slots):
            vals[i] = -1
        for i in range(self.map_slots):
            if self.map_vals[i] >= 0:
                j = <Py_ssize_t>(_mix(self.map_keys[i]) & <uint64_t>mask)
                while vals[j] >= 0:
                    j = (j + 1) & mask
                keys[j] = self.map_keys[i]
                vals[j] = self.map_vals[i]
        free(self.map_keys)
        free(self.map_vals)
        self.map_keys = keys
        self.map_vals = vals
        self.map_slots = slots
        return 0

    cdef int32_t _pair(self, int32_t a, int32_t b) except -1 nogil:
        """Index of pair (a, b), created with count 0 if new."""
        cdef uint64_t key = (<uint64_t><uint32_t>a << 32) | <uint32_t>b
        cdef Py_ssize_t mask = self.map_slots - 1
        cdef Py_ssize_t j = <Py_ssize_t>(_mix(key) & <uint64_t>mask)
        cdef int32_t p
        while self.map_vals[j] >= 0:
            if self.map_keys[j] == key:
                return self.map_vals[j]
            j = (j + 1) & mask
        p = <int32_t>self.n_pairs
        if p == 0x7FFFFFFF:
            with gil:
                raise TrainingError("more than 2**31 distinct pairs of tokens: train on fewer distinct pre-tokens (raise min_frequency or count a sample)")
        if p >= self.pair_cap:
            self._grow_pairs(p + 1)
        self.pa[p] = a
        self.pb[p] = b
        self.pcount[p] = 0
        self.pstamp[p] = -1
        self.occ[p].data = NULL
        self.occ[p].len = 0
        self.occ[p].cap = 0
        self.n_pairs += 1
        self.map_keys[j] = key
        self.map_vals[j] = p
        if 2 * self.n_pairs > self.map_slots:
            self._map_resize(self.map_slots * 2)
        return p

    cdef int _grow_pairs(self, Py_ssize_t need) except -1 nogil:
        cdef Py_ssize_t cap = self.pair_cap * 2 if self.pair_cap > 0 else 1024
        while cap < need:
            cap *= 2
        cdef void* p
        p = realloc(self.pa, cap * sizeof(int32_t))
        if p == NULL:
            return _no_memory()
        self.pa = <int32_t*>p
        p = realloc(self.pb, cap * sizeof(int32_t))
        if p == NULL:
            return _no_memory()
        self.pb = <int32_t*>p
        p = realloc(self.pcount, cap * sizeof(int64_t))
        if p == NULL:
            return _no_memory()
        self.pcount = <int64_t*>p
        p = realloc(self.pstamp, cap * sizeof(int64_t))
        if p == NULL:
            return _no_memory()
        self.pstamp = <int64_t*>p
        p = realloc(self.pold, cap * sizeof(int64_t))
        if p == NULL:
            return _no_memory()
        self.pold = <int64_t*>p
        p = realloc(self.occ, cap * sizeof(PosList))
        if p == NULL:
            return _no_memory()
        self.occ = <PosList*>p
        self.pair_cap = cap
        return 0

    cdef int _count(self, int32_t a, int32_t b, int64_t delta, Py_ssize_t pos) except -1 nogil:
        """Add ``delta`` to pair (a, b); with ``pos >= 0`` also record an occurrence there."""
        cdef int32_t p = self._pair(a, b)
        cdef PosList* lst
        if self.pstamp[p] != self.step:
            self.pstamp[p] = self.step
            self.pold[p] = self.pcount[p]
            _grow(<void**>&self.touched, &self.touched_cap, self.n_touched + 1, sizeof(int32_t))
            self.touched[self.n_touched] = p
            self.n_touched += 1
        self.pcount[p] += delta
        if pos >= 0:
            lst = &self.occ[p]
            _grow(<void**>&lst.data, &lst.cap, lst.len + 1, sizeof(Py_ssize_t))
            lst.data[lst.len] = pos
            lst.len += 1
        return 0

    # ---- heap ----------------------------------------------------------------------------

    cdef int _push(self, int32_t p) except -1 nogil:
        _grow(<void**>&self.heap, &self.heap_cap, self.heap_len + 1, sizeof(HeapEntry))
        cdef Py_ssize_t i = self.heap_len, parent
        cdef HeapEntry e
        e.count = self.pcount[p]
        e.ka = self.pa[p] if self.pa[p] >= 256 else self.byte_key[self.pa[p]]
        e.kb = self.pb[p] if self.pb[p] >= 256 else self.byte_key[self.pb[p]]
        e.pair = p
        self.heap_len += 1
        while i > 0:
            parent = (i - 1) >> 1
            if not _better(&e, &self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = e
        return 0

    cdef HeapEntry _pop(self) noexcept nogil:
        cdef HeapEntry top = self.heap[0]
        cdef HeapEntry last
        cdef Py_ssize_t i = 0, child, n
        self.heap_len -= 1
        n = self.heap_len
        if n > 0:
            last = self.heap[n]
            while True:
                child = 2 * i + 1
                if child >= n:
                    break
                if child + 1 < n and _better(&self.heap[child + 1], &self.heap[child]):
                    child += 1
                if not _better(&self.heap[child], &last):
                    break
                self.heap[i] = self.heap[child]
                i = child
            self.heap[i] = last
        return top

    # ---- setup and the merge loop ----------------------------------------------------------

    cdef int _load(self, list words, list counts) except -1:
        cdef Py_ssize_t n_words = len(words), total = 0, i, j, base, n
        cdef bytes w
        cdef const uint8_t* data
        for i in range(n_words):
            w = words[i]
            total += PyBytes_GET_SIZE(w)
        self.n_pos = total
        self.sym = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        self.nxt = <Py_ssize_t*>malloc((total + 1) * sizeof(Py_ssize_t))
        self.prv = <Py_ssize_t*>malloc((total + 1) * sizeof(Py_ssize_t))
        self.wid = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        self.wcount = <int64_t*>malloc((n_words + 1) * sizeof(int64_t))
        if self.sym == NULL or self.nxt == NULL or self.prv == NULL or self.wid == NULL or self.wcount == NULL:
            raise MemoryError()
        base = 0
        for i in range(n_words):
            w = words[i]
            self.wcount[i] = counts[i]
            n = PyBytes_GET_SIZE(w)
            data = <const uint8_t*>PyBytes_AS_STRING(w)
            for j in range(n):
                self.sym[base + j] = data[j]
                self.wid[base + j] = <int32_t>i
                self.prv[base + j] = base + j - 1 if j > 0 else -1
                self.nxt[base + j] = base + j + 1 if j + 1 < n else -1
            base += n
        cdef uint8_t one
        for i in range(256):
            one = <uint8_t>i
            tt_add(&self.tokens, <tok_t>i, &one, 1, True)
        self._map_resize(1024)
        return 0

    cdef int _start(self) except -1 nogil:
        cdef Py_ssize_t pos, q, k
        self.step = 0
        self.total = 0
        for pos in range(self.n_pos):
            self.total += self.wcount[self.wid[pos]]
            q = self.nxt[pos]
            if q >= 0:
                self._count(self.sym[pos], self.sym[q], self.wcount[self.wid[pos]], pos)
        self.initial = self.total
        for k in range(self.n_touched):
            self._push(self.touched[k])
        self.started = True
        return 0

    cdef Py_ssize_t _run(self, Py_ssize_t n_new, int64_t min_frequency) except -1 nogil:
        """Merge until ``n_new`` more new tokens exist (or training ends); return how many."""
        cdef Py_ssize_t k, pos, q, left, right, n_occ
        cdef Py_ssize_t made = 0, la, lb
        cdef int32_t a, b, c
        cdef int64_t w
        cdef HeapEntry e
        cdef Py_ssize_t* positions
        if not self.started:
            self._start()
        while made < n_new and not self.finished:
            # best valid pair
            e.count = 0
            while self.heap_len > 0:
                e = self._pop()
                if e.count > 0 and self.pcount[e.pair] == e.count:
                    break
                if e.count > self.pcount[e.pair] > 0:
                    # the pair lost occurrences since this entry was pushed: requeue it
                    # with its current count (counts that drop are not pushed eagerly)
                    self._push(e.pair)
                e.count = 0
            if e.count == 0 or e.count < min_frequency:
                self.finished = True
                break
            a = self.pa[e.pair]
            b = self.pb[e.pair]
            # the merged token: an existing one with the same bytes, or a new id
            la = self.tokens.length[a]
            lb = self.tokens.length[b]
            _grow(<void**>&self.buf, &self.buf_cap, la + lb, 1)
            memcpy(self.buf, self.tokens.blob + self.tokens.off[a], la)
            memcpy(self.buf + la, self.tokens.blob + self.tokens.off[b], lb)
            c = tt_find(&self.tokens, self.buf, la + lb)
            if c == NO_TOKEN:
                c = self.next_id
                self.next_id += 1
                tt_add(&self.tokens, c, self.buf, la + lb, True)
                made += 1
            _grow(<void**>&self.merges, &self.merges_cap, 3 * (self.n_merges + 1), sizeof(int32_t))
            self.merges[3 * self.n_merges] = a
            self.merges[3 * self.n_merges + 1] = b
            self.merges[3 * self.n_merges + 2] = c
            # replace the occurrences, left to right
            self.step += 1
            self.n_touched = 0
            positions = self.occ[e.pair].data
            n_occ = self.occ[e.pair].len
            self.occ[e.pair].data = NULL
            self.occ[e.pair].len = 0
            self.occ[e.pair].cap = 0
            if a == b:
                qsort(positions, n_occ, sizeof(Py_ssize_t), _cmp_pos)
            try:
                for k in range(n_occ):
                    pos = positions[k]
                    if self.sym[pos] != a:
                        continue
                    q = self.nxt[pos]
                    if q < 0 or self.sym[q] != b:
                        continue
                    w = self.wcount[self.wid[pos]]
                    self.total -= w
                    left = self.prv[pos]
                    right = self.nxt[q]
                    if left >= 0:
                        self._count(self.sym[left], a, -w, -1)
                    if right >= 0:
                        self._count(b, self.sym[right], -w, -1)
                    self._count(a, b, -w, -1)
                    self.sym[pos] = c
                    self.sym[q] = -1
                    self.nxt[pos] = right
                    if right >= 0:
                        self.prv[right] = pos
                    if left >= 0:
                        self._count(self.sym[left], c, w, left)
                    if right >= 0:
                        self._count(c, self.sym[right], w, pos)
            finally:
                free(positions)
            for k in range(self.n_touched):
                if self.pcount[self.touched[k]] > self.pold[self.touched[k]]:
                    self._push(self.touched[k])
            _grow(<void**>&self.after, &self.after_cap, self.n_merges + 1, sizeof(int64_t))
            self.after[self.n_merges] = self.total
            self.n_merges += 1
        return made


cdef class Trainer:
    """A resumable merge loop: ``run(n)`` learns up to n more tokens and can be called again.

    ``merges`` are ``(left_id, right_id, merged_id)``; ``tokens_after[i]`` is the number of
    symbols the training pre-tokens (weighted by count) have after merge i, and
    ``initial_tokens`` the number before any merge (their total bytes): together a
    compression-vs-vocabulary-size curve from one run.
    """

    cdef _Trainer t
    cdef int64_t min_frequency

    def __init__(self, list words, list counts, min_frequency=1, tie_break="ids"):
        if len(words) != len(counts):
            raise TrainingError("words and counts must have the same length")
        if tie_break not in TIE_BREAKS:
            raise TrainingError(f"tie_break must be one of {sorted(TIE_BREAKS)}, got {tie_break!r}")
        self.t = _Trainer()
        self.min_frequency = min_frequency
        cdef int i
        keys = TIE_BREAKS[tie_break]
        for i in range(256):
            self.t.byte_key[i] = keys[i]
        self.t._load(words, counts)

    def run(self, Py_ssize_t n_new_tokens):
        """Learn up to ``n_new_tokens`` more tokens (without the GIL); return how many."""
        cdef Py_ssize_t made
        with nogil:
            made = self.t._run(n_new_tokens, self.min_frequency)
        return made

    @property
    def finished(self):
        """True once no pair is left or the best count is below ``min_frequency``."""
        return bool(self.t.finished)

    @property
    def merges(self):
        cdef _Trainer t = self.t
        return [(t.merges[3 * i], t.merges[3 * i + 1], t.merges[3 * i + 2]) for i in range(t.n_merges)]

    @property
    def initial_tokens(self):
        if not self.t.started:
            with nogil:
                self.t._start()
        return self.t.initial

    @property
    def tokens_after(self):
        return [self.t.after[i] for i in range(self.t.n_merges)]


def train_merges(list words, list counts, Py_ssize_t n_new_tokens, int64_t min_frequency, tie_break="ids"):
    """Learn merges from unique pre-tokens ``words`` (bytes) with ``counts``.

    Returns ``[(left_id, right_id, merged_id), ...]`` in merge order; stops after
    ``n_new_tokens`` new tokens, when no pair is left, or when the best count is below
    ``min_frequency``.  Same result as ``bpe._reference.train_merges``.
    """
    trainer = Trainer(words, counts, min_frequency, tie_break)
    trainer.run(n_new_tokens)
    return trainer.merges


# ------------------------------------------------------------------------------------------
# Pre-token counting
# ------------------------------------------------------------------------------------------


cdef class PieceCounter:
    """Counts distinct pre-tokens (as UTF-8 bytes) of texts split with a named pattern.

    Only the table of distinct pieces lives in memory (a TokenTable mapping piece bytes to an
    index, plus a 64-bit count per index), never the texts.  ``add_text`` splits and counts
    without the GIL; ``add`` merges counts from elsewhere (shards add up exactly).
    """

    cdef TokenTable table
    cdef int64_t* counts
    cdef Py_ssize_t n
    cdef Py_ssize_t cap

    def __cinit__(self):
        tt_init(&self.table)
        self.counts = NULL
        self.n = 0
        self.cap = 0

    def __dealloc__(self):
        tt_free(&self.table)
        free(self.counts)

    cdef int _add(self, const uint8_t* p, Py_ssize_t length, int64_t count) except -1 nogil:
        cdef tok_t idx = tt_find(&self.table, p, length)
        if idx == NO_TOKEN:
            if self.n >= 0x7FFFFFFE:
                with gil:
                    raise TrainingError("more than 2**31 distinct pre-tokens: train on a sample, or on counts with the rare ones left out")
            _grow(<void**>&self.counts, &self.cap, self.n + 1, sizeof(int64_t))
            idx = <tok_t>self.n
            tt_add(&self.table, idx, p, length, True)
            self.counts[idx] = 0
            self.n += 1
        self.counts[idx] += count
        return 0

    def add_text(self, str text, str pattern):
        """Count the pre-tokens of ``text`` (raises UnicodeEncodeError on lone surrogates)."""
        cdef int pid = PATTERN_IDS[pattern] if pattern is not None else PAT_NONE
        cdef Py_ssize_t n, i = 0, j
        cdef const uint8_t* p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &n)
        with nogil:
            while i < n:
                j = scan_piece(pid, p, n, i)
                self._add(p + i, j - i, 1)
                i = j

    def add(self, bytes piece, count):
        """Add ``count`` occurrences of ``piece``."""
        if count < 0:
            raise TrainingError(f"counts must be >= 0, got {count} for {piece!r}")
        if PyBytes_GET_SIZE(piece) == 0:
            raise TrainingError("a pre-token cannot be empty")
        self._add(<const uint8_t*>PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece), count)

    def __len__(self):
        return self.n

    def items(self):
        """``[(piece_bytes, count), ...]`` in first-seen order."""
        cdef Py_ssize_t i
        return [(PyBytes_FromStringAndSize(<char*>self.table.blob + self.table.off[i], self.table.length[i]),
                 self.counts[i]) for i in range(self.n)]
