"""How characters move through the pipeline: offsets for the stages the core does not fuse.

An aligned string is a ``str`` with, for each of its characters, the ``(start, end)`` span of
the characters of the original text it came from (Hugging Face's ``NormalizedString``
alignments, in characters).  Each stage moves it as Hugging Face does:

* a stage that rewrites characters gives each new character a change: 0 for one that takes
  the place of the next old character, +1 for an inserted one, -n for one that takes the
  place of the next old character and removes n more.  A replacing character keeps that old
  character's span; an inserted one takes the span of the old character before it, or the
  empty span at the start of the string when there is none (``transform``);
* Unicode normal forms: decomposition (the first character of a decomposition replaces, the
  others are inserted), canonical reordering (a character keeps its change as it moves) and
  composition (the composite's change is the sum of its two parts' minus one)
  (``unicode_changes``);
* a piece cut out of a string keeps its characters' spans, and the place it starts at in the
  original is where an inserted character at its start points;
* a token covering characters ``[i, j)`` of its piece spans from the start of character
  ``i`` to the end of character ``j - 1``.

``encode_staged`` runs a pipeline stage by stage this way, for what the compiled core does not
fuse; ``to_original`` moves the core's offsets in a normal form back to the text as given;
``post_process`` applies a post-processor's offset trimming and added tokens.  Ids come out
as ``Tokenizer.encode`` gives them; this module does not decide the plan.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Optional

from . import normalizers, processors, special, training
from .encoding import NO_WORD, packed, unpack
from .errors import DisallowedSpecialTokenError
from .models.bpe import MergeBPE
from .pre_tokenizers import split as pre_split
from .pre_tokenizers.words import Metaspace

Span = tuple[int, int]


def transform(al: list[Span], start: int, end: int, dest, initial: int, shift: int) -> list[Span]:
    """The spans after characters ``start:end`` of a string with spans ``al`` are rewritten
    as ``dest`` (``(char, change)`` pairs, the first ``initial`` old characters removed
    before them); ``shift``: the original position of the string's start."""
    off = start + initial
    new: list[Span] = []
    for _, change in dest:
        if change > 0:
            new.append(al[off - 1] if off >= 1 else (shift, shift))
        else:
            new.append(al[off])
            off += 1 - change
    return al[:start] + new + al[end:]


# ---------------------------------------------------------------- normalizers

@lru_cache(maxsize=4096)
def _compose(a: str, b: str) -> Optional[str]:
    """The primary composite of starter ``a`` and ``b``, or None."""
    c = unicodedata.normalize("NFC", a + b)
    return c if len(c) == 1 else None


def unicode_changes(form: str, text: str) -> list[list]:
    """``[char, change]`` for each character of ``text``'s normal form ``form``."""
    decompose = "NFKD" if form in ("NFKC", "NFKD") else "NFD"
    ccc = unicodedata.combining
    out: list[list] = []
    for c in text:
        d = unicodedata.normalize(decompose, c) if not c.isascii() else c
        out.append([d[0], 0])
        out.extend([x, 1] for x in d[1:])
    i = 0
    while i < len(out):  # canonical reordering: each run of non-starters, stably by class
        if not ccc(out[i][0]):
            i += 1
            continue
        j = i
        while j < len(out) and ccc(out[j][0]):
            j += 1
        out[i:j] = sorted(out[i:j], key=lambda x: ccc(x[0]))
        i = j
    if form in ("NFD", "NFKD"):
        return out
    composed: list[list] = []
    starter = -1
    last = -1  # combining class of the last character kept after the starter (-1: none)
    for ch, change in out:
        cc = ccc(ch)
        if starter >= 0 and not (last >= 0 and (last == 0 or last >= cc)):
            comp = _compose(composed[starter][0], ch)
            if comp is not None:
                composed[starter] = [comp, composed[starter][1] + change - 1]
                continue
        if cc == 0:
            starter, last = len(composed), -1
        else:
            last = cc
        composed.append([ch, change])
    return composed


def unicode_form(form: str, text: str) -> list[Span]:
    """The span in ``text`` of each character of its normal form ``form``."""
    al = [(i, i + 1) for i in range(len(text))]
    return transform(al, 0, len(al), unicode_changes(form, text), 0, 0)


def normalize(normalizer, text: str, al: list[Span], shift: int) -> tuple[str, list[Span]]:
    """``normalizer`` on an aligned string."""
    if normalizer is None or not text:
        return text, al
    if isinstance(normalizer, normalizers.Sequence):
        for n in normalizer.normalizers:
            text, al = normalize(n, text, al, shift)
        return text, al
    if isinstance(normalizer, normalizers.UnicodeForm):
        dest = unicode_changes(normalizer.form, text)
        return "".join(c for c, _ in dest), transform(al, 0, len(al), dest, 0, shift)
    if isinstance(normalizer, normalizers.Lowercase):
        dest = [(x, int(k > 0)) for c in text for k, x in enumerate(c.lower())]
        return "".join(c for c, _ in dest), transform(al, 0, len(al), dest, 0, shift)
    if isinstance(normalizer, normalizers.Strip):
        out = normalizer.normalize(text)
        if not out:
            return out, []
        left = len(text) - len(text.lstrip(normalizers.WHITE_SPACE)) if normalizer.left else 0
        return out, al[left:left + len(out)]
    if isinstance(normalizer, normalizers.Prepend):
        return _prefixed(text, al, shift, normalizer.prepend)
    if isinstance(normalizer, normalizers.Replace):
        return _replace(normalizer, text, al, shift)
    raise TypeError(f"no offsets for the normalizer {type(normalizer).__name__}")


def _replace(normalizer, text: str, al: list[Span], shift: int) -> tuple[str, list[Span]]:
    if normalizer.is_regex:
        matches = [m.span() for m in normalizers._compiled(normalizer.pattern).finditer(text)]
    elif normalizer.pattern:
        matches, pos, n = [], text.find(normalizer.pattern), len(normalizer.pattern)
        while pos >= 0:
            matches.append((pos, pos + n))
            pos = text.find(normalizer.pattern, pos + n)
    else:
        matches = []
    parts, spans, pos = [], [], 0
    content = normalizer.content
    for s, e in matches:
        parts.append(text[pos:s])
        spans.extend(al[pos:s])
        # the new characters are inserted after the removed match: the span before them
        parts.append(content)
        spans.extend([al[e - 1] if e >= 1 else (shift, shift)] * len(content))
        pos = e
    parts.append(text[pos:])
    spans.extend(al[pos:])
    return "".join(parts), spans


# ---------------------------------------------------------------- pre-tokenizers

Piece = tuple  # (text, spans, shift)


def _cut(text: str, al: list[Span], spans) -> list[Piece]:
    return [(text[s:e], al[s:e], al[s][0]) for s, e in spans]


def _prefixed(text: str, al: list[Span], shift: int, prefix: str) -> tuple[str, list[Span]]:
    """``prefix + text``: the prefix takes the span of the character it is put before."""
    return prefix + text, [al[0] if al else (shift, shift)] * len(prefix) + al


def pre_tokenize(pre, piece: Piece, first: bool) -> list[Piece]:
    """The aligned pieces of an aligned stretch of text (see ``bpe.pipeline.pre_tokenize``)."""
    text, al, shift = piece
    if not text:
        return []
    if pre is None:
        return [piece]
    if isinstance(pre, pre_split.Sequence):
        pieces = [piece]
        for stage in pre.pretokenizers:
            pieces = [p for k, q in enumerate(pieces) for p in pre_tokenize(stage, q, first and k == 0)]
        return pieces
    if isinstance(pre, pre_split.ByteLevel):
        if pre.add_prefix_space and not text.startswith(" "):
            text, al = _prefixed(text, al, shift, " ")
        return _cut(text, al, pre.spans(text))
    if isinstance(pre, Metaspace):
        text = text.replace(" ", pre.replacement)
        if (pre.prepend_scheme == "always" or (pre.prepend_scheme == "first" and first)) \
                and not text.startswith(pre.replacement):
            text, al = _prefixed(text, al, shift, pre.replacement)
        if not pre.split:
            return [(text, al, shift)]
        finder = lambda t: ((i, i + 1) for i, c in enumerate(t) if c == pre.replacement)  # noqa: E731
        return _cut(text, al, pre_split.cut_spans(pre_split.match_spans(text, finder, False), "MergedWithNext"))
    return _cut(text, al, pre.spans(text))


# ---------------------------------------------------------------- the model

def model_spans(tok, piece: str) -> list[tuple[int, int, int]]:
    """``(id, start, end)`` of each token of one pre-token, in its characters."""
    if tok._plan.model_on_core:
        ids, starts, ends, _ = unpack(*tok._core.encode_offsets(piece, None))
        return list(zip(ids, starts, ends))
    model = tok._pipeline.model
    if isinstance(model, MergeBPE):
        return model.tokenize_spans(piece)
    raise TypeError(f"no offsets for the model {type(model).__name__}")


# ---------------------------------------------------------------- whole texts

def encode_staged(tok, text: str, allowed: frozenset, disallowed: frozenset) -> tuple:
    """``(ids, starts, ends, word_ids)`` of ``text`` run stage by stage (the ids of
    ``Tokenizer._encode_staged``, with where each token came from)."""
    special.check_disallowed(text, disallowed)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, one character for one
        text = training.repair_surrogates(text)
    pipeline = tok._pipeline
    by_name = tok._added_by_name
    tokens = [by_name[name] for name in allowed | disallowed if name in by_name]
    norm = pipeline.normalizer
    raw = {t.content: t for t in tokens if not t.normalized or norm is None}
    normed = {normalize(norm, t.content, [(0, 1)] * len(t.content), 0)[0]: t
              for t in tokens if t.normalized and norm is not None}
    ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    words: list[int] = []
    shown: dict[int, str] = {}  # token index -> its string, for added tokens that took white space
    word = 0
    first = True

    def added(token, span, matched):
        nonlocal word
        if token.content in disallowed and token.content not in allowed:
            raise DisallowedSpecialTokenError(token.content)
        if matched != token.content:  # (HF shows the text matched, white space and all)
            shown[len(ids)] = matched
        ids.append(token.id)
        starts.append(span[0])
        ends.append(span[1])
        words.append(word)
        word += 1

    for s, e, token in special.find_added(text, raw):
        if token is not None:
            added(token, (s, e), text[s:e])
            first = False
            continue
        seg, al = normalize(norm, text[s:e], [(i, i + 1) for i in range(s, e)], s)
        for s2, e2, token2 in special.find_added(seg, normed):
            if token2 is not None:
                added(token2, (al[s2][0], al[e2 - 1][1]), seg[s2:e2])
            elif e2 > s2:
                for piece_text, pal, _ in pre_tokenize(pipeline.pre_tokenizer, (seg[s2:e2], al[s2:e2], al[s2][0]),
                                                       first):
                    for tid, a, b in model_spans(tok, piece_text):
                        ids.append(tid)
                        starts.append(pal[a][0])
                        ends.append(pal[b - 1][1])
                        words.append(word)
                    word += 1
            first = False
    return ids, packed(starts), packed(ends), packed(words), shown


def to_original(parts: tuple, al: list[Span]) -> tuple:
    """Offsets in a normal form (``parts`` of the core's ``encode_offsets``) moved to the
    text whose characters' spans ``al`` holds."""
    ids, starts, ends, words = parts
    return ids, packed([al[s][0] for s in starts]), packed([al[e - 1][1] for e in ends]), words


# ---------------------------------------------------------------- post-processors

def _trim(starts, ends, tokens: list[str], add_prefix_space: bool) -> None:
    """HF's ByteLevel offset trimming: a token's leading and trailing spaces (``Ġ`` or
    white space in its string) are not part of its span, except one leading space of the
    first token where a prefix space was added."""
    for i, token in enumerate(tokens):
        lead = len(token) - len(token.lstrip("Ġ" + normalizers.WHITE_SPACE))
        trail = len(token) - len(token.rstrip("Ġ" + normalizers.WHITE_SPACE))
        if not lead and not trail:
            continue
        if lead:
            if (i == 0 or starts[i] == 0) and add_prefix_space and lead == 1:
                lead = 0
            starts[i] = min(starts[i] + lead, ends[i])
        if trail and ends[i] >= trail:
            ends[i] = max(ends[i] - trail, starts[i])


def post_process_changes(post, add_special_tokens: bool) -> bool:
    """Whether :func:`post_process` changes anything: a stage that trims offsets, or with
    ``add_special_tokens`` one that adds tokens."""
    return any(_trims(stage) or (add_special_tokens and any(stage.affixes())) for stage in processors.stages(post))


def _trims(stage) -> bool:
    """Whether a post-processor stage trims the spaces off offsets (HF's trim_offsets)."""
    return isinstance(stage, (processors.ByteLevel, processors.RobertaProcessing)) and stage.trim_offsets


def post_process(post, parts: tuple, token_string, add_special_tokens: bool) -> tuple:
    """``parts`` (ids, starts, ends, word ids, token strings that differ by index) after the
    post-processor ``post``: its offset trimming, and with ``add_special_tokens`` the tokens
    it adds around the text ((0, 0), no word)."""
    ids, starts, ends, words, shown = parts
    for stage in processors.stages(post):
        if _trims(stage):  # (into arrays of their own: the core's are read-only views)
            starts, ends = packed(starts), packed(ends)
            strings = [shown.get(k) or token_string(i) or "" for k, i in enumerate(ids)]
            _trim(starts, ends, strings, stage.add_prefix_space)
        if add_special_tokens:
            before, after = stage.affixes()
            if before or after:
                ids = [*before, *ids, *after]
                shown = {k + len(before): v for k, v in shown.items()}
                zeros = [0] * len(before), [0] * len(after)
                starts = packed(zeros[0]) + packed(starts) + packed(zeros[1])
                ends = packed(zeros[0]) + packed(ends) + packed(zeros[1])
                words = packed([NO_WORD] * len(before)) + packed(words) + packed([NO_WORD] * len(after))
    return ids, starts, ends, words, shown
