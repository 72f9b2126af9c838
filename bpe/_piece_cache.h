/* The compiled encoder's per-thread piece caches (bpe/_core.pyx): a two-way set cache of
   short pieces and direct-mapped ones of longer and of the longest pieces, each entry tagged
   with its encoder's generation.  It holds no ids of its own making: _core.pyx reads and
   fills the entries.  Only _core.pyx includes this header.

   Each thread that encodes gets its caches from the heap on its first call: one zeroed
   block of bpe_cache_bytes(S) (8 MiB by default), whose pages the system maps only as entries are first
   written there, so a thread that encodes a few short texts holds a few pages of it.  The
   block is freed when the thread ends (a thread-specific key's destructor).  Where the
   block cannot be had (out of memory, no such key, or S = 0), the thread uses small static
   per-thread arrays instead; the sizes travel with the addresses (bpe_caches), so the
   lookups are the same either way. */
#ifndef BPE_PIECE_CACHE_H
#define BPE_PIECE_CACHE_H

#include <stdint.h>
#include <stdlib.h>
#if defined(_WIN32)
#  include <windows.h>
#  include <intrin.h>
#else
#  include <pthread.h>
#endif

typedef struct {
    unsigned int gen;            /* low 32 bits of the generation; 0: empty */
    int ids[3];
    unsigned long long head;     /* the piece's bytes 0..7, zero-padded */
    unsigned long long rest;     /* bytes 8..13 (bits 0..47), length (48..55), ids (56..63) */
} bpe_cache_entry;               /* 32 bytes: a set of two fills one cache line */

/* The direct-mapped entries of longer pieces: a piece of up to max_bytes and its up to
   max_ids ids. */
#define BPE_SIZED_ENTRY(entry, max_bytes, max_ids)                                        \
    typedef struct {                                                                      \
        unsigned int gen;        /* low 32 bits of the generation; 0: empty */            \
        unsigned char length;                                                             \
        unsigned char n_ids;                                                              \
        unsigned char bytes[max_bytes];                                                   \
        int ids[max_ids];                                                                 \
    } entry;
/* 64 bytes: 15-30 bytes, or up to 14 with more ids than a set entry holds */
BPE_SIZED_ENTRY(bpe_long_entry, 30, 7)
/* 256 bytes: 31-122 bytes */
BPE_SIZED_ENTRY(bpe_huge_entry, 122, 32)
/* (a compile error if an entry is not the size of whole cache lines) */
typedef char bpe_long_entry_fills_a_line[sizeof(bpe_long_entry) == 64 ? 1 : -1];
typedef char bpe_huge_entry_fills_four_lines[sizeof(bpe_huge_entry) == 256 ? 1 : -1];

/* a thread's caches: addresses and (power-of-two) sizes */
typedef struct {
    bpe_cache_entry* sets;       /* 2 * (set_mask + 1) entries */
    bpe_long_entry* longs;       /* long_mask + 1 entries */
    bpe_huge_entry* huges;       /* huge_mask + 1 entries */
    unsigned long long* short_in_long;  /* a bit per long entry: set while it holds a piece
                                    short enough for the sets (see bpe_long_holds_short) */
    unsigned long long set_mask, long_mask, huge_mask;
    size_t made_for;             /* the bpe_cache_sets they were made for */
} bpe_caches;

/* The heap block's sizes: S sets of two (64 bytes each), S / 2 long and S / 8 huge
   entries and S / 2 bits, 128 bytes per set in all and S / 16 more; S = 65,536 by default
   (8 MiB + 4 KiB).  S = 0: no block, the static arrays.  Text in scripts that o200k_base
   and cl100k_base split into long words (CJK, Thai, Cyrillic) has as many distinct long and
   huge pieces as short ones: 0.8 MB of the multilingual corpus has 14,019 distinct pieces
   for the sets, 9,367 long and 3,905 huge, which S / 4 and S / 16 direct-mapped entries
   lost to collisions on a second pass (63% and 40% found again). */
#define BPE_CACHE_SETS 65536
static size_t bpe_cache_sets = BPE_CACHE_SETS;   /* S for caches made from now on */
static size_t bpe_cache_bytes(size_t sets) {
    return (size_t)sets * (2 * sizeof(bpe_cache_entry) + sizeof(bpe_long_entry) / 2 + sizeof(bpe_huge_entry) / 8)
           + sets / 16;
}
/* The static fallback's: 256 sets, 256 long, 16 huge (36 KiB per thread). */
#define BPE_SMALL_SETS 256
#define BPE_SMALL_LONG 256
#define BPE_SMALL_HUGE 16

#if defined(_MSC_VER)
#  define BPE_TLS __declspec(thread)
#  define BPE_ALIGN64 __declspec(align(64))
#else
#  define BPE_TLS _Thread_local
#  define BPE_ALIGN64 __attribute__((aligned(64)))
#endif
static BPE_TLS bpe_caches bpe_thread_caches;          /* all zero until the thread's first call */
static BPE_TLS void* bpe_thread_block;                  /* its heap block (NULL: none) */
static BPE_TLS BPE_ALIGN64 bpe_cache_entry bpe_small_sets[2 * BPE_SMALL_SETS];
static BPE_TLS BPE_ALIGN64 bpe_long_entry bpe_small_long[BPE_SMALL_LONG];
static BPE_TLS BPE_ALIGN64 bpe_huge_entry bpe_small_huge[BPE_SMALL_HUGE];
static BPE_TLS unsigned long long bpe_small_short_in_long[BPE_SMALL_LONG / 64];

/* how many threads' blocks exist (for tests: each thread's is freed when it ends) */
static long bpe_live_blocks = 0;
static void bpe_live_blocks_add(long d) {
#if defined(_MSC_VER)
    _InterlockedExchangeAdd(&bpe_live_blocks, d);
#else
    __atomic_fetch_add(&bpe_live_blocks, d, __ATOMIC_RELAXED);
#endif
}
static long bpe_live_blocks_now(void) {
#if defined(_MSC_VER)
    return _InterlockedExchangeAdd(&bpe_live_blocks, 0);
#else
    return __atomic_load_n(&bpe_live_blocks, __ATOMIC_RELAXED);
#endif
}

/* the key whose destructor frees a thread's block when the thread ends (made at import) */
#if defined(_WIN32)
static DWORD bpe_cache_key = FLS_OUT_OF_INDEXES;
static VOID WINAPI bpe_cache_block_free(PVOID block) {
    if (block != NULL) {
        free(block);
        bpe_live_blocks_add(-1);
    }
}
static void bpe_caches_setup(void) {
    if (bpe_cache_key == FLS_OUT_OF_INDEXES)
        bpe_cache_key = FlsAlloc(bpe_cache_block_free);
}
static int bpe_cache_key_ok(void) { return bpe_cache_key != FLS_OUT_OF_INDEXES; }
static int bpe_cache_key_set(void* block) { return FlsSetValue(bpe_cache_key, block) ? 0 : -1; }
#else
static pthread_key_t bpe_cache_key;
static int bpe_cache_key_made = 0;
static void bpe_cache_block_free(void* block) {
    if (block != NULL) {
        free(block);
        bpe_live_blocks_add(-1);
    }
}
static void bpe_caches_setup(void) {
    if (!bpe_cache_key_made && pthread_key_create(&bpe_cache_key, bpe_cache_block_free) == 0)
        bpe_cache_key_made = 1;
}
static int bpe_cache_key_ok(void) { return bpe_cache_key_made; }
static int bpe_cache_key_set(void* block) { return pthread_setspecific(bpe_cache_key, block) == 0 ? 0 : -1; }
#endif

static bpe_caches bpe_caches_remake(void);
/* the calling thread's caches, made on its first call (one thread-local read after that,
   and made again if the size asked for has changed) */
static inline bpe_caches bpe_caches_of_thread(void) {
    bpe_caches c = bpe_thread_caches;
    if (c.sets != NULL && c.made_for == bpe_cache_sets)
        return c;
    return bpe_caches_remake();
}
static bpe_caches bpe_caches_remake(void) {
    bpe_caches c;
    size_t sets = bpe_cache_sets;
    char* block = NULL;
    if (bpe_thread_block != NULL) {
        bpe_cache_key_set(NULL);
        bpe_cache_block_free(bpe_thread_block);
        bpe_thread_block = NULL;
    }
    if (sets != 0 && bpe_cache_key_ok()) {
        /* (calloc of a block this size maps zero pages: nothing is written here) */
        block = (char*)calloc(1, bpe_cache_bytes(sets) + 64);
        if (block != NULL && bpe_cache_key_set(block) != 0) {
            free(block);
            block = NULL;
        }
    }
    if (block != NULL) {
        char* p = block + ((64 - ((uintptr_t)block & 63)) & 63);  /* (aligned to a line) */
        c.sets = (bpe_cache_entry*)p;
        c.longs = (bpe_long_entry*)(p + 2 * sets * sizeof(bpe_cache_entry));
        c.huges = (bpe_huge_entry*)((char*)c.longs + sets / 2 * sizeof(bpe_long_entry));
        c.short_in_long = (unsigned long long*)((char*)c.huges + sets / 8 * sizeof(bpe_huge_entry));
        c.set_mask = sets - 1;
        c.long_mask = sets / 2 - 1;
        c.huge_mask = sets / 8 - 1;
    } else {
        c.sets = bpe_small_sets;
        c.longs = bpe_small_long;
        c.huges = bpe_small_huge;
        c.short_in_long = bpe_small_short_in_long;
        c.set_mask = BPE_SMALL_SETS - 1;
        c.long_mask = BPE_SMALL_LONG - 1;
        c.huge_mask = BPE_SMALL_HUGE - 1;
    }
    c.made_for = sets;
    if (block != NULL)
        bpe_live_blocks_add(1);
    bpe_thread_block = block;
    bpe_thread_caches = c;
    return c;
}

/* the set, or the entry, of a piece of hash h (each from its own bits of h) */
static inline bpe_cache_entry* bpe_cache_set(const bpe_caches* c, unsigned long long h) {
    return &c->sets[2 * ((h >> 40) & c->set_mask)];
}
static inline bpe_long_entry* bpe_long_slot(const bpe_caches* c, unsigned long long h) {
    return &c->longs[(h >> 20) & c->long_mask];
}
/* Whether the long entry g may hold a piece short enough for the sets (one with more
   ids than a set entry holds).  A piece that short is looked for there only then: the
   entry's line is rarely in the CPU's caches, and such pieces are rare (English under
   o200k_base: one in twenty of the merged pieces that miss their set were probed for in
   vain).  The bit is a hint: it may stay set for an entry of another encoder or
   generation, and the entry is then checked as before. */
static inline int bpe_long_holds_short(const bpe_caches* c, const bpe_long_entry* g) {
    size_t i = (size_t)(g - c->longs);
    return (int)((c->short_in_long[i >> 6] >> (i & 63)) & 1);
}
static inline void bpe_long_mark_short(const bpe_caches* c, const bpe_long_entry* g, int is_short) {
    size_t i = (size_t)(g - c->longs);
    unsigned long long bit = 1ULL << (i & 63);
    if (is_short)
        c->short_in_long[i >> 6] |= bit;
    else
        c->short_in_long[i >> 6] &= ~bit;
}
static inline bpe_huge_entry* bpe_huge_slot(const bpe_caches* c, unsigned long long h) {
    return &c->huges[(h >> 26) & c->huge_mask];
}
#endif /* BPE_PIECE_CACHE_H */
