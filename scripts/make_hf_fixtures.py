"""Build the small Hugging Face ``tokenizer.json`` fixtures in tests/data/hf/.

Each fixture is a BPE model trained here with ``tokenizers`` (``trainers.BpeTrainer``) on the
public-domain / project-written text in tests/data (austen.txt, mixed.txt), with the normalizer,
pre-tokenizer, post-processor, decoder and added tokens set per fixture so that, together, they
exercise every component ``bpe.Tokenizer.from_hf`` supports (tests/test_hf_components.py checks
that the union of the fixtures still covers that list).  ``rules_disagree.json`` is written by
hand: a tiny byte-level BPE on which Hugging Face's merge rule and tiktoken's rank rule give
different ids.

The output is deterministic (BpeTrainer breaks ties by the pair, the vocabulary is written in id
order, and nothing machine-specific is recorded), so a rerun rewrites the same bytes::

    python scripts/make_hf_fixtures.py            # (re)write tests/data/hf/*.json
    python scripts/make_hf_fixtures.py --check    # exit 1 if a file would change

Written with tokenizers 0.23.3.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from tokenizers import (
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(DATA, "hf")

MAX_BYTES = 100_000  # every fixture stays well under this

LLAMA3_PAT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_PAT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def read(name: str) -> str:
    with open(os.path.join(DATA, name), encoding="utf-8", newline="") as f:
        return f.read()


def corpus() -> list[str]:
    """The training texts: austen.txt by paragraph, mixed.txt by line (in file order)."""
    texts = [p for p in read("austen.txt").split("\n\n") if p.strip()]
    texts += [line for line in read("mixed.txt").split("\n") if line.strip()]
    return texts


def common_chars(min_count: int) -> set[str]:
    """The characters seen at least ``min_count`` times in corpus().

    Used instead of BpeTrainer's ``limit_alphabet``, which breaks frequency ties in hash order
    (so its vocabulary changes from run to run)."""
    counts: dict[str, int] = {}
    for text in corpus():
        for ch in text:
            counts[ch] = counts.get(ch, 0) + 1
    return {ch for ch, n in counts.items() if n >= min_count}


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (the ByteLevel alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHAR = bytes_to_unicode()


def byte_level(s: str) -> str:
    return "".join(BYTE_CHAR[b] for b in s.encode("utf-8"))


# ------------------------------------------------------------------ training helpers


def train(
    pre_tokenizer,
    vocab_size: int,
    *,
    normalizer=None,
    byte_alphabet: bool = True,
    special_tokens: tuple = (),
    min_char_count: int = 0,
    model_options: dict | None = None,
    trainer_options: dict | None = None,
) -> Tokenizer:
    """A BPE model trained on corpus() with the given normalizer and pre-tokenizer; with
    ``min_char_count``, characters rarer than that are left out of the training text (and so
    out of the alphabet, unless ``byte_alphabet`` puts them back)."""
    tok = Tokenizer(models.BPE(**(model_options or {})))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    options = dict(
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet() if byte_alphabet else [],
    )
    options.update(trainer_options or {})
    texts = corpus()
    if min_char_count:
        keep = common_chars(min_char_count)
        texts = ["".join(ch if ch in keep else " " for ch in text) for text in texts]
    tok.train_from_iterator(texts, trainers.BpeTrainer(**options))
    return tok


def as_dict(tok: Tokenizer) -> dict:
    return json.loads(tok.to_str())


def from_dict(d: dict) -> Tokenizer:
    return Tokenizer.from_str(json.dumps(d, ensure_ascii=False))


def added(content: str, id_: int, *, special: bool, normalized: bool = False, lstrip: bool = False,
          rstrip: bool = False, single_word: bool = False) -> dict:
    return {"id": id_, "content": content, "single_word": single_word, "lstrip": lstrip,
            "rstrip": rstrip, "normalized": normalized, "special": special}


def append_added(d: dict, specs: list[tuple[str, dict]]) -> None:
    """Add tokens (content, flags) after the model vocab, in order, with consecutive ids; a
    content already in the vocab keeps its vocab id (as Hugging Face does)."""
    vocab = d["model"]["vocab"]
    next_id = max([*vocab.values(), *(t["id"] for t in d["added_tokens"])]) + 1
    for content, flags in specs:
        if content in vocab:
            id_ = vocab[content]
        else:
            id_ = next_id
            next_id += 1
        d["added_tokens"].append(added(content, id_, **flags))
    d["added_tokens"].sort(key=lambda t: t["id"])


def byte_level_tokens(d: dict) -> None:
    """Check that a byte-level model holds all 256 byte characters."""
    vocab = d["model"]["vocab"]
    missing = [c for c in BYTE_CHAR.values() if c not in vocab]
    assert not missing, f"byte-level vocab lacks {missing[:5]}"


def set_component(d: dict, key: str, component) -> None:
    """Set d[key] to the JSON of a tokenizers component (or None)."""
    if component is None:
        d[key] = None
        return
    holder = Tokenizer(models.BPE())
    setattr(holder, key, component)
    d[key] = json.loads(holder.to_str())[key]


def string_merges(d: dict) -> None:
    d["model"]["merges"] = [" ".join(pair) for pair in d["model"]["merges"]]


# ------------------------------------------------------------------ the fixtures


def gpt2_like() -> dict:
    """GPT-2's layout: ByteLevel(regex) pre-tokenizer, ByteLevel post-processor and decoder,
    `<|endoftext|>` special with normalized=true (as in the hub gpt2 file)."""
    tok = train(pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True), 520)
    d = as_dict(tok)
    byte_level_tokens(d)
    set_component(d, "post_processor", processors.ByteLevel(trim_offsets=False))
    set_component(d, "decoder", decoders.ByteLevel())
    append_added(d, [("<|endoftext|>", dict(special=True, normalized=True))])
    return d


#: whole words given their own vocab entry (no merge makes them); with ignore_merges a
#: pre-token equal to one of them is one token, without it the merges split it.
LLAMA3_EXTRA_WORDS = [" Pemberley", " Netherfield", " wonderfully", "Darcy", " 2024"]


def llama3_like() -> dict:
    """Llama 3's layout: Split(llama3 regex, Isolated) + ByteLevel(use_regex=false),
    ignore_merges=true, merges as "a b" strings, post-processor Sequence[ByteLevel,
    TemplateProcessing(<|begin_of_text|> $A)], specials 128000-style after the vocab."""
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PAT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok = train(pre, 560, model_options=dict(ignore_merges=True))
    d = as_dict(tok)
    byte_level_tokens(d)
    vocab = d["model"]["vocab"]
    for word in LLAMA3_EXTRA_WORDS:
        bl = byte_level(word)
        assert bl not in vocab, f"{word!r} is in the trained vocab already; pick another word"
        vocab[bl] = len(vocab)
    string_merges(d)
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    append_added(d, [(s, dict(special=True)) for s in specials])
    bos = next(t["id"] for t in d["added_tokens"] if t["content"] == "<|begin_of_text|>")
    set_component(d, "post_processor", processors.Sequence([
        processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
        processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
            special_tokens=[("<|begin_of_text|>", bos)],
        ),
    ]))
    set_component(d, "decoder", decoders.ByteLevel())
    return d


def qwen_like() -> dict:
    """Qwen2's layout: NFC, Split(qwen2 regex, Isolated) + ByteLevel(use_regex=false,
    trim_offsets=false); special <|endoftext|> <|im_start|> <|im_end|>, non-special
    <tool_call> </tool_call> <think> </think> (all normalized=false, as in Qwen3's file)."""
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PAT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok = train(pre, 540, normalizer=normalizers.NFC())
    d = as_dict(tok)
    byte_level_tokens(d)
    append_added(d, [
        ("<|endoftext|>", dict(special=True)),
        ("<|im_start|>", dict(special=True)),
        ("<|im_end|>", dict(special=True)),
        ("<tool_call>", dict(special=False)),
        ("</tool_call>", dict(special=False)),
        ("<think>", dict(special=False)),
        ("</think>", dict(special=False)),
    ])
    set_component(d, "post_processor", processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False))
    set_component(d, "decoder", decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False))
    return d


def merges_strings() -> dict:
    """Merges in the older "a b" string form; NFKC; Sequence[Digits(individual_digits=false),
    ByteLevel(add_prefix_space=true, use_regex=true)]; no post-processor."""
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True),
    ])
    tok = train(pre, 480, normalizer=normalizers.NFKC())
    d = as_dict(tok)
    byte_level_tokens(d)
    string_merges(d)
    set_component(d, "post_processor", None)
    set_component(d, "decoder", decoders.ByteLevel())
    append_added(d, [("<|endoftext|>", dict(special=True))])
    return d


def _sentencepiece_model(pre_tokenizer, normalizer, vocab_size: int, *, byte_fallback: bool) -> dict:
    """A SentencePiece-style BPE: <unk> <s> </s> first, then (with byte_fallback) the 256
    <0xNN> byte tokens, then the learned pieces over the common characters only (so that
    rarer ones are not in the vocab and fall back to bytes, or to <unk>)."""
    tok = train(pre_tokenizer, vocab_size, normalizer=normalizer, byte_alphabet=False,
                special_tokens=("<unk>", "<s>", "</s>"), min_char_count=40)
    d = as_dict(tok)
    vocab = d["model"]["vocab"]
    assert [vocab["<unk>"], vocab["<s>"], vocab["</s>"]] == [0, 1, 2]
    learned = sorted((i, t) for t, i in vocab.items() if i > 2)
    new_vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    if byte_fallback:
        for b in range(256):
            new_vocab[f"<0x{b:02X}>"] = len(new_vocab)
    for _, t in learned:
        assert t not in new_vocab
        new_vocab[t] = len(new_vocab)
    d["model"]["vocab"] = new_vocab
    d["model"]["unk_token"] = "<unk>"
    d["model"]["byte_fallback"] = byte_fallback
    d["added_tokens"] = [added(t, i, special=True) for t, i in new_vocab.items() if t in ("<unk>", "<s>", "</s>")]
    return d


def sentencepiece_like() -> dict:
    """Llama 2's (legacy) Hugging Face layout: normalizer Sequence[Prepend("▁"),
    Replace(" ", "▁")], no pre-tokenizer, byte_fallback with <0x00>..<0xFF>, unk_token <unk>
    with fuse_unk, post TemplateProcessing(<s> $A), decoder Sequence[Replace("▁", " "),
    ByteFallback, Fuse, Strip(" ", 1, 0)]."""
    norm = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    # trained on the same normalized text, split like SentencePiece (at each ▁)
    d = _sentencepiece_model(pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=True),
                             norm, 420, byte_fallback=True)
    d["model"]["fuse_unk"] = True
    set_component(d, "pre_tokenizer", None)
    set_component(d, "post_processor", processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", 1)]))
    set_component(d, "decoder", decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]))
    return d


def _metaspace(prepend_scheme: str, split: bool, *, byte_fallback: bool, fuse_unk: bool) -> dict:
    """A model trained behind Metaspace(prepend_scheme="always", split=``split``): with
    split=false its pieces cross the ▁ word boundaries."""
    d = _sentencepiece_model(pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=split),
                             None, 400, byte_fallback=byte_fallback)
    d["model"]["fuse_unk"] = fuse_unk
    set_component(d, "pre_tokenizer", pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=prepend_scheme, split=split))
    set_component(d, "post_processor", None)
    meta = decoders.Metaspace(replacement="▁", prepend_scheme=prepend_scheme, split=split)
    set_component(d, "decoder", decoders.Sequence([decoders.ByteFallback(), meta]) if byte_fallback else meta)
    return d


def metaspace_always() -> dict:
    """Metaspace(prepend_scheme="always", split=true) pre-tokenizer, byte_fallback, fuse_unk;
    decoder Sequence[ByteFallback, Metaspace]; a non-special added token after the vocab."""
    d = _metaspace("always", True, byte_fallback=True, fuse_unk=True)
    append_added(d, [("<sep>", dict(special=False))])
    return d


def metaspace_first() -> dict:
    """Metaspace(prepend_scheme="first", split=false) (the newer Llama/Mistral conversion), no
    byte fallback: characters outside the vocab become <unk>, one per character (fuse_unk
    false); decoder Metaspace; a special added token that ends a piece before the next."""
    d = _metaspace("first", False, byte_fallback=False, fuse_unk=False)
    append_added(d, [("[INST]", dict(special=True)), ("[/INST]", dict(special=True))])
    return d


def metaspace_never() -> dict:
    """Metaspace(prepend_scheme="never", split=true), byte_fallback, no fuse_unk."""
    return _metaspace("never", True, byte_fallback=True, fuse_unk=False)


def train_affixed(pre_tokenizer, normalizer, vocab_size: int, prefix: str, suffix: str,
                  min_char_count: int) -> tuple[dict[str, int], list[list[str]]]:
    """A plain BPE trainer for a model with continuing_subword_prefix / end_of_word_suffix.

    BpeTrainer numbers the prefixed and suffixed characters in hash order and breaks count
    ties by those numbers, so with affixes its merges change from run to run; this one breaks
    ties by the pair's strings.  A word "abc" starts as ["a", "##b", "##c</w>"] and the merge
    (x, y) makes x + y without y's prefix, as Hugging Face's BPE model applies it."""
    keep = common_chars(min_char_count)
    words: dict[tuple[str, ...], int] = {}
    for text in corpus():
        text = "".join(ch if ch in keep else " " for ch in text)
        for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)):
            symbols = [(prefix if i else "") + ch for i, ch in enumerate(word)]
            symbols[-1] += suffix
            words[tuple(symbols)] = words.get(tuple(symbols), 0) + 1
    vocab: dict[str, int] = {}
    for symbol in sorted({s for w in words for s in w}):
        vocab[symbol] = len(vocab)
    merges: list[list[str]] = []
    while len(vocab) < vocab_size:
        pairs: dict[tuple[str, str], int] = {}
        for w, n in words.items():
            for pair in zip(w, w[1:]):
                pairs[pair] = pairs.get(pair, 0) + n
        if not pairs:
            break
        (left, right), count = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if count < 2:
            break
        new = left + right[len(prefix):] if right.startswith(prefix) else left + right
        merges.append([left, right])
        vocab.setdefault(new, len(vocab))
        merged_words: dict[tuple[str, ...], int] = {}
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == left and w[i + 1] == right:
                    out.append(new)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged_words[tuple(out)] = merged_words.get(tuple(out), 0) + n
        words = merged_words
    return vocab, merges


def wordpiece_style_bpe() -> dict:
    """A character-level BPE with continuing_subword_prefix "##" and end_of_word_suffix "</w>",
    NFD, Whitespace pre-tokenizer, no unk_token (Hugging Face drops characters that are not in
    the vocab), decoder Sequence[Replace("##", ""), Replace("</w>", " "), Fuse, Strip(" ", 0, 1)].
    Trained by train_affixed (see there why not BpeTrainer)."""
    norm, pre = normalizers.NFD(), pre_tokenizers.Whitespace()
    vocab, merges = train_affixed(pre, norm, 420, "##", "</w>", min_char_count=40)
    holder = Tokenizer(models.BPE(vocab={"a": 0}, merges=[], continuing_subword_prefix="##",
                                  end_of_word_suffix="</w>"))
    holder.normalizer = norm
    holder.pre_tokenizer = pre
    d = as_dict(holder)
    d["model"]["vocab"] = vocab
    d["model"]["merges"] = merges
    assert d["model"]["unk_token"] is None
    set_component(d, "decoder", decoders.Sequence([
        decoders.Replace("##", ""), decoders.Replace("</w>", " "), decoders.Fuse(), decoders.Strip(" ", 0, 1)]))
    return d


def normalizers_mix() -> dict:
    """Byte-level BPE behind normalizer Sequence[NFKD, Lowercase, Strip(both),
    Replace("``", "\\""), Replace(Regex("\\s+"), " "), Prepend(" ")]; a special
    <|endoftext|> that is not normalized (so the normalizers run on each piece around it)."""
    norm = normalizers.Sequence([
        normalizers.NFKD(),
        normalizers.Lowercase(),
        normalizers.Strip(left=True, right=True),
        normalizers.Replace("``", '"'),
        normalizers.Replace(Regex(r"\s+"), " "),
        normalizers.Prepend(" "),
    ])
    tok = train(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True), 480, normalizer=norm)
    d = as_dict(tok)
    byte_level_tokens(d)
    set_component(d, "decoder", decoders.ByteLevel())
    append_added(d, [("<|endoftext|>", dict(special=True, normalized=False))])
    return d


#: name -> the fixture's Splits (pattern, behavior, invert), before ByteLevel(use_regex=false);
#: the patterns are frequent in the text, so that how each behavior cuts shows in the ids
SPLIT_FIXTURES = {
    "split_isolated": [("l", "isolated", False), (".", "isolated", False)],  # "." a string, not a regex
    "split_removed": [(Regex(r"\p{L}+|\p{N}+"), "removed", True)],  # keeps letter and digit runs
    "split_merged_with_previous": [(" ", "merged_with_previous", False)],
    "split_merged_with_next": [(Regex(r"\p{Lu}"), "merged_with_next", False)],
    "split_contiguous": [(Regex(r"[aeiou]"), "contiguous", False)],
}

_split_base: dict = {}


def _split_model() -> dict:
    """One byte-level model shared by the split_* fixtures (any pre-tokenizer can feed it).

    Trained without any split (ByteLevel use_regex=false, whole paragraphs), so that its tokens
    cross spaces, punctuation and case changes: where the Split pre-tokenizers cut then shows
    in the ids."""
    if not _split_base:
        tok = train(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False), 420)
        _split_base.update(as_dict(tok))
    return json.loads(json.dumps(_split_base))


def split_fixture(name: str) -> dict:
    """Sequence[Split(pattern, behavior, invert)..., ByteLevel(use_regex=false)] over a model
    whose tokens cross the places where the Splits cut."""
    d = _split_model()
    byte_level_tokens(d)
    splits = [pre_tokenizers.Split(pattern, behavior=behavior, invert=invert)
              for pattern, behavior, invert in SPLIT_FIXTURES[name]]
    set_component(d, "pre_tokenizer", pre_tokenizers.Sequence([
        *splits, pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)]))
    set_component(d, "decoder", decoders.ByteLevel())
    return d


def added_flags() -> dict:
    """Added-token flags against a Lowercase normalizer and ByteLevel: lstrip, rstrip, both,
    single_word, normalized true/false, special true/false, overlapping contents (longest
    match), and an added token whose content is already a vocab token (it keeps that id)."""
    tok = train(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True), 460,
                normalizer=normalizers.Lowercase())
    d = as_dict(tok)
    byte_level_tokens(d)
    assert "the" in d["model"]["vocab"]
    set_component(d, "decoder", decoders.ByteLevel())
    append_added(d, [
        ("<mask>", dict(special=True, lstrip=True)),
        ("[r]", dict(special=False, rstrip=True)),
        ("<ls>", dict(special=False, lstrip=True, rstrip=True)),
        ("cat", dict(special=False, single_word=True, normalized=True)),
        ("the", dict(special=False, single_word=True)),
        ("Hello", dict(special=False, normalized=True)),
        ("<NoNorm>", dict(special=False, normalized=False)),
        ("<SEP>", dict(special=True, normalized=True)),
        ("<a>", dict(special=False)),
        ("<a><b>", dict(special=False)),
        ("xyz", dict(special=False)),
        ("yzw", dict(special=False)),
    ])
    return d


def bert_processing() -> dict:
    """A BERT-shaped BPE: NFD + Lowercase, Sequence[WhitespaceSplit, Punctuation,
    Digits(individual_digits=true)], unk_token [UNK] with fuse_unk, BertProcessing([CLS] $A
    [SEP]), no decoder (decode is not compared for it)."""
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(), pre_tokenizers.Digits(individual_digits=True)])
    specials = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
    tok = train(pre, 400, normalizer=normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()]),
                byte_alphabet=False, special_tokens=specials, min_char_count=60,
                model_options=dict(unk_token="[UNK]", fuse_unk=True))
    d = as_dict(tok)
    vocab = d["model"]["vocab"]
    assert [vocab[s] for s in specials] == [0, 1, 2, 3, 4]
    d["model"]["unk_token"] = "[UNK]"
    d["model"]["fuse_unk"] = True
    d["added_tokens"] = [added(s, vocab[s], special=True) for s in specials]
    set_component(d, "post_processor", processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2)))
    set_component(d, "decoder", None)
    return d


def roberta_processing() -> dict:
    """RoBERTa's layout: ByteLevel(add_prefix_space=true) pre-tokenizer, RobertaProcessing
    (<s> $A </s>), ByteLevel decoder, <mask> with lstrip (as RoBERTa's)."""
    specials = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
    tok = train(pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True), 500,
                special_tokens=specials)
    d = as_dict(tok)
    byte_level_tokens(d)
    vocab = d["model"]["vocab"]
    assert [vocab[s] for s in specials] == [0, 1, 2, 3, 4]
    d["added_tokens"] = [added(s, vocab[s], special=True, lstrip=(s == "<mask>")) for s in specials]
    set_component(d, "post_processor", processors.RobertaProcessing(("</s>", 2), ("<s>", 0),
                                                                    trim_offsets=True, add_prefix_space=True))
    set_component(d, "decoder", decoders.ByteLevel())
    return d


# ------------------------------------------------------------------ rules_disagree (by hand)

#: (left, right) merges in merge order; the ids of the merged tokens are given separately, so
#: merge order and id order can differ.  Each group uses its own letters:
#:   a b c   order mismatch: "b c" is merged first, but "ab" has the lower id
#:   d e f   a vocab token reachable by a pair that is no merge: "def" only from "de"+"f",
#:           but "e f" merges first; the rank rule joins "d"+"ef" (its bytes are a token)
#:   g h i   two merges that make the same token ("gh"+"i" and "g"+"hi" -> "ghi")
#:   x y     the overlap case: "xy" merges first but "yx" has the lower id
RULES_MERGES = [
    ("b", "c"), ("a", "b"),
    ("e", "f"), ("d", "e"), ("de", "f"),
    ("h", "i"), ("g", "h"), ("gh", "i"), ("g", "hi"),
    ("x", "y"), ("y", "x"),
]
RULES_IDS = {  # merged token -> id (all after the 256 bytes)
    "ab": 256, "bc": 257,
    "de": 258, "ef": 259, "def": 260,
    "gh": 261, "hi": 262, "ghi": 263,
    "yx": 264, "xy": 265,
}


def rules_disagree() -> dict:
    """A byte-level BPE whose 256 byte tokens have id = byte value, so that ranks = ids gives
    tiktoken's rule on the same vocabulary; no split (ByteLevel use_regex=false)."""
    vocab = {BYTE_CHAR[b]: b for b in range(256)}
    for token, id_ in sorted(RULES_IDS.items(), key=lambda kv: kv[1]):
        vocab[token] = id_
    for left, right in RULES_MERGES:
        assert left in vocab and right in vocab and left + right in vocab
    holder = Tokenizer(models.BPE(vocab={"a": 0}, merges=[]))
    holder.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)
    holder.decoder = decoders.ByteLevel()
    d = as_dict(holder)
    d["model"]["vocab"] = vocab
    d["model"]["merges"] = [[left, right] for left, right in RULES_MERGES]
    append_added(d, [("<|endoftext|>", dict(special=True))])
    return d


# ------------------------------------------------------------------ driver

FIXTURES = {
    "gpt2_like": gpt2_like,
    "llama3_like": llama3_like,
    "qwen_like": qwen_like,
    "merges_strings": merges_strings,
    "sentencepiece_like": sentencepiece_like,
    "metaspace_always": metaspace_always,
    "metaspace_first": metaspace_first,
    "metaspace_never": metaspace_never,
    "wordpiece_style_bpe": wordpiece_style_bpe,
    "normalizers_mix": normalizers_mix,
    **{name: (lambda name=name: split_fixture(name)) for name in SPLIT_FIXTURES},
    "added_flags": added_flags,
    "bert_processing": bert_processing,
    "roberta_processing": roberta_processing,
    "rules_disagree": rules_disagree,
}


def render(d: dict) -> bytes:
    """The file's bytes: compact JSON in Hugging Face's key order, UTF-8, one final newline."""
    text = json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    from_dict(d).encode("a check that Hugging Face loads and runs it <|endoftext|>")
    return (text + "\n").encode("utf-8")


def build_all() -> dict[str, bytes]:
    out = {}
    for name, make in FIXTURES.items():
        data = render(make())
        assert len(data) < MAX_BYTES, f"{name}: {len(data)} bytes"
        out[f"{name}.json"] = data
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare with the files on disk")
    parser.add_argument("--out", default=OUT, help="output folder (default: tests/data/hf)")
    args = parser.parse_args(argv)
    files = build_all()
    changed = []
    for filename, data in files.items():
        path = os.path.join(args.out, filename)
        old = open(path, "rb").read() if os.path.exists(path) else None
        if old != data:
            changed.append(filename)
            if not args.check:
                os.makedirs(args.out, exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
    stale = sorted(set(f for f in os.listdir(args.out) if f.endswith(".json")) - set(files)) if os.path.isdir(args.out) else []
    for filename in files:
        print(f"{filename:32s} {len(files[filename]):7,d} bytes{'  (changed)' if filename in changed else ''}")
    if stale:
        print("not made by this script:", ", ".join(stale))
    if args.check:
        return 1 if changed or stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
