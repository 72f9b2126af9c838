"""Pure-Python reference backend: rank-priority BPE encoding and greedy BPE training.

This is the readable version of what ``bpe._core`` (encoding) and ``bpe._train`` (training)
do in Cython.  It is used when the compiled extension is missing or when the environment
variable ``BPE_PURE_PYTHON=1`` is set, and the test suite runs against both backends to prove
they agree id for id and merge for merge.  It favours clarity over speed: encoding scans for the
best pair on every step (a heap takes over for long pieces, so no input is quadratic) and
training recounts all pairs on every merge.

It does not split text into pre-tokens, decide special-token policy or read files; that is the
job of the pure-Python modules around it (``patterns``, ``special``, ``tokenizer``).  Given the
resolved sets of allowed and disallowed special tokens (:class:`Specials`), ``encode_text`` and
``batch`` apply them with ``bpe.special``, as the compiled core does in C.
"""

from __future__ import annotations

import array
import heapq
import operator
import threading
from typing import Iterable, Optional

import regex

from . import _reference_scan, byte_unicode, special
from .errors import TrainingError, VocabularyError
from .models.bpe import merge_ids, unpack_ids

NO_RANK = 2**31 - 1
#: pieces up to this many bytes are merged by scanning every pair at each step (O(n^2), the
#: plainest statement of the rule); longer ones by a heap (_merge_by_heap, O(n log n)), so
#: that no input makes this backend quadratic
SCAN_MAX = 64
_ID_TYPECODE = "I" if array.array("I").itemsize == 4 else "L"


class Encoder:
    """Holds the rank table (token bytes -> id) and the decoder (id -> token bytes).

    ``mergeable_ranks`` are the tokens BPE may produce (bytes -> rank, or a byte form whose
    ``tokens`` they are); their rank is their id and a lower rank merges first.  ``special_tokens`` (bytes -> id) can only be decoded, never produced
    by merging.
    """

    def __init__(self, mergeable_ranks, special_tokens: dict[bytes, int]):
        if not isinstance(mergeable_ranks, dict):  # a byte form (MergeBPE.byte_form): its tokens
            mergeable_ranks = mergeable_ranks.tokens
        self._ranks = dict(mergeable_ranks)
        self._merge_pairs: Optional[dict] = None  # (left, right) -> (index, new id): HF's rule
        self._ignore_merges = False
        self._decoder: dict[int, bytes] = {rank: token for token, rank in self._ranks.items()}
        for token, token_id in special_tokens.items():
            self._decoder[token_id] = token
        missing = [b for b in range(256) if bytes([b]) not in self._ranks]
        if missing:
            raise VocabularyError(
                f"mergeable_ranks lacks {len(missing)} single-byte tokens (first: {bytes([missing[0]])!r}); "
                "a byte-level BPE needs a rank for each of the 256 bytes"
            )

    def use_merge_list(self, triples: bytes, ignore_merges: bool) -> None:
        """Encode by Hugging Face's rule from now on (see bpe/_merges.pxi): ``triples`` holds
        ``(left, right, new)`` ids in priority order, packed (``bpe.models.bpe.pack_ids``)."""
        if self._merge_pairs is not None:
            raise RuntimeError("use_merge_list is called once per Encoder")
        self._merge_pairs = {(a, b): (i, c) for i, (a, b, c) in enumerate(unpack_ids(triples))}
        self._ignore_merges = bool(ignore_merges)

    def specials(self, tokens: dict[bytes, int]) -> "Specials":
        """``tokens`` (UTF-8 bytes -> id) as a set for ``encode_text`` and ``batch``."""
        return Specials(tokens)

    def encode_text(self, text: str, pattern: Optional[str], packed: bool = False,
                    allowed: Optional["Specials"] = None, disallowed: Optional["Specials"] = None):
        """Split ``text`` with the named ``pattern`` (None: no split) and encode it; with
        ``packed``, as bytes of native-endian 32-bit integers.  Tokens of ``allowed`` become
        their ids (the text between them is encoded on its own); a token of ``disallowed``
        anywhere in the text raises ``DisallowedSpecialTokenError``."""
        if disallowed is not None:
            special.check_disallowed(text, disallowed.names)
        ids: list[int] = []
        for segment, is_special in special.split(text, allowed.names if allowed is not None else frozenset()):
            if is_special:
                ids.append(allowed.ids[segment])  # type: ignore[union-attr]
            else:
                pieces = _reference_scan.split(segment, pattern) if pattern is not None else [segment]
                ids.extend(self.encode_pieces(pieces))
        return array.array(_ID_TYPECODE, ids).tobytes() if packed else ids

    def encode_offsets(self, text: str, pattern: Optional[str], allowed: Optional["Specials"] = None,
                       disallowed: Optional["Specials"] = None) -> tuple:
        """``encode_text`` with where each token came from: ``(ids, block)``, the block the
        token starts, ends and word ids (native uint32, one run after the other); a token spans the characters that hold its
        first to last byte (a token over part of a character spans that whole character);
        its word is the index of its pre-token (a special token found counts as one)."""
        if disallowed is not None:
            special.check_disallowed(text, disallowed.names)
        data = text.encode("utf-8")
        ids: list[int] = []
        spans: list[int] = [0]  # the byte ends of the tokens, after a leading 0
        words: list[int] = []
        for segment, is_special in special.split(text, allowed.names if allowed is not None else frozenset()):
            if is_special:
                ids.append(allowed.ids[segment])  # type: ignore[union-attr]
                spans.append(spans[-1] + len(segment.encode("utf-8")))
                words.append(words[-1] + 1 if words else 0)
                continue
            pieces = _reference_scan.split(segment, pattern) if pattern is not None else [segment]
            for piece in pieces:
                word = words[-1] + 1 if words else 0
                for tid in self.encode_piece_bytes(piece.encode("utf-8")):
                    ids.append(tid)
                    spans.append(spans[-1] + len(self._decoder[tid]))
                    words.append(word)
        # the character that holds each byte
        char_of = [0] * (len(data) + 1)
        c = -1
        for i, b in enumerate(data):
            if b & 0xC0 != 0x80:
                c += 1
            char_of[i] = c
        starts = [char_of[spans[i]] for i in range(len(ids))]
        ends = [char_of[spans[i + 1] - 1] + 1 for i in range(len(ids))]
        return ids, array.array(_ID_TYPECODE, starts + ends + words).tobytes()

    def batch(self, texts: list[str], pattern: Optional[str], allowed: Optional["Specials"] = None,
              disallowed: Optional["Specials"] = None, offsets: bool = False) -> "Batch":
        """A :class:`Batch` encoding each text like ``encode_text(t, pattern, False, allowed,
        disallowed)`` (with ``offsets``: like ``encode_offsets``); raises
        ``UnicodeEncodeError`` here if a text holds a lone surrogate, and
        ``DisallowedSpecialTokenError`` for the first text holding a disallowed token."""
        for t in texts:
            t.encode("utf-8")
            if disallowed is not None:
                special.check_disallowed(t, disallowed.names)
        return Batch(self, list(texts), pattern, allowed, offsets)

    def count_text(self, text: str, pattern: Optional[str], limit: int = -1) -> int:
        """Token count of ``encode_text``; -1 as soon as it passes ``limit`` (if >= 0)."""
        pieces = _reference_scan.split(text, pattern) if pattern is not None else [text]
        return self.count_pieces(pieces, limit)

    def count_pieces(self, pieces: list[str], limit: int = -1) -> int:
        """Token count of ``encode_pieces``; -1 as soon as it passes ``limit`` (if >= 0)."""
        total = 0
        for piece in pieces:
            total += len(self.encode_piece_bytes(piece.encode("utf-8")))
            if 0 <= limit < total:
                return -1
        return total

    def encode_pieces(self, pieces: list[str]) -> list[int]:
        """Encode each pre-token (raises ``UnicodeEncodeError`` on lone surrogates)."""
        out: list[int] = []
        for piece in pieces:
            out.extend(self.encode_piece_bytes(piece.encode("utf-8")))
        return out

    def encode_piece_bytes(self, piece: bytes, max_rank: int = -1) -> list[int]:
        """BPE-encode one pre-token given as bytes.

        The whole piece is emitted directly when it is a token.  Otherwise, starting from
        single bytes, the adjacent pair whose concatenation has the lowest rank is merged,
        the leftmost one among equals, until no adjacent pair is a token.  With
        ``max_rank >= 0`` only tokens of rank below ``max_rank`` may be formed (used to
        recover the merge that made a token).
        """
        ranks = self._ranks
        if self._merge_pairs is not None and max_rank < 0:
            if self._ignore_merges and len(piece) > 1 and piece in ranks:
                return [ranks[piece]]
            return merge_ids([ranks[piece[i:i + 1]] for i in range(len(piece))], self._merge_pairs)
        if max_rank < 0:
            whole = ranks.get(piece)
            if whole is not None:
                return [whole]
            limit = NO_RANK
        else:
            limit = max_rank
        if len(piece) > SCAN_MAX:
            return _merge_by_heap(piece, ranks, limit)
        bounds = list(range(len(piece) + 1))  # part i is piece[bounds[i]:bounds[i + 1]]
        while len(bounds) > 2:
            best_rank, best_i = limit, -1
            for i in range(len(bounds) - 2):
                rank = ranks.get(piece[bounds[i] : bounds[i + 2]], NO_RANK)
                if rank < best_rank:
                    best_rank, best_i = rank, i
            if best_i < 0:
                break
            del bounds[best_i + 1]
        return [ranks[piece[bounds[i] : bounds[i + 1]]] for i in range(len(bounds) - 1)]

    def first_split_mismatch(self, splits: bytes) -> int:
        """The index of the first packed ``(token, left, right)`` whose token's canonical
        split is not ``[left, right]``, or -1 (as the compiled core's)."""
        for i, (tid, a, b) in enumerate(unpack_ids(splits)):
            data = self._decoder.get(tid)
            if data is None or self.encode_piece_bytes(data, tid) != [a, b]:
                return i
        return -1

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        ids = [_as_id(i) for i in list(ids)]  # (a copy first: __index__ may change the caller's list)
        decoder = self._decoder
        try:
            return b"".join([decoder[i] for i in ids])
        except KeyError as exc:
            raise KeyError(_unknown_id_message(exc.args[0])) from None

    def token_bytes(self, token: int) -> bytes:
        token = _as_id(token)
        try:
            return self._decoder[token]
        except KeyError:
            raise KeyError(_unknown_id_message(token)) from None


def _merge_by_heap(piece: bytes, ranks: dict, limit: int) -> list[int]:
    """The rank rule of ``encode_piece_bytes`` in O(n log n): the adjacent pairs sit in a heap
    keyed by (rank, where the pair starts), so the pair popped first is the lowest rank, the
    leftmost among equals, as the scan picks; an entry whose parts have changed since it was
    pushed is skipped.  Parts are byte ranges: ``end[s]`` is where the part starting at
    ``s`` ends (``-1`` once it is merged into the part before it)."""
    n = len(piece)
    end = list(range(1, n + 1))
    start_before = list(range(-1, n))  # the part before the one starting at s starts here
    heap = []
    for s in range(n - 1):
        rank = ranks.get(piece[s:s + 2], NO_RANK)
        if rank < limit:
            heap.append((rank, s, s + 1, s + 2))
    heapq.heapify(heap)
    while heap:
        _, s, mid, e = heapq.heappop(heap)
        if end[s] != mid or mid >= n or end[mid] != e:
            continue  # stale: one of its parts has grown since
        end[s], end[mid] = e, -1
        if e < n:
            start_before[e] = s
        before = start_before[s]
        if before >= 0:
            rank = ranks.get(piece[before:e], NO_RANK)
            if rank < limit:
                heapq.heappush(heap, (rank, before, s, e))
        if e < n:
            rank = ranks.get(piece[s:end[e]], NO_RANK)
            if rank < limit:
                heapq.heappush(heap, (rank, s, e, end[e]))
    out, s = [], 0
    while s < n:
        out.append(ranks[piece[s:end[s]]])
        s = end[s]
    return out


class Specials:
    """A set of special-token strings with their ids, as the compiled core's ``Specials``."""

    def __init__(self, tokens: dict[bytes, int]):
        if not tokens:
            raise ValueError("Specials needs at least one token; pass None for no special tokens")
        if not all(tokens):
            raise ValueError("a special token cannot be empty")
        order = sorted(tokens, key=lambda b: (-len(b), b))
        self.tokens = tuple(b.decode("utf-8") for b in order)
        self.names = frozenset(self.tokens)
        self.ids = {b.decode("utf-8"): i for b, i in tokens.items()}
        self._regex = regex.compile(b"|".join(regex.escape(b) for b in order))

    def find(self, text: str, start: int = 0) -> Optional[tuple[int, str]]:
        """``(position, token)`` of the leftmost occurrence (positions in UTF-8 bytes) at or
        after byte ``start``, or None."""
        if start < 0:
            raise ValueError(f"start must be a byte position >= 0, got {start}")
        m = self._regex.search(text.encode("utf-8"), start)
        return None if m is None else (m.start(), m.group().decode("utf-8"))


class Batch:
    """Texts shared by every thread that calls :meth:`run` or :meth:`help` (each claims one
    text at a time under a lock); :meth:`results` gives the id lists in text order."""

    def __init__(self, encoder: Encoder, texts: list[str], pattern: Optional[str],
                 allowed: Optional[Specials] = None, offsets: bool = False):
        self._encode = encoder.encode_offsets if offsets else \
            (lambda text, pattern, allowed: encoder.encode_text(text, pattern, False, allowed))
        self._encoder = encoder
        self._texts = texts
        self._pattern = pattern
        self._allowed = allowed
        self._out: list[Optional[list[int]]] = [None] * len(texts)
        self._next = 0
        self._done = 0
        self._lock = threading.Condition()
        self._error: Optional[BaseException] = None

    def help(self) -> None:
        """Encode texts until none is left unclaimed."""
        while True:
            with self._lock:
                t = self._next
                if t >= len(self._texts):
                    return
                self._next += 1
            try:
                self._out[t] = self._encode(self._texts[t], self._pattern, self._allowed)
            except BaseException as exc:  # counted as done, so that run() stops waiting
                self._error = exc
                raise
            finally:
                with self._lock:
                    self._done += 1
                    self._lock.notify_all()

    def run(self) -> None:
        """:meth:`help`, then wait until every text has its list (as the compiled batch's
        ``run()``, which builds the lists of the texts its helpers hand over)."""
        self.help()
        with self._lock:
            self._lock.wait_for(lambda: self._done == len(self._texts))
        if self._error is not None:
            raise self._error

    def results(self) -> list[list[int]]:
        if self._error is not None:
            raise self._error
        if self._done != len(self._texts):
            raise RuntimeError(f"the batch has {len(self._texts) - self._done} texts without their id lists; "
                               "call run() first")
        return self._out  # type: ignore[return-value]


def _as_id(token: object) -> int:
    """``token`` as an int: ints, and integer types with ``__index__`` (numpy's)."""
    if type(token) is int:
        return token
    try:
        return operator.index(token)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"token ids must be ints, got {type(token).__name__}: {token!r}") from None


def _unknown_id_message(token: object) -> str:
    return f"token id {token!r} is not in the vocabulary of this tokenizer"


def _hf_byte_keys() -> list[int]:
    shown = byte_unicode.byte_to_char()
    keys = [0] * 256
    for rank, b in enumerate(sorted(range(256), key=lambda b: shown[b])):
        keys[b] = rank
    return keys


#: Tie-break rules, by name: the ordering key of each byte id (learned ids are their own key).
#: "ids": the byte value (byte tokens have ids 0..255).  "hf": Hugging Face's BpeTrainer order,
#: which numbers byte tokens in the order of their GPT-2 display characters (bytes 33-126,
#: 161-172 and 174-255 show as themselves, the others as U+0100 onwards), so ties go to the pair
#: with the smallest Hugging Face ids, as its trainer does.
TIE_BREAKS = {"ids": list(range(256)), "hf": _hf_byte_keys()}


class Trainer:
    """Greedy BPE training, resumable: ``run(n)`` learns up to n more tokens.

    Symbols start as bytes with ids 0..255.  Each step counts every adjacent pair of symbols
    over all words (weighted by the word's count, overlapping pairs counted each time), takes
    the most frequent pair, breaking ties by the smaller key of the left id and then of the
    right id (``TIE_BREAKS``), and replaces its occurrences left to right.  The merged symbol
    gets a new id (256, 257, ...) unless its bytes already are a token (two different pairs can
    spell the same bytes), in which case that token's id is reused and no new token is counted.
    Training ends when no pair is left or the best count is below ``min_frequency``.

    ``merges`` are ``(left_id, right_id, merged_id)``; ``tokens_after[i]`` is the weighted
    number of symbols after merge i and ``initial_tokens`` before any merge.
    """

    def __init__(self, words: list[bytes], counts: list[int], min_frequency: int = 1, tie_break: str = "ids"):
        if len(words) != len(counts):
            raise TrainingError("words and counts must have the same length")
        if tie_break not in TIE_BREAKS:
            raise TrainingError(f"tie_break must be one of {sorted(TIE_BREAKS)}, got {tie_break!r}")
        self._keys = TIE_BREAKS[tie_break]
        self._seqs = [list(w) for w in words]
        self._counts = list(counts)
        self._min_frequency = min_frequency
        self._vocab: dict[bytes, int] = {bytes([b]): b for b in range(256)}
        self._id_bytes: list[bytes] = [bytes([b]) for b in range(256)]
        self.merges: list[tuple[int, int, int]] = []
        self.initial_tokens = sum(len(s) * n for s, n in zip(self._seqs, self._counts))
        self.tokens_after: list[int] = []
        self.finished = False

    def _key(self, x: int) -> int:
        return x if x >= 256 else self._keys[x]

    def run(self, n_new_tokens: int) -> int:
        made = 0
        while made < n_new_tokens and not self.finished:
            stats: dict[tuple[int, int], int] = {}
            for seq, count in zip(self._seqs, self._counts):
                for pair in zip(seq, seq[1:]):
                    stats[pair] = stats.get(pair, 0) + count
            if not stats:
                self.finished = True
                break
            (a, b), best = min(stats.items(), key=lambda kv: (-kv[1], self._key(kv[0][0]), self._key(kv[0][1])))
            if best < self._min_frequency:
                self.finished = True
                break
            merged = self._id_bytes[a] + self._id_bytes[b]
            c = self._vocab.get(merged)
            if c is None:
                c = len(self._id_bytes)
                self._vocab[merged] = c
                self._id_bytes.append(merged)
                made += 1
            self.merges.append((a, b, c))
            total = 0
            for seq, count in zip(self._seqs, self._counts):
                i = 0
                while i < len(seq) - 1:
                    if seq[i] == a and seq[i + 1] == b:
                        seq[i : i + 2] = [c]
                    i += 1
                total += len(seq) * count
            self.tokens_after.append(total)
        return made


def train_merges(
    words: list[bytes], counts: list[int], n_new_tokens: int, min_frequency: int, tie_break: str = "ids"
) -> list[tuple[int, int, int]]:
    """Learn up to ``n_new_tokens`` tokens with :class:`Trainer`; return its merges."""
    trainer = Trainer(words, counts, min_frequency, tie_break)
    trainer.run(n_new_tokens)
    return trainer.merges
