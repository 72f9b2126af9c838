/* The compiled encoder's thread-local piece caches (bpe/_core.pyx): a two-way set cache of
   short pieces and direct-mapped ones of longer and of the longest pieces, each entry tagged
   with its encoder's generation.  Only _core.pyx includes this header: each thread has one
   copy. */
#ifndef BPE_PIECE_CACHE_H
#define BPE_PIECE_CACHE_H

/* a thread-local array of count entries, aligned to a cache line */
#if defined(_MSC_VER)
#  define BPE_TLS_ARRAY(type, name, count) static __declspec(thread) __declspec(align(64)) type name[count]
#else
#  define BPE_TLS_ARRAY(type, name, count) static _Thread_local type name[count] __attribute__((aligned(64)))
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
BPE_TLS_ARRAY(bpe_cache_entry, bpe_piece_cache, 2 * BPE_CACHE_SETS);
static bpe_cache_entry* bpe_piece_cache_base(void) { return bpe_piece_cache; }
static inline bpe_cache_entry* bpe_cache_set(bpe_cache_entry* base, unsigned long long h) {
    return &base[2 * ((h >> 40) & (BPE_CACHE_SETS - 1))];
}
/* The direct-mapped caches of longer pieces: an entry holds a piece of up to max_bytes
   and its up to max_ids ids; slot (h >> shift) of the piece's hash h. */
#define BPE_SIZED_CACHE(entry, name, max_bytes, max_ids, slots, shift)                      \
    typedef struct {                                                                      \
        unsigned int gen;        /* low 32 bits of the generation; 0: empty */            \
        unsigned char length;                                                             \
        unsigned char n_ids;                                                              \
        unsigned char bytes[max_bytes];                                                   \
        int ids[max_ids];                                                                 \
    } entry;                                                                              \
    BPE_TLS_ARRAY(entry, name##_cache, slots);                                            \
    static entry* name##_cache_base(void) { return name##_cache; }                        \
    static inline entry* name##_slot(entry* base, unsigned long long h) {                 \
        return &base[(h >> shift) & ((slots) - 1)];                                       \
    }
/* 64 bytes: 15-30 bytes, or up to 14 with more ids than a set entry holds */
BPE_SIZED_CACHE(bpe_long_entry, bpe_long, 30, 7, 4096, 20)
/* 256 bytes: 31-122 bytes */
BPE_SIZED_CACHE(bpe_huge_entry, bpe_huge, 122, 32, 256, 28)
/* (a compile error if an entry is not the size of whole cache lines) */
typedef char bpe_long_entry_fills_a_line[sizeof(bpe_long_entry) == 64 ? 1 : -1];
typedef char bpe_huge_entry_fills_four_lines[sizeof(bpe_huge_entry) == 256 ? 1 : -1];

#endif /* BPE_PIECE_CACHE_H */
