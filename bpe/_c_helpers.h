/* Raw C helpers of the compiled core: word loads, hashing, big allocations, the pair cache's
   atomics, thread-local caches, prefetch, batch claims, acquire/release flags and the ASCII
   run of the scanner, each with its compiler and platform branches.  The Cython modules
   declare what they use with `cdef extern from "_c_helpers.h"`; nothing here calls Python. */
#ifndef BPE_C_HELPERS_H
#define BPE_C_HELPERS_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- short byte strings: word loads, copies, hashing ---- */
#include <stdint.h>
#include <string.h>
/* 16 bytes from src to dst (decoding: both have the room) */
static inline void bpe_copy16(char* dst, const uint8_t* src) {
    uint64_t a, b;
    memcpy(&a, src, 8);
    memcpy(&b, src + 8, 8);
    memcpy(dst, &a, 8);
    memcpy(dst + 8, &b, 8);
}
static const uint64_t bpe_word_masks[9] = {
    0, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL, 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL,
    0xFFFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL};
/* bpe_word where the caller knows that p[0:8] lies inside the buffer: no test of where the
   page ends */
static inline uint64_t bpe_word_inside(const unsigned char* p, Py_ssize_t n) {
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w & bpe_word_masks[n < 8 ? n : 8];
}
/* The n (1..8) bytes at p as a little-endian word, zero-padded.  On little-endian
   machines, when an 8-byte read cannot cross into the next page, one unaligned load and
   a mask replace the byte loop (the bytes past n are read but masked off).  Define
   BPE_NO_OVERREAD (debug builds do) to keep the byte loop, e.g. for memory checkers. */
static inline uint64_t bpe_word(const unsigned char* p, Py_ssize_t n) {
    uint64_t w = 0;
#if !defined(BPE_NO_OVERREAD) && ((defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_M_X64) || defined(_M_ARM64))
    if (((uintptr_t)p & 4095) <= 4088)
        return bpe_word_inside(p, n);    /* (8 bytes readable: the page goes on past p + 8) */
#endif
    for (Py_ssize_t k = 0; k < n && k < 8; k++)
        w |= (uint64_t)p[k] << (8 * k);
    return w;
}
/* a 32-bit word loaded from memory, as little-endian */
static inline uint32_t bpe_le32(uint32_t w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap32(w);
#else
    return w;
#endif
}
/* whether bytes 8..n-1 of a and b agree (n > 8): one word compare up to 16 bytes */
static inline int bpe_same_tail(const unsigned char* a, const unsigned char* b, Py_ssize_t n) {
    uint64_t x, y;
    if (n <= 16) {
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    return memcmp(a + 8, b + 8, n - 8) == 0;
}
static const unsigned char bpe_zero8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#if defined(_MSC_VER) && defined(_M_X64)
#  include <intrin.h>
#endif
/* x * y to 128 bits, its halves xored: every bit of the result depends on every bit of both
   (the low half's low bits alone would depend on few); one multiply where a 64-bit machine
   has a 64 x 64 -> 128 one, else (or with BPE_NO_INT128 defined) two multiply-xorshift
   rounds */
static inline uint64_t bpe_fold_mul(uint64_t x, uint64_t y) {
#if defined(__SIZEOF_INT128__) && !defined(BPE_NO_INT128)
    unsigned __int128 m = (unsigned __int128)x * y;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
#elif defined(_MSC_VER) && defined(_M_X64) && !defined(BPE_NO_INT128)
    uint64_t hi, lo = _umul128(x, y, &hi);
    return lo ^ hi;
#else
    uint64_t h = x * 0xff51afd7ed558ccdULL ^ y * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
#endif
}
/* hash of 1..16 bytes: the first (up to) 8 bytes and the length, folded with the last 8
   bytes when n > 8 (read from a zero word otherwise, so that no branch depends on n, which
   varies at random in the merge loop) by bpe_fold_mul, so that the low bits (slot) and
   high bits (filter) both depend on every input bit */
#define BPE_HASH_HEAD_KEY 0x243F6A8885A308D3ULL
#define BPE_HASH_TAIL_KEY 0x9E3779B97F4A7C15ULL
static inline uint64_t bpe_hash16w(uint64_t a, const unsigned char* p, Py_ssize_t n) {
    /* (a: bpe_word(p, n), which the caller has already) */
    uint64_t b;
    const unsigned char* q = n > 8 ? p + n - 8 : bpe_zero8;
    memcpy(&b, q, 8);
    return bpe_fold_mul(a ^ ((uint64_t)n << 59) ^ BPE_HASH_HEAD_KEY, b ^ BPE_HASH_TAIL_KEY);
}
/* bpe_hash16w where n <= 8 is known: the tail word is the zero word's, and nothing waits on
   reading it */
static inline uint64_t bpe_hash8w(uint64_t a, Py_ssize_t n) {
    return bpe_fold_mul(a ^ ((uint64_t)n << 59) ^ BPE_HASH_HEAD_KEY, BPE_HASH_TAIL_KEY);
}
static inline uint64_t bpe_hash16(const unsigned char* p, Py_ssize_t n) {
    return bpe_hash16w(bpe_word(p, n), p, n);
}

/* ---- the merge loop's minimum ----
   The least of key[0..m) (m a multiple of 8, at least 8): the linear merge loop asks this
   after every merge, over keys padded to a multiple of 8, so that the loop's trip count
   does not follow the piece's length (its exit branch was mispredicted about one time in
   five).  Every key lies in [0x00800000, 0x7F800000]: the bit patterns of the positive
   normal floats and +infinity, whose order as floats is their order as integers, so SSE2's
   float minimum (one instruction for four keys; its 32-bit integer minimum needs SSE4.1,
   and a compare and a select took four) gives the least integer.  Normal numbers are what
   flush-to-zero and denormals-are-zero modes leave alone, so the result does not depend on
   the thread's floating-point settings. */
#if !defined(BPE_NO_SIMD) && (defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2))
#  include <emmintrin.h>
static inline int32_t bpe_min_keys(const int32_t* key, Py_ssize_t m) {
    __m128 a = _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)key));
    __m128 b = _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)(key + 4)));
    for (Py_ssize_t i = 8; i < m; i += 8) {
        a = _mm_min_ps(a, _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)(key + i))));
        b = _mm_min_ps(b, _mm_castsi128_ps(_mm_loadu_si128((const __m128i*)(key + i + 4))));
    }
    a = _mm_min_ps(a, b);
    a = _mm_min_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    a = _mm_min_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(2, 3, 0, 1)));
    return (int32_t)_mm_cvtsi128_si32(_mm_castps_si128(a));
}
#else
static inline int32_t bpe_min_keys(const int32_t* key, Py_ssize_t m) {
    int32_t best = key[0];
    for (Py_ssize_t i = 1; i < m; i++)
        best = key[i] < best ? key[i] : best;
    return best;
}
#endif

/* ---- a list whose items the caller writes at once ----
   PyList_New(n) zero-fills its n item slots (calloc) before the caller overwrites every one:
   for a list of token ids that is a fifth of the instructions that build it.  This makes the
   list with its slots unwritten; the caller must write every slot (or NULL the rest, before
   any error can drop the list) before anything else sees it.  Free-threaded builds and
   other Pythons keep their own item storage: PyList_New there. */
static inline PyObject* bpe_list_unfilled(Py_ssize_t n) {
#if defined(Py_GIL_DISABLED) || defined(PYPY_VERSION) || defined(Py_LIMITED_API)
    return PyList_New(n);
#else
    PyObject** items;
    PyObject* list;
    if (n <= 0 || (size_t)n > PY_SSIZE_T_MAX / sizeof(PyObject*))
        return PyList_New(n);
    items = (PyObject**)PyMem_Malloc((size_t)n * sizeof(PyObject*));
    if (items == NULL)
        return PyErr_NoMemory();
    list = PyList_New(0);
    if (list == NULL) {
        PyMem_Free(items);
        return NULL;
    }
    ((PyListObject*)list)->ob_item = items;
    ((PyListObject*)list)->allocated = n;
    Py_SET_SIZE(list, n);
    return list;
#endif
}
static inline PyObject** bpe_list_items(PyObject* list) { return ((PyListObject*)list)->ob_item; }

/* ---- big tables: 2 MB aligned, huge pages where Linux allows ---- */
#include <stdlib.h>
#if defined(__linux__)
#  include <sys/mman.h>
#endif
/* Large tables (the token table's slots: 8 MB for o200k_base) are read at random, one
   line per lookup; with 4 KB pages nearly every lookup also misses the TLB.  On Linux
   they are 2 MB aligned and marked for transparent huge pages (if the system allows). */
static inline void* bpe_big_alloc(size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= ((size_t)2 << 20)) {
        void* p = NULL;
        if (posix_memalign(&p, (size_t)2 << 20, size) != 0)
            return NULL;
        madvise(p, size, MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(size);
}
/* Zeroed memory for a large region read at random whose pages should be mapped only as they
   are first written (the threads' piece caches, the ids' int objects): calloc'd, with the
   address returned 64-byte aligned and, on Linux from 2 MB up, 2 MB aligned and marked for
   transparent huge pages (each page then maps 2 MB at its first write).  *base gets what to
   pass to free(). */
static inline void* bpe_big_calloc(size_t size, void** base) {
    size_t align = 64;
    char* p;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= ((size_t)2 << 20))
        align = (size_t)2 << 20;
#endif
    p = (char*)calloc(1, size + align);
    *base = p;
    if (p == NULL)
        return NULL;
    p += (align - ((uintptr_t)p & (align - 1))) & (align - 1);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align > 64)
        madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

/* ---- the pair cache: one-word entries, relaxed 64-bit atomics where they are lock-free ---- */
#define BPE_PAIR_SLOTS 65536
#define BPE_PAIR_NONE 0x1FFFFFULL
#if (defined(__GNUC__) || defined(__clang__)) && defined(__GCC_ATOMIC_LLONG_LOCK_FREE) \
    && __GCC_ATOMIC_LLONG_LOCK_FREE == 2
/* (where 64-bit atomics are not always lock-free, as on some 32-bit targets, GCC would
   call libatomic, which the extension does not link: no cache there) */
#  define BPE_PAIR_CACHE 1
#  define bpe_pair_load(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#  define bpe_pair_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
/* aligned 8-byte loads and stores are single-copy atomic on these targets */
#  define BPE_PAIR_CACHE 1
#  define bpe_pair_load(p) (*(volatile unsigned long long*)(p))
#  define bpe_pair_store(p, v) (*(volatile unsigned long long*)(p) = (v))
#else
#  define BPE_PAIR_CACHE 0
#  define bpe_pair_load(p) (*(p))
#  define bpe_pair_store(p, v) (*(p) = (v))
#endif
static inline unsigned long long* bpe_pair_slot(unsigned long long* base, unsigned long long key) {
    return &base[(key * 0x9E3779B97F4A7C15ULL) >> 48];
}

/* ---- prefetch ---- */
#if defined(_MSC_VER)
#  include <intrin.h>
#  define bpe_prefetch(p) _mm_prefetch((const char*)(p), _MM_HINT_T0)
#elif defined(__GNUC__) || defined(__clang__)
#  define bpe_prefetch(p) __builtin_prefetch((p))
#else
#  define bpe_prefetch(p) ((void)(p))
#endif

/* ---- batches: claiming the next text, yielding the CPU ---- */
/* Claim the next text of a batch: an atomic fetch-and-add, so that threads share the texts
   one at a time and all finish within about one text of each other. */
#if defined(_MSC_VER)
#  include <intrin.h>
#  if defined(_WIN64)
#    define bpe_claim(p) ((Py_ssize_t)_InterlockedExchangeAdd64((volatile __int64*)(p), 1))
#  else
#    define bpe_claim(p) ((Py_ssize_t)_InterlockedExchangeAdd((volatile long*)(p), 1))
#  endif
#else
#  define bpe_claim(p) __atomic_fetch_add((p), (Py_ssize_t)1, __ATOMIC_RELAXED)
#endif

#if defined(_WIN32)
#  include <windows.h>
#  define bpe_pause() SwitchToThread()
#else
#  include <sched.h>
#  define bpe_pause() sched_yield()
#endif

/* ---- flags published once (acquire/release) ---- */
#if defined(_MSC_VER)
static inline int bpe_load_acquire(const int* p) { int v = *(volatile const int*)p; _ReadWriteBarrier(); return v; }
static inline void bpe_store_release(int* p, int v) { _ReadWriteBarrier(); *(volatile int*)p = v; }
#else
static inline int bpe_load_acquire(const int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void bpe_store_release(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
#endif

/* ---- the scanner: runs of ASCII letters, eight bytes at a time ---- */
#include <string.h>
#include <stdint.h>
/* End of the run of ASCII letters that starts at byte i of s[:n]: lower-case ones (a-z)
   with fold 0, both cases with fold 0x20 (b | 0x20 is in a-z exactly for letters).
   Where the machine is little-endian and has a count-trailing-zeros instruction, eight
   bytes are classified at once: per byte of x = (b | fold) & 0x7f, bit 7 of x + 0x1f is
   set from 'a' up and bit 7 of x + 0x05 from '{' up (no carries cross bytes), and bytes
   >= 0x80 are masked off; the first byte without the bit ends the run.  It never reads
   past n. */
static inline Py_ssize_t bpe_ascii_run(const unsigned char* s, Py_ssize_t n, Py_ssize_t i,
                                       unsigned char fold) {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t high = 0x8080808080808080ULL, low7 = 0x7f7f7f7f7f7f7f7fULL;
    const uint64_t folds = 0x0101010101010101ULL * fold;
    while (i + 8 <= n) {
        uint64_t w, x, m;
        memcpy(&w, s + i, 8);
        x = (w | folds) & low7;
        m = (x + 0x1f1f1f1f1f1f1f1fULL) & ~(x + 0x0505050505050505ULL) & ~w & high;
        if (m != high)
            return i + (__builtin_ctzll(~m & high) >> 3);
        i += 8;
    }
#endif
    while (i < n && (s[i] | fold) >= 'a' && (s[i] | fold) <= 'z')
        i++;
    return i;
}

/* ---- the scanner: classes of 64 bytes at once, one bit per byte ----
   The o200k scanner's block path (_scanner.pxd: o200k_block_bounds) decides where pieces
   start from these masks with word-wide bit operations.  Bit k of each mask stands for
   byte k of p[:64]; bytes at or past n count as non-ASCII (bit set in `high`, in no other
   mask), so that the block ends there.  `lower` is bit 5 of the byte (the case bit of a
   letter; meaningless for other bytes).  Where the CPU has AVX-512BW the 64 bytes are one
   register (bpe_classify64_wide, below); with SSE2 each 16 bytes take a few compares and a
   movemask per class; elsewhere (and with BPE_NO_SIMD) eight bytes at a time in a word:
   bytes below 0x80 never carry into their neighbour, so a compare is an add and a mask,
   and the eight bits are gathered by one multiply.  All read only p[:min(n, 64)]. */
typedef struct {
    uint64_t high, letter, lower, digit, space, ctl, nl, apos, slash;
} bpe_ascii_masks;

/* bit 7 of each byte of x, gathered into the low byte (byte k -> bit k) */
static inline uint64_t bpe_gather8(uint64_t x) {
    return (((x & 0x8080808080808080ULL) >> 7) * 0x0102040810204080ULL) >> 56;
}
/* per byte of w (each below 0x80): bit 7 set where lo <= byte <= hi */
static inline uint64_t bpe_swar_range(uint64_t w, unsigned lo, unsigned hi) {
    const uint64_t ones = 0x0101010101010101ULL;
    return (w + ones * (0x80 - lo)) & ~(w + ones * (0x7F - hi));
}
static inline void bpe_classify64_words(const unsigned char* p, Py_ssize_t n, bpe_ascii_masks* m) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    memset(m, 0, sizeof(*m));
    for (int q = 0; q < 8; q++) {
        uint64_t w = 0, hi, x;
        int base = 8 * q;
        if (base + 8 <= n) {
            memcpy(&w, p + base, 8);
            hi = w & high;
        } else {
            hi = 0;
            for (int k = 0; k < 8; k++) {
                if (base + k < n) w |= (uint64_t)p[base + k] << (8 * k);
                else hi |= (uint64_t)0x80 << (8 * k);
            }
            hi |= w & high;
        }
        w &= ~high;            /* (non-ASCII bytes as their low seven bits; masked below) */
        x = w | ones * 0x20;
#define BPE_PUT(field, bits) m->field |= bpe_gather8((bits) & ~hi) << base
        m->high |= bpe_gather8(hi) << base;
        BPE_PUT(letter, bpe_swar_range(x, 'a', 'z'));
        BPE_PUT(lower, w << 2);
        BPE_PUT(digit, bpe_swar_range(w, '0', '9'));
        BPE_PUT(space, bpe_swar_range(w, ' ', ' '));
        BPE_PUT(ctl, bpe_swar_range(w, 9, 13));
        BPE_PUT(nl, bpe_swar_range(w, 10, 10) | bpe_swar_range(w, 13, 13));
        BPE_PUT(apos, bpe_swar_range(w, '\'', '\''));
        BPE_PUT(slash, bpe_swar_range(w, '/', '/'));
#undef BPE_PUT
    }
}
#if !defined(BPE_NO_SIMD) && (defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2))
#  include <emmintrin.h>
#  define BPE_CLASSIFY_SSE2 1
static inline void bpe_classify64_sse2(const unsigned char* p, Py_ssize_t n, bpe_ascii_masks* m) {
    unsigned char tail[64];
    uint64_t past = 0;
    if (n < 64) {
        /* (a text's last bytes: copied, so that no load reads past the text) */
        memset(tail, 0x80, 64);
        if (n > 0) memcpy(tail, p, (size_t)n);
        p = tail;
        past = ~(uint64_t)0 << (n > 0 ? n : 0);
    }
    const __m128i c20 = _mm_set1_epi8(0x20);
    memset(m, 0, sizeof(*m));
    for (int q = 0; q < 4; q++) {
        __m128i x = _mm_loadu_si128((const __m128i*)(p + 16 * q));
        __m128i xl = _mm_or_si128(x, c20);
        int s = 16 * q;
#define BPE_MASK(v) ((uint64_t)(uint32_t)_mm_movemask_epi8(v) << s)
#define BPE_IN(v, lo, hi) _mm_and_si128(_mm_cmpgt_epi8((v), _mm_set1_epi8((lo) - 1)), \
                                        _mm_cmplt_epi8((v), _mm_set1_epi8((hi) + 1)))
        /* (signed compares: bytes from 0x80 are negative and fall in no range) */
        m->high |= BPE_MASK(x);
        m->letter |= BPE_MASK(BPE_IN(xl, 'a', 'z'));
        m->lower |= BPE_MASK(_mm_slli_epi16(x, 2));
        m->digit |= BPE_MASK(BPE_IN(x, '0', '9'));
        /* (a space and the controls 9-13 in one mask: bit 5 of the byte tells them apart) */
        m->space |= BPE_MASK(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')), BPE_IN(x, 9, 13)));
        m->nl |= BPE_MASK(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(10)),
                                       _mm_cmpeq_epi8(x, _mm_set1_epi8(13))));
        m->apos |= BPE_MASK(_mm_cmpeq_epi8(x, _mm_set1_epi8('\'')));
        m->slash |= BPE_MASK(_mm_cmpeq_epi8(x, _mm_set1_epi8('/')));
#undef BPE_MASK
#undef BPE_IN
    }
    m->high |= past;
    m->ctl = m->space & ~m->lower;
    m->space &= m->lower;
}
#endif
/* With AVX-512BW (checked at load time; GCC and Clang on x86-64) the 64 bytes are one
   register and each class one compare into a mask register (the SSE2 version takes four
   loads, four compares and four movemasks per class): the same masks as above.  The load
   is masked to p[:n], so it reads nothing past the text (masked-off bytes are zero, in no
   class; `high` marks them). */
#if !defined(BPE_NO_SIMD) && (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#  include <immintrin.h>
#  define BPE_CLASSIFY_WIDE 1
static int bpe_wide_classifier = 0;   /* set once at load time, if the CPU has AVX-512BW */
__attribute__((constructor)) static void bpe_wide_classifier_init(void) {
    __builtin_cpu_init();
    bpe_wide_classifier = __builtin_cpu_supports("avx512bw") ? 1 : 0;
}
__attribute__((target("avx512bw"), noinline))
static void bpe_classify64_wide(const unsigned char* p, Py_ssize_t n, bpe_ascii_masks* m) {
    const __mmask64 valid = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n > 0 ? n : 0)) - 1);
    const __m512i x = _mm512_maskz_loadu_epi8(valid, p);
    const __m512i xl = _mm512_or_si512(x, _mm512_set1_epi8(0x20));
#define BPE_IN(v, lo, hi) (_mm512_cmpgt_epi8_mask((v), _mm512_set1_epi8((lo) - 1)) & \
                           _mm512_cmplt_epi8_mask((v), _mm512_set1_epi8((hi) + 1)))
#define BPE_EQ(v, c) _mm512_cmpeq_epi8_mask((v), _mm512_set1_epi8(c))
    /* (signed compares: bytes from 0x80 are negative and fall in no range) */
    uint64_t lower = _mm512_movepi8_mask(_mm512_slli_epi16(x, 2));
    uint64_t space = BPE_EQ(x, ' ') | BPE_IN(x, 9, 13);
    m->high = _mm512_movepi8_mask(x) | ~valid;
    m->letter = BPE_IN(xl, 'a', 'z');
    m->lower = lower;
    m->digit = BPE_IN(x, '0', '9');
    m->nl = BPE_EQ(x, 10) | BPE_EQ(x, 13);
    m->apos = BPE_EQ(x, '\'');
    m->slash = BPE_EQ(x, '/');
    m->ctl = space & ~lower;
    m->space = space & lower;
#undef BPE_IN
#undef BPE_EQ
}
#endif
static inline void bpe_classify64(const unsigned char* p, Py_ssize_t n, bpe_ascii_masks* m) {
#if defined(BPE_CLASSIFY_WIDE)
    if (bpe_wide_classifier) {
        bpe_classify64_wide(p, n, m);
        return;
    }
#endif
#if defined(BPE_CLASSIFY_SSE2)
    bpe_classify64_sse2(p, n, m);
#else
    bpe_classify64_words(p, n, m);
#endif
}
/* for tests: which classifier bpe_classify64 uses (1: AVX-512BW where the CPU has it,
   0: SSE2 or words); returns the old setting */
static inline int bpe_set_wide_classifier(int on) {
#if defined(BPE_CLASSIFY_WIDE)
    int old = bpe_wide_classifier;
    if (on)
        bpe_wide_classifier_init();
    else
        bpe_wide_classifier = 0;
    return old;
#else
    (void)on;
    return 0;
#endif
}
/* whether p[:min(n, 8)] holds the lead byte of a three- or four-byte character (0xE0 and
   up: the top three bits set) */
static inline int bpe_long_lead8(const unsigned char* p, Py_ssize_t n) {
    uint64_t w = bpe_word(p, n < 8 ? n : 8);
    return (w & (w << 1) & (w << 2) & 0x8080808080808080ULL) != 0;
}
static inline int bpe_ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int k = 0;
    while (!(x & 1)) { x >>= 1; k++; }
    return k;
#endif
}
/* index of the highest set bit of x (x != 0) */
static inline int bpe_top64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(x);
#else
    int k = 0;
    while (x >>= 1) k++;
    return k;
#endif
}

/* Where characters start in UTF-8 text, for the character offsets of tokens: for each
   eight-byte block j of p[:n] (j = 0 .. n / 8), index[j] holds how many bytes of p[:8j] are
   continuation bytes (10xxxxxx), shifted left 8, and in its low byte bit i set when byte
   8j + i (below n) is one.  The characters before byte e are then e minus
   bpe_continuations_before(index, e): a load and a table lookup, no branch, whatever the
   script.  A byte's mark is bit 7 set and bit 6 clear; the marks (bit 7 of each byte,
   shifted to bit 0) are gathered into a byte by one multiply and summed by another
   (no popcount, which without -mpopcnt is a call into libgcc). */
static inline uint64_t bpe_cont_marks(uint64_t w) {
    return (w & ~(w << 1) & 0x8080808080808080ULL) >> 7;
}
static inline void bpe_char_index(const unsigned char* p, Py_ssize_t n, uint64_t* index) {
    uint64_t before = 0, w, m;
    Py_ssize_t i = 0, j = 0;
    for (; i + 8 <= n; i += 8, j++) {
        memcpy(&w, p + i, 8);
        m = bpe_cont_marks(w);
        index[j] = before << 8 | ((m * 0x0102040810204080ULL) >> 56);
        before += (m * 0x0101010101010101ULL) >> 56;
    }
    w = 0;
    for (Py_ssize_t k = 0; i + k < n; k++)
        w |= (uint64_t)p[i + k] << (8 * k);
    m = bpe_cont_marks(w);
    index[j] = before << 8 | ((m * 0x0102040810204080ULL) >> 56);
}
/* how many bits of a byte are set */
static const unsigned char bpe_bits_set[256] = {
#define BPE_B2(n) n, n + 1, n + 1, n + 2
#define BPE_B4(n) BPE_B2(n), BPE_B2(n + 1), BPE_B2(n + 1), BPE_B2(n + 2)
#define BPE_B6(n) BPE_B4(n), BPE_B4(n + 1), BPE_B4(n + 1), BPE_B4(n + 2)
    BPE_B6(0), BPE_B6(1), BPE_B6(1), BPE_B6(2)
#undef BPE_B2
#undef BPE_B4
#undef BPE_B6
};
static inline Py_ssize_t bpe_continuations_before(const uint64_t* index, Py_ssize_t e) {
    uint64_t x = index[e >> 3];
    return (Py_ssize_t)(x >> 8) + bpe_bits_set[x & ((1u << (e & 7)) - 1)];
}

#endif /* BPE_C_HELPERS_H */
