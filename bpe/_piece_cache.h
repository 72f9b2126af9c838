/* The compiled encoder's per-thread piece caches (bpe/_core.pyx): a two-way set cache of
   short pieces, two entries for each longer piece and a ring of the longest, each entry
   tagged with its encoder's generation.  It holds no ids of its own making: _core.pyx reads and
   fills the entries.  Only _core.pyx includes this header.

   Each thread that encodes gets its caches from the heap on its first call: one zeroed
   block of bpe_cache_bytes(S) (8.5 MiB by default), whose pages the system maps only as
   entries are first written there, so a thread that encodes a few short texts holds a few
   pages of it (on Linux huge pages of 2 MiB where the system allows: lookups land anywhere
   in the block, and with 4 KiB pages most of them also missed the TLB).  The
   block is freed when the thread ends (a thread-specific key's destructor).  Where the
   block cannot be had (out of memory, no such key, or S = 0), the thread uses small static
   per-thread arrays instead; the sizes travel with the addresses (bpe_caches), so the
   lookups are the same either way. */
#ifndef BPE_PIECE_CACHE_H
#define BPE_PIECE_CACHE_H

#include <stdint.h>
#include <stdlib.h>
#include "_c_helpers.h"     /* (bpe_big_calloc) */
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
/* A piece of 4-10 ids takes both entries of its set: the first as above with 3 of them,
   the second's gen 0 (so it never matches) and its other 28 bytes the other 7 (_core.pyx
   reads and writes them), so that such pieces (short runs of CJK text under cl100k_base)
   are found in the line their lookup starts on.  A piece that a set pushes out (one of up
   to 7 ids) moves to its first long entry: with two ways, a set that three pieces of a
   text share lost one of them at every turn (2.4 MB of prose, o200k_base: 6,779 of its
   42,648 merged pieces merged again on a second pass; moved, 32). */

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
/* 64 bytes: 15-30 bytes, or up to 14 with more ids than a set holds (10); a piece of
   either kind with more than 7 ids is kept here with n_ids LONG_IN_RING (_core.pyx), its
   ids in an entry of the ring below whose position + 1 the first 8 bytes of ids hold */
BPE_SIZED_ENTRY(bpe_long_entry, 30, 7)
/* (a compile error if an entry is not the size of a cache line) */
typedef char bpe_long_entry_fills_a_line[sizeof(bpe_long_entry) == 64 ? 1 : -1];

/* Longer pieces (31 bytes and more) are kept in a ring: each entry is as long as its piece
   and ids need (a head, the bytes, the ids), written where the last one ended, so that the
   oldest are written over first; an index slot per hash names the last entry made for it.
   An entry is found only through a slot that holds its hash and its position, and only
   while the ring has not come round to it again (positions count up over the thread's
   life, 64 bits: they do not wrap). */
typedef struct {
    unsigned long long pos1;     /* the entry's position in the ring + 1 (0: none) */
    unsigned long long hash;     /* the hash of the piece it holds */
} bpe_ring_slot;
typedef struct {
    unsigned int gen;            /* low 32 bits of the generation */
    unsigned short length;       /* the piece's bytes, which follow; then its ids, 4-aligned */
    unsigned short n_ids;
} bpe_ring_head;

/* a thread's caches: addresses and (power-of-two) sizes */
typedef struct {
    bpe_cache_entry* sets;       /* 2 * (set_mask + 1) entries */
    bpe_long_entry* longs;       /* long_mask + 1 entries */
    bpe_ring_slot* ring_index;   /* ring_index_mask + 1 slots */
    unsigned char* ring;         /* ring_size bytes, 8-aligned */
    unsigned long long* ring_end;   /* where the next entry goes (a position: mod ring_size) */
    unsigned char* short_tags;   /* a byte per long entry: a tag while it holds a piece short
                                    enough for the sets, else 0 (see bpe_long_holds_short) */
    unsigned long long set_mask, long_mask, ring_index_mask, ring_size;
    size_t made_for;             /* the bpe_cache_sets they were made for */
} bpe_caches;

/* The heap block's sizes: S sets of two (64 bytes each), S / 2 long entries, a ring of
   32 * S bytes and S / 2 index slots (16 bytes each): 136 bytes per set in all, then S / 2
   tag bytes and 64 more; S = 65,536 by default (8.5 MiB + 32 KiB).  S = 0: no block, the
   static arrays.  Text in scripts that o200k_base and cl100k_base split into long words
   (CJK, Thai, Cyrillic) has as many distinct long pieces as short ones: 0.8 MB of the
   multilingual corpus has 14,019 distinct pieces for the sets, 9,367 of 15-30 bytes and
   3,905 of 31-122 (46 bytes on average), which S / 4 and S / 16 direct-mapped entries of 64
   and 256 bytes lost to collisions on a second pass (63% and 40% found again). */
#define BPE_CACHE_SETS 65536
#define BPE_RING_PER_SET 32      /* ring bytes per set */
#define BPE_SETS_PER_RING_SLOT 2
static size_t bpe_cache_sets = BPE_CACHE_SETS;   /* S for caches made from now on */
static size_t bpe_cache_bytes(size_t sets) {
    return (size_t)sets * (2 * sizeof(bpe_cache_entry) + sizeof(bpe_long_entry) / 2 + BPE_RING_PER_SET
                           + sizeof(bpe_ring_slot) / BPE_SETS_PER_RING_SLOT)
           + sets / 2 + 64;
}
/* The static fallback's: 256 sets, 256 long, a ring of 8 KiB and 64 slots (41 KiB per
   thread). */
#define BPE_SMALL_SETS 256
#define BPE_SMALL_LONG 256
#define BPE_SMALL_RING 8192
#define BPE_SMALL_RING_SLOTS 64

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
static BPE_TLS BPE_ALIGN64 unsigned char bpe_small_ring[BPE_SMALL_RING];
static BPE_TLS bpe_ring_slot bpe_small_ring_index[BPE_SMALL_RING_SLOTS];
static BPE_TLS unsigned long long bpe_small_ring_end;
static BPE_TLS unsigned char bpe_small_short_tags[BPE_SMALL_LONG];

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
    char* p = NULL;
    if (bpe_thread_block != NULL) {
        bpe_cache_key_set(NULL);
        bpe_cache_block_free(bpe_thread_block);
        bpe_thread_block = NULL;
    }
    if (sets != 0 && bpe_cache_key_ok()) {
        /* (calloc of a block this size maps zero pages: nothing is written here; huge ones
           where Linux allows, since every lookup lands at random in the block) */
        p = (char*)bpe_big_calloc(bpe_cache_bytes(sets), (void**)&block);
        if (block != NULL && bpe_cache_key_set(block) != 0) {
            free(block);
            block = NULL;
        }
    }
    if (block != NULL) {
        c.sets = (bpe_cache_entry*)p;
        c.longs = (bpe_long_entry*)(p + 2 * sets * sizeof(bpe_cache_entry));
        c.ring = (unsigned char*)c.longs + sets / 2 * sizeof(bpe_long_entry);
        c.ring_index = (bpe_ring_slot*)(c.ring + BPE_RING_PER_SET * sets);
        c.ring_end = (unsigned long long*)(c.ring_index + sets / BPE_SETS_PER_RING_SLOT);
        c.short_tags = (unsigned char*)c.ring_end + 64;
        c.set_mask = sets - 1;
        c.long_mask = sets / 2 - 1;
        c.ring_index_mask = sets / BPE_SETS_PER_RING_SLOT - 1;
        c.ring_size = BPE_RING_PER_SET * sets;
    } else {
        c.sets = bpe_small_sets;
        c.longs = bpe_small_long;
        c.ring = bpe_small_ring;
        c.ring_index = bpe_small_ring_index;
        c.ring_end = &bpe_small_ring_end;
        c.short_tags = bpe_small_short_tags;
        c.set_mask = BPE_SMALL_SETS - 1;
        c.long_mask = BPE_SMALL_LONG - 1;
        c.ring_index_mask = BPE_SMALL_RING_SLOTS - 1;
        c.ring_size = BPE_SMALL_RING;
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
/* A longer piece (15-30 bytes) may be kept in either of two long entries, each chosen by
   its own bits of its hash, so that the pieces that share one line seldom share the other:
   it goes into its first where that holds no piece of this generation, else into its second,
   whose piece goes.  (Pairs of neighbouring lines, the piece put first and the old first
   moved to the second, lost every piece of a pair that three shared when a text came again
   in the same order: each pushed out the next one due.) */
static inline bpe_long_entry* bpe_long_first(const bpe_caches* c, unsigned long long h) {
    return &c->longs[(h >> 20) & c->long_mask];
}
static inline bpe_long_entry* bpe_long_second(const bpe_caches* c, unsigned long long h) {
    return &c->longs[((h * 0x9E3779B97F4A7C15ULL) >> 40) & c->long_mask];
}
/* Whether long entry a (a short piece's first: see bpe_long_short_place) may hold the short
   piece (one short enough for the sets) whose tag is tag (_short_tag in _core.pyx: bits of
   its hash and of the generation, the top bit set): each long entry has a tag byte, 0 while
   it holds a longer piece.  A short piece that misses its set is looked for in its long
   entry only where the tag matches: its line is rarely in the CPU's caches, and most short
   pieces that miss their set are new.  Tags are a hint: one may match for an entry of
   another piece, encoder or generation (1 in 128), and the entry is then checked as
   before. */
static inline int bpe_long_holds_short(const bpe_caches* c, const bpe_long_entry* a, unsigned char tag) {
    return c->short_tags[a - c->longs] == tag;
}
/* the long entry where a new longer piece of hash h goes (see bpe_long_first); its tag 0 */
static inline bpe_long_entry* bpe_long_place(const bpe_caches* c, unsigned long long h, unsigned int gen) {
    bpe_long_entry* x = bpe_long_first(c, h);
    if (x->gen == gen)
        x = bpe_long_second(c, h);
    c->short_tags[x - c->longs] = 0;
    return x;
}
/* the long entry where a short piece of hash h goes (one that its set pushed out, or with
   more ids than a set holds): its first, whatever is there (one tag, one line to look at
   for each short piece that misses its set, most of them new), its tag set to tag */
static inline bpe_long_entry* bpe_long_short_place(const bpe_caches* c, unsigned long long h, unsigned char tag) {
    bpe_long_entry* x = bpe_long_first(c, h);
    c->short_tags[x - c->longs] = tag;
    return x;
}

/* a pair of the ring's index slots after a hit in its second: that slot first */
static inline void bpe_ring_pair_swap(bpe_ring_slot* x) {
    bpe_ring_slot t = x[1];
    x[1] = x[0];
    x[0] = t;
}
/* the ring's pair of index slots for a piece of hash h (two neighbours in one line: the
   slot used last first) */
static inline bpe_ring_slot* bpe_ring_slot_of(const bpe_caches* c, unsigned long long h) {
    return &c->ring_index[(h >> 26) & c->ring_index_mask & ~1ULL];
}
/* the entry at position pos1 - 1 (pos1 from bpe_ring_append, 0: none) if the ring has not
   come round to it since (the entries after it would then have reached it), else NULL */
static inline const bpe_ring_head* bpe_ring_at(const bpe_caches* c, unsigned long long pos1) {
    unsigned long long pos = pos1 - 1;
    if (pos1 == 0 || *c->ring_end - pos > c->ring_size)
        return NULL;
    return (const bpe_ring_head*)(c->ring + (pos & (c->ring_size - 1)));
}
/* the entry slot s names if it was made for hash h and is still there, else NULL */
static inline const bpe_ring_head* bpe_ring_entry(const bpe_caches* c, const bpe_ring_slot* s,
                                                  unsigned long long h) {
    return s->hash == h ? bpe_ring_at(c, s->pos1) : NULL;
}
/* the bytes an entry takes for a piece of n bytes and k ids (a multiple of 8) */
static inline size_t bpe_ring_entry_size(size_t n, size_t k) {
    return (sizeof(bpe_ring_head) + ((n + 3) & ~(size_t)3) + 4 * k + 7) & ~(size_t)7;
}
/* where an entry's bytes and ids are */
static inline unsigned char* bpe_ring_bytes(const bpe_ring_head* e) {
    return (unsigned char*)(e + 1);
}
static inline int* bpe_ring_ids(const bpe_ring_head* e) {
    return (int*)((unsigned char*)(e + 1) + ((e->length + 3) & ~3u));
}
/* Room for a new entry of `size` bytes (from bpe_ring_entry_size, at most ring_size / 4),
   slot s now naming it for hash h: the caller fills it.  No entry runs past the ring's
   end: one that would starts at the beginning again. */
static inline bpe_ring_head* bpe_ring_append(const bpe_caches* c, size_t size, unsigned long long* pos1) {
    /* (bpe_ring_add for a caller that keeps the new entry's position + 1 itself, in pos1) */
    unsigned long long pos = *c->ring_end;
    size_t at = (size_t)(pos & (c->ring_size - 1));
    if (at + size > c->ring_size) {
        pos += c->ring_size - at;
        at = 0;
    }
    *c->ring_end = pos + size;
    *pos1 = pos + 1;
    return (bpe_ring_head*)(c->ring + at);
}
static inline bpe_ring_head* bpe_ring_add(const bpe_caches* c, bpe_ring_slot* s, unsigned long long h,
                                          size_t size) {
    s->hash = h;
    return bpe_ring_append(c, size, &s->pos1);
}
#endif /* BPE_PIECE_CACHE_H */
