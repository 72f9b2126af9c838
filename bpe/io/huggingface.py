"""Reading and writing Hugging Face ``tokenizer.json`` files (and ``tokenizer_config.json``).

``read(path)`` turns a file (or a folder holding ``tokenizer.json``) into plain pipeline data,
an :class:`HFFile`: the stage objects of ``bpe.normalizers``, ``bpe.pre_tokenizers``,
``bpe.models.bpe.MergeBPE``, ``bpe.processors``, ``bpe.decoders`` and the added tokens, plus
the fields of a ``tokenizer_config.json`` beside it.  Anything it does not support raises a
:class:`~bpe.errors.TokenizerFileError` that names the place in the file (``pre_tokenizer.
pretokenizers[1]: type "UnicodeScripts" is not supported``), never a silently different
tokenizer.  ``write_json(data)`` is the reverse, for the stages' ``to_hf`` forms.

A byte-level model's vocabulary and merges (a few hundred thousand strings) are not parsed
into Python objects when the compiled core can read them from the file's text itself
(bpe/_vocab_form.pxi): the model then holds them as :class:`FileVocab` and
:class:`FileMerges`, which parse their part of the text only when it is asked for whole.
Everything else, and every file the core does not read, goes through ``json``.

It does not build a ``Tokenizer`` (``Tokenizer.from_hf`` does) and does not run any stage.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from .. import _backend, decoders, normalizers, processors
from ..errors import PatternError, TokenizerFileError
from ..models.bpe import MergeBPE
from ..pre_tokenizers import split as pre_split
from ..pre_tokenizers import words as pre_words
from ..special import AddedToken

PathLike = Union[str, "os.PathLike[str]"]

#: the fields of tokenizer_config.json that are kept (as found)
CONFIG_FIELDS = ("bos_token", "eos_token", "pad_token", "unk_token", "add_bos_token", "add_eos_token",
                 "model_max_length", "padding_side", "truncation_side", "model_input_names", "chat_template",
                 "tokenizer_class")


@dataclass
class HFFile:
    """What a ``tokenizer.json`` describes, as pipeline stages."""

    model: MergeBPE
    normalizer: Optional[normalizers.Normalizer]
    pre_tokenizer: Optional[pre_split.PreTokenizer]
    post_processor: Optional[processors.PostProcessor]
    decoder: Optional[decoders.Decoder]
    added_tokens: list = field(default_factory=list)
    config: dict = field(default_factory=dict)


class _Reader:
    def __init__(self, source: object):
        self.source = source
        self.text: Optional[bytes] = None     # the file, when read() left model.vocab and
        self.spans: Optional[tuple] = None    # model.merges unparsed at these places of it

    def fail(self, where: str, problem: str) -> TokenizerFileError:
        return TokenizerFileError(self.source, f"{where}: {problem}" if where else problem)

    def obj(self, value: Any, where: str) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {_kind(value)}")
        return value

    def get(self, d: dict, key: str, where: str, types, default=...):
        if key not in d:
            if default is ...:
                raise self.fail(where, f"the key {key!r} is missing")
            return default
        value = d[key]
        if value is None and default is None:
            return None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
            raise self.fail(f"{where}.{key}", f"expected {_names(types)}, got {_kind(value)}")
        return value

    def token_id(self, value: Any, where: str) -> int:
        """A token id as HF's files hold it: an int from 0 to 2**32 - 1 (not a bool)."""
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2 ** 32:
            raise self.fail(where, f"expected a token id (an integer from 0 to 2**32 - 1), got {value!r}")
        return value

    def scheme(self, d: dict, where: str) -> str:
        """Metaspace's prepend_scheme (the stage checks its value); files before tokenizers 0.14
        say add_prefix_space instead.  A null prepend_scheme is an error, as in HF (not the older
        key's default)."""
        if "prepend_scheme" in d:
            return self.get(d, "prepend_scheme", where, str)
        return "always" if self.get(d, "add_prefix_space", where, bool, True) else "never"

    def flags(self, d: dict, where: str, *keys: str) -> None:
        """Keys that must be bools where present, though bpe does not use them."""
        for key in keys:
            self.get(d, key, where, bool, False)

    def typed(self, d: Any, where: str, kinds: dict):
        d = self.obj(d, where)
        kind = d.get("type")
        if not isinstance(kind, str) or kind not in kinds:  # (a list or an object is not hashable)
            supported = ", ".join(sorted(kinds))
            raise self.fail(where, f"type {kind!r} is not supported (supported: {supported})")
        return kinds[kind](d, where)

    def pattern(self, d: dict, where: str) -> tuple[str, bool]:
        p = self.obj(self.get(d, "pattern", where, dict), f"{where}.pattern")
        if set(p) == {"String"} and isinstance(p["String"], str):
            return p["String"], False
        if set(p) == {"Regex"} and isinstance(p["Regex"], str):
            return p["Regex"], True
        raise self.fail(f"{where}.pattern", 'expected {"String": ...} or {"Regex": ...}')

    def build(self, make, where: str, *args, **kw):
        try:
            return make(*args, **kw)
        except (PatternError, ValueError, TypeError) as exc:
            raise self.fail(where, str(exc)) from None

    # ---------------------------------------------------------------- normalizers

    def normalizer(self, d, where):
        return self.typed(d, where, {
            "NFC": lambda d, w: normalizers.NFC(), "NFD": lambda d, w: normalizers.NFD(),
            "NFKC": lambda d, w: normalizers.NFKC(), "NFKD": lambda d, w: normalizers.NFKD(),
            "Lowercase": lambda d, w: normalizers.Lowercase(),
            "Strip": lambda d, w: normalizers.Strip(self.get(d, "strip_left", w, bool, True),
                                                    self.get(d, "strip_right", w, bool, True)),
            "Replace": lambda d, w: self.build(normalizers.Replace, w, *self._replace(d, w)),
            "Prepend": lambda d, w: normalizers.Prepend(self.get(d, "prepend", w, str)),
            "Sequence": lambda d, w: normalizers.Sequence(tuple(
                self.normalizer(x, f"{w}.normalizers[{i}]")
                for i, x in enumerate(self.get(d, "normalizers", w, list)))),
        })

    def _replace(self, d, where):
        pattern, is_regex = self.pattern(d, where)
        return pattern, self.get(d, "content", where, str), is_regex

    # ---------------------------------------------------------------- pre-tokenizers

    def pre_tokenizer(self, d, where):
        def split(d, w):
            pattern, is_regex = self.pattern(d, w)
            behavior = self.get(d, "behavior", w, str, "Isolated")
            return self.build(pre_split.Split, w, pattern, behavior, self.get(d, "invert", w, bool, False),
                              is_regex)

        def metaspace(d, w):
            return self.build(pre_words.Metaspace, w, self.get(d, "replacement", w, str, "\u2581"), self.scheme(d, w),
                              self.get(d, "split", w, bool, True))

        return self.typed(d, where, {
            "ByteLevel": lambda d, w: pre_split.ByteLevel(self.get(d, "add_prefix_space", w, bool, True),
                                                          self.get(d, "use_regex", w, bool, True),
                                                          self.get(d, "trim_offsets", w, bool, True)),
            "Split": split,
            "Digits": lambda d, w: pre_words.Digits(self.get(d, "individual_digits", w, bool, False)),
            "Metaspace": metaspace,
            "Whitespace": lambda d, w: pre_words.Whitespace(),
            "WhitespaceSplit": lambda d, w: pre_words.WhitespaceSplit(),
            "Punctuation": lambda d, w: self.build(pre_words.Punctuation, w,
                                                   self.get(d, "behavior", w, str, "Isolated")),
            "Sequence": lambda d, w: pre_split.Sequence(tuple(
                self.pre_tokenizer(x, f"{w}.pretokenizers[{i}]")
                for i, x in enumerate(self.get(d, "pretokenizers", w, list)))),
        })

    # ---------------------------------------------------------------- post-processors

    def post_processor(self, d, where):
        def pair_of(d, key, w):
            v = self.get(d, key, w, list)
            if len(v) != 2 or not isinstance(v[0], str):
                raise self.fail(f"{w}.{key}", 'expected ["token", id]')
            return (v[0], self.token_id(v[1], f"{w}.{key}[1]"))

        def template(d, w):
            specials = self.obj(self.get(d, "special_tokens", w, dict, {}), f"{w}.special_tokens")
            table = []
            for name, spec in specials.items():
                sw = f"{w}.special_tokens[{name!r}]"
                spec = self.obj(spec, sw)
                self.get(spec, "id", sw, str, "")
                ids = [self.token_id(i, f"{sw}.ids[{k}]") for k, i in enumerate(self.get(spec, "ids", sw, list))]
                tokens = self.get(spec, "tokens", sw, list, [])
                if not all(isinstance(t, str) for t in tokens):
                    raise self.fail(f"{sw}.tokens", "expected a list of strings")
                table.append((name, tuple(ids), tuple(tokens)))
            names = {n for n, _, _ in table}

            def type_id(s, pw):
                t = self.get(s, "type_id", pw, int, 0)
                if not 0 <= t < 2 ** 32:
                    raise self.fail(f"{pw}.type_id", f"expected an integer from 0 to 2**32 - 1, got {t}")
                return t

            def pieces(key):
                out = []
                for i, p in enumerate(self.get(d, key, w, list, [])):
                    pw = f"{w}.{key}[{i}]"
                    p = self.obj(p, pw)
                    if "SpecialToken" in p:
                        s = self.obj(p["SpecialToken"], pw)
                        if not isinstance(s.get("id"), str) or s["id"] not in names:
                            raise self.fail(pw, f"special token {s.get('id')!r} is not in special_tokens")
                        out.append(("special", s["id"], type_id(s, pw)))
                    elif "Sequence" in p:
                        s = self.obj(p["Sequence"], pw)
                        if s.get("id") not in ("A", "B"):
                            raise self.fail(pw, f"sequence id must be 'A' or 'B', got {s.get('id')!r}")
                        out.append((s["id"], type_id(s, pw)))
                    else:
                        raise self.fail(pw, 'expected {"SpecialToken": ...} or {"Sequence": ...}')
                return tuple(out)

            single, pair = pieces("single"), pieces("pair")
            # HF drops, repeats or panics on the text of a template without each sequence once
            for key, template, wanted in (("single", single, ["A"]), ("pair", pair, ["A", "B"])):
                used = sorted(p[0] for p in template if p[0] != "special")
                if used != wanted and (template or key == "single"):
                    once = "the sequence A once" if key == "single" else "the sequences A and B once each"
                    raise self.fail(f"{w}.{key}", f"expected {once}, got {used or 'none'}")
            return processors.TemplateProcessing(single, pair, tuple(table))

        return self.typed(d, where, {
            "ByteLevel": lambda d, w: processors.ByteLevel(self.get(d, "add_prefix_space", w, bool, True),
                                                           self.get(d, "trim_offsets", w, bool, True),
                                                           self.get(d, "use_regex", w, bool, True)),
            "TemplateProcessing": template,
            "BertProcessing": lambda d, w: processors.BertProcessing(pair_of(d, "sep", w), pair_of(d, "cls", w)),
            "RobertaProcessing": lambda d, w: processors.RobertaProcessing(
                pair_of(d, "sep", w), pair_of(d, "cls", w), self.get(d, "trim_offsets", w, bool, True),
                self.get(d, "add_prefix_space", w, bool, True)),
            "Sequence": lambda d, w: processors.Sequence(tuple(
                self.post_processor(x, f"{w}.processors[{i}]")
                for i, x in enumerate(self.get(d, "processors", w, list)))),
        })

    # ---------------------------------------------------------------- decoders

    def decoder(self, d, where):
        def metaspace(d, w):
            return self.build(decoders.Metaspace, w, self.get(d, "replacement", w, str, "\u2581"), self.scheme(d, w),
                              self.get(d, "split", w, bool, True))

        def byte_level(d, w):
            self.flags(d, w, "add_prefix_space", "trim_offsets", "use_regex")  # (decoding does not use them)
            return decoders.ByteLevel()

        def strip(d, w):
            content = self.get(d, "content", w, str)
            if len(content) != 1:
                raise self.fail(f"{w}.content", f"expected one character, got {content!r}")
            counts = [self.get(d, key, w, int, 0) for key in ("start", "stop")]
            for key, n in zip(("start", "stop"), counts):
                if not 0 <= n < 2 ** 64:
                    raise self.fail(f"{w}.{key}", f"expected a count of characters (0 to 2**64 - 1), got {n}")
            return decoders.Strip(content, *counts)

        return self.typed(d, where, {
            "ByteLevel": byte_level,
            "Metaspace": metaspace,
            "ByteFallback": lambda d, w: decoders.ByteFallback(),
            "Fuse": lambda d, w: decoders.Fuse(),
            "Strip": strip,
            "Replace": lambda d, w: self.build(decoders.Replace, w, *self._replace(d, w)),
            "Sequence": lambda d, w: decoders.Sequence(tuple(
                self.decoder(x, f"{w}.decoders[{i}]") for i, x in enumerate(self.get(d, "decoders", w, list)))),
        })

    # ---------------------------------------------------------------- model

    def model(self, d, byte_level: bool) -> MergeBPE:
        w = "model"
        d = self.obj(d, w)
        if self.spans is not None:  # read() left the vocabulary and the merges in the text
            v0, v1, m0, m1 = self.spans
            form = None
            if byte_level and not d.get("continuing_subword_prefix") and not d.get("end_of_word_suffix"):
                form = _backend.active().byte_level_form_json(self.text, *self.spans)
            if form is not None:
                return self._model_from(d, w, FileVocab(self.text[v0:v1], form),
                                        FileMerges(self.text[m0:m1], len(form.triples) // 12),
                                        byte_level, form)
            try:
                d = dict(d, vocab=json.loads(self.text[v0:v1]), merges=json.loads(self.text[m0:m1]))
            except ValueError:
                _parse_json(self.source, self.text)  # the whole file's error, with its place
                raise
        return self._model_from(d, w, None, None, byte_level, None)

    def _model_from(self, d: dict, w: str, vocab, merges, byte_level: bool, form) -> MergeBPE:
        """The model of ``d``; ``vocab`` and ``merges`` as read lazily with their byte form
        ``form`` (the compiled core's reading, which checked them), or None: those of ``d``."""
        kind = d.get("type", "BPE" if "merges" in d else None)
        if kind != "BPE":
            raise self.fail(w, f"type {kind!r} is not supported (supported: BPE; WordPiece and Unigram "
                               "models are not read yet)")
        dropout = d.get("dropout")
        if isinstance(dropout, bool) or dropout not in (None, 0, 0.0):
            raise self.fail(f"{w}.dropout", f"BPE dropout ({dropout!r}) is random at encode time and is not "
                                            "supported; set it to null")
        if form is None:
            vocab = self.obj(self.get(d, "vocab", w, dict), f"{w}.vocab")
            raw = self.get(d, "merges", w, list, [])
        else:
            raw = merges
        prefix = self.get(d, "continuing_subword_prefix", w, str, None)
        unk = self.get(d, "unk_token", w, str, None)
        if unk is not None and unk not in vocab:
            raise self.fail(f"{w}.unk_token", f"{unk!r} is not in the vocabulary")
        options = dict(unk_token=unk, fuse_unk=self.get(d, "fuse_unk", w, bool, False),
                       byte_fallback=self.get(d, "byte_fallback", w, bool, False),
                       continuing_subword_prefix=prefix,
                       end_of_word_suffix=self.get(d, "end_of_word_suffix", w, str, None),
                       ignore_merges=self.get(d, "ignore_merges", w, bool, False),
                       byte_level=byte_level,
                       merges_as_strings=form.merges_as_strings if form is not None else
                       bool(raw) and isinstance(raw[0], str))
        if form is not None:
            model = MergeBPE(vocab=vocab, merges=merges, **options)
            model.__dict__["_byte_form"] = form  # (MergeBPE.byte_form's cache)
            return model
        vocab = dict(vocab)
        # the usual byte-level file: the compiled core reads its merges into tables in C,
        # which also proves each merge well-formed (the model keeps them as written)
        compiled = _backend.active().byte_level_form
        if not (byte_level and not prefix and not options["end_of_word_suffix"]):
            compiled = None  # (a shape only the general reading takes)
        if compiled is not None:
            form = compiled(vocab, raw)
            if form is not None:  # (the compiled reading also checked the vocabulary's ids)
                model = MergeBPE(vocab=vocab, merges=tuple(raw), **options)
                model.__dict__["_byte_form"] = form  # (MergeBPE.byte_form's cache)
                return model
        self._check_vocab(vocab, w)
        try:  # else every merge checked in one pass of C-level maps
            if prefix:
                raise KeyError
            pairs = list(map(str.split, raw, [" "] * len(raw))) if options["merges_as_strings"] else raw
            if pairs and set(map(len, pairs)) != {2}:
                raise KeyError
            lefts = [m[0] for m in pairs]
            rights = [m[1] for m in pairs]
            get = vocab.__getitem__
            triples = list(zip(map(get, lefts), map(get, rights), map(get, map(str.__add__, lefts, rights))))
            merges = tuple(zip(lefts, rights))
        except (KeyError, TypeError, AttributeError, IndexError):
            merges, triples = self._merges_one_by_one(raw, vocab, prefix, w), None
        model = MergeBPE(vocab=vocab, merges=tuple(merges), **options)
        if triples is not None:
            model.__dict__["triples"] = triples  # (the cached property, already computed)
        if compiled is not None:  # the compiled reading gave up: the general one, once the merges are checked
            try:
                model.byte_form()
            except ValueError:
                pass  # (Tokenizer.from_hf reports it when it builds the core)
        return model

    def _check_vocab(self, vocab: dict, w: str) -> None:
        """Every id an int from 0 to 2**32 - 1 (the core's ids are 32-bit), and no id given twice."""
        ids = list(vocab.values())
        fine = (all(type(i) is int for i in ids) and (not ids or 0 <= min(ids) <= max(ids) < 2 ** 32)
                and len(set(ids)) == len(ids))
        seen: dict[int, str] = {}
        for token, tid in ([] if fine else vocab.items()):  # the slow pass names the first bad entry
            self.token_id(tid, f"{w}.vocab[{token!r}]")
            if tid in seen:
                raise self.fail(f"{w}.vocab[{token!r}]", f"id {tid} is also the id of {seen[tid]!r}; each token "
                                                         "needs its own id")
            seen[tid] = token

    def _merges_one_by_one(self, raw: list, vocab: dict, prefix: Optional[str], w: str) -> list:
        """The merges checked one at a time, so that the first bad one is named."""
        merges: list[tuple[str, str]] = []
        for i, m in enumerate(raw):
            mw = f"{w}.merges[{i}]"
            if isinstance(m, str):
                parts = m.split(" ")
                if len(parts) != 2:
                    raise self.fail(mw, f'expected "left right" (two tokens and one space), got {m!r}')
            elif isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m):
                parts = m
            else:
                raise self.fail(mw, f'expected "left right" or ["left", "right"], got {m!r}')
            a, b = parts
            for part in (a, b):
                if part not in vocab:
                    raise self.fail(mw, f"{part!r} is not in the vocabulary")
            right = b[len(prefix):] if prefix and b.startswith(prefix) else b
            if a + right not in vocab:
                raise self.fail(mw, f"the merged token {a + right!r} is not in the vocabulary")
            merges.append((a, b))
        return merges

    def added_tokens(self, items, model: MergeBPE) -> list:
        if not isinstance(items, list):
            raise self.fail("added_tokens", f"expected a list, got {_kind(items)}")
        vocab = model.vocab
        out, contents, ids = [], set(), {}  # (ids: the added ones so far)
        for i, t in enumerate(items):
            w = f"added_tokens[{i}]"
            t = self.obj(t, w)
            content = self.get(t, "content", w, str)
            tid = self.token_id(self.get(t, "id", w, int), f"{w}.id")
            if not content:
                raise self.fail(f"{w}.content", "an added token must not be empty")
            if content in contents:
                raise self.fail(w, f"{content!r} is added twice")
            if tid not in ids and tid in model.ids and vocab.get(content) != tid:
                ids[tid] = model.id_to_token[tid]  # (named below)
            if tid in ids and ids[tid] != content:
                raise self.fail(w, f"id {tid} is also the id of {ids[tid]!r}; each token needs its own id")
            if content in vocab and vocab[content] != tid:
                raise self.fail(w, f"{content!r} has id {vocab[content]} in the model's vocabulary, not {tid}")
            contents.add(content)
            ids[tid] = content
            special = self.get(t, "special", w, bool, False)
            out.append(AddedToken(content, tid, special=special,
                                  normalized=self.get(t, "normalized", w, bool, not special),
                                  lstrip=self.get(t, "lstrip", w, bool, False),
                                  rstrip=self.get(t, "rstrip", w, bool, False),
                                  single_word=self.get(t, "single_word", w, bool, False)))
        return out


class _InText:
    """A value left as JSON text, parsed on first use."""

    def __init__(self, text: bytes):
        self._text = text
        self._parsed = None

    def _all(self):
        if self._parsed is None:
            self._parsed = json.loads(self._text)
        return self._parsed


class FileVocab(_InText, Mapping):
    """A ``tokenizer.json`` vocabulary (string -> id) left as JSON text: a string's id is
    found in the byte form the compiled core read from that text (which holds every string,
    all of them byte-level), and the text is parsed only when the whole mapping is asked
    for (iterated)."""

    def __init__(self, text: bytes, form):
        super().__init__(text)
        self._form = form

    def __getitem__(self, key):
        if self._parsed is not None:
            return self._parsed[key]
        tid = self._form.id_of(key) if isinstance(key, str) else -1  # (JSON keys are strings)
        if tid < 0:
            raise KeyError(key)
        return tid

    def __contains__(self, key) -> bool:
        if self._parsed is not None:
            return key in self._parsed
        return isinstance(key, str) and self._form.id_of(key) >= 0

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return self._form.n_vocab

    def ids(self) -> list:
        """Every id (in no particular order), without parsing the text."""
        return self._form.ids()

    def __reduce__(self):
        return dict, (self._all(),)


class FileMerges(_InText, Sequence):
    """A ``tokenizer.json`` merge list left as JSON text, parsed when first read."""

    def __init__(self, text: bytes, count: int):
        super().__init__(text)
        self._count = count

    def __getitem__(self, i):
        return self._all()[i]

    def __len__(self) -> int:
        return self._count

    def __reduce__(self):
        return tuple, (self._all(),)


def _has_byte_level(pre) -> bool:
    if isinstance(pre, pre_split.ByteLevel):
        return True
    return isinstance(pre, pre_split.Sequence) and any(_has_byte_level(p) for p in pre.pretokenizers)


def find_file(path: PathLike) -> tuple[str, Optional[str]]:
    """``(tokenizer.json path, tokenizer_config.json path or None)`` for a file or a folder."""
    path = os.fspath(path)
    if os.path.isdir(path):
        json_path = os.path.join(path, "tokenizer.json")
        if not os.path.exists(json_path):
            raise TokenizerFileError(path, "the folder holds no tokenizer.json (pass the file itself, or the "
                                           "folder of a Hugging Face tokenizer)")
    else:
        json_path = path
    config = os.path.join(os.path.dirname(os.path.abspath(json_path)), "tokenizer_config.json")
    return json_path, config if os.path.exists(config) else None


def read(path: PathLike) -> HFFile:
    """Read a ``tokenizer.json`` (and the ``tokenizer_config.json`` beside it, if any)."""
    json_path, config_path = find_file(path)
    text = _read_bytes(json_path)
    r = _Reader(json_path)
    data = None
    compiled = _backend.active()
    spans = compiled.json_model_spans(text) if compiled.byte_level_form is not None else None
    if spans is not None:  # the rest parsed here, the vocabulary and merges later (_Reader.model)
        v0, v1, m0, m1 = spans
        try:
            data = json.loads(b"".join((text[:v0], b"{}", text[v1:m0], b"[]", text[m1:])))
            r.text, r.spans = text, spans
        except ValueError:
            data = None  # (the whole file's parse names the error's place)
    if data is None:
        data = _parse_json(json_path, text)
    data = r.obj(data, "")
    # "truncation" and "padding" shape batches, not the ids of a text: not applied (README)
    normalizer = None if data.get("normalizer") is None else r.normalizer(data["normalizer"], "normalizer")
    pre = None if data.get("pre_tokenizer") is None else r.pre_tokenizer(data["pre_tokenizer"], "pre_tokenizer")
    if "model" not in data:
        raise r.fail("", "the key 'model' is missing (is this a Hugging Face tokenizer.json?)")
    decoder = None if data.get("decoder") is None else r.decoder(data["decoder"], "decoder")
    model = r.model(data["model"], byte_level=_has_byte_level(pre))
    post = None if data.get("post_processor") is None else r.post_processor(data["post_processor"], "post_processor")
    added = r.added_tokens([] if data.get("added_tokens") is None else data["added_tokens"], model)
    config = {} if config_path is None else read_config(config_path)
    return HFFile(model, normalizer, pre, post, decoder, added, config)


def read_config(path: str) -> dict:
    """The fields of a ``tokenizer_config.json`` that bpe uses (CONFIG_FIELDS), each checked
    to be of the kind transformers writes there (null: not set); an AddedToken object gives
    its content.  Other keys are not read."""
    r = _Reader(path)
    raw = r.obj(_load_json(path), "")
    config: dict = {}
    for key in CONFIG_FIELDS:
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        if key in ("bos_token", "eos_token", "pad_token", "unk_token"):
            if isinstance(value, dict):  # an AddedToken
                value = r.get(value, "content", key, str)
            elif not isinstance(value, str):
                raise r.fail(key, f"expected a token (a string or an object with its content), got {_kind(value)}")
        elif key in ("add_bos_token", "add_eos_token"):
            if not isinstance(value, bool):
                raise r.fail(key, f"expected true or false, got {_kind(value)}")
        elif key == "model_max_length":  # (transformers writes int(1e30) for "no limit"; a float is read if whole)
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise r.fail(key, f"expected a length (an integer, 0 or more), got {value!r}")
        elif key in ("padding_side", "truncation_side"):
            if value not in ("left", "right"):
                raise r.fail(key, f"expected 'left' or 'right', got {value!r}")
        elif key == "model_input_names":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise r.fail(key, f"expected a list of strings, got {value!r}")
        elif key == "chat_template":
            named = isinstance(value, list) and all(
                isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("template"), str)
                for t in value)
            if not isinstance(value, str) and not named:
                raise r.fail(key, 'expected a template string or a list of {"name": ..., "template": ...}, got '
                                  f"{_kind(value)}")
        elif not isinstance(value, str):  # tokenizer_class
            raise r.fail(key, f"expected a string, got {_kind(value)}")
        config[key] = value
    return config


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise TokenizerFileError(path, f"cannot read the file: {exc.strerror or exc}") from None


def _load_json(path: str):
    return _parse_json(path, _read_bytes(path))


def _parse_json(path: str, raw: bytes):
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise TokenizerFileError(path, "the file is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise TokenizerFileError(path, f"not valid JSON: {exc.msg}", exc.lineno) from None


def model_to_hf(model: MergeBPE) -> dict:
    merges: list = [f"{a} {b}" for a, b in model.pairs] if model.merges_as_strings else \
        [[a, b] for a, b in model.pairs]
    return {"type": "BPE", "dropout": None, "unk_token": model.unk_token,
            "continuing_subword_prefix": model.continuing_subword_prefix,
            "end_of_word_suffix": model.end_of_word_suffix, "fuse_unk": model.fuse_unk,
            "byte_fallback": model.byte_fallback, "ignore_merges": model.ignore_merges,
            "vocab": dict(sorted(model.vocab.items(), key=lambda kv: kv[1])), "merges": merges}


def write_json(path: PathLike, *, model: dict, normalizer: Optional[dict], pre_tokenizer: Optional[dict],
               post_processor: Optional[dict], decoder: Optional[dict], added_tokens: list) -> None:
    data = {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": sorted(added_tokens, key=lambda t: t["id"]), "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer, "post_processor": post_processor, "decoder": decoder,
            "model": model}
    text = json.dumps(data, ensure_ascii=False)
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _as_tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def _names(types) -> str:
    names = {bool: "true or false", int: "an integer", str: "a string", list: "a list", dict: "an object"}
    return " or ".join(names.get(t, t.__name__) for t in _as_tuple(types))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)
