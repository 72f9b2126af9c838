# Shared C types of the compiled core, and the token table that both the encoder
# (bpe/_core.pyx) and the trainer (bpe/_train.pyx) use.
#
# Token ids are 32-bit ranks (tok_t).  A TokenTable maps token bytes <-> id: the bytes of all
# tokens live in one growable blob, `off`/`length` index it by id, and an open-addressing hash
# (`slots`, linear probing, power-of-two size, load <= 1/2; each 16-byte slot holds the
# token's first 8 bytes, its length and its place in the blob, so that a lookup reads one
# line of the table and, for tokens over 8 bytes, one line of the blob) finds the id of a
# byte string.
# Tokens added with hashed=False (special tokens) can be decoded but are never found by
# tt_find, so BPE can never produce them.
#
# Memory: raw malloc/realloc only (callable without the GIL); tt_free releases everything.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

ctypedef int32_t tok_t

cdef enum:
    FILTER_WORDS = 65536  # 2**22 bits = 512 KiB: rejects most absent strings without a table probe
    NO_TOKEN = -1
    NO_RANK = 0x7FFFFFFF
    # pieces of up to this many units use the linear scan, longer ones the heap
    LINEAR_MAX = 128
    # the heap version works in stack arrays up to this many bytes
    STACK_MAX = 256
    SLOT_FAR = 0x7FFFFF
    SLOT_SPILLED = 0x80000000

ctypedef struct Slot:
    uint64_t head        # the token's first (up to) 8 bytes, zero-padded
    uint32_t lenoff      # its length (255: 255 or more) in bits 0..7, so that short tokens
                         # are matched without reading the blob, its offset in the blob in
                         # bits 8..30 (SLOT_FAR: 8 MiB or more, read t.off instead), and in
                         # bit 31 SLOT_SPILLED: some token whose home slot this is sits
                         # further on; 0 in an empty slot
    tok_t token          # NO_TOKEN when the slot is empty

ctypedef struct TokenTable:
    uint8_t* blob
    Py_ssize_t blob_len
    Py_ssize_t blob_cap
    Py_ssize_t* off
    int32_t* length
    Py_ssize_t n_ids
    Py_ssize_t id_cap
    Slot* slots
    Py_ssize_t n_slots
    Py_ssize_t n_keys
    uint64_t* filter     # one bit per hash value (top 22 bits): most absent strings stop here

cdef int tt_init(TokenTable* t) except -1 nogil
cdef void tt_free(TokenTable* t) noexcept nogil
cdef int tt_add(TokenTable* t, tok_t token, const uint8_t* data, Py_ssize_t n, bint hashed) except -1 nogil
cdef tok_t tt_find(const TokenTable* t, const uint8_t* data, Py_ssize_t n) noexcept nogil
cdef uint64_t hash_bytes(const uint8_t* data, Py_ssize_t n) noexcept nogil


# Hugging Face's merge-list rule (bpe/_merges.pxi): its pair table; slots == NULL where an
# encoder runs tiktoken's rank rule instead.
ctypedef struct MergeList:
    uint64_t* slots          # one word a slot: left id << 43 | right id << 22 | merge index
                             # (all ones where free)
    Py_ssize_t mask          # slots - 1 (slots a power of two)
    uint32_t* new_id         # the token each merge makes, by merge index
    uint32_t* bytes2         # the merge index of the pair of byte tokens (b1, b2) at
                             # [b1 << 8 | b2]: a piece's first lookups, from 256 KiB
    int ignore_merges        # a piece that is a token of the table is that token
