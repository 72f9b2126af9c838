"""The shared Hugging Face files through ``Tokenizer.from_hf``, with HF ``tokenizers`` as the
oracle: GPT-2, Llama 3 and Qwen3 give HF's ids on every shared corpus (64 KiB chunks cut at
line ends) with ``allowed_special="all"`` and with ``encode_ordinary`` (against HF with
``encode_special_tokens = True``, an honest oracle here: the corpora hold none of the
non-special added tokens); they match llama.cpp's vectors; ``to_hf`` of each loaded file,
and of the bundled cl100k_base / o200k_base, loads in HF and gives bpe's ids again.
Counts are printed (``pytest -s``)."""

from __future__ import annotations

import pytest
import tokenizers

import bpe

FILES = {"gpt2": "gpt-2", "llama3": "llama-bpe", "qwen3": "qwen2"}
SEP = "\n__ggml_vocab_test__\n"


def chunks(text: str, size: int = 65536) -> list[str]:
    out, i = [], 0
    while i < len(text):
        j = text.find("\n", i + size)
        j = len(text) if j < 0 else j + 1
        out.append(text[i:j])
        i = j
    return out


@pytest.fixture(scope="module")
def all_chunks(corpus):
    return {name: chunks(corpus(name)) for name in
            ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt", "code_python.txt",
             "code_c.txt", "code_js.txt"]}


def _compare(tok_ids, hf_ids, label):
    bad = [i for i, (a, b) in enumerate(zip(tok_ids, hf_ids)) if a != b]
    n = sum(map(len, hf_ids))
    print(f"{label}: {len(hf_ids)} chunks, {n:,} ids, {len(bad)} chunks differ")
    assert len(tok_ids) == len(hf_ids) and not bad, f"{label}: chunks {bad[:5]} differ"


@pytest.mark.parametrize("name", sorted(FILES))
def test_corpora_identical_to_hf(name, shared, all_chunks, backend):
    path = shared / "hf" / name
    tok = bpe.Tokenizer.from_hf(path)
    hf = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    non_special = [t.content for t in hf.get_added_tokens_decoder().values() if not t.special]
    for corpus_name, texts in all_chunks.items():
        assert not any(t in text for t in non_special for text in texts)
        expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
        _compare([tok.encode(t, allowed_special="all") for t in texts], expected, f"{name} {corpus_name} all")
        if backend == "cython" and corpus_name == "multilingual.txt":  # the batch on threads
            _compare(tok.encode_batch(texts, allowed_special="all", num_threads=2), expected,
                     f"{name} {corpus_name} batch")
    hf.encode_special_tokens = True
    for corpus_name, texts in all_chunks.items():
        expected = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
        _compare([tok.encode_ordinary(t) for t in texts], expected, f"{name} {corpus_name} ordinary")


@pytest.mark.parametrize("name", sorted(FILES))
def test_llamacpp_vectors(name, shared, backend):
    folder = shared / "llamacpp_vocab_tests"
    inp = (folder / f"ggml-vocab-{FILES[name]}.gguf.inp").read_text(encoding="utf-8")
    out = (folder / f"ggml-vocab-{FILES[name]}.gguf.out").read_text(encoding="utf-8")
    texts = inp.split(SEP)[:-1]
    expected = [[int(x) for x in line.split()] for line in out.split("\n")[:-1]]
    assert len(texts) == len(expected) == 46
    tok = bpe.Tokenizer.from_hf(shared / "hf" / name)
    failures = [(t, e, tok.encode(t, allowed_special="all")) for t, e in zip(texts, expected)
                if tok.encode(t, allowed_special="all") != e]
    print(f"{name}: {len(texts) - len(failures)}/{len(texts)} llama.cpp vectors")
    assert not failures, failures[:3]


def test_config_fields(shared):
    llama = bpe.Tokenizer.from_hf(shared / "hf" / "llama3")
    qwen = bpe.Tokenizer.from_hf(shared / "hf" / "qwen3")
    assert llama.hf_config["bos_token"] == "<|begin_of_text|>"
    assert qwen.hf_config["eos_token"] == "<|im_end|>" and qwen.hf_config["pad_token"] == "<|endoftext|>"
    assert "<|im_start|>" in qwen.hf_config["chat_template"]
    with pytest.raises(bpe.DisallowedSpecialTokenError, match="im_end"):
        qwen.encode("user text <|im_end|> more")
    assert qwen.encode("a <think> b") == qwen.encode("a <think> b", allowed_special="all")  # not special


@pytest.mark.parametrize("source", ["gpt2", "llama3", "qwen3", "cl100k_base", "o200k_base"])
def test_to_hf_round_trip(source, shared, all_chunks, tmp_path):
    if source in FILES:
        tok = bpe.Tokenizer.from_hf(shared / "hf" / source)
    else:
        tok = bpe.get_encoding(source)
    out = tmp_path / "tokenizer.json"
    tok.to_hf(out)
    hf = tokenizers.Tokenizer.from_file(str(out))
    for corpus_name, texts in all_chunks.items():
        texts = texts[:8]  # 512 KiB of each corpus
        expected = [tok.encode(t, allowed_special="all") for t in texts]
        _compare([e.ids for e in hf.encode_batch(texts, add_special_tokens=False)], expected,
                 f"to_hf {source} {corpus_name}")
    again = bpe.Tokenizer.from_hf(out)
    assert again.encode(all_chunks["english.txt"][0]) == tok.encode(all_chunks["english.txt"][0])
