# The hand-written pre-tokenizer (bpe/_scanner.pyx): splits UTF-8 text exactly like tiktoken's
# regexes for the named patterns, without a regex engine.

from libc.stdint cimport uint8_t

cdef enum:
    PAT_NONE = 0      # no split: the whole text is one piece
    PAT_GPT2 = 1      # r50k_base / p50k_base / gpt2
    PAT_CL100K = 2
    PAT_O200K = 3
    PAT_LLAMA3 = 4
    N_PATTERNS = 5

cdef Py_ssize_t scan_piece(int pattern, const uint8_t* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil
