"""``Encoding``: the ids of one text with where each token came from.

What ``Tokenizer.encode_with_offsets`` returns, with Hugging Face's names: ``ids``,
``offsets`` (the ``(start, end)`` character span of each token in the text as given, before
any normalization), ``tokens`` (readable strings, ``"Ġworld"``), ``word_ids`` (the index of
the pre-token each token came from; ``None`` for tokens the post-processor added and for
padding), ``special_tokens_mask`` (1 for those), ``attention_mask`` (0 for padding), and the lookups
``token_to_chars``, ``token_to_word``, ``char_to_token``, ``char_to_word``,
``word_to_tokens`` and ``word_to_chars``.

The compiled core hands the offsets over packed (32-bit unsigned arrays); the lists are made
when first asked for, so an encoding whose offsets are never read costs little more than its
ids.  This module does not encode; ``bpe.tokenizer`` fills it in.
"""

from __future__ import annotations

import array
from bisect import bisect_left, bisect_right
from typing import Callable, Optional

NO_WORD = 0xFFFFFFFF  # the packed word id of a token the post-processor added
_TYPECODE = "I" if array.array("I").itemsize == 4 else "L"


def packed(values) -> "array.array[int]":
    """``values`` (ints) as an unsigned 32-bit array."""
    return array.array(_TYPECODE, values)


def unpack(ids: list[int], block: bytes) -> tuple:
    """``(ids, starts, ends, word_ids)`` of a backend's ``encode_offsets`` result: views of
    the block's three runs of native uint32, one entry per id (no copy)."""
    k = len(ids)
    view = memoryview(block).cast(_TYPECODE)
    return ids, view[:k], view[k:2 * k], view[2 * k:]


def unpacked(parts: tuple) -> tuple:
    """``parts`` as ``(ids, starts, ends, word_ids[, shown])``: the core's ``(ids, block)``
    unpacked (:func:`unpack`), any other form as it is."""
    return unpack(*parts) if len(parts) == 2 else parts


class Encoding:
    """One encoded text (see the module docstring).  Build it with
    ``Tokenizer.encode_with_offsets``; it is read-only."""

    __slots__ = ("ids", "_block", "_s", "_e", "_w", "_token_string", "_shown", "_offsets", "_word_ids",
                 "_tokens", "_padding", "_overflowing")

    def __init__(self, ids: list[int], starts, ends, words, shown: Optional[dict],
                 token_string: Callable[[int], str], padding: tuple[int, int] = (0, 0)):
        self.ids = ids
        self._padding = padding  # (pad tokens before, after) the others: attention 0
        self._shown = shown or None  # token index -> string, where it is not the id's own
        self._block = None  # (the core's packed block, until the arrays are first needed)
        self._s = starts    # (uint32 arrays or views of them)
        self._e = ends
        self._w = words
        self._token_string = token_string
        self._offsets: Optional[list] = None
        self._word_ids: Optional[list] = None
        self._tokens: Optional[list] = None
        self._overflowing: Optional[list] = None

    @classmethod
    def from_block(cls, ids: list[int], block: bytes, token_string: Callable[[int], str]) -> "Encoding":
        """An encoding of the core's ``(ids, block)`` (see :func:`unpack`), unpacked when
        first read: an encoding whose offsets are never read makes no views of them (and
        hands the garbage collector two new objects, not seven)."""
        self = cls.__new__(cls)
        self.ids = ids
        self._block = block
        self._s = self._e = self._w = None
        self._token_string = token_string
        self._shown = None
        self._offsets = self._word_ids = self._tokens = None
        self._padding = (0, 0)
        self._overflowing = None
        return self

    @property
    def overflowing(self) -> list["Encoding"]:
        """HF's windows cut off by truncation: always empty here (``tokenizer(texts,
        return_overflowing_tokens=True)`` gives them as rows of their own)."""
        if self._overflowing is None:
            self._overflowing = []
        return self._overflowing

    def _unpack(self) -> None:
        _, self._s, self._e, self._w = unpack(self.ids, self._block)
        self._block = None

    @property
    def _starts(self):
        if self._s is None:
            self._unpack()
        return self._s

    @property
    def _ends(self):
        if self._e is None:
            self._unpack()
        return self._e

    @property
    def _words(self):
        if self._w is None:
            self._unpack()
        return self._w

    # ------------------------------------------------------------ the per-token lists

    @property
    def offsets(self) -> list[tuple[int, int]]:
        if self._offsets is None:
            self._offsets = list(zip(self._starts, self._ends))
        return list(self._offsets)

    @property
    def word_ids(self) -> list[Optional[int]]:
        if self._word_ids is None:
            words = self._words.tolist()
            if NO_WORD in words:
                words = [None if w == NO_WORD else w for w in words]
            self._word_ids = words
        return list(self._word_ids)

    @property
    def words(self) -> list[Optional[int]]:
        """HF's older name of :attr:`word_ids`."""
        return self.word_ids

    @property
    def tokens(self) -> list[str]:
        if self._tokens is None:
            string = self._token_string
            self._tokens = [string(i) for i in self.ids]
            if self._shown:
                for k, v in self._shown.items():
                    self._tokens[k] = v
        return list(self._tokens)

    @property
    def special_tokens_mask(self) -> list[int]:
        """1 for each token the post-processor added (``add_special_tokens=True``) and each
        pad token, else 0."""
        return [1 if w == NO_WORD else 0 for w in self._words]

    @property
    def attention_mask(self) -> list[int]:
        before, after = self._padding
        return [0] * before + [1] * (len(self.ids) - before - after) + [0] * after

    @property
    def type_ids(self) -> list[int]:
        return [0] * len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def padded(self, length: int, pad_id: int, left: bool = False) -> "Encoding":
        """This encoding with pad tokens (``pad_id``; no span, no word, attention 0, special
        mask 1) added on the right (``left``: on the left) up to ``length`` tokens, as HF's
        ``Encoding.pad`` (itself when it is that long already)."""
        n = length - len(self.ids)
        if n <= 0:
            return self
        pads, zeros, no_words = [pad_id] * n, packed([0] * n), packed([NO_WORD] * n)
        before, after = self._padding
        if left:
            return Encoding(pads + self.ids, zeros + packed(self._starts), zeros + packed(self._ends),
                            no_words + packed(self._words),
                            {k + n: v for k, v in self._shown.items()} if self._shown else None,
                            self._token_string, (before + n, after))
        return Encoding(self.ids + pads, packed(self._starts) + zeros, packed(self._ends) + zeros,
                        packed(self._words) + no_words, self._shown, self._token_string, (before, after + n))

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self.ids)}, attributes=[ids, offsets, tokens, word_ids, " \
               "special_tokens_mask, attention_mask])"

    # ------------------------------------------------------------ lookups

    def _check_token(self, i: int) -> int:
        if not isinstance(i, int):
            raise TypeError(f"a token index must be an int, got {type(i).__name__}")
        n = len(self.ids)
        if not -n <= i < n:
            raise IndexError(f"token index {i} is out of range for {n} tokens")
        return i % n

    def token_to_chars(self, token_index: int) -> Optional[tuple[int, int]]:
        """The character span of a token; None for a token the post-processor added."""
        i = self._check_token(token_index)
        if self._words[i] == NO_WORD:
            return None
        return self._starts[i], self._ends[i]

    def token_to_word(self, token_index: int) -> Optional[int]:
        i = self._check_token(token_index)
        w = self._words[i]
        return None if w == NO_WORD else w

    def _text_range(self) -> tuple[int, int]:
        """The tokens of the text: all but the post-processor's before and after them."""
        words = self._words
        lo, hi = 0, len(words)
        while lo < hi and words[lo] == NO_WORD:
            lo += 1
        while hi > lo and words[hi - 1] == NO_WORD:
            hi -= 1
        return lo, hi

    def char_to_token(self, char_index: int) -> Optional[int]:
        """The index of the first token whose span holds character ``char_index``, or None
        (a character no token covers, such as a space trimmed off by ``trim_offsets``)."""
        starts, ends = self._starts, self._ends
        lo, hi = self._text_range()
        # ends never decrease along the text, so the first token ending after the character
        # is the first that can hold it
        i = bisect_right(ends, char_index, lo, hi)
        while i < hi and starts[i] <= char_index:
            if char_index < ends[i]:
                return i
            i += 1
        return None

    def char_to_word(self, char_index: int) -> Optional[int]:
        i = self.char_to_token(char_index)
        return None if i is None else self._words[i]

    def word_to_tokens(self, word_index: int) -> Optional[tuple[int, int]]:
        """``(first, last + 1)``: the tokens of a word, or None when it has none."""
        words = self._words
        lo, hi = self._text_range()  # (word ids never decrease along the text)
        first = bisect_left(words, word_index, lo, hi)
        last = bisect_right(words, word_index, first, hi)
        return None if first == last else (first, last)

    def word_to_chars(self, word_index: int) -> Optional[tuple[int, int]]:
        """The character span of a word: from its first token's start to its last one's end."""
        span = self.word_to_tokens(word_index)
        if span is None:
            return None
        return self._starts[span[0]], self._ends[span[1] - 1]
