"""The BPE model: how one pre-token becomes ids, under either of the two BPE rules.

* ``RankBPE`` is tiktoken's rule over a rank table (token bytes -> rank, and the rank is the
  id): merge the adjacent pair whose concatenated bytes have the lowest rank, the leftmost
  among equals; a piece that is itself a token is that token.  The compiled core runs it.
* ``MergeBPE`` is Hugging Face's rule over a ``tokenizer.json`` model: a vocabulary (token
  string -> id) and a list of merges; the listed pair with the lowest merge index is merged
  first (the leftmost among equals), and only listed pairs merge.  It also has HF's
  ``unk_token``/``fuse_unk``, ``byte_fallback``, ``continuing_subword_prefix``,
  ``end_of_word_suffix`` and ``ignore_merges``.  Its ``tokenize`` is the exact, general (pure
  Python, heap-based, O(n log n)) path.

Merge index and id are different things; ``MergeBPE.rank_form`` gives the rank table that
encodes exactly as the merge list does, when there is one (see ``equivalent_ranks``): then the
compiled core runs HF files too.  Byte-level models see pieces as UTF-8 bytes written in
GPT-2's display alphabet (``bpe.byte_unicode``); the mapping happens here, at the model's
boundary.  This module does not split text or know special tokens.
"""

from __future__ import annotations

import array
import heapq
from itertools import accumulate
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Optional

from ..errors import VocabularyError
from ..byte_unicode import byte_to_char, char_to_byte, from_display, to_display


@dataclass(frozen=True, eq=False)
class RankBPE:
    """A rank table (bytes -> rank = id) with all 256 single bytes.  ``decode_only``: tokens
    that can be decoded but that BPE never produces (bytes -> id).  ``merges``: the merges
    a trainer made, as id pairs (kept for ``Tokenizer.merges`` and the file)."""

    ranks: dict
    decode_only: dict = field(default_factory=dict)
    merges: Optional[tuple] = None

    def __post_init__(self):
        if not isinstance(self.ranks, dict):
            raise TypeError(f"mergeable_ranks must be a dict of bytes -> int, got {type(self.ranks).__name__}")
        object.__setattr__(self, "ranks", dict(self.ranks))  # ours: later changes to the argument do not leak in
        ranks = self.ranks
        plain = set(map(type, ranks)) <= {bytes} and set(map(type, ranks.values())) <= {int} and \
            min(ranks.values(), default=0) >= 0
        for token, rank in ([] if plain else ranks.items()):  # the slow pass names the bad entry
            if not isinstance(token, bytes) or not isinstance(rank, int) or rank < 0:
                raise TypeError(
                    f"mergeable_ranks must map bytes to non-negative int ranks; got {token!r}: {rank!r}"
                )
        if len(set(self.ranks.values())) != len(self.ranks):
            raise VocabularyError("two mergeable tokens have the same rank; every token needs its own rank (= id)")
        if self.merges is not None:
            self._check_merges()

    def _check_merges(self) -> None:
        """The merges must make the table: merge i joins two tokens of lower rank into the
        token of the i-th lowest rank among those over one byte (a list that does not, from a
        damaged file or another writer, would describe another tokenizer than its ranks)."""
        by_rank = {rank: token for token, rank in self.ranks.items()}
        made = sorted(rank for token, rank in self.ranks.items() if len(token) > 1)
        if len(self.merges) != len(made):
            raise VocabularyError(f"{len(self.merges)} merges for {len(made)} tokens over one byte: each such token "
                             "is made by one merge; pass the trainer's merges or none")
        for i, (pair, rank) in enumerate(zip(self.merges, made)):
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, int) for p in pair)):
                raise TypeError(f"merge {i} must be a pair of token ids, got {pair!r}")
            left, right = (by_rank.get(p) for p in pair)
            if left is None or right is None or max(pair) >= rank or left + right != by_rank[rank]:
                raise VocabularyError(f"merge {i} {pair} does not make the token of rank {rank} "
                                 f"({by_rank[rank]!r}) from two tokens of lower rank")


@dataclass(frozen=True, eq=False)
class MergeBPE:
    """Hugging Face's BPE model (``"type": "BPE"`` in ``tokenizer.json``)."""

    vocab: dict                       # token string -> id
    merges: tuple                     # in priority order: (left, right) pairs, or a file's
                                      # "left right" strings / [left, right] lists (``pairs``)
    unk_token: Optional[str] = None
    fuse_unk: bool = False
    byte_fallback: bool = False
    continuing_subword_prefix: Optional[str] = None
    end_of_word_suffix: Optional[str] = None
    ignore_merges: bool = False
    byte_level: bool = True           # pieces arrive in GPT-2's byte alphabet (a ByteLevel stage)
    merges_as_strings: bool = False   # how the file wrote them ("a b"), kept for writing back

    def __getstate__(self) -> dict:
        """The fields alone: the caches (``triples``, ``byte_form``, ...) are made again on use."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    # ------------------------------------------------------------------ the exact rule

    @cached_property
    def pairs(self) -> tuple:
        """The merges as (left, right) string pairs, in priority order."""
        return tuple(tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in self.merges)

    @cached_property
    def triples(self) -> list:
        """The merges as (left id, right id, new id), in priority order."""
        vocab = self.vocab
        prefix = self.continuing_subword_prefix
        if not prefix:
            return [(vocab[a], vocab[b], vocab[a + b]) for a, b in self.pairs]
        cut = len(prefix)
        return [(vocab[a], vocab[b], vocab[a + (b[cut:] if b.startswith(prefix) else b)]) for a, b in self.pairs]

    @cached_property
    def _pairs(self) -> dict:
        """(left id, right id) -> (merge index, new id); a repeated pair keeps its last entry."""
        return {(a, b): (rank, c) for rank, (a, b, c) in enumerate(self.triples)}

    @cached_property
    def _vocab_bytes(self) -> dict:
        """Each vocabulary string -> the bytes its display characters stand for (byte-level
        strings only; others are left out)."""
        table = _DISPLAY_TO_LATIN1
        tokens = list(self.vocab)
        # the usual vocabulary is all display characters: one translate and one encode for all
        # of it, cut at the tokens' lengths (a display character stands for one byte)
        try:
            data = "".join(tokens).translate(table).encode("latin-1")
        except UnicodeEncodeError:
            data = None
        if data is not None:
            ends = list(accumulate(map(len, tokens)))
            return dict(zip(tokens, map(data.__getitem__, map(slice, [0] + ends[:-1], ends))))
        out = {}
        for token in tokens:
            try:
                out[token] = token.translate(table).encode("latin-1")
            except UnicodeEncodeError:
                pass
        return out

    def _symbols(self, word: str, spans: Optional[list] = None) -> list[int]:
        """The ids the merges start from: one per character (with the subword prefix and the
        end-of-word suffix), byte tokens ``<0xNN>`` or ``unk_token`` for characters not in the
        vocabulary, and nothing for them when there is neither.  ``spans`` (a list) gets the
        ``(start, end)`` characters of ``word`` that each id stands for."""
        vocab = self.vocab
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        out: list[int] = []
        unk: Optional[int] = None  # a pending unknown (fused while fuse_unk)
        unk_start = 0
        last = len(word) - 1
        for i, ch in enumerate(word):
            s = ch
            if i > 0 and prefix:
                s = prefix + s
            if i == last and suffix:
                s = s + suffix
            tid = vocab.get(s)
            found = [tid] if tid is not None else None
            if found is None and self.byte_fallback:
                found = [vocab.get(f"<0x{b:02X}>") for b in s.encode("utf-8")]
                if None in found:
                    found = None
            if found is not None:  # a known character (or its bytes) ends a run of unknowns
                if unk is not None:
                    out.append(unk)
                    if spans is not None:
                        spans.append((unk_start, i))
                    unk = None
                out.extend(found)
                if spans is not None:
                    spans.extend([(i, i + 1)] * len(found))
                continue
            if self.unk_token is not None:
                unk_id = vocab[self.unk_token]
                if unk is not None and not self.fuse_unk:
                    out.append(unk)
                    if spans is not None:
                        spans.append((unk_start, i))
                    unk = None
                if unk is None:
                    unk_start = i
                unk = unk_id
        if unk is not None:
            out.append(unk)
            if spans is not None:
                spans.append((unk_start, len(word)))
        return out

    def tokenize(self, piece: str) -> list[int]:
        """The ids of one pre-token (text; a byte-level model maps its UTF-8 bytes first)."""
        word = to_display(piece.encode("utf-8")) if self.byte_level else piece
        if not word:
            return []
        if self.ignore_merges:
            whole = self.vocab.get(word)
            if whole is not None:
                return [whole]
        return merge_ids(self._symbols(word), self._pairs)

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        """:meth:`tokenize` with where each token lies: ``(id, start, end)`` in the
        characters of ``piece``.  As in HF, a token's place is the sum of the UTF-8 lengths
        of the characters before it that became tokens (a byte token ``<0xNN>`` counts one
        byte, a dropped unknown character none), and it spans the characters holding its
        first to last byte (in a byte-level model the characters of its bytes)."""
        word = to_display(piece.encode("utf-8")) if self.byte_level else piece
        if not word:
            return []
        # the word character of each byte of the word, and the piece character of each
        # word character
        byte_char = [i for i, c in enumerate(word) for _ in range(len(c.encode("utf-8")))]
        if self.byte_level:
            char_of = [i for i, c in enumerate(piece) for _ in range(len(c.encode("utf-8")))]
        else:
            char_of = range(len(piece))
        if self.ignore_merges:
            whole = self.vocab.get(word)
            if whole is not None:
                return [(whole, 0, len(piece))]
        spans: list = []
        symbols = self._symbols(word, spans)
        sizes = []  # each symbol's length in bytes: its characters', one for a byte token
        for k, (s, e) in enumerate(spans):
            byte_token = k + 1 < len(spans) and spans[k + 1] == (s, e) or k > 0 and spans[k - 1] == (s, e)
            sizes.append(1 if byte_token else len(word[s:e].encode("utf-8")))
        at: list = []
        ids = merge_ids(symbols, self._pairs, at)
        bounds = at + [len(symbols)]
        out = []
        pos = sum(sizes[:bounds[0]]) if bounds else 0
        for k, tid in enumerate(ids):
            end = pos + sum(sizes[bounds[k]:bounds[k + 1]])
            out.append((tid, char_of[byte_char[pos]], char_of[byte_char[end - 1]] + 1))
            pos = end
        return out

    def _plain_byte_level(self) -> bool:
        """Byte-level, every byte in the vocabulary, no subword prefix or word suffix: the
        shape the compiled core can hold."""
        if not self.byte_level or self.continuing_subword_prefix or self.end_of_word_suffix:
            return False
        return all(ch in self.vocab for ch in byte_to_char().values())

    def byte_form(self, compiled=None):
        """The :class:`ByteForm` both compiled rules are built from, for a byte-level model
        with every byte and no prefix or suffix (else ``None``).  ``compiled``: the compiled
        core's ``byte_level_form`` (bpe/_vocab_form.pxi), which gives the same tables for
        the common file in a fraction of the time (as a ``VocabTables``, with the same
        attributes), and ``None`` where this general version decides.  Computed once."""
        form = self.__dict__.get("_byte_form")
        if form is not None or not self._plain_byte_level():
            return form
        if compiled is not None:
            form = compiled(self.vocab, self.merges)
        if form is None:
            form = self._byte_form_here()
        self.__dict__["_byte_form"] = form  # (frozen: a cache, as cached_property keeps one)
        return form

    def _byte_form_here(self) -> "ByteForm":
        vocab = self.vocab
        as_bytes = self._vocab_bytes
        tokens = {data: vocab[token] for token, data in as_bytes.items()}
        decode_only = {token.encode("utf-8"): tid for token, tid in vocab.items() if token not in as_bytes}
        triples = self.triples
        first: list = []
        made: set = set()
        seen: set = set()
        shape, last = True, -1
        for a, b, tid in triples:
            if tid not in made:
                made.add(tid)
                first.append((tid, a, b))
            if shape:
                shape = tid >= last and (a, b) not in seen
                last = tid
                seen.add((a, b))
        unmade = sorted((data for data, tid in tokens.items() if len(data) > 1 and tid not in made), key=tokens.get)
        return ByteForm(tokens, decode_only, pack_ids(triples), pack_ids(first) if shape else None, unmade)

    def merge_form(self, compiled=None) -> Optional[tuple]:
        """``(tokens, decode_only, triples)`` of :meth:`byte_form`, for the compiled core's
        merge-list rule (bpe/_merges.pxi), or ``None``."""
        form = self.byte_form(compiled)
        return None if form is None else (form.tokens, form.decode_only, form.triples)

    # ------------------------------------------------------------------ the rank form

    def rank_form(self, compiled=None) -> Optional[tuple]:
        """``(ranks, decode_only, first)`` when the model is byte-level and shaped like a
        rank table, else ``None``: every byte present, no prefix or suffix, each merge's token
        id at least the one before (merge order = id order), no pair listed twice, and tokens
        no merge makes either absent or (without ``ignore_merges``) never produced.
        ``ranks`` maps token bytes to id (it is the byte form itself when that holds just
        the ranks: an ``Encoder`` takes either), ``first`` (packed) each merged token's first
        merge (:meth:`byte_form`).  Whether the two rules then agree on every input is
        :func:`equivalent_ranks`'s question."""
        form = self.byte_form(compiled)
        if form is None or form.first is None:
            return None
        ranks, decode_only = form, form.decode_only
        if form.unmade:  # never produced by the merge list: decodable only
            if self.ignore_merges:
                return None  # a whole piece could be one
            ranks, decode_only = dict(form.tokens), dict(decode_only)
            for data in form.unmade:
                if data in decode_only:
                    return None  # two tokens spell the same bytes
                decode_only[data] = ranks.pop(data)
        return ranks, decode_only, form.first

    # ------------------------------------------------------------------ decoding

    @cached_property
    def ids(self) -> frozenset:
        """Every id of the vocabulary."""
        fast = getattr(self.vocab, "ids", None)  # (a vocabulary left in its file: bpe.io.huggingface)
        return frozenset(fast() if fast is not None else self.vocab.values())

    @cached_property
    def id_to_token(self) -> dict:
        return {tid: token for token, tid in self.vocab.items()}

    def token_bytes(self, token: str) -> bytes:
        """The bytes a vocabulary string stands for (byte-level: its display characters)."""
        if self.byte_level:
            try:
                return from_display(token)
            except KeyError:
                pass
        return token.encode("utf-8")


@dataclass(frozen=True, eq=False)
class ByteForm:
    """A byte-level merge list as the compiled rules take it (:meth:`MergeBPE.byte_form`)."""

    tokens: dict           # the bytes of each byte-level vocabulary string -> its id
    decode_only: dict      # the UTF-8 bytes of the other strings -> id
    triples: bytes         # (left, right, new) ids in merge order, packed (pack_ids)
    first: Optional[bytes]  # packed (id, left, right): the first merge making each merged token,
                           # in merge order; None when a pair is listed twice or a merge makes a
                           # smaller id than the one before (no rank table can then agree)
    unmade: list           # the multi-byte tokens no merge makes, in id order


# display character -> the latin-1 character of its byte; the other characters below U+0100
# map past latin-1, so that encoding a string that is not byte-level fails
_DISPLAY_TO_LATIN1 = {ord(c): chr(b) for c, b in char_to_byte().items()}
for _c in range(256):
    _DISPLAY_TO_LATIN1.setdefault(_c, "\uffff")


_U32 = "I" if array.array("I").itemsize == 4 else "L"


def pack_ids(triples) -> bytes:
    """Id triples as native uint32, three per triple (as the compiled core reads them)."""
    return array.array(_U32, [x for t in triples for x in t]).tobytes()


def unpack_ids(packed: bytes) -> list[tuple[int, int, int]]:
    """The triples :func:`pack_ids` packed."""
    flat = array.array(_U32)
    flat.frombytes(packed)
    return list(zip(flat[0::3], flat[1::3], flat[2::3]))


def merge_ids(ids: list[int], pairs: dict, at: Optional[list] = None) -> list[int]:
    """HF's merge loop over ``ids``: ``pairs`` maps (left, right) to (merge index, new id);
    the listed pair with the lowest index merges first, the leftmost among equals.  A heap
    of (index, position, new id) with stale entries skipped: O(n log n).  ``at`` (a list)
    gets the index in ``ids`` where each resulting token starts."""
    n = len(ids)
    if n < 2:
        if at is not None:
            at.extend(range(n))
        return ids
    ids = list(ids)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for i in range(n - 1):
        m = pairs.get((ids[i], ids[i + 1]))
        if m is not None:
            heap.append((m[0], i, m[1]))
    heapq.heapify(heap)
    while heap:
        _, i, new = heapq.heappop(heap)
        if not alive[i] or nxt[i] >= n:
            continue
        j = nxt[i]
        m = pairs.get((ids[i], ids[j]))
        if m is None or m[1] != new:
            continue  # stale: the pair at i changed (and so spells another token)
        ids[i] = new
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] < n:
            prv[nxt[j]] = i
        p = prv[i]
        if p >= 0:
            m = pairs.get((ids[p], new))
            if m is not None:
                heapq.heappush(heap, (m[0], p, m[1]))
        if nxt[i] < n:
            m = pairs.get((new, ids[nxt[i]]))
            if m is not None:
                heapq.heappush(heap, (m[0], i, m[1]))
    kept = [i for i in range(n) if alive[i]]
    if at is not None:
        at.extend(kept)
    return [ids[i] for i in kept]


def equivalent_ranks(first_merges: bytes, core) -> bool:
    """Whether HF's merge-list rule and tiktoken's rank rule (ranks = ids) agree on every
    input, given a rank form's ``first`` (:meth:`MergeBPE.rank_form`) and a core built on its table
    (whose ``first_split_mismatch`` computes the canonical splits).

    Why this suffices: under the rank rule every merge of parts a, b into a token T is T's
    canonical split, the two parts that the rule holds on T's bytes alone just before it
    forms T (see bpe/_signatures.pxi), so pairs that are no canonical split never merge.
    When each token's canonical split is the first listed merge that makes it, and merge
    order is id order (checked by ``rank_form``), both rules pick the same pair at every
    step: the lowest merge index falls on the lowest-id token that any present pair makes,
    and among that token's pairs on its canonical split, whose leftmost occurrence is the
    rank rule's leftmost candidate (a canonical one).  A token whose canonical split has
    fewer or more than two parts (the rank rule does not form it from its own bytes) fails
    the check.  A whole piece that is a token is that token under the rank rule; under the
    merge rule too, since its own merges form it."""
    return core.first_split_mismatch(first_merges) < 0
