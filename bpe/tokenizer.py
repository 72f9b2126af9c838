"""The public ``Tokenizer`` class: the whole pipeline behind a tiktoken-compatible surface.

Encoding runs: special-token policy (``bpe.special``) -> Unicode normalization (optional) ->
pre-tokenization (``bpe.patterns``) -> rank-priority BPE of each pre-token (the backend's
``Encoder``) -> ids.  Decoding maps ids back to bytes.  The class also trains
(``Tokenizer.train``, via ``bpe.training``), loads tiktoken rank files, and saves/loads its own
file format (``bpe.fileformat``).

It holds no mutable state after construction, so one tokenizer can be shared by any number of
threads; it pickles cheaply (a bundled encoding pickles as its name).
"""

from __future__ import annotations

import array
import gc
import operator
import os
import threading
import unicodedata
from typing import AbstractSet, Collection, Iterable, Literal, Optional, Sequence, Union

from . import _backend, alignments, byte_unicode, decoders, model_inputs, normalizers, processors, renumber, special, training, unstable
from .encoding import Encoding, unpack, unpacked
from .io import huggingface
from .models.bpe import MergeBPE, RankBPE
from .pipeline import Pipeline, build_core, plan, pre_tokenize
from .pre_tokenizers import patterns
from .pre_tokenizers import split as pre_split
from .special import AddedToken
from .errors import (ArgumentError, BPEError, DisallowedSpecialTokenError, TokenizerFileError, TrainingError,
                     VocabularyError)
from .io.native import NORMALIZATIONS, TokenizerSpec, dumps, loads
from .io.tiktoken import load_tiktoken_ranks

PathLike = Union[str, "os.PathLike[str]"]
_ID_TYPECODE = "I" if array.array("I").itemsize == 4 else "L"
# the default special-token arguments, recognised by identity for a short per-call path
_NO_SPECIALS: frozenset = frozenset()
_ALL = "all"
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


class Tokenizer:
    """A byte-level BPE tokenizer.

    Build one with :meth:`train`, :meth:`from_tiktoken`, :meth:`load` or
    :func:`bpe.get_encoding`, or directly from a rank table::

        Tokenizer(mergeable_ranks, pattern="cl100k_base", special_tokens={"<|endoftext|>": 100257})

    ``mergeable_ranks`` maps token bytes to rank (= id; lower merges first) and must contain all
    256 single bytes.  ``pattern`` is a pattern name, ``None`` (no pre-tokenization) or a regex.
    """

    def __init__(
        self,
        mergeable_ranks: dict[bytes, int],
        *,
        pattern: Union[str, None, object],
        special_tokens: Optional[dict[str, int]] = None,
        name: Optional[str] = None,
        normalization: Optional[str] = None,
        explicit_n_vocab: Optional[int] = None,
        merges: Optional[Sequence[tuple[int, int]]] = None,
        _reduce_as: Optional[tuple] = None,
    ):
        model = RankBPE(mergeable_ranks, merges=tuple(tuple(m) for m in merges) if merges is not None else None)
        specials = dict(special_tokens or {})
        for tok, tid in specials.items():
            if not isinstance(tok, str) or not tok or not isinstance(tid, int) or tid < 0:
                raise TypeError(f"special_tokens must map non-empty str to non-negative int ids; got {tok!r}: {tid!r}")
        rank_ids = set(model.ranks.values())
        clash = sorted(tid for tid in specials.values() if tid in rank_ids)
        if clash:
            raise VocabularyError(
                f"special token id {clash[0]} is also the rank of a mergeable token; give special tokens ids "
                f"that no mergeable token uses (e.g. from {max(rank_ids, default=-1) + 1} on)"
            )
        pipeline = Pipeline(
            normalizer=normalizers.from_name(normalization),
            pre_tokenizer=pre_split.Pattern.from_argument(pattern),
            model=model,
            added_tokens=tuple(AddedToken(tok, tid) for tok, tid in specials.items()),
        )
        self._setup(pipeline, name, explicit_n_vocab, reduce_as=_reduce_as)

    def _setup(self, pipeline: Pipeline, name: Optional[str], explicit_n_vocab: Optional[int] = None,
               hf_config: Optional[dict] = None, reduce_as: Optional[tuple] = None) -> None:
        """Build the core for ``pipeline`` and the plan to run it (see ``bpe.pipeline``).
        ``reduce_as``: what this tokenizer pickles as (a bundled encoding: ``(get_encoding,
        (name,))``), when not its tables."""
        self._pipeline = pipeline
        self._reduce_as = reduce_as
        self._name = name
        self._hf_config = dict(hf_config) if hf_config is not None else None
        added = pipeline.added_tokens
        self._added_ids = {t.content: t.id for t in added}          # every added token -> id
        self._added_by_name = {t.content: t for t in added}
        self._special_tokens = {t.content: t.id for t in added if t.special}
        self._special_set = frozenset(self._special_tokens)
        self._special_ids = frozenset(self._special_tokens.values())
        self._always = frozenset(t.content for t in added if not t.special)  # HF's non-special ones
        self._special_sets: dict = {}  # frozenset of names -> the backend's Specials (_core_specials)
        self._backend = _backend.active()
        # every id: the model's (vocabulary, or ranks and decode-only tokens) and the added ones
        # (a rank table's are checked apart from its ranks when it is built, in __init__)
        model = pipeline.model
        added_ids = {t.id for t in added}
        if isinstance(model, MergeBPE):
            model_ids = model.ids
            top, n_model = max(model_ids, default=-1), len(model_ids)
        else:
            top = max(max(model.ranks.values(), default=-1), max(model.decode_only.values(), default=-1))
            n_model = len(model.ranks) + len(model.decode_only)
        if top >= 4 * n_model + 65536:
            raise VocabularyError(
                f"the model's token ids are too sparse: the largest is {top:,} for {n_model:,} tokens "
                "(its tables are indexed by id); renumber its tokens with dense ids"
            )
        if max(added_ids, default=0) >= 2 ** 32:
            raise VocabularyError(f"special token id {max(added_ids):,} is too large: ids are below 2**32 (as tiktoken's)")
        self._max_token_value = max(top, max(added_ids, default=-1))
        # added ids far above the model's are numbered densely inside the core (bpe.renumber)
        far = renumber.far_ids(top, added_ids)
        # what each added id decodes to; an id with two names (o200k_harmony's 200018 is
        # <|endofprompt|> and <|reserved_200018|>) decodes as its first
        added_bytes, named = {}, set()
        for t in added:
            if t.id not in named:
                named.add(t.id)
                added_bytes[_added_bytes(t, pipeline)] = far.get(t.id, t.id)
        self._core, self._token_table, self._rule = build_core(pipeline, self._backend, added_bytes)
        if far and self._core is not None:
            self._core = renumber.RenumberedCore(self._core, far)
        if explicit_n_vocab is not None and explicit_n_vocab != self._max_token_value + 1:
            raise VocabularyError(
                f"explicit_n_vocab={explicit_n_vocab} does not match the largest id + 1 "
                f"({self._max_token_value + 1}); pass None or the right size"
            )
        self._explicit_n_vocab = explicit_n_vocab
        self._added_strings = {}  # id -> its string (an id's first name: see added_bytes)
        for t in added:
            self._added_strings.setdefault(t.id, _added_text(t, pipeline))
        self._plan = run = plan(pipeline, self._core)
        # what _encoding needs: whether the post-processor changes an encoding (without and
        # with add_special_tokens), and one bound method for every encoding to hold
        self._post_changes = tuple(alignments.post_process_changes(pipeline.post_processor, add)
                                   for add in (False, True))
        self._token_string_of = self._token_string
        self._pattern_name = run.pattern_name
        self._pattern = run.pattern_source
        # named patterns (and no pattern) run on the backend's own scanner, which follows
        # tiktoken's Unicode tables; custom patterns on the `regex` module
        self._on_scanner = run.on_scanner
        self._regex = None if run.on_scanner or run.pattern_source is None else \
            patterns.compile_pattern(run.pattern_source)
        self._normalization = run.unicode_form
        # every added token's text, found in the core (see _core_form)
        added_texts = {t.content.encode("utf-8"): t.id for t in added}
        self._added_finder = self._core.specials(added_texts) \
            if run.unicode_form is not None and added_texts and self._core is not None else None
        self._merges = list(model.merges) if isinstance(model, RankBPE) and model.merges is not None else None
        self._recovered_merges: Optional[list[tuple[bytes, bytes]]] = None
        self._training_curve: Optional[list[tuple[int, int]]] = None
        # the compiled sets for encode(text) and encode(text, allowed_special="all")
        self._default_sets = (self._core_specials(self._always, self._special_set),
                              self._core_specials(self._special_set | self._always, frozenset()))

    # ---------------------------------------------------------------- construction

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        pattern: Union[str, None, object] = "o200k_base",
        special_tokens: Iterable[str] = (),
        min_frequency: int = 2,
        *,
        normalization: Optional[str] = None,
        name: Optional[str] = None,
        tie_break: str = "ids",
        progress: bool = False,
        num_threads: int = 1,
    ) -> "Tokenizer":
        """Learn a tokenizer from ``texts`` (any iterable of ``str``, read once, streamed).

        ``vocab_size`` counts the 256 byte tokens, the learned tokens and the special tokens;
        it is met exactly unless the text runs out of pairs or ``min_frequency`` (the least
        count a pair needs to be merged) stops training first.  Special tokens get the ids
        right after the learned tokens, in the order given; their text in ``texts`` is not
        learned from.  Merge ties are broken by the smaller left id, then the smaller right id;
        ``tie_break="hf"`` orders byte tokens as Hugging Face's BpeTrainer numbers them, to
        reproduce its vocabularies.  ``progress=True`` draws a progress line on stderr;
        ``num_threads`` counts pre-tokens on that many threads (same result).
        ``training_curve`` then holds the compression at every vocabulary size of the run.
        """
        specials = _special_list(special_tokens)
        patterns.resolve(pattern)  # a bad pattern fails before any text is read
        counts = training.count_pretokens(texts, pattern, specials, normalization, progress=progress,
                                          num_threads=num_threads)
        return cls.train_from_counts(counts, vocab_size, pattern, specials, min_frequency,
                                     normalization=normalization, name=name, tie_break=tie_break,
                                     progress=progress)

    @classmethod
    def train_from_files(
        cls,
        paths: Iterable[PathLike],
        vocab_size: int,
        pattern: Union[str, None, object] = "o200k_base",
        special_tokens: Iterable[str] = (),
        min_frequency: int = 2,
        errors: str = "strict",
        **options,
    ) -> "Tokenizer":
        """:meth:`train` on UTF-8 text files, read in chunks of about a million bytes (cut
        where no pre-token can span the cut), so a file never sits in memory whole.  A file
        that is not UTF-8 raises ``TrainingError`` with its name and the bad byte's offset;
        ``errors="replace"`` reads such bytes as U+FFFD instead."""
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        if errors not in ("strict", "replace"):
            raise TrainingError(f"errors={errors!r}: pass 'strict' (the default) or 'replace'")
        return cls.train(training.FileChunks(paths, errors=errors), vocab_size, pattern, special_tokens,
                         min_frequency, **options)

    def train_new(self, texts: Iterable[str], vocab_size: int, min_frequency: int = 2, **options) -> "Tokenizer":
        """A fresh vocabulary learned from ``texts`` with this tokenizer's split pattern,
        normalization and special tokens (their ids move to just after the new vocabulary)."""
        pattern = None if self._pattern is None else (self._pattern_name or patterns.RegexSource(self._pattern))
        specials = [tok for tok, _ in sorted(self._special_tokens.items(), key=lambda kv: kv[1])]
        options.setdefault("normalization", self._normalization)
        return type(self).train(texts, vocab_size, pattern, specials, min_frequency, **options)

    @classmethod
    def train_from_counts(
        cls,
        counts: "dict[bytes, int]",
        vocab_size: int,
        pattern: Union[str, None, object] = "o200k_base",
        special_tokens: Iterable[str] = (),
        min_frequency: int = 2,
        *,
        normalization: Optional[str] = None,
        name: Optional[str] = None,
        tie_break: str = "ids",
        progress: bool = False,
    ) -> "Tokenizer":
        """Learn a tokenizer from a pre-token count table (``bpe.count_pretokens``, possibly
        summed over shards).  Pass the pattern, special tokens and normalization the counts
        were made with; the result is what :meth:`train` gives on the same texts."""
        specials = _special_list(special_tokens)
        if normalization is not None and normalization not in NORMALIZATIONS:
            raise TrainingError(f"normalization must be one of {NORMALIZATIONS} or None, got {normalization!r}")
        for piece, n in counts.items():
            if not isinstance(piece, bytes) or not isinstance(n, int):
                raise TypeError(f"counts must map bytes to int >= 0 (as bpe.count_pretokens returns); got {piece!r}: {n!r}")
            if n < 0:
                raise TrainingError(f"counts must be >= 0 (as bpe.count_pretokens returns); got {piece!r}: {n!r}")
        ranks, merges, curve = training.learn(counts, vocab_size, len(specials), min_frequency,
                                              tie_break=tie_break, progress=progress)
        special_ids = {tok: len(ranks) + i for i, tok in enumerate(specials)}
        tok = cls._construct(ranks, pattern=pattern, special_tokens=special_ids, name=name,
                             normalization=normalization, merges=merges)
        tok._training_curve = curve
        return tok

    @classmethod
    def from_tiktoken(
        cls,
        path: PathLike,
        pattern: Union[str, None, object],
        special_tokens: Optional[dict[str, int]] = None,
        name: Optional[str] = None,
        *,
        expected_hash: Optional[str] = None,
    ) -> "Tokenizer":
        """Load a ``.tiktoken`` rank file (``base64 rank`` lines) with the given split pattern.

        The format has no checksum, so a line lost or edited can still read as a valid table
        (tiktoken accepts gaps in the ranks and tokens that no merge makes, and so does this);
        pass ``expected_hash`` (the file's SHA-256, hex, as tiktoken's own loader takes it) to
        refuse any other contents.  Bad lines, repeated tokens or ranks and missing single
        bytes are always refused, naming the line."""
        ranks = load_tiktoken_ranks(path, expected_hash)
        if name is None:
            name = os.path.basename(os.fspath(path)).rsplit(".", 1)[0]
        try:
            return cls._construct(ranks, pattern=pattern, special_tokens=special_tokens, name=name)
        except ValueError as exc:  # the file's table cannot make a tokenizer (a bad argument is the caller's)
            if isinstance(exc, BPEError) and not isinstance(exc, VocabularyError):
                raise
            raise TokenizerFileError(path, f"the rank table read cannot make a tokenizer: {exc}") from None

    @classmethod
    def load(cls, path: PathLike, *, verify: bool = True) -> "Tokenizer":
        """Load a tokenizer written by :meth:`save`.  A file whose bytes changed after it was
        saved raises ``TokenizerFileError`` (its checksum line no longer matches);
        ``verify=False`` loads a file edited on purpose (save it again to give it a checksum)."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise TokenizerFileError(path, f"cannot read the file: {exc.strerror or exc}") from None
        spec = loads(data, path, verify)
        try:
            return cls._from_spec(spec)
        except (ValueError, TypeError) as exc:
            raise TokenizerFileError(path, f"the file is well-formed but inconsistent: {exc}") from None

    @classmethod
    def _from_spec(cls, spec: TokenizerSpec) -> "Tokenizer":
        pattern = None if spec.pattern is None else patterns.RegexSource(spec.pattern)
        return cls._construct(spec.ranks, pattern=pattern, special_tokens=spec.special_tokens, name=spec.name,
                              normalization=spec.normalization, explicit_n_vocab=spec.explicit_n_vocab,
                              merges=spec.merges)

    @classmethod
    def _construct(cls, *args, **kwargs) -> "Tokenizer":
        """An instance of ``cls`` made by Tokenizer's own constructor (``bpe.Encoding`` takes
        tiktoken's arguments instead, and inherits the classmethods that build through this)."""
        tok = cls.__new__(cls)
        Tokenizer.__init__(tok, *args, **kwargs)
        return tok

    def _spec(self) -> TokenizerSpec:
        if isinstance(self._pipeline.model, MergeBPE):
            raise TokenizerFileError(
                self._name, "save() writes bpe's own format, which holds rank-table tokenizers; this one "
                            "was loaded from a tokenizer.json: write it with to_hf(path)")
        return TokenizerSpec(self._name, self._pattern, self._normalization, self._explicit_n_vocab,
                             dict(self._special_tokens), self._mergeable_ranks,
                             list(self._merges) if self._merges is not None else None)

    def save(self, path: PathLike) -> None:
        """Write everything this tokenizer needs to one text file (see ``bpe.fileformat``)."""
        data = dumps(self._spec())
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    def __reduce__(self):
        if self._reduce_as is not None:
            return self._reduce_as
        if isinstance(self._pipeline.model, MergeBPE):
            return (_rebuild_pipeline, (self._pipeline, self._name, self._hf_config))
        return (_rebuild, (self._spec(), type(self)))

    # ---------------------------------------------------------------- properties

    @property
    def name(self) -> Optional[str]:
        return self._name

    @property
    def pattern(self) -> Optional[str]:
        """The split regex source (``None``: the whole text is one pre-token)."""
        return self._pattern

    @property
    def _pat_str(self) -> Optional[str]:
        """tiktoken's name for :attr:`pattern` (its recipe for extending an encoding reads it)."""
        return self._pattern

    @property
    def normalization(self) -> Optional[str]:
        return self._normalization

    @property
    def backend(self) -> str:
        """Which backend this tokenizer runs on: ``"cython"`` or ``"python"``."""
        return self._backend.name

    @property
    def n_vocab(self) -> int:
        """The largest token id + 1 (ids in between may be unused, as in tiktoken)."""
        return self._max_token_value + 1

    @property
    def max_token_value(self) -> int:
        return self._max_token_value

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``; ``KeyError`` (as tiktoken) when there is no such token."""
        found = self._special_tokens.get("<|endoftext|>")
        if found is None:
            raise KeyError(f"'<|endoftext|>': this tokenizer has no such special token (its special tokens: "
                           f"{sorted(self._special_tokens)[:8]}); see special_tokens")
        return found

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_set)

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._special_tokens)

    @property
    def _mergeable_ranks(self) -> dict:
        """The core's token table (bytes -> id), made from a byte form when first asked for."""
        table = self._token_table
        if not isinstance(table, dict):
            table = self._token_table = table.tokens
        return table

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """A copy of the rank table (token bytes -> id)."""
        return dict(self._mergeable_ranks)

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """The merges as ``(left_bytes, right_bytes)``, in merge order.

        Trained and saved tokenizers keep the merges they were made with.  For rank tables
        (tiktoken files) they are recovered: the merge that made a token is the two-part
        encoding of its bytes using only lower ranks.  Tokens that lower ranks cannot build
        from two parts (unreachable by merging) have no merge and are left out.
        """
        model = self._pipeline.model
        if isinstance(model, MergeBPE):
            tb = model.token_bytes
            return [(tb(a), tb(b)) for a, b in model.pairs]
        if self._merges is not None:
            tb = self._core.token_bytes
            return [(tb(a), tb(b)) for a, b in self._merges]
        return self._canonical_merges()

    def _canonical_merges(self) -> list[tuple[bytes, bytes]]:
        """Each token's canonical split (the two parts that BPE on its bytes alone, with only
        lower ranks, ends with), in rank order; tokens with none are left out."""
        if self._recovered_merges is None:
            tb = self._core.token_bytes
            recovered = []
            for token, rank in sorted(self._mergeable_ranks.items(), key=lambda kv: kv[1]):
                if len(token) < 2:
                    continue
                parts = self._core.encode_piece_bytes(token, rank)
                if len(parts) == 2:
                    recovered.append((tb(parts[0]), tb(parts[1])))
            self._recovered_merges = recovered
        return list(self._recovered_merges)

    @property
    def training_curve(self) -> Optional[list[tuple[int, int]]]:
        """For a tokenizer trained in this process: ``[(n_vocab, tokens), ...]``, the number of
        tokens the training text takes with the vocabulary as it stood at each size (the first
        entry is bytes only), all from the one training run.  ``None`` otherwise (not saved)."""
        return list(self._training_curve) if self._training_curve is not None else None

    def __repr__(self) -> str:
        pat = self._pattern_name or ("none" if self._pattern is None else "custom")
        return f"<bpe.{type(self).__name__} {self._name!r} n_vocab={self.n_vocab} pattern={pat} backend={self.backend}>"

    # ---------------------------------------------------------------- encoding

    def _encode_plain(self, text: str) -> list[int]:
        if self._plan.staged:
            return self._encode_staged(text, frozenset())
        if self._normalization is not None:
            text = unicodedata.normalize(self._normalization, text)
        try:
            if self._on_scanner:
                return self._core.encode_text(text, self._pattern_name)
            return self._core.encode_pieces(patterns.split(self._regex, text))
        except UnicodeEncodeError:
            return self._encode_plain(training.repair_surrogates(text))

    def _count_plain(self, text: str, limit: int) -> int:
        if self._plan.staged:
            n = len(self._encode_staged(text, frozenset()))
            return -1 if 0 <= limit < n else n
        if self._normalization is not None:
            text = unicodedata.normalize(self._normalization, text)
        try:
            if self._on_scanner:
                return self._core.count_text(text, self._pattern_name, limit)
            return self._core.count_pieces(patterns.split(self._regex, text), limit)
        except UnicodeEncodeError:
            return self._count_plain(training.repair_surrogates(text), limit)

    def count(self, text: str) -> int:
        """``len(encode_ordinary(text))`` without building the ids (special-token text is
        counted as plain text): for context budgets and costs."""
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        return self._count_plain(text, -1)

    def count_till_limit(self, text: str, limit: int) -> Optional[int]:
        """The token count of ``text`` if it is at most ``limit``, else ``None``; encoding stops
        as soon as the count passes the limit, so a long text over budget costs little."""
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        if not isinstance(limit, int) or limit < 0:
            raise ArgumentError(f"limit must be an int >= 0, got {limit!r}")
        n = self._count_plain(text, limit)
        return None if n < 0 else n

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` with special-token strings treated as plain text."""
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        return self._encode_plain(text)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
        add_special_tokens: bool = False,
    ) -> list[int]:
        """Encode ``text``; special tokens follow tiktoken's rules.

        Special tokens in ``allowed_special`` become their id.  If the text contains one in
        ``disallowed_special`` (by default: every special token not allowed) a ``ValueError``
        says how to allow it or encode it as text.  Any other special-token text is plain text.
        Added tokens that are not special (in Hugging Face files) are always matched.
        ``add_special_tokens=True`` applies the post-processor (e.g. Llama's BOS), as HF does.
        """
        if type(text) is str and not add_special_tokens:  # the usual arguments, resolved already
            if disallowed_special is _ALL and (allowed_special is _NO_SPECIALS or allowed_special is _ALL):
                core_sets = self._default_sets[allowed_special is _ALL]
                if core_sets is not None:
                    core_text = text if self._normalization is None else self._core_form(text)
                    if core_text is not None:
                        return self._encode_in_core(core_text, core_sets, False)
            elif allowed_special is _NO_SPECIALS and type(disallowed_special) is tuple and not disallowed_special \
                    and not self._always:
                return self._encode_plain(text)  # disallowed_special=(): everything is plain text
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        ids = self._encode_checked(text, allowed_special, disallowed_special)
        return self._post_process(ids) if add_special_tokens else ids

    def _encode_checked(self, text: str, allowed_special, disallowed_special) -> list[int]:
        allowed, disallowed, core_sets = self._resolve_specials(allowed_special, disallowed_special)
        if core_sets is not None:
            core_text = text if self._normalization is None else self._core_form(text)
            if core_text is not None:
                return self._encode_in_core(core_text, core_sets, False)
        if self._plan.staged:
            return self._encode_staged(text, allowed, disallowed)
        special.check_disallowed(text, disallowed)
        if not allowed:
            return self._encode_plain(text)
        ids: list[int] = []
        for segment, is_special in special.split(text, allowed):
            if is_special:
                ids.append(self._added_ids[segment])
            else:
                ids.extend(self._encode_plain(segment))
        return ids

    # ---------------------------------------------------------------- offsets

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
        add_special_tokens: bool = False,
    ) -> Encoding:
        """:meth:`encode`, with where each token came from: an :class:`~bpe.encoding.Encoding`
        holding ``ids``, ``offsets`` (character spans in ``text`` as given), ``tokens``,
        ``word_ids``, ``special_tokens_mask`` and lookups between tokens, characters and
        words, all as Hugging Face ``tokenizers`` gives them.  A token over part of a
        character (byte-level BPE splits characters into bytes) spans that whole character;
        a word is a pre-token (a special token found in the text counts as one)."""
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        return self._encoding(self._offset_parts(text, *self._resolve_specials(allowed_special, disallowed_special)),
                              add_special_tokens)

    def _offset_parts(self, text: str, allowed: frozenset, disallowed: frozenset, core_sets) -> tuple:
        """``(ids, starts, ends, word ids[, token strings by index])`` of ``text``, before
        the post-processor: from the core when it can encode the text, else stage by stage."""
        if core_sets is not None:
            if self._normalization is None:
                return self._core_offsets(text, core_sets)
            core_text = self._core_form(text)
            if core_text is text:
                return self._core_offsets(text, core_sets)
            if core_text is not None:  # the normal form's offsets, moved back to the text
                return alignments.to_original(unpack(*self._core_offsets(core_text, core_sets)),
                                              alignments.unicode_form(self._normalization, text))
        return alignments.encode_staged(self, text, allowed, disallowed)

    def encode_with_offsets_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
        add_special_tokens: bool = False,
    ) -> list[Encoding]:
        """:meth:`encode_with_offsets` over many texts on up to ``num_threads`` threads (order
        kept; the offsets are found on the threads too)."""
        return [self._encoding(parts, add_special_tokens) for parts in
                self._offset_parts_batch(_check_texts(texts), num_threads, allowed_special, disallowed_special)]

    def _offset_parts_batch(self, texts: list[str], num_threads: int, allowed_special,
                            disallowed_special) -> list[tuple]:
        """:meth:`_offset_parts` of each text, on the core's threads when it can encode them all."""
        allowed, disallowed, core_sets = self._resolve_specials(allowed_special, disallowed_special)
        if core_sets is not None and (self._normalization is None or all(
                unicodedata.is_normalized(self._normalization, t) for t in texts)):
            return self._run_batch(texts, num_threads, core_sets[0], core_sets[1], True)
        return [self._offset_parts(t, allowed, disallowed, core_sets) for t in texts]

    # ---------------------------------------------------------------- model inputs

    def __call__(
        self,
        text: Union[str, Sequence[str]],
        *,
        add_special_tokens: bool = True,
        padding: Union[bool, str] = False,
        truncation: Union[bool, str, None] = None,
        max_length: Optional[int] = None,
        stride: int = 0,
        pad_to_multiple_of: Optional[int] = None,
        padding_side: Optional[str] = None,
        truncation_side: Optional[str] = None,
        return_tensors: Optional[str] = None,
        return_token_type_ids: Optional[bool] = None,
        return_attention_mask: bool = True,
        return_overflowing_tokens: bool = False,
        return_special_tokens_mask: bool = False,
        return_offsets_mapping: bool = False,
        return_length: bool = False,
        pad_token: Optional[str] = None,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
        num_threads: int = 8,
    ) -> model_inputs.BatchEncoding:
        """Model-ready inputs of a text or a list of texts, as a transformers tokenizer's call:
        a :class:`~bpe.model_inputs.BatchEncoding` with ``input_ids``, ``attention_mask`` and
        the columns asked for (``offset_mapping``, ``special_tokens_mask``, ``length``,
        ``token_type_ids``, ``overflow_to_sample_mapping``), and ``.tokens(i)``,
        ``.word_ids(i)``.  Truncation, stride windows and padding follow transformers (see
        ``bpe.model_inputs``); ``return_tensors="np"`` gives numpy arrays (numpy is optional).

        The pad token, padding and truncation sides and ``model_max_length`` come from the
        ``tokenizer_config.json`` read by :meth:`from_hf`; ``pad_token=`` names another (or
        one for a tokenizer without).  Special tokens in the texts follow ``allowed_special``
        / ``disallowed_special`` as in :meth:`encode`, so by default such text raises where
        transformers would take it as the token: pass ``allowed_special="all"`` for that."""
        batched = not isinstance(text, str)
        texts = _check_texts(text) if batched else [text]
        config = self._hf_config or {}
        pad_token = pad_token if pad_token is not None else config.get("pad_token")
        if pad_token is not None and not isinstance(pad_token, str):
            raise TypeError(f"pad_token must be a str naming a token, got {type(pad_token).__name__}")
        options = model_inputs.resolve(
            add_special_tokens=add_special_tokens, padding=padding, truncation=truncation, max_length=max_length,
            stride=stride, pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side or config.get("padding_side") or "right",
            truncation_side=truncation_side or config.get("truncation_side") or "right",
            return_tensors=return_tensors, return_token_type_ids=return_token_type_ids,
            return_attention_mask=return_attention_mask, return_special_tokens_mask=return_special_tokens_mask,
            return_offsets_mapping=return_offsets_mapping, return_length=return_length,
            return_overflowing_tokens=return_overflowing_tokens,
            n_added=processors.added_count(self._pipeline.post_processor) if add_special_tokens else 0,
            model_max_length=config.get("model_max_length"),
            pad_id=None if pad_token is None else self.token_to_id(pad_token), pad_token=pad_token,
            model_input_names=config.get("model_input_names"))
        encodings: list[Encoding] = []
        sample_map: list[int] = []
        for i, parts in enumerate(self._offset_parts_batch(texts, num_threads, allowed_special, disallowed_special)):
            n = len(parts[0])
            cuts = [(0, n)] if options.budget is None else \
                model_inputs.windows(n, options.budget, options.stride, options.truncate_left)
            for start, stop in (cuts if options.overflowing else cuts[:1]):
                piece = parts if (start, stop) == (0, n) else model_inputs.cut(unpacked(parts), start, stop)
                encodings.append(self._encoding(piece, options.add_special_tokens))
                sample_map.append(i)
        return model_inputs.assemble(encodings, sample_map, options, batched)

    def truncate(
        self,
        text: str,
        max_tokens: int,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
    ) -> str:
        """The longest prefix of ``text`` that :meth:`encode` (with these special-token
        arguments) turns into at most ``max_tokens`` tokens: ``text`` itself when it fits.
        It raises as :meth:`encode` of that prefix would (a disallowed special token in it).

        Only the part of the text near the cut is encoded, never the whole text.  The cut
        falls between characters (never inside one's UTF-8 bytes), and the prefix one
        character longer needs more than ``max_tokens`` tokens.  (A prefix longer still can,
        rarely, fit again, when merges join across the cut: prefixes are checked up to the
        end of the first token past the budget.)"""
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise ArgumentError(f"max_tokens must be an int >= 0, got {max_tokens!r}")
        allowed, disallowed, _ = self._resolve_specials(allowed_special, disallowed_special)
        # the cut is found with the disallowed tokens as text; the prefix then raises as
        # encode would if it holds one
        core_sets = self._resolve_specials(allowed, ())[2]

        def count(prefix: str) -> int:
            return len(self.encode(prefix, allowed_special=allowed, disallowed_special=()))

        def checked(prefix: str) -> str:
            special.check_disallowed(prefix, disallowed)
            return prefix

        # a window of the text long enough to hold max_tokens + 1 tokens: grown by doubling
        window = 4 * max_tokens + 64
        while True:
            head = text[:window]
            parts = unpacked(self._offset_parts(head, allowed, frozenset(), core_sets))
            n = len(parts[0])
            if window >= len(text) and n <= max_tokens:
                return checked(text)  # (the window was the whole text)
            if n > max_tokens + 1 or window >= len(text):
                break
            window *= 2
        ends = parts[2]
        # In the window's tokens the first max_tokens end at `fit`, the next one at `over`.
        # Prefixes that end after `over` need more than max_tokens tokens in all but rare
        # cases (merges that join across the cut), and each candidate is checked by encoding
        # it: the longest that fits among those up to `over`, then on while the next fits.
        fit = ends[max_tokens - 1] if max_tokens else 0
        over = max(ends[max_tokens], fit)
        if max_tokens and count(text[:fit]) > max_tokens:
            # the window's first tokens differ from the prefix's (a pre-token cut short):
            # back to the last token end that fits, then the longest prefix before `fit`
            j = max_tokens - 2
            while j >= 0 and count(text[:ends[j]]) > max_tokens:
                j -= 1
            lo, hi = (ends[j] if j >= 0 else 0), fit - 1
        else:
            lo, hi = fit, over
        stop = next((s for s in range(hi, lo, -1) if count(text[:s]) <= max_tokens), lo)
        if stop == over:
            while stop < len(text) and count(text[:stop + 1]) <= max_tokens:
                stop += 1
        return checked(text[:stop])

    def _ordinary_offsets(self, text: str) -> tuple:
        """:meth:`_offset_parts` of ``text`` with no added token matched (``encode_ordinary``'s
        ids)."""
        none = frozenset()
        return unpacked(self._offset_parts(text, none, none, self._core_specials(none, none)))

    # ---------------------------------------------------------------- chat templates

    def apply_chat_template(
        self,
        conversation: Sequence,
        *,
        template: Optional[str] = None,
        add_generation_prompt: bool = False,
        tokenize: bool = True,
        return_dict: bool = False,
        return_assistant_tokens_mask: bool = False,
        tools: Optional[list] = None,
        documents: Optional[list] = None,
        continue_final_message: Union[bool, str] = False,
        allow_special_in_content: bool = False,
        **kwargs,
    ):
        """A conversation (a list of ``{"role": ..., "content": ...}`` messages; or a list of
        conversations) rendered by a chat template and encoded, as transformers'
        ``apply_chat_template``: ``tokenize=False`` gives the prompt string (byte for byte
        transformers' rendering), else the ids; ``return_dict=True`` a dict with
        ``input_ids``, ``attention_mask`` and, with ``return_assistant_tokens_mask``,
        ``assistant_masks``.  ``template``: a built-in name (``"llama3"``, ``"llama3.1"``,
        ``"chatml"``, ``"qwen2.5"``, ``"mistral"``, ``"gemma"``), a name from the tokenizer's
        list of templates (``"tool_use"``), or Jinja source; by default the
        ``tokenizer_config.json``'s ``chat_template`` (Jinja needs the optional ``jinja2``).
        ``kwargs`` reach the template (``enable_thinking=False``, ``date_string=...``).

        Stricter than transformers on purpose: text from the messages (and tools, documents,
        keyword data) is always encoded as ordinary text, never as the template's special
        tokens, so a message cannot forge a turn (see ``bpe.chat``);
        ``allow_special_in_content=True`` is transformers' behaviour, for trusted content."""
        from . import chat
        return chat.apply_chat_template(
            self, conversation, template=template, add_generation_prompt=add_generation_prompt, tokenize=tokenize,
            return_dict=return_dict, return_assistant_tokens_mask=return_assistant_tokens_mask, tools=tools,
            documents=documents, continue_final_message=continue_final_message,
            allow_special_in_content=allow_special_in_content, kwargs=kwargs)

    @property
    def added_tokens(self) -> list[AddedToken]:
        """The added tokens (special tokens included) as ``bpe.special.AddedToken`` objects."""
        return list(self._pipeline.added_tokens)

    def _core_offsets(self, text: str, core_sets: tuple) -> tuple:
        """The core's ``encode_offsets``, ``(ids, block)`` (``bpe.encoding.unpack`` reads
        the block; lone surrogates are fixed up first, one character for one, so the
        offsets hold for ``text``)."""
        try:
            ids, block = self._core.encode_offsets(text, self._pattern_name, core_sets[0], core_sets[1])
        except UnicodeEncodeError:
            ids, block = self._core.encode_offsets(training.repair_surrogates(text), self._pattern_name,
                                                   core_sets[0], core_sets[1])
        return ids, block

    def _encoding(self, parts: tuple, add_special_tokens: bool) -> Encoding:
        """An Encoding of ``(ids, starts, ends, word_ids[, shown])`` (shown: token strings
        that are not their id's, by index) or of the core's ``(ids, block)``, with the
        post-processor's offset trimming and, with ``add_special_tokens``, the tokens it adds."""
        if len(parts) == 2:
            if not self._post_changes[add_special_tokens]:
                return Encoding.from_block(parts[0], parts[1], self._token_string_of)
            parts = unpack(*parts)
        if len(parts) == 4:
            parts = (*parts, None)
        post = self._pipeline.post_processor
        if post is not None:
            parts = alignments.post_process(post, parts[:4] + (parts[4] or {},), self.id_to_token,
                                            add_special_tokens)
        return Encoding(*parts, self._token_string_of)

    def encode_to_array(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
    ) -> "array.array[int]":
        """:meth:`encode` into a compact ``array.array`` of unsigned 32-bit ids (4 bytes per
        id instead of a list of int objects; no numpy needed, and it supports the buffer
        protocol, so ``numpy.frombuffer(a, dtype=numpy.uint32)`` views it without a copy)."""
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        allowed, disallowed, core_sets = self._resolve_specials(allowed_special, disallowed_special)
        out = array.array(_ID_TYPECODE)
        core_text = None
        if core_sets is not None:
            core_text = text if self._normalization is None else self._core_form(text)
        if core_text is not None:
            out.frombytes(self._encode_in_core(core_text, core_sets, True))
            return out
        special.check_disallowed(text, disallowed)
        out.extend(self.encode(text, allowed_special=allowed, disallowed_special=()))
        return out

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
    ):
        """tiktoken's ``encode_to_numpy``: :meth:`encode` as a numpy ``uint32`` array (a view
        of :meth:`encode_to_array`'s buffer, no copy).  numpy is an optional extra."""
        try:
            import numpy
        except ImportError:
            raise ImportError("encode_to_numpy needs numpy, an optional extra: pip install numpy "
                              "(encode_to_array gives the same ids as an array.array without it)") from None
        out = self.encode_to_array(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return numpy.frombuffer(out, dtype=numpy.uint32)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the one token whose bytes (or special-token text) these are, as tiktoken:
        ``KeyError`` when no single token has them."""
        data = _as_bytes(text_or_bytes, "encode_single_token")
        found = self._mergeable_ranks.get(data)
        if found is None:
            try:
                found = self._added_ids.get(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
        if found is None:
            raise KeyError(data)
        return found

    def encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> list[int]:
        """BPE of ``text_or_bytes`` as one piece, with no split and no special tokens (as
        tiktoken's ``encode_single_piece``); any bytes, valid UTF-8 or not."""
        data = _as_bytes(text_or_bytes, "encode_single_piece")
        self._byte_level_core("encode_single_piece")
        return self._core.encode_piece_bytes(data)

    _encode_single_piece = encode_single_piece  # (tiktoken 0.14's name for it)

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token (tiktoken's ``is_special_token``)."""
        return token in self._special_ids

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted (tiktoken's ``token_byte_values``)."""
        return list(self._sorted_token_bytes())

    def _sorted_token_bytes(self) -> list[bytes]:
        """token_byte_values, sorted once and kept (encode_with_unstable searches it)."""
        found = self.__dict__.get("_token_bytes_sorted")
        if found is None:
            model = self._pipeline.model
            if isinstance(model, MergeBPE):
                found = sorted(model.token_bytes(t) for t in model.vocab)
            else:
                found = sorted(model.ranks)
            self.__dict__["_token_bytes_sorted"] = found
        return found

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
    ) -> tuple[list[int], list[list[int]]]:
        """``(stable, completions)``, as tiktoken's ``encode_with_unstable``: the tokens of
        ``text`` that no continuation can change, and every tokenization tiktoken's rules
        find for the rest once more text follows (for completing a prompt that ends mid-word).
        ``stable + c`` for each ``c`` in ``completions`` starts with ``text``'s bytes.  The
        completions come sorted (tiktoken's order is a hash set's).  Special tokens as in
        :meth:`encode`."""
        if not isinstance(text, str):
            raise TypeError(_not_str(text))
        self._byte_level_core("encode_with_unstable")
        found = self.encode_with_offsets(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        stable, tail = unstable.split_last_piece(self, found.ids, found.word_ids)
        return stable, unstable.completions(self, self.decode_bytes(tail), self._sorted_token_bytes())

    def encode_bytes(self, data: bytes) -> list[int]:
        """The ids of any bytes, valid UTF-8 or not, with special-token text as plain text:
        tiktoken's ``_encode_bytes`` (valid UTF-8 is encoded as text; from the last pre-token
        before the first invalid byte to the end, the bytes are one piece).
        ``decode_bytes(encode_bytes(data)) == data`` for every ``data``."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"encode_bytes takes bytes, got {type(data).__name__} "
                            "(for str use encode or encode_ordinary)")
        self._byte_level_core("encode_bytes")
        return unstable.encode_bytes(self, bytes(data))

    def _encode_bytes(self, text: bytes) -> list[int]:
        """tiktoken's name for :meth:`encode_bytes` (its argument is called ``text`` there)."""
        return self.encode_bytes(text)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """tiktoken's ``_encode_only_native_bpe``: the text split by the pattern and each piece
        encoded, special-token text as plain text (that is :meth:`encode_ordinary`)."""
        return self.encode_ordinary(text)

    def _byte_level_core(self, call: str) -> None:
        if self._core is None or not self._plan.bytes_decode:
            raise TypeError(f"{call} needs a byte-level BPE model; this tokenizer's "
                            f"{type(self._pipeline.model).__name__} has no byte form")

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = _NO_SPECIALS,
        disallowed_special: Union[Literal["all"], Collection[str]] = _ALL,
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        """:meth:`encode` over the texts of ``text`` (tiktoken's name for the list) on up to
        ``num_threads`` threads (order kept; with a custom regex pattern on the calling
        thread; see :meth:`encode_ordinary_batch`)."""
        out = self._encode_batch(text, num_threads, allowed_special, disallowed_special)
        return [self._post_process(ids) for ids in out] if add_special_tokens else out

    def _encode_batch(self, texts, num_threads, allowed_special, disallowed_special) -> list[list[int]]:
        texts = _check_texts(texts)
        allowed, disallowed, core_sets = self._resolve_specials(allowed_special, disallowed_special)
        if core_sets is not None:
            if self._normalization is None:  # the threads find the special tokens too
                return self._encode_plain_batch(texts, num_threads, *core_sets)
            # the texts the core may encode (see _core_form) go to the threads; the others
            # (each cut at its added tokens before normalizing) to the calling thread
            forms = [self._core_form(t) for t in texts]
            ready = [i for i, t in enumerate(forms) if t is not None]
            if len(ready) == len(texts):
                return self._encode_plain_batch(forms, num_threads, *core_sets, normalized=True)
            if ready:
                for text in texts:  # the first text with a disallowed token raises, as one batch
                    special.check_disallowed(text, disallowed)
                out: list = [None] * len(texts)
                done = self._encode_plain_batch([forms[i] for i in ready], num_threads, *core_sets,
                                                normalized=True)
                for i, ids in zip(ready, done):
                    out[i] = ids
                for i, ids in enumerate(out):
                    if ids is None:
                        out[i] = self._encode_checked(texts[i], allowed, ())
                return out
        if self._plan.staged:
            return [self._encode_staged(text, allowed, disallowed) for text in texts]
        for text in texts:
            special.check_disallowed(text, disallowed)
        if not allowed:
            return self._encode_plain_batch(texts, num_threads)
        _check_threads(num_threads)
        if num_threads == 1 or len(texts) < 2:
            return [self.encode(text, allowed_special=allowed, disallowed_special=()) for text in texts]
        # the plain-text segments of all texts go through one batch (threads, no GIL); the
        # allowed special tokens between them are put back in place
        cuts = [special.split(text, allowed) for text in texts]
        plain = iter(self._encode_plain_batch([s for cut in cuts for s, is_special in cut if not is_special],
                                              num_threads))
        out: list[list[int]] = []
        for cut in cuts:
            ids: list[int] = []
            rest = cut
            if cut and not cut[0][1]:  # starts with plain text: grow that segment's fresh list
                ids = next(plain)
                rest = cut[1:]
            for segment, is_special in rest:
                if is_special:
                    ids.append(self._added_ids[segment])
                else:
                    ids.extend(next(plain))
            out.append(ids)
        return out

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        """:meth:`encode_ordinary` over the texts of ``text`` (tiktoken's name for the list) on
        up to ``num_threads`` threads (order kept).

        No more threads are used than CPUs this process may run on, and none for little text
        (a thread per 32K characters).  With a custom regex pattern the texts are encoded on
        the calling thread: the ``regex`` module needs the GIL for every match, so threads
        would only slow it down."""
        return self._encode_plain_batch(_check_texts(text), num_threads)

    def _core_form(self, text: str) -> Optional[str]:
        """What the core may encode for ``text`` under a Unicode-form normalization: the text
        itself where the normalization leaves it alone (the special tokens can then be found
        in it: every stretch between them is unchanged too, since a substring of a text in a
        normal form is in it, which is what finding them first and normalizing each stretch,
        HF's order, would give); its normal form where neither holds the text of any added
        token (HF then normalizes it whole and finds none); else None (stage by stage)."""
        normal = unicodedata.normalize(self._normalization, text)
        if normal == text:
            return text
        finder = self._added_finder
        if finder is None or (finder.find(text) is None and finder.find(normal) is None):
            return normal
        return None

    def _encode_in_core(self, text: str, core_sets: tuple, packed: bool):
        """The backend's ``encode_text`` with the compiled sets of :meth:`_core_specials`
        (two arguments, not ``*core_sets``: a starred call costs 0.1 us more)."""
        try:
            return self._core.encode_text(text, self._pattern_name, packed, core_sets[0], core_sets[1])
        except UnicodeEncodeError:  # lone surrogates: fixed up first, as tiktoken does
            return self._core.encode_text(training.repair_surrogates(text), self._pattern_name, packed,
                                          core_sets[0], core_sets[1])

    def _resolve_specials(self, allowed_special, disallowed_special) -> tuple:
        """``(allowed, disallowed, core_sets)``: the resolved sets (see ``special.resolve``)
        and :meth:`_core_specials` of them; the default arguments come precomputed."""
        if disallowed_special is _ALL:
            if allowed_special is _NO_SPECIALS:
                return self._always, self._special_set, self._default_sets[0]
            if allowed_special is _ALL:
                return self._special_set | self._always, frozenset(), self._default_sets[1]
        allowed, disallowed = special.resolve(self._special_set, allowed_special, disallowed_special)
        allowed |= self._always
        return allowed, disallowed, self._core_specials(allowed, disallowed)

    def _core_specials(self, allowed: frozenset, disallowed: frozenset) -> Optional[tuple]:
        """``(allowed, disallowed)`` as the backend's compiled sets (None for an empty one),
        for encoding with the special tokens found by the backend's own threads; or None when
        the text must go through Python first (a custom pattern, a stage-by-stage pipeline, or
        a disallowed name that no text could be matched for in bytes: empty or not a ``str``).
        With a normalization the callers use them only for texts it leaves as they are."""
        if not self._on_scanner or self._plan.staged:
            return None
        sets = []
        for names in (allowed, disallowed):
            if not names:
                sets.append(None)
                continue
            compiled = self._special_sets.get(names)
            if compiled is None:
                try:
                    compiled = self._core.specials(
                        {name.encode("utf-8"): self._added_ids.get(name, -1) for name in names})
                except (AttributeError, UnicodeEncodeError, ValueError):
                    compiled = False
                if len(self._special_sets) >= 64:  # callers that vary their sets: keep it bounded
                    self._special_sets.clear()
                self._special_sets[names] = compiled
            if compiled is False:
                return None
            sets.append(compiled)
        return tuple(sets)

    def _encode_plain_batch(self, texts: list[str], num_threads: int, allowed=None, disallowed=None,
                            normalized: bool = False) -> list[list[int]]:
        """The texts encoded on up to ``num_threads`` threads (a custom regex: on this one);
        ``allowed`` and ``disallowed`` are compiled sets from :meth:`_core_specials` (only
        for scanned patterns); ``normalized``: the texts are normalized already."""
        _check_threads(num_threads)
        if not self._on_scanner or self._plan.staged:
            # a custom regex splits with the GIL held (the regex module takes it for every
            # match it returns), so threads only fight over it: 2 threads ran at 0.5-0.7x
            # one thread's speed; these texts are encoded on the calling thread
            return [self._encode_plain(text) for text in texts]
        if self._normalization is not None and not normalized:
            texts = [unicodedata.normalize(self._normalization, t) for t in texts]
        return self._run_batch(texts, num_threads, allowed, disallowed, False)

    def _run_batch(self, texts: list[str], num_threads: int, allowed, disallowed, offsets: bool) -> list:
        """The core's batch of ``texts`` (``offsets``: with offsets) run on up to
        ``num_threads`` threads; its results in text order."""
        _check_threads(num_threads)
        try:
            batch = self._core.batch(texts, self._pattern_name, allowed, disallowed, offsets)
        except UnicodeEncodeError:  # lone surrogates: fixed up as encode_ordinary fixes them
            batch = self._core.batch([training.repair_surrogates(t) for t in texts], self._pattern_name,
                                     allowed, disallowed, offsets)
        # This thread (run) and up to num_threads - 1 pool threads (help) share the batch: each
        # claims texts one at a time and encodes them without the GIL, so they finish
        # together; the pool threads hand their ids over and this thread builds every list,
        # overlapping the others' encoding.
        # A pool thread is only woken for every _CHARS_PER_HELPER characters of text: waking
        # one and waiting for it costs about 0.1 ms, more than a few short texts take.  And
        # no more threads than the CPUs this process may use: every one is busy all the time,
        # so more only take turns (8 threads on 2 CPUs ran 10% slower than 2).
        cpus = _usable_cpus() if _THREADS_PER_CPU_CAP else num_threads
        helpers = min(num_threads, cpus, len(texts), sum(map(len, texts)) // _CHARS_PER_HELPER + 1) - 1
        futures = [_pool(helpers).submit(batch.help) for _ in range(helpers)] if helpers > 0 else []
        try:
            batch.run()
        finally:
            for f in futures:
                f.result()
        return batch.results()

    # ---------------------------------------------------------------- stage by stage

    def _encode_staged(self, text: str, allowed: frozenset, disallowed: frozenset = frozenset()) -> list[int]:
        """The pipeline run stage by stage (see ``bpe.pipeline``): the added tokens of
        ``allowed`` found as HF finds them, each stretch between them normalized,
        pre-tokenized and given to the model (on the core when it has a rank form).  A token
        of ``disallowed`` found there (in the raw text, or normalized for a normalized one)
        raises ``DisallowedSpecialTokenError``."""
        special.check_disallowed(text, disallowed)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates, as the fused path treats them
            text = training.repair_surrogates(text)
        pipeline = self._pipeline
        by_name = self._added_by_name
        tokens = [by_name[name] for name in allowed | disallowed if name in by_name]
        normalize = pipeline.normalizer.normalize if pipeline.normalizer is not None else None
        ids: list[int] = []
        first = True
        for segment, token in special.split_added(text, tokens, normalize):
            if token is not None:
                if token.content in disallowed and token.content not in allowed:
                    raise DisallowedSpecialTokenError(token.content)
                ids.append(token.id)
            elif segment:
                ids.extend(self._model_ids(pre_tokenize(pipeline.pre_tokenizer, segment, first)))
            first = False
        return ids

    def _model_ids(self, pieces: list[str]) -> list[int]:
        if self._plan.model_on_core:
            return self._core.encode_pieces(pieces)
        tokenize = self._pipeline.model.tokenize
        return [i for piece in pieces for i in tokenize(piece)]

    def _post_process(self, ids: list[int]) -> list[int]:
        post = self._pipeline.post_processor
        return post.process(ids) if post is not None else ids

    # ---------------------------------------------------------------- Hugging Face files

    @classmethod
    def from_hf(cls, path: PathLike, *, name: Optional[str] = None) -> "Tokenizer":
        """Load a Hugging Face ``tokenizer.json`` (the file, or a folder holding it; a
        ``tokenizer_config.json`` beside it is read into :attr:`hf_config`).

        Ids equal HF ``tokenizers``' for byte-level BPE files.  Added tokens marked special
        follow ``allowed_special``/``disallowed_special`` as in tiktoken (``encode(text,
        allowed_special="all")`` is HF's ``encode(text, add_special_tokens=False)``); other
        added tokens are always matched by ``encode``; ``encode_ordinary`` matches none."""
        # the load makes a few hundred thousand small objects, none of them in a cycle: the
        # cyclic collector would walk them again and again (a third of the time), so it waits
        collecting = gc.isenabled()
        gc.disable()
        try:
            data = huggingface.read(path)
            pipeline = Pipeline(data.normalizer, data.pre_tokenizer, data.model, tuple(data.added_tokens),
                                data.post_processor, data.decoder)
            if name is None:
                json_path = huggingface.find_file(path)[0]
                name = os.path.basename(os.path.dirname(os.path.abspath(json_path))) or None
            tok = cls.__new__(cls)
            try:
                tok._setup(pipeline, name, hf_config=data.config)
            except (ValueError, TypeError) as exc:
                raise TokenizerFileError(path, f"the file is well-formed but cannot be used: {exc}") from None
            return tok
        finally:
            if collecting:
                gc.enable()

    @property
    def hf_config(self) -> Optional[dict]:
        """The fields read from ``tokenizer_config.json`` (``bos_token``, ``eos_token``,
        ``pad_token``, ``chat_template``, ...), or ``None`` when none was read."""
        return dict(self._hf_config) if self._hf_config is not None else None

    def to_hf(self, path: PathLike) -> None:
        """Write this tokenizer as a Hugging Face ``tokenizer.json`` that HF ``tokenizers``
        loads and that gives the same ids as ``encode(text, allowed_special="all")``."""
        pipeline = self._pipeline
        model = pipeline.model
        added = [t.to_hf() for t in pipeline.added_tokens]
        if isinstance(model, MergeBPE):
            huggingface.write_json(
                path, model=huggingface.model_to_hf(model),
                normalizer=_to_hf(pipeline.normalizer), pre_tokenizer=_to_hf(pipeline.pre_tokenizer),
                post_processor=_to_hf(pipeline.post_processor), decoder=_to_hf(pipeline.decoder),
                added_tokens=added)
            return
        # a rank table: its merges are the canonical splits in rank order, and ignore_merges
        # makes a whole piece that is a token that token (see bpe.models.bpe.equivalent_ranks)
        display = byte_unicode.to_display
        vocab = {display(token): rank for token, rank in model.ranks.items()}
        for t in pipeline.added_tokens:  # HF keeps an added token's id only when the vocab has it
            vocab.setdefault(t.content, t.id)
        merges = tuple((display(a), display(b)) for a, b in self._canonical_merges())
        as_merge_list = MergeBPE(vocab=vocab, merges=merges, ignore_merges=True)
        huggingface.write_json(
            path, model=huggingface.model_to_hf(as_merge_list), normalizer=_to_hf(pipeline.normalizer),
            pre_tokenizer=_to_hf(pipeline.pre_tokenizer), post_processor=None,
            decoder=decoders.ByteLevel().to_hf(), added_tokens=added)

    # ---------------------------------------------------------------- decoding

    def decode_bytes(self, tokens: Iterable[int]) -> bytes:
        """The bytes of ``tokens`` joined; ``KeyError`` for an id not in the vocabulary."""
        if not self._plan.bytes_decode:
            return b"".join([self.decode_single_token_bytes(t) for t in list(tokens)])
        return self._core.decode_bytes(tokens)

    def decode(self, tokens: Iterable[int], errors: str = "replace") -> str:
        """Decode to text; bytes that are not valid UTF-8 follow ``errors`` (default U+FFFD).
        A pipeline with another decoder than byte-level (Metaspace, ByteFallback, ...) runs
        it on the tokens' strings, as Hugging Face does."""
        if not self._plan.bytes_decode:
            return self._decode_staged(tokens)
        return self._core.decode_bytes(tokens).decode("utf-8", errors=errors)

    # ---------------------------------------------------------------- readable tokens

    def id_to_token(self, id: int) -> Optional[str]:
        """The readable string of an id (HF's names and ``None`` for an unknown id): an added
        token's text, a ``tokenizer.json`` vocabulary string, or a rank table's bytes in
        GPT-2's display characters (``"Ġworld"``, see ``bpe.byte_unicode``)."""
        token_id = _check_id(id)
        s = self._added_strings.get(token_id)
        if s is not None:
            return s
        model = self._pipeline.model
        if isinstance(model, MergeBPE):
            return model.id_to_token.get(token_id)
        try:
            return byte_unicode.to_display(self._core.token_bytes(token_id))
        except KeyError:
            return None

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of a readable token string (:meth:`id_to_token`'s inverse), or ``None``."""
        if not isinstance(token, str):
            raise TypeError(f"token must be str, got {type(token).__name__}")
        found = self._added_ids.get(token)
        if found is not None:
            return found
        model = self._pipeline.model
        if isinstance(model, MergeBPE):
            return model.vocab.get(token)
        try:
            data = byte_unicode.from_display(token)
        except KeyError:
            return None
        found = self._mergeable_ranks.get(data)
        return found if found is not None else model.decode_only.get(data)

    def get_vocab(self) -> dict[str, int]:
        """Every readable token string -> id, added tokens included (HF's ``get_vocab()``)."""
        model = self._pipeline.model
        if isinstance(model, MergeBPE):
            vocab = dict(model.vocab)
        else:
            display = byte_unicode.to_display
            vocab = {display(data): tid for data, tid in self._mergeable_ranks.items()}
            vocab.update((display(data), tid) for data, tid in model.decode_only.items())
        vocab.update(self._added_ids)
        return vocab

    def convert_ids_to_tokens(self, ids, skip_special_tokens: bool = False):
        """transformers' name: :meth:`id_to_token` of an id, or of each id of a list (special
        tokens left out with ``skip_special_tokens``); ``KeyError`` for an unknown id."""
        if not isinstance(ids, (list, tuple)):
            return self._token_string(ids)
        special = set(self._special_tokens.values()) if skip_special_tokens else ()
        return [self._token_string(i) for i in ids if i not in special]

    def _token_string(self, token_id) -> str:
        """:meth:`id_to_token`, with ``KeyError`` for an unknown id."""
        s = self.id_to_token(token_id)
        if s is None:
            raise KeyError(f"{token_id!r} is not a token id of this tokenizer (ids run 0..{self.max_token_value})")
        return s

    def convert_tokens_to_ids(self, tokens):
        """transformers' name: :meth:`token_to_id` of a string, or of each of a list (``None``
        for a string that is no token)."""
        if isinstance(tokens, str):
            return self.token_to_id(tokens)
        return [self.token_to_id(t) for t in tokens]

    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        """Readable token strings back to text: the decoder of the pipeline on them (byte-level
        ones: their display characters as bytes, then UTF-8 with U+FFFD for bad bytes)."""
        ids = [self.token_to_id(t) for t in tokens]
        if None in ids:
            raise KeyError(f"{tokens[ids.index(None)]!r} is not a token of this tokenizer")
        return self.decode(ids)

    def decode_stream(self, skip_special_tokens: bool = False) -> decoders.DecodeStream:
        """A :class:`~bpe.decoders.DecodeStream` for ids that arrive one at a time (a model
        generating): ``step(id)`` returns the text completed so far or None, ``flush()`` the
        rest; joined, they are ``decode(ids)`` (with ``skip_special_tokens``, of the ids that
        are not special tokens).  Each step costs about one token's work."""
        skip = frozenset(self._special_tokens.values()) if skip_special_tokens else frozenset()
        if self._plan.bytes_decode:
            return decoders.DecodeStream(token_bytes=self._core.token_bytes, skip=skip)
        is_byte = getattr(self._pipeline.decoder, "byte_fallback_in_chain", None)
        strings = self._token_string
        return decoders.DecodeStream(
            decode=self._decode_staged, skip=skip,
            is_byte_token=(lambda t: decoders.is_byte_token(strings(t))) if is_byte else None)

    def _decode_staged(self, tokens: Iterable[int]) -> str:
        strings = [self._token_string(t) for t in list(tokens)]
        decoder = self._pipeline.decoder
        if decoder is None:
            return " ".join(strings)  # as HF without a decoder
        return decoder.decode(strings)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token; ``KeyError`` for an id not in the vocabulary."""
        if not self._plan.bytes_decode:
            token_id = _check_id(token)
            if token_id in self._added_strings:
                return self._added_strings[token_id].encode("utf-8")
            return self._pipeline.model.token_bytes(self._token_string(token_id))
        return self._core.token_bytes(token)

    token_bytes = decode_single_token_bytes

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """The bytes of each token, as a list."""
        tb = self.decode_single_token_bytes
        return [tb(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``tokens`` and the character where each token starts in it, as
        tiktoken's: a token that begins inside a character (its first byte continues a UTF-8
        sequence) starts at that character.  The bytes must be valid UTF-8
        (``UnicodeDecodeError`` otherwise, as tiktoken)."""
        pieces = self.decode_tokens_bytes(tokens)
        offsets: list[int] = []
        chars = 0
        for data in pieces:
            offsets.append(chars - 1 if chars and 0x80 <= data[0] < 0xC0 else chars)
            chars += len(data.translate(None, _CONTINUATION_BYTES))  # the bytes that start characters
        return b"".join(pieces).decode("utf-8"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> list[str]:
        """:meth:`decode` of each id sequence.  ``num_threads`` is accepted as tiktoken's is, but
        decoding runs on the calling thread: it needs the GIL throughout (building the
        strings), so threads only slowed it down (8 threads: half the speed of one)."""
        _check_threads(num_threads)
        if not self._plan.bytes_decode:
            return [self.decode(ids, errors=errors) for ids in batch]
        decode_bytes = self._core.decode_bytes
        return [decode_bytes(ids).decode("utf-8", errors=errors) for ids in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """:meth:`decode_bytes` of each id sequence (on the calling thread, as :meth:`decode_batch`)."""
        _check_threads(num_threads)
        decode_bytes = self.decode_bytes if not self._plan.bytes_decode else self._core.decode_bytes
        return [decode_bytes(ids) for ids in batch]


def _special_list(special_tokens: Iterable[str]) -> list[str]:
    """Training's special tokens, in order, without repeats (a lone str is one token)."""
    if isinstance(special_tokens, str):
        special_tokens = [special_tokens]
    specials = list(dict.fromkeys(special_tokens))
    for tok in specials:
        if not isinstance(tok, str) or not tok:
            raise TrainingError(f"special tokens must be non-empty strings, got {tok!r}")
    return specials


def _rebuild(spec: TokenizerSpec, cls: type = None) -> Tokenizer:
    return (cls or Tokenizer)._from_spec(spec)


def _rebuild_pipeline(pipeline: Pipeline, name: Optional[str], hf_config: Optional[dict]) -> Tokenizer:
    tok = Tokenizer.__new__(Tokenizer)
    tok._setup(pipeline, name, hf_config=hf_config)
    return tok


def _to_hf(stage) -> Optional[dict]:
    return stage.to_hf() if stage is not None else None


def _added_bytes(token: AddedToken, pipeline: Pipeline) -> bytes:
    """What an added token decodes to: HF's ByteLevel decoder reads a token whose every
    character is a GPT-2 display character as those bytes, any other as its UTF-8."""
    text = _added_text(token, pipeline)
    if isinstance(pipeline.model, MergeBPE) and isinstance(pipeline.decoder, decoders.ByteLevel):
        return pipeline.model.token_bytes(text)
    return text.encode("utf-8")


def _added_text(token: AddedToken, pipeline: Pipeline) -> str:
    """The text an added token decodes to: HF gives a normalized one its normalized form."""
    if token.normalized and pipeline.normalizer is not None:
        return pipeline.normalizer.normalize(token.content)
    return token.content


def _check_id(token: object) -> int:
    try:
        return operator.index(token)
    except TypeError:
        raise TypeError(f"token ids must be int, got {type(token).__name__}") from None


def _as_bytes(text_or_bytes: object, call: str) -> bytes:
    """A str as its UTF-8 bytes, bytes as they are; else TypeError naming ``call``."""
    if isinstance(text_or_bytes, str):
        return text_or_bytes.encode("utf-8")
    if not isinstance(text_or_bytes, bytes):
        raise TypeError(f"{call} takes str or bytes, got {type(text_or_bytes).__name__}")
    return text_or_bytes


def _not_str(value: object) -> str:
    hint = " (decode bytes first, e.g. data.decode('utf-8'))" if isinstance(value, (bytes, bytearray)) else ""
    return f"text must be str, got {type(value).__name__}{hint}"


def _check_threads(num_threads: object) -> None:
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
        raise ArgumentError(f"num_threads must be an int >= 1, got {num_threads!r}")


def _check_texts(texts: Iterable[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of str, not one str; pass [text] to encode one text")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}]: {_not_str(text)}")
    return texts


_CHARS_PER_HELPER = 32768
_THREADS_PER_CPU_CAP = True  # batches use at most one thread per usable CPU (tests lift it)


def _usable_cpus() -> int:
    """How many CPUs this process may run on (its affinity where the OS tells it)."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counter is not None:
        return counter() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1

_POOL_PREFIX = "bpe"  # pool threads are named bpe_0, bpe_1, ...
_pools: dict = {}  # size -> concurrent.futures.ThreadPoolExecutor
_pools_lock = threading.Lock()


def _stop_pools_before_fork() -> None:
    # No pool thread may be alive when the process forks: a thread that holds a lock at that
    # moment leaves it held forever in the child (Python 3.12+ warns about any thread then).
    # The pools are idle between batches, so their threads end at once; a batch running on
    # another thread is waited for.  The next batch makes the pools again (its threads start
    # with cold piece caches).
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    workers = [t.native_id for t in threading.enumerate() if t.name.startswith(_POOL_PREFIX + "_")]
    for pool in pools:
        pool.shutdown(wait=True)
    _wait_until_gone(workers)


def _wait_until_gone(native_ids: list, limit: float = 1.0) -> None:
    # Thread.join returns once a thread's Python side is done; before Python 3.13 its OS
    # thread still runs for a moment after, freeing its thread-local storage (the piece
    # caches) under the allocator's lock.  A fork in that moment leaves the lock held in the
    # child, whose next malloc then waits for ever (seen under AddressSanitizer's allocator:
    # one fork in ~200).  Linux lists each live OS thread in /proc/self/task; wait (at most
    # ``limit`` seconds) until the pool's have left it.
    if not native_ids or not os.path.isdir("/proc/self/task"):
        return
    import time

    deadline = time.monotonic() + limit
    for tid in native_ids:
        while os.path.exists(f"/proc/self/task/{tid}") and time.monotonic() < deadline:
            time.sleep(0.0002)


def _forget_pools_after_fork() -> None:
    # a forked child has none of the parent's threads: it must build its own pools
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_stop_pools_before_fork, after_in_child=_forget_pools_after_fork)


def _pool(num_threads: int):
    """A process-wide pool per size, kept between calls: its threads keep their warm
    thread-local piece caches, which fresh threads would have to refill."""
    from concurrent.futures import ThreadPoolExecutor  # (here: most programs never start a pool)

    with _pools_lock:
        pool = _pools.get(num_threads)
        if pool is None:
            pool = _pools[num_threads] = ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix=_POOL_PREFIX)
        return pool
