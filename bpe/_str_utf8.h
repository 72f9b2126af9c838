/* The UTF-8 form of a str's code points, written into a buffer the compiled core owns.

   CPython's own conversion (PyUnicode_AsUTF8AndSize) goes one code point at a time and
   keeps its result attached to the str for the str's lifetime: a text of mostly ASCII with
   one curly quote costs about 11 instructions per byte to convert, and a large text stays
   twice in memory after it is encoded.  Here runs of ASCII move 16 code units at a time
   (SSE2 where the compiler targets it, a machine word otherwise), other 2- and 4-byte units
   eight and four at a time without a branch on their sizes (SSE2), and the caller frees the
   buffer when the call ends (bpe/_str_utf8.pxi sizes it: the worst case for texts up to a
   million characters, the counted size above that).  Only canonical (compact) strs of 1-,
   2- or 4-byte kind are read; a lone surrogate stops the conversion (the caller then takes
   CPython's path, which raises as before).  Nothing here calls Python; the functions run
   without the GIL. */
#ifndef BPE_STR_UTF8_H
#define BPE_STR_UTF8_H

#include <stdint.h>
#include <string.h>
#include <Python.h>
#include "_c_helpers.h"      /* (bpe_ctz64) */

#define BPE_UTF8_SURROGATE ((Py_ssize_t)-1)

/* The UTF-8 form CPython already keeps for a compact non-ASCII str (some code asked for it
   through PyUnicode_AsUTF8AndSize), or NULL: it is read in place, never made here.  Not on
   free-threaded builds, where CPython sets it under a lock of its own. */
static inline const char* bpe_utf8_kept(PyObject* s, Py_ssize_t* n) {
#if !defined(Py_LIMITED_API) && !defined(PYPY_VERSION) && !defined(Py_GIL_DISABLED)
    const PyCompactUnicodeObject* c = (const PyCompactUnicodeObject*)s;
    if (c->utf8 != NULL) {
        *n = c->utf8_length;
        return c->utf8;
    }
#endif
    (void)s;
    (void)n;
    return NULL;
}

/* BPE_NO_SIMD (the sanitizer build) compiles the portable word-at-a-time loops instead */
#if !defined(BPE_NO_SIMD) && (defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2))
#  include <emmintrin.h>
#  define BPE_UTF8_SSE2 1
#endif

/* the scalar rules, for what the vector loops leave (and for machines without SSE2) */
static inline Py_ssize_t bpe_utf8_unit_size(uint32_t c) {
    return 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000);
}
static inline int bpe_utf8_is_surrogate(uint32_t c) {
    return (c & 0xFFFFF800u) == 0xD800;
}
static inline uint8_t* bpe_utf8_put(uint8_t* out, uint32_t c) {
    if (c < 0x80) {
        *out++ = (uint8_t)c;
    } else if (c < 0x800) {
        *out++ = (uint8_t)(0xC0 | (c >> 6));
        *out++ = (uint8_t)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *out++ = (uint8_t)(0xE0 | (c >> 12));
        *out++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        *out++ = (uint8_t)(0x80 | (c & 0x3F));
    } else {
        *out++ = (uint8_t)(0xF0 | (c >> 18));
        *out++ = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
        *out++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        *out++ = (uint8_t)(0x80 | (c & 0x3F));
    }
    return out;
}

/* bytes the UTF-8 form of n code units of the given kind takes, or BPE_UTF8_SURROGATE */
static Py_ssize_t bpe_utf8_size(int kind, const void* data, Py_ssize_t n) {
    Py_ssize_t size = n, i = 0;
    if (kind == 1) {
        const uint8_t* s = (const uint8_t*)data;
#ifdef BPE_UTF8_SSE2
        /* each byte >= 0x80 takes two: count the high bits 16 at a time */
        for (; i + 16 <= n; i += 16) {
            int m = _mm_movemask_epi8(_mm_loadu_si128((const __m128i*)(s + i)));
            while (m) {
                size++;
                m &= m - 1;
            }
        }
#endif
        for (; i < n; i++)
            size += s[i] >> 7;
        return size;
    }
    if (kind == 2) {
        const uint16_t* s = (const uint16_t*)data;
#ifdef BPE_UTF8_SSE2
        /* per lane: +1 from 0x80, +1 more from 0x800 (saturating subtraction leaves a lane
           nonzero exactly when it is above the bound); the lane counters are summed before
           they can overflow */
        const __m128i below80 = _mm_set1_epi16(0x7F), below800 = _mm_set1_epi16(0x7FF);
        const __m128i zero = _mm_setzero_si128();
        const __m128i sur_mask = _mm_set1_epi16((short)0xF800), sur = _mm_set1_epi16((short)0xD800);
        __m128i acc = zero, bad = zero;
        Py_ssize_t run = 0;
        uint16_t lanes[8];
        int k;
        for (; i + 8 <= n; i += 8) {
            __m128i v = _mm_loadu_si128((const __m128i*)(s + i));
            /* cmpeq(sat_sub, 0) is -1 for lanes at or below the bound: add 1 + (-1) or 1 + 0 */
            acc = _mm_add_epi16(acc, _mm_add_epi16(_mm_set1_epi16(2),
                  _mm_add_epi16(_mm_cmpeq_epi16(_mm_subs_epu16(v, below80), zero),
                                _mm_cmpeq_epi16(_mm_subs_epu16(v, below800), zero))));
            bad = _mm_or_si128(bad, _mm_cmpeq_epi16(_mm_and_si128(v, sur_mask), sur));
            if (++run == 16384) {
                _mm_storeu_si128((__m128i*)lanes, acc);
                for (k = 0; k < 8; k++)
                    size += lanes[k];
                acc = zero;
                run = 0;
            }
        }
        _mm_storeu_si128((__m128i*)lanes, acc);
        for (k = 0; k < 8; k++)
            size += lanes[k];
        if (_mm_movemask_epi8(bad))
            return BPE_UTF8_SURROGATE;
#endif
        for (; i < n; i++) {
            if (bpe_utf8_is_surrogate(s[i]))
                return BPE_UTF8_SURROGATE;
            size += bpe_utf8_unit_size(s[i]) - 1;
        }
        return size;
    }
    {
        const uint32_t* s = (const uint32_t*)data;
        for (; i < n; i++) {
            if (bpe_utf8_is_surrogate(s[i]))
                return BPE_UTF8_SURROGATE;
            size += bpe_utf8_unit_size(s[i]) - 1;
        }
        return size;
    }
}

#ifdef BPE_UTF8_SSE2
/* lanes of eight 2-byte code units that are surrogates (all ones) */
static inline __m128i bpe_utf8_surrogates8(__m128i v) {
    return _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xF800)), _mm_set1_epi16((short)0xD800));
}
/* Eight code units below 0x10000 and not surrogates: each one's form (1-3 bytes) is made in
   its 16-bit lane (the first two bytes) and a second lane (the third), the pairs are
   stored four bytes at a time, and out moves by each one's size, so text that mixes sizes
   costs what one size does (x86 is little-endian: a lane's low byte goes first).  Writes
   up to three bytes past the forms. */
static inline uint8_t* bpe_utf8_put8(uint8_t* out, __m128i c) {
    const __m128i zero = _mm_setzero_si128(), six = _mm_set1_epi16(0x3F), cont = _mm_set1_epi16(0x80);
    __m128i two = _mm_cmpeq_epi16(_mm_cmpeq_epi16(_mm_subs_epu16(c, _mm_set1_epi16(0x7F)), zero), zero);
    __m128i three = _mm_cmpeq_epi16(_mm_cmpeq_epi16(_mm_subs_epu16(c, _mm_set1_epi16(0x7FF)), zero), zero);
    __m128i low6 = _mm_or_si128(cont, _mm_and_si128(c, six));                       /* 10xxxxxx */
    __m128i mid6 = _mm_or_si128(cont, _mm_and_si128(_mm_srli_epi16(c, 6), six));    /* 10xxxxxx */
    __m128i form2 = _mm_or_si128(_mm_or_si128(_mm_set1_epi16(0xC0), _mm_srli_epi16(c, 6)), _mm_slli_epi16(low6, 8));
    __m128i form3 = _mm_or_si128(_mm_or_si128(_mm_set1_epi16(0xE0), _mm_srli_epi16(c, 12)), _mm_slli_epi16(mid6, 8));
    __m128i first = _mm_or_si128(_mm_and_si128(three, form3),
                    _mm_andnot_si128(three, _mm_or_si128(_mm_and_si128(two, form2), _mm_andnot_si128(two, c))));
    /* size: 1 + (two ? 1 : 0) + (three ? 1 : 0), the masks being -1 */
    __m128i size = _mm_sub_epi16(_mm_sub_epi16(_mm_set1_epi16(1), two), three);
    uint32_t forms[8];
    uint16_t sizes[8];
    int k;
    _mm_storeu_si128((__m128i*)forms, _mm_unpacklo_epi16(first, low6));
    _mm_storeu_si128((__m128i*)(forms + 4), _mm_unpackhi_epi16(first, low6));
    _mm_storeu_si128((__m128i*)sizes, size);
    for (k = 0; k < 8; k++) {
        memcpy(out, &forms[k], 4);
        out += sizes[k];
    }
    return out;
}
/* lanes of four 4-byte code units that are surrogates (all ones) */
static inline __m128i bpe_utf8_surrogates4(__m128i v) {
    return _mm_cmpeq_epi32(_mm_and_si128(v, _mm_set1_epi32((int)0xFFFFF800)), _mm_set1_epi32(0xD800));
}
/* Four code points that are not surrogates, as bpe_utf8_put8 does eight 2-byte units: each
   one's form (1-4 bytes) is made in its 32-bit lane.  Writes up to three bytes past. */
static inline uint8_t* bpe_utf8_put4(uint8_t* out, __m128i c) {
    const __m128i six = _mm_set1_epi32(0x3F), cont = _mm_set1_epi32(0x80);
    __m128i two = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7F));
    __m128i three = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7FF));
    __m128i four = _mm_cmpgt_epi32(c, _mm_set1_epi32(0xFFFF));
    /* the continuation bytes: 10 and the low six bits of c, c >> 6, c >> 12 */
    __m128i k0 = _mm_or_si128(cont, _mm_and_si128(c, six));
    __m128i k1 = _mm_or_si128(cont, _mm_and_si128(_mm_srli_epi32(c, 6), six));
    __m128i k2 = _mm_or_si128(cont, _mm_and_si128(_mm_srli_epi32(c, 12), six));
    __m128i form2 = _mm_or_si128(_mm_or_si128(_mm_set1_epi32(0xC0), _mm_srli_epi32(c, 6)), _mm_slli_epi32(k0, 8));
    __m128i form3 = _mm_or_si128(_mm_or_si128(_mm_set1_epi32(0xE0), _mm_srli_epi32(c, 12)),
                                 _mm_or_si128(_mm_slli_epi32(k1, 8), _mm_slli_epi32(k0, 16)));
    __m128i form4 = _mm_or_si128(_mm_or_si128(_mm_set1_epi32(0xF0), _mm_srli_epi32(c, 18)),
                                 _mm_or_si128(_mm_slli_epi32(k2, 8),
                                              _mm_or_si128(_mm_slli_epi32(k1, 16), _mm_slli_epi32(k0, 24))));
    __m128i form = _mm_or_si128(_mm_and_si128(four, form4), _mm_andnot_si128(four,
                   _mm_or_si128(_mm_and_si128(three, form3), _mm_andnot_si128(three,
                   _mm_or_si128(_mm_and_si128(two, form2), _mm_andnot_si128(two, c))))));
    __m128i size = _mm_sub_epi32(_mm_sub_epi32(_mm_sub_epi32(_mm_set1_epi32(1), two), three), four);
    uint32_t forms[4], sizes[4];
    int k;
    _mm_storeu_si128((__m128i*)forms, form);
    _mm_storeu_si128((__m128i*)sizes, size);
    for (k = 0; k < 4; k++) {
        memcpy(out, &forms[k], 4);
        out += sizes[k];
    }
    return out;
}
/* four code points as bpe_utf8_put4 does, or as four bytes where all are ASCII (text in
   4-byte units is mostly text of other sizes with an emoji here and there) */
static inline uint8_t* bpe_utf8_quarter4(uint8_t* out, __m128i c, __m128i high) {
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(c, high), _mm_setzero_si128())) == 0xFFFF) {
        __m128i b = _mm_packs_epi32(c, c);
        uint32_t w = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(b, b));
        memcpy(out, &w, 4);
        return out + 4;
    }
    return bpe_utf8_put4(out, c);
}
#endif

/* write the UTF-8 form of n code units to out, which has room for bpe_utf8_size bytes and
   BPE_UTF8_ROOM more; return the end of what was written, or NULL at a lone surrogate.
   Runs of ASCII move 16 at a time.  A block of 16 one-byte units that is not all ASCII
   moves its ASCII start in one store (the whole block is stored, the rest written over
   later: the units left make at least 16 more bytes), then the character that ended it;
   one of wider units goes eight (2-byte) or four (4-byte) at a time, each unit's form made
   without a branch on its size (text of wide characters mixes sizes). */
#define BPE_UTF8_ROOM 4
static uint8_t* bpe_utf8_write(int kind, const void* data, Py_ssize_t n, uint8_t* out) {
    Py_ssize_t i = 0;
    if (kind == 1) {
        const uint8_t* s = (const uint8_t*)data;
        while (i < n) {
#ifdef BPE_UTF8_SSE2
            if (i + 16 <= n) {
                __m128i v = _mm_loadu_si128((const __m128i*)(s + i));
                int m = _mm_movemask_epi8(v);
                _mm_storeu_si128((__m128i*)out, v);
                if (!m) {
                    out += 16;
                    i += 16;
                    continue;
                }
                m = bpe_ctz64((uint64_t)(unsigned int)m);
                out += m;
                i += m;
                out = bpe_utf8_put(out, s[i++]);
                continue;
            }
#else
            uint64_t w;
            if (i + 8 <= n) {
                memcpy(&w, s + i, 8);
                if (!(w & 0x8080808080808080ULL)) {
                    memcpy(out, &w, 8);
                    out += 8;
                    i += 8;
                    continue;
                }
                /* not all ASCII: these 8 one by one */
                for (Py_ssize_t end = i + 8; i < end; i++)
                    out = bpe_utf8_put(out, s[i]);
                continue;
            }
#endif
            out = bpe_utf8_put(out, s[i++]);
        }
        return out;
    }
    if (kind == 2) {
        const uint16_t* s = (const uint16_t*)data;
#ifdef BPE_UTF8_SSE2
        const __m128i high = _mm_set1_epi16((short)0xFF80);
#endif
        while (i < n) {
#ifdef BPE_UTF8_SSE2
            if (i + 16 <= n) {
                /* sixteen ASCII code units narrow to sixteen bytes */
                __m128i v = _mm_loadu_si128((const __m128i*)(s + i));
                __m128i w = _mm_loadu_si128((const __m128i*)(s + i + 8));
                if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(_mm_or_si128(v, w), high),
                                                      _mm_setzero_si128())) == 0xFFFF) {
                    _mm_storeu_si128((__m128i*)out, _mm_packus_epi16(v, w));
                    out += 16;
                    i += 16;
                    continue;
                }
                /* not all ASCII: eight at a time without a branch on their sizes */
                if (_mm_movemask_epi8(_mm_or_si128(bpe_utf8_surrogates8(v), bpe_utf8_surrogates8(w))))
                    return NULL;
                out = bpe_utf8_put8(out, v);
                out = bpe_utf8_put8(out, w);
                i += 16;
                continue;
            }
#else
            uint64_t w;
            if (i + 4 <= n) {
                /* four code units in one word: all ASCII when no 16-bit lane has a bit
                   above 0x7F (each lane is masked alike whatever the byte order) */
                memcpy(&w, s + i, 8);
                if (!(w & 0xFF80FF80FF80FF80ULL)) {
                    out[0] = (uint8_t)s[i];
                    out[1] = (uint8_t)s[i + 1];
                    out[2] = (uint8_t)s[i + 2];
                    out[3] = (uint8_t)s[i + 3];
                    out += 4;
                    i += 4;
                    continue;
                }
                /* not all ASCII: these 4 one by one */
                for (Py_ssize_t end = i + 4; i < end; i++) {
                    if (bpe_utf8_is_surrogate(s[i]))
                        return NULL;
                    out = bpe_utf8_put(out, s[i]);
                }
                continue;
            }
#endif
            if (bpe_utf8_is_surrogate(s[i]))
                return NULL;
            out = bpe_utf8_put(out, s[i++]);
        }
        return out;
    }
    {
        const uint32_t* s = (const uint32_t*)data;
#ifdef BPE_UTF8_SSE2
        const __m128i high = _mm_set1_epi32(~0x7F);
        for (; i + 16 <= n; i += 16) {
            __m128i a = _mm_loadu_si128((const __m128i*)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i*)(s + i + 4));
            __m128i c = _mm_loadu_si128((const __m128i*)(s + i + 8));
            __m128i d = _mm_loadu_si128((const __m128i*)(s + i + 12));
            if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)),
                                                                high), _mm_setzero_si128())) == 0xFFFF) {
                /* sixteen ASCII code units narrow to sixteen bytes */
                _mm_storeu_si128((__m128i*)out, _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
                out += 16;
                continue;
            }
            if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(bpe_utf8_surrogates4(a), bpe_utf8_surrogates4(b)),
                                               _mm_or_si128(bpe_utf8_surrogates4(c), bpe_utf8_surrogates4(d)))))
                return NULL;
            out = bpe_utf8_quarter4(out, a, high);
            out = bpe_utf8_quarter4(out, b, high);
            out = bpe_utf8_quarter4(out, c, high);
            out = bpe_utf8_quarter4(out, d, high);
        }
#endif
        for (; i < n; i++) {
            if (bpe_utf8_is_surrogate(s[i]))
                return NULL;
            out = bpe_utf8_put(out, s[i]);
        }
        return out;
    }
}

#endif /* BPE_STR_UTF8_H */
