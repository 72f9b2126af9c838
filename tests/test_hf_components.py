"""Each Hugging Face component ``from_hf`` supports, one at a time, against ``tokenizers``.

* The fixtures in tests/data/hf together hold every supported component and setting (the
  list in SUPPORTED below); a fixture change that drops one fails here.
* Toggles: a fixture is changed in one place (a flag flipped, a normalizer left out, a
  behavior swapped).  HF must give different ids (or a different decoded string) for the two
  files on the fixture's texts, which shows the setting matters there, and bpe must give HF's
  result for both.  A few toggles must NOT change anything (merges as strings or as lists,
  trim_offsets, the "special" flag for ids): for those HF's ids stay equal and so must bpe's.
* rules_disagree.json: Hugging Face applies the listed merge with the lowest index first;
  tiktoken merges the adjacent pair whose concatenation has the lowest rank.  On this file the
  two rules give different ids (checked here with tiktoken, bpe's own rank-rule encoder and a
  20-line simulation), and from_hf must follow Hugging Face's.
* ``to_hf`` of bundled encodings and of freshly trained tokenizers loads in HF with bpe's ids.
* A folder with tokenizer.json and tokenizer_config.json: ``hf_config`` holds the config's
  bos_token, eos_token, pad_token and chat_template (a token written as an AddedToken object,
  as older transformers versions wrote them, by its content).
"""

from __future__ import annotations

import copy
import json
import os
import re

import pytest
import tiktoken
import tokenizers

import bpe
from hf_oracle import json_edit as _set
from hf_oracle import (
    FIXTURES,
    TRICKY_TEXTS,
    all_texts,
    component_types,
    corpus_texts,
    fixture_path,
    hf_decode,
    hf_ids,
    hf_ordinary_ids,
    load,
    read_data,
    spec,
)

# ------------------------------------------------------------------ coverage of the fixtures

SUPPORTED = {
    # model BPE
    "model.merges:strings", "model.merges:lists",
    "model.ignore_merges:true", "model.ignore_merges:false",
    "model.byte_fallback:true", "model.unk_token", "model.fuse_unk:true",
    "model.continuing_subword_prefix", "model.end_of_word_suffix", "model.dropout:null",
    # normalizers
    "normalizer:NFC", "normalizer:NFD", "normalizer:NFKC", "normalizer:NFKD", "normalizer:Lowercase",
    "normalizer:Strip", "normalizer:Replace:String", "normalizer:Replace:Regex", "normalizer:Prepend",
    "normalizer:Sequence",
    # pre-tokenizers
    "pre_tokenizer:ByteLevel:add_prefix_space:true", "pre_tokenizer:ByteLevel:add_prefix_space:false",
    "pre_tokenizer:ByteLevel:use_regex:true", "pre_tokenizer:ByteLevel:use_regex:false",
    "pre_tokenizer:ByteLevel:trim_offsets:true", "pre_tokenizer:ByteLevel:trim_offsets:false",
    "pre_tokenizer:Split:String", "pre_tokenizer:Split:Regex",
    "pre_tokenizer:Split:Isolated", "pre_tokenizer:Split:Removed", "pre_tokenizer:Split:MergedWithPrevious",
    "pre_tokenizer:Split:MergedWithNext", "pre_tokenizer:Split:Contiguous",
    "pre_tokenizer:Split:invert:true", "pre_tokenizer:Split:invert:false",
    "pre_tokenizer:Digits:individual_digits:true", "pre_tokenizer:Digits:individual_digits:false",
    "pre_tokenizer:Metaspace:always", "pre_tokenizer:Metaspace:first", "pre_tokenizer:Metaspace:never",
    "pre_tokenizer:Metaspace:split:true", "pre_tokenizer:Metaspace:split:false",
    "pre_tokenizer:Whitespace", "pre_tokenizer:WhitespaceSplit", "pre_tokenizer:Punctuation",
    "pre_tokenizer:Sequence",
    # post-processors
    "post_processor:ByteLevel", "post_processor:TemplateProcessing", "post_processor:RobertaProcessing",
    "post_processor:BertProcessing", "post_processor:Sequence",
    # decoders
    "decoder:ByteLevel", "decoder:Metaspace", "decoder:ByteFallback", "decoder:Fuse", "decoder:Strip",
    "decoder:Replace", "decoder:Sequence",
    # added tokens
    "added:special:true", "added:special:false", "added:normalized:true", "added:normalized:false",
    "added:lstrip", "added:rstrip", "added:single_word",
}


def _walk(component):
    yield component
    for key in ("normalizers", "pretokenizers", "processors", "decoders"):
        for child in component.get(key) or []:
            yield from _walk(child)


def features(d: dict) -> set[str]:
    """The SUPPORTED items one tokenizer.json exercises."""
    out = set()
    m = d["model"]
    merges = m.get("merges") or []
    if merges:
        out.add("model.merges:strings" if isinstance(merges[0], str) else "model.merges:lists")
    out.add(f"model.ignore_merges:{str(bool(m.get('ignore_merges'))).lower()}")
    if m.get("byte_fallback"):
        out.add("model.byte_fallback:true")
    if m.get("unk_token"):
        out.add("model.unk_token")
        if m.get("fuse_unk"):
            out.add("model.fuse_unk:true")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if m.get(key):
            out.add(f"model.{key}")
    if m.get("dropout") is None:
        out.add("model.dropout:null")
    for kind in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        if not d.get(kind):
            continue
        for c in _walk(d[kind]):
            t = c["type"]
            out.add(f"{kind}:{t}")
            if kind == "normalizer" and t == "Replace":
                out.add(f"normalizer:Replace:{next(iter(c['pattern']))}")
            if kind == "pre_tokenizer" and t == "ByteLevel":
                for flag in ("add_prefix_space", "use_regex", "trim_offsets"):
                    out.add(f"pre_tokenizer:ByteLevel:{flag}:{str(c[flag]).lower()}")
            if kind == "pre_tokenizer" and t == "Split":
                out.add(f"pre_tokenizer:Split:{next(iter(c['pattern']))}")
                out.add(f"pre_tokenizer:Split:{c['behavior']}")
                out.add(f"pre_tokenizer:Split:invert:{str(c['invert']).lower()}")
            if kind == "pre_tokenizer" and t == "Digits":
                out.add(f"pre_tokenizer:Digits:individual_digits:{str(c['individual_digits']).lower()}")
            if kind == "pre_tokenizer" and t == "Metaspace":
                out.add(f"pre_tokenizer:Metaspace:{c['prepend_scheme']}")
                out.add(f"pre_tokenizer:Metaspace:split:{str(c['split']).lower()}")
    for t in d.get("added_tokens") or []:
        out.add(f"added:special:{str(t['special']).lower()}")
        out.add(f"added:normalized:{str(t['normalized']).lower()}")
        for flag in ("lstrip", "rstrip", "single_word"):
            if t[flag]:
                out.add(f"added:{flag}")
    return out


def test_fixtures_cover_every_supported_component():
    seen = set()
    for name in FIXTURES:
        seen |= features(spec(fixture_path(name)))
    assert sorted(SUPPORTED - seen) == []


def test_every_fixture_uses_only_supported_components():
    known = {item.split(":")[0] + ":" + item.split(":")[1] for item in SUPPORTED if item.count(":") >= 1}
    for name in FIXTURES:
        d = spec(fixture_path(name))
        for kind in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
            for t in component_types(d.get(kind)):
                assert f"{kind}:{t}" in known, (name, kind, t)


# ------------------------------------------------------------------ toggles



def _drop_from(kind, list_key, type_name):
    """An edit that leaves the ``type_name`` member out of the ``kind`` Sequence."""
    def edit(d):
        members = d[kind][list_key]
        kept = [c for c in members if c["type"] != type_name]
        assert len(kept) == len(members) - 1, (kind, type_name)
        d[kind][list_key] = kept
    return edit


def _added(content, **flags):
    def edit(d):
        [t] = [t for t in d["added_tokens"] if t["content"] == content]
        t.update(flags)
    return edit


def _set_split(behavior, invert):
    """An edit of the first Split's behavior and invert flag."""
    def edit(d):
        d["pre_tokenizer"]["pretokenizers"][0].update(behavior=behavior, invert=invert)
    return edit


def _split_kind(behavior, invert):
    """Split settings that cut the same way: Isolated keeps every piece whatever invert says,
    and inverting swaps MergedWithPrevious and MergedWithNext (the pieces that are not
    matches join the previous match = the matches join the next piece)."""
    if behavior == "Isolated":
        return "Isolated"
    if behavior in ("MergedWithPrevious", "MergedWithNext") and invert:
        behavior = "MergedWithNext" if behavior == "MergedWithPrevious" else "MergedWithPrevious"
        invert = False
    return (behavior, invert)


def _merges_as_strings(d):
    d["model"]["merges"] = [m if isinstance(m, str) else " ".join(m) for m in d["model"]["merges"]]


def _merges_as_lists(d):
    d["model"]["merges"] = [m.split(" ") if isinstance(m, str) else m for m in d["model"]["merges"]]


def _no_extra_unk(d):
    d["model"]["unk_token"] = None


def _template_with_eos(d):
    post = d["post_processor"]
    post["single"].append({"SpecialToken": {"id": "</s>", "type_id": 0}})
    post["special_tokens"]["</s>"] = {"id": "</s>", "ids": [2], "tokens": ["</s>"]}


#: (fixture, what changes, edit, check) with check "encode" (ids differ without the
#: post-processor), "post" (ids differ with add_special_tokens=True), "decode" (HF's decode of
#: the fixture's ids differs) or "same" (HF's ids do not change)
TOGGLES = [
    # model
    ("llama3_like", "ignore_merges false", _set("model", "ignore_merges", False), "encode"),
    ("gpt2_like", "ignore_merges true", _set("model", "ignore_merges", True), "same"),
    ("sentencepiece_like", "byte_fallback false", _set("model", "byte_fallback", False), "encode"),
    ("metaspace_always", "byte_fallback false", _set("model", "byte_fallback", False), "encode"),
    ("bert_processing", "fuse_unk false", _set("model", "fuse_unk", False), "encode"),
    ("metaspace_first", "fuse_unk true", _set("model", "fuse_unk", True), "encode"),
    ("metaspace_first", "no unk_token (unknown characters dropped)", _no_extra_unk, "encode"),
    ("wordpiece_style_bpe", "no end_of_word_suffix", _set("model", "end_of_word_suffix", None), "encode"),
    ("merges_strings", "merges as lists", _merges_as_lists, "same"),
    ("gpt2_like", "merges as strings", _merges_as_strings, "same"),
    ("llama3_like", "merges as lists", _merges_as_lists, "same"),
    # normalizers
    ("normalizers_mix", "no NFKD", _drop_from("normalizer", "normalizers", "NFKD"), "encode"),
    ("normalizers_mix", "no Lowercase", _drop_from("normalizer", "normalizers", "Lowercase"), "encode"),
    ("normalizers_mix", "no Strip", _drop_from("normalizer", "normalizers", "Strip"), "encode"),
    ("normalizers_mix", "no Prepend", _drop_from("normalizer", "normalizers", "Prepend"), "encode"),
    ("normalizers_mix", "Strip left only", _set("normalizer", "normalizers", 2, "strip_right", False), "encode"),
    ("normalizers_mix", "no Replace(String)", _set("normalizer", "normalizers", 3, "content", "``"), "encode"),
    ("normalizers_mix", "no Replace(Regex)", _set("normalizer", "normalizers", 4, "content", "\t"), "encode"),
    ("qwen_like", "no NFC", _set("normalizer", None), "encode"),
    ("merges_strings", "NFKC -> NFC", _set("normalizer", {"type": "NFC"}), "encode"),
    ("wordpiece_style_bpe", "NFD -> NFKD", _set("normalizer", {"type": "NFKD"}), "encode"),
    ("wordpiece_style_bpe", "no NFD", _set("normalizer", None), "encode"),
    ("sentencepiece_like", "no Prepend", _drop_from("normalizer", "normalizers", "Prepend"), "encode"),
    ("bert_processing", "no Lowercase", _drop_from("normalizer", "normalizers", "Lowercase"), "encode"),
    # pre-tokenizers
    ("gpt2_like", "ByteLevel add_prefix_space true", _set("pre_tokenizer", "add_prefix_space", True), "encode"),
    ("gpt2_like", "ByteLevel use_regex false", _set("pre_tokenizer", "use_regex", False), "encode"),
    ("gpt2_like", "ByteLevel trim_offsets false", _set("pre_tokenizer", "trim_offsets", False), "same"),
    ("roberta_processing", "ByteLevel add_prefix_space false",
     _set("pre_tokenizer", "add_prefix_space", False), "encode"),
    ("merges_strings", "Digits individual_digits true",
     _set("pre_tokenizer", "pretokenizers", 0, "individual_digits", True), "encode"),
    ("bert_processing", "Digits individual_digits false",
     _set("pre_tokenizer", "pretokenizers", 2, "individual_digits", False), "encode"),
    ("bert_processing", "no Punctuation", _drop_from("pre_tokenizer", "pretokenizers", "Punctuation"), "encode"),
    ("bert_processing", "Punctuation contiguous",
     _set("pre_tokenizer", "pretokenizers", 1, "behavior", "Contiguous"), "encode"),
    ("wordpiece_style_bpe", "Whitespace -> WhitespaceSplit", _set("pre_tokenizer", {"type": "WhitespaceSplit"}), "encode"),
    ("metaspace_always", "prepend_scheme never", _set("pre_tokenizer", "prepend_scheme", "never"), "encode"),
    ("metaspace_always", "prepend_scheme first", _set("pre_tokenizer", "prepend_scheme", "first"), "encode"),
    ("metaspace_first", "prepend_scheme always", _set("pre_tokenizer", "prepend_scheme", "always"), "encode"),
    ("metaspace_first", "Metaspace split true", _set("pre_tokenizer", "split", True), "encode"),
    ("llama3_like", "Split Isolated -> Removed", _set("pre_tokenizer", "pretokenizers", 0, "behavior", "Removed"), "encode"),
    *[
        (name, f"Split {behavior} invert={invert}", _set_split(behavior, invert),
         "same" if _split_kind(behavior, invert) == _split_kind(*current) else "encode")
        for name, current in [("split_isolated", ("Isolated", False)), ("split_removed", ("Removed", True)),
                              ("split_merged_with_previous", ("MergedWithPrevious", False)),
                              ("split_merged_with_next", ("MergedWithNext", False)),
                              ("split_contiguous", ("Contiguous", False))]
        for behavior in ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
        for invert in (False, True)
        if (behavior, invert) != current and not (behavior == current[0] == "Contiguous")
    ],
    ("split_isolated", "Split String '.' as a Regex (any character)",
     _set("pre_tokenizer", "pretokenizers", 1, "pattern", {"Regex": "."}), "encode"),
    # post-processors
    ("roberta_processing", "no post-processor", _set("post_processor", None), "post"),
    ("bert_processing", "no post-processor", _set("post_processor", None), "post"),
    ("llama3_like", "post-processor ByteLevel only", _set("post_processor", {
        "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}), "post"),
    ("sentencepiece_like", "template <s> $A </s>", _template_with_eos, "post"),
    # decoders
    ("sentencepiece_like", "no Strip decoder", _drop_from("decoder", "decoders", "Strip"), "decode"),
    ("sentencepiece_like", "no Fuse decoder", _drop_from("decoder", "decoders", "Fuse"), "decode"),
    ("sentencepiece_like", "no ByteFallback decoder", _drop_from("decoder", "decoders", "ByteFallback"), "decode"),
    ("sentencepiece_like", "no Replace decoder", _drop_from("decoder", "decoders", "Replace"), "decode"),
    ("metaspace_always", "no ByteFallback decoder", _drop_from("decoder", "decoders", "ByteFallback"), "decode"),
    ("metaspace_always", "Metaspace decoder never", _set("decoder", "decoders", 1, "prepend_scheme", "never"), "decode"),
    ("wordpiece_style_bpe", "no Strip decoder", _drop_from("decoder", "decoders", "Strip"), "decode"),
    ("wordpiece_style_bpe", "Replace decoder </w> -> ''", _set("decoder", "decoders", 1, "content", ""), "decode"),
    ("metaspace_first", "Metaspace decoder -> Sequence[Replace, Strip]", _set("decoder", {
        "type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}), "decode"),
    ("gpt2_like", "Replace decoder before ByteLevel", _set("decoder", {
        "type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "Ġ"}, "content": "_"},
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]}), "decode"),
    # added tokens
    ("added_flags", "<mask> lstrip false", _added("<mask>", lstrip=False), "encode"),
    ("added_flags", "[r] rstrip false", _added("[r]", rstrip=False), "encode"),
    ("added_flags", "<ls> neither strip", _added("<ls>", lstrip=False, rstrip=False), "encode"),
    ("added_flags", "cat single_word false", _added("cat", single_word=False), "encode"),
    ("added_flags", "the single_word false", _added("the", single_word=False), "encode"),
    ("added_flags", "Hello normalized false", _added("Hello", normalized=False), "encode"),
    ("added_flags", "<NoNorm> normalized true", _added("<NoNorm>", normalized=True), "encode"),
    ("added_flags", "<SEP> normalized false", _added("<SEP>", normalized=False), "encode"),
    ("added_flags", "<mask> not special", _added("<mask>", special=False), "same"),
    ("qwen_like", "<think> special", _added("<think>", special=True), "same"),
    ("roberta_processing", "<mask> lstrip false", _added("<mask>", lstrip=False), "encode"),
    ("gpt2_like", "<|endoftext|> normalized false", _added("<|endoftext|>", normalized=False), "same"),
]

TOGGLE_TEXTS = [
    " Pemberley, Darcy and Netherfield, wonderfully",
    "€ and ж and 😀, ©©© ££",
    "ﬁne ① ｗｉｄｅ",
    "``quoted''  text   with\tspaces  ",
    "a <mask> b  <mask>c", "[r]  b [r]\tc", "x <ls>  y", "acat cat Cat cats", "other the bathe",
    "Hello hello HELLO", "<NoNorm> <nonorm> <NONORM>", "<SEP> <sep>",
    "12345 and 67", "a,b;c.d", "Hello World. Again, yes.", "[INST]hello [/INST] world",
    "The Theory That They Thought Of", "been seen, see: fee... ee", "  two  spaces\t\ttabs",
]


def _toggle_id(t):
    return f"{t[0]}: {t[1]}"


@pytest.mark.parametrize("toggle", TOGGLES, ids=[_toggle_id(t) for t in TOGGLES])
def test_toggle(backend, toggle, tmp_path):
    name, what, edit, check = toggle
    path = fixture_path(name)
    d = copy.deepcopy(spec(path))
    edit(d)
    changed = tmp_path / f"{name}-changed.json"
    changed.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    changed = str(changed)
    original_tok = load(path, backend)
    changed_tok = bpe.Tokenizer.from_hf(changed)
    assert changed_tok.backend == backend
    texts = all_texts(path) + TOGGLE_TEXTS
    post = check == "post"
    differs = 0
    problems = []
    for text in texts:
        a, b = hf_ids(path, text, post), hf_ids(changed, text, post)
        differs += a != b
        for tok, p, theirs in ((original_tok, path, a), (changed_tok, changed, b)):
            ours = tok.encode(text, add_special_tokens=post, allowed_special="all")
            if ours != theirs:
                problems.append(f"{os.path.basename(p)} {text!r}: bpe {ours} != HF {theirs}")
        if check == "decode":
            da, db = hf_decode(path, a), hf_decode(changed, a)
            differs += da != db
            for tok, theirs in ((original_tok, da), (changed_tok, db)):
                if tok.decode(a) != theirs:
                    problems.append(f"decode {a} ({text!r}): bpe {tok.decode(a)!r} != HF {theirs!r}")
    if check == "same":
        assert differs == 0, f"{what}: HF's ids changed on {differs} texts"
    else:
        assert differs > 0, f"{what}: HF gives the same result on every text; the toggle shows nothing"
    assert problems == [], "\n".join(problems[:20])


def test_special_flag_decides_whether_encode_raises(backend, tmp_path):
    """The same added token, special or not: same ids under allowed_special="all" (HF's
    ids do not depend on the flag), but only the special one raises by default."""
    path = fixture_path("qwen_like")
    d = copy.deepcopy(spec(path))
    for t in d["added_tokens"]:
        if t["content"] == "<think>":
            t["special"] = True
    changed = tmp_path / "qwen_think_special.json"
    changed.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    plain, special = load(path, backend), bpe.Tokenizer.from_hf(changed)
    text = "a <think>b</think> c"
    assert hf_ids(path, text) == hf_ids(str(changed), text)
    assert plain.encode(text) == plain.encode(text, allowed_special="all") == hf_ids(path, text)
    with pytest.raises(bpe.DisallowedSpecialTokenError) as info:
        special.encode(text)
    assert info.value.token == "<think>"
    assert special.encode(text, allowed_special="all") == hf_ids(path, text)
    assert special.encode_ordinary(text) == plain.encode_ordinary(text)


# ------------------------------------------------------------------ HF's merge rule vs tiktoken's

RULES = fixture_path("rules_disagree")

#: inputs on which the two rules give different ids (checked below), and some on which they agree
DISAGREE = ["abc", "aabc", "abcabc", "def", "defg", "xyx", "yxy", "xyxy", "xxyx", "yxyx", "dexyx"]
AGREE = ["ghi", "ghhi", "gghi", "abab", "bcab", "xyyx", "x y", "", "hello <|endoftext|>"]


def _byte_ranks(path: str) -> dict[bytes, int]:
    """The file's vocabulary as tiktoken ranks (rank = id), token strings read as GPT-2's
    byte-level characters."""
    from bpe.byte_unicode import from_display

    return {from_display(token): id_ for token, id_ in spec(path)["model"]["vocab"].items()}


def rank_rule(ranks: dict[bytes, int], piece: bytes) -> list[int]:
    """tiktoken's rule, written out: merge the adjacent pair whose concatenation has the
    lowest rank (leftmost among equals) until no adjacent pair is a token."""
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            break
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


def test_rules_disagree_fixture_really_disagrees():
    ranks = _byte_ranks(RULES)
    assert len(ranks) == len(spec(RULES)["model"]["vocab"]) and all(ranks[bytes([b])] == b for b in range(256))
    tk = tiktoken.Encoding("rank-rule", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    ours = bpe.Tokenizer(ranks, pattern=None)
    for text in DISAGREE + AGREE:
        if "<|" in text:
            continue
        by_rank = rank_rule(ranks, text.encode("utf-8"))
        assert tk.encode_ordinary(text) == by_rank == ours.encode_ordinary(text), text
        if text in DISAGREE:
            assert hf_ids(RULES, text) != by_rank, text
        else:
            assert hf_ids(RULES, text) == by_rank, text


def test_from_hf_follows_hugging_faces_merge_rule(backend):
    tok = load(RULES, backend)
    for text in DISAGREE + AGREE + TRICKY_TEXTS:
        assert tok.encode(text, allowed_special="all") == hf_ids(RULES, text), text
        assert tok.encode_ordinary(text) == hf_ordinary_ids(RULES, text), text
        assert tok.decode(tok.encode(text, allowed_special="all")) == text


# ------------------------------------------------------------------ to_hf of bpe's own tokenizers


def _to_hf_matches(tok, tmp_path, texts):
    out = tmp_path / "tokenizer.json"
    tok.to_hf(out)
    assert out.stat().st_size > 0
    hf = tokenizers.Tokenizer.from_file(str(out))
    problems = []
    n_ids = 0
    for text in texts:
        ours = tok.encode(text, allowed_special="all")
        theirs = hf.encode(text, add_special_tokens=False).ids
        n_ids += len(ours)
        if ours != theirs:
            i = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
            problems.append(f"{text[:40]!r}: first difference at id {i}: bpe {ours[max(i - 2, 0):i + 3]} "
                            f"!= HF(written) {theirs[max(i - 2, 0):i + 3]}")
    assert problems == [], "\n".join(problems[:20])
    assert n_ids > 0
    return hf


def _to_hf_texts(specials):
    return TRICKY_TEXTS + corpus_texts() + [f"before {s} after{s}{s}" for s in specials] + [
        "numbers 1234567 and 12 345 6789012", "CAPS'S and it'S 'Ll", "tabs\t\tand\n\n\nnewlines\r\n",
    ]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "gpt2"])
def test_to_hf_of_bundled_encodings(enc_factory, name, tmp_path):
    tok = enc_factory(name)
    hf = _to_hf_matches(tok, tmp_path, _to_hf_texts(tok.special_tokens_set))
    assert hf.get_vocab_size(with_added_tokens=True) == len(tok.mergeable_ranks) + len(tok.special_tokens)


TRAIN_PATTERNS = ["cl100k_base", "o200k_base", "gpt2", "llama3", None,
                  r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+"]


def _training_texts():
    return read_data("austen.txt").split("\n\n") + read_data("mixed.txt").split("\n")


@pytest.mark.parametrize("pattern", TRAIN_PATTERNS, ids=lambda p: "custom" if p and "\\" in p else str(p))
def test_to_hf_of_trained_tokenizer(backend, pattern, tmp_path):
    tok = bpe.Tokenizer.train(_training_texts(), vocab_size=600, pattern=pattern, special_tokens=["<|endoftext|>"])
    assert tok.backend == backend and tok.n_vocab == 600
    _to_hf_matches(tok, tmp_path, _to_hf_texts(["<|endoftext|>"]))


@pytest.mark.parametrize("normalization", ["NFC", "NFKC"])
def test_to_hf_of_trained_tokenizer_with_normalization(backend, normalization, tmp_path):
    tok = bpe.Tokenizer.train(_training_texts(), vocab_size=600, special_tokens=["<|endoftext|>"],
                              normalization=normalization)
    assert tok.normalization == normalization
    texts = _to_hf_texts(["<|endoftext|>"]) + ["e\u0301 vs é", "ﬁ ① Ⅻ ｆｕｌｌ", "Å Å"]
    _to_hf_matches(tok, tmp_path, texts)
    # the written file normalizes: a decomposed and a composed accent give the same ids there
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.encode("cafe\u0301", add_special_tokens=False).ids == hf.encode("café", add_special_tokens=False).ids


# ------------------------------------------------------------------ folders and tokenizer_config.json


def test_from_hf_takes_a_file_or_a_folder(backend, tmp_path):
    path = fixture_path("llama3_like")
    (tmp_path / "tokenizer.json").write_bytes(open(path, "rb").read())
    from_file = load(path, backend)
    for arg in (tmp_path, str(tmp_path), tmp_path / "tokenizer.json", str(tmp_path / "tokenizer.json")):
        tok = bpe.Tokenizer.from_hf(arg)
        for text in TRICKY_TEXTS[:30]:
            assert tok.encode(text, allowed_special="all") == from_file.encode(text, allowed_special="all")
    assert not bpe.Tokenizer.from_hf(tmp_path).hf_config.get("bos_token")


def test_tokenizer_config_fields_are_exposed(backend, tmp_path):
    path = fixture_path("llama3_like")
    (tmp_path / "tokenizer.json").write_bytes(open(path, "rb").read())
    config = {
        "bos_token": "<|begin_of_text|>",
        "eos_token": {"__type": "AddedToken", "content": "<|eot_id|>", "lstrip": False, "normalized": False,
                      "rstrip": False, "single_word": False},
        "chat_template": "{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n"
                         "{{ m['content'] }}<|eot_id|>{% endfor %}",
        "model_max_length": 8192,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    tok = bpe.Tokenizer.from_hf(tmp_path)
    cfg = tok.hf_config
    assert isinstance(cfg, dict)
    assert cfg["bos_token"] == "<|begin_of_text|>"
    assert cfg["eos_token"] == "<|eot_id|>"  # an AddedToken object in the file: its content
    assert cfg["chat_template"] == config["chat_template"]
    assert cfg.get("pad_token") is None
    assert re.search(r"<\|eot_id\|>", cfg["chat_template"])
    text = "<|begin_of_text|>hi<|eot_id|>"
    assert tok.encode(text, allowed_special="all") == hf_ids(path, text)
