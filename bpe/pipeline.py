"""The pipeline a tokenizer runs, and the planner that picks how to run it.

::

    text ─ added/special tokens ─ normalizer ─ pre-tokenizer ─ model ─ post-processor ─ ids
    ids ─ model (id → bytes or strings) ─ decoder ─ text

A :class:`Pipeline` holds one immutable stage object per step (``bpe.normalizers``,
``bpe.special.AddedToken``, ``bpe.pre_tokenizers``, ``bpe.models.bpe``, ``bpe.processors``,
``bpe.decoders``).  :func:`plan` decides, once per tokenizer, whether the whole encode runs on
the compiled core in one GIL-free pass (a named scanner or no split, a rank-rule model, at
most a Unicode normal form, added tokens matched as exact strings) or stage by stage in
Python (each stage's own method, the model still on the core when it has a rank form), and
whether decoding can join token bytes.  This module does not encode; ``bpe.tokenizer``
follows the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from . import decoders, normalizers
from .models.bpe import MergeBPE, RankBPE, equivalent_ranks
from .pre_tokenizers import split as pre_split
from .pre_tokenizers.patterns import NAMED_PATTERNS


@dataclass(frozen=True, eq=False)
class Pipeline:
    normalizer: Optional[normalizers.Normalizer]
    pre_tokenizer: Optional[pre_split.PreTokenizer]
    model: Union[RankBPE, MergeBPE]
    added_tokens: tuple = ()          # bpe.special.AddedToken, special or not
    post_processor: Optional[object] = None
    decoder: Optional[decoders.Decoder] = None


@dataclass(frozen=True)
class Plan:
    """How a tokenizer runs its pipeline (see :func:`plan`)."""

    pattern_name: Optional[str]       # the scanner's pattern (with on_scanner); None: no split
    pattern_source: Optional[str]     # the regex source of a ``Pattern`` stage (tiktoken syntax)
    on_scanner: bool                  # the split runs in the core (named pattern, or no split)
    unicode_form: Optional[str]       # "NFC" etc. when the normalizer is just that
    staged: bool                      # encode stage by stage (a stage the fused path lacks)
    model_on_core: bool               # pieces go to the core's BPE (either rule)
    bytes_decode: bool                # decoding joins token bytes (byte-level, no other decoder)


def fused_pattern(pre) -> tuple[bool, Optional[str], Optional[str]]:
    """``(fused, name, source)``: whether a pre-tokenizer is one the fused path runs — a
    ``Pattern``, HF's ``ByteLevel`` with the GPT-2 regex or none, or a named ``Split`` before
    a regex-less ``ByteLevel`` — with its pattern name and source."""
    if pre is None:
        return True, None, None
    if isinstance(pre, pre_split.Pattern):
        return True, pre.name, pre.source
    if isinstance(pre, pre_split.ByteLevel) and not pre.add_prefix_space:
        return (True, "gpt2", NAMED_PATTERNS["gpt2"]) if pre.use_regex else (True, None, None)
    if isinstance(pre, pre_split.Split) and pre.named_pattern() is not None:
        return True, pre.named_pattern(), NAMED_PATTERNS[pre.named_pattern()]
    if isinstance(pre, pre_split.Sequence):
        stages = list(pre.pretokenizers)
        last = stages[-1] if stages else None
        if isinstance(last, pre_split.ByteLevel) and not last.use_regex and not last.add_prefix_space:
            stages.pop()  # only the byte mapping, which the model does
        if len(stages) <= 1:
            return fused_pattern(stages[0] if stages else None)
    return False, None, None


def build_core(pipeline: Pipeline, backend, added: dict) -> tuple:
    """``(core, tokens, rule)``: the compiled core (the ``backend``'s ``Encoder``) for the
    model, the token table it holds (bytes -> id, or a byte form whose ``tokens`` it is:
    made when first asked for) and its rule, ``"ranks"`` (tiktoken's) or ``"merges"`` (HF's
    merge list, bpe/_merges.pxi); ``(None, {}, None)`` when the model is not byte-level BPE
    over all 256 bytes.  ``added`` (bytes -> id): the added tokens, for decoding.  A merge
    list that encodes exactly as a rank table (``equivalent_ranks``) runs on the rank rule,
    the faster one."""
    model = pipeline.model
    encoder_class = backend.Encoder
    if isinstance(model, RankBPE):  # (its callers check that added ids are not ranks)
        return encoder_class(model.ranks, {**model.decode_only, **added}), model.ranks, "ranks"
    compiled = backend.byte_level_form
    form = model.byte_form(compiled)
    if form is None:
        return None, {}, None
    # added tokens whose id the model does not have are decoded from the core too
    extra = {data: tid for data, tid in added.items() if tid not in model.ids}
    decode_only = {**form.decode_only, **extra} if extra else form.decode_only
    ranked = model.rank_form(compiled)
    core = None
    if ranked is not None:
        ranks, rank_decode_only, first = ranked
        core = encoder_class(ranks, {**rank_decode_only, **extra} if extra else rank_decode_only)
        if equivalent_ranks(first, core):
            return core, ranks, "ranks"
        if ranks is not form:
            core = None  # the merge list's table holds tokens the rank table leaves out
    if core is None:  # (else the same table: the core switches rules)
        core = encoder_class(form, decode_only)
    try:
        core.use_merge_list(form.triples, model.ignore_merges)
    except OverflowError:  # beyond the compiled table's fields: the stages run in Python
        return None, {}, None
    return core, form, "merges"


def plan(pipeline: Pipeline, core) -> Plan:
    """The plan for ``pipeline``, given its core from :func:`build_core` (or None)."""
    model = pipeline.model
    on_core = core is not None
    fused, name, source = fused_pattern(pipeline.pre_tokenizer)
    on_scanner = fused and (source is None or name is not None)
    form = normalizers.unicode_form(pipeline.normalizer)
    norm_ok = pipeline.normalizer is None or form is not None
    added_ok = all(t.plain for t in pipeline.added_tokens) and not (
        pipeline.normalizer is not None and any(t.normalized for t in pipeline.added_tokens))
    staged = not (on_core and fused and norm_ok and added_ok)
    decoder = pipeline.decoder
    byte_level = isinstance(model, RankBPE) or model.byte_level
    bytes_decode = core is not None and byte_level and (decoder is None or isinstance(decoder, decoders.ByteLevel))
    return Plan(name if fused else None, source if fused else None, on_scanner, form, staged, on_core,
                bytes_decode)


def pre_tokenize(pre, text: str, first: bool = True) -> list[str]:
    """The pieces of ``text`` (one stretch between added tokens) under the pre-tokenizer
    ``pre``; ``first``: the stretch starts the text (for Metaspace's ``"first"`` scheme)."""
    from .pre_tokenizers.words import Metaspace

    if pre is None:
        return [text] if text else []
    if isinstance(pre, Metaspace):
        return pre.pre_tokenize(text, first)
    if isinstance(pre, pre_split.Sequence):
        pieces = [text] if text else []
        for stage in pre.pretokenizers:
            pieces = [p for k, piece in enumerate(pieces) for p in pre_tokenize(stage, piece, first and k == 0)]
        return pieces
    return pre.pre_tokenize(text)
