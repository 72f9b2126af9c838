/* The compiled encoder's thread-local piece caches (bpe/_core.pyx): a two-way set cache of
   short pieces and direct-mapped ones of longer and of long pieces, each entry tagged with its
   encoder's generation.  Only _core.pyx includes this header: each thread has one copy. */
#ifndef BPE_PIECE_CACHE_H
#define BPE_PIECE_CACHE_H

#if defined(_MSC_VER)
#  define BPE_THREAD_LOCAL __declspec(thread)
#else
#  define BPE_THREAD_LOCAL _Thread_local
#endif
/* Thread-local storage in a shared library costs a call per access (__tls_get_addr), so
   each encode call takes the caches' addresses once and passes them down. */
typedef struct {
    unsigned int gen;            /* low 32 bits of the generation; 0: empty */
    int ids[3];
    unsigned long long head;     /* the piece's bytes 0..7, zero-padded */
    unsigned long long rest;     /* bytes 8..13 (bits 0..47), length (48..55), ids (56..63) */
} bpe_cache_entry;               /* 32 bytes: a set of two fills one cache line */
#define BPE_CACHE_SETS 16384
#if defined(_MSC_VER)
static BPE_THREAD_LOCAL __declspec(align(64)) bpe_cache_entry bpe_piece_cache[2 * BPE_CACHE_SETS];
#else
static BPE_THREAD_LOCAL bpe_cache_entry bpe_piece_cache[2 * BPE_CACHE_SETS] __attribute__((aligned(64)));
#endif
static bpe_cache_entry* bpe_piece_cache_base(void) { return bpe_piece_cache; }
static inline bpe_cache_entry* bpe_cache_set(bpe_cache_entry* base, unsigned long long h) {
    return &base[2 * ((h >> 40) & (BPE_CACHE_SETS - 1))];
}
typedef struct {
    unsigned int gen;            /* low 32 bits of the generation; 0: empty */
    unsigned char length;
    unsigned char n_ids;
    unsigned char bytes[22];
    int ids[7];
} bpe_long_entry;                /* 64 bytes */
#define BPE_LONG_SLOTS 4096
#if defined(_MSC_VER)
static BPE_THREAD_LOCAL __declspec(align(64)) bpe_long_entry bpe_long_cache[BPE_LONG_SLOTS];
#else
static BPE_THREAD_LOCAL bpe_long_entry bpe_long_cache[BPE_LONG_SLOTS] __attribute__((aligned(64)));
#endif
static bpe_long_entry* bpe_long_cache_base(void) { return bpe_long_cache; }
static inline bpe_long_entry* bpe_long_slot(bpe_long_entry* base, unsigned long long h) {
    return &base[(h >> 20) & (BPE_LONG_SLOTS - 1)];
}

typedef struct {
    unsigned int gen;            /* low 32 bits of the generation; 0: empty */
    unsigned char length;
    unsigned char n_ids;
    unsigned char pad[2];
    unsigned char bytes[120];
    int ids[32];
} bpe_huge_entry;                /* 256 bytes */
#define BPE_HUGE_SLOTS 256
#if defined(_MSC_VER)
static BPE_THREAD_LOCAL __declspec(align(64)) bpe_huge_entry bpe_huge_cache[BPE_HUGE_SLOTS];
#else
static BPE_THREAD_LOCAL bpe_huge_entry bpe_huge_cache[BPE_HUGE_SLOTS] __attribute__((aligned(64)));
#endif
static bpe_huge_entry* bpe_huge_cache_base(void) { return bpe_huge_cache; }
static inline bpe_huge_entry* bpe_huge_slot(bpe_huge_entry* base, unsigned long long h) {
    return &base[(h >> 28) & (BPE_HUGE_SLOTS - 1)];
}

#endif /* BPE_PIECE_CACHE_H */
