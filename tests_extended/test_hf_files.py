"""The three real Hugging Face files of the shared folder through ``bpe.Tokenizer.from_hf``,
with ``tokenizers`` 0.23.3 as the oracle: hf/gpt2, hf/llama3 and hf/qwen3 (see the shared
README).

* Every corpus file, in 64 KiB chunks cut at line ends (compiled backend; the pure-Python one
  on the first chunk of each file): ``encode(chunk, allowed_special="all")`` == HF
  ``encode(chunk, add_special_tokens=False).ids``, and ``encode_ordinary(chunk)`` == HF on the
  file without its added tokens.  No chunk holds an added token's text (checked), so both
  oracles give the same ids there and HF runs once per chunk.
* Corpus lines with every added token of the file put between them: the whole from_hf
  contract (hf_oracle.check_text: allowed_special="all", add_special_tokens=True, the default
  encode raising for special tokens only, encode_ordinary, decode).  There
  ``encode_special_tokens = True`` is checked to be the same oracle as "no added tokens" for
  gpt2 and llama3 (all their added tokens are special) and NOT for qwen3 (``<think>`` etc.
  are not special, and HF still matches them).
* llama.cpp's vectors: gpt-2 (hf/gpt2), llama-bpe (hf/llama3), qwen2 (hf/qwen3).
* ``to_hf`` of each loaded file, loaded back by HF, gives HF's original ids on every chunk;
  ``to_hf`` of the bundled cl100k_base and o200k_base, loaded by HF, gives bpe's ids.
* ``hf_config``: the bos_token, eos_token, pad_token and chat_template of
  tokenizer_config.json, as found there.

Every test prints what it compared (``pytest -s``): chunks, ids, mismatches and seconds.
"""

from __future__ import annotations

import functools
import json
import time
from array import array

import pytest
import tokenizers

import bpe
from hf_oracle import check_text, hf_ids, hf_ordinary_ids, hf_special_as_text_ids

FILES = ["gpt2", "llama3", "qwen3"]
LLAMACPP = {"gpt2": "gpt-2", "llama3": "llama-bpe", "qwen3": "qwen2"}
CORPORA = ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt",
           "code_python.txt", "code_c.txt", "code_js.txt"]
CHUNK_CHARS = 64 * 1024
SEP = "\n__ggml_vocab_test__\n"
CONFIG_KEYS = ("bos_token", "eos_token", "pad_token", "chat_template")


def split_chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, each cut after a newline where the
    piece holds one; the pieces join back to ``text``."""
    out, i = [], 0
    while i < len(text):
        j = min(len(text), i + size)
        if j < len(text):
            nl = text.rfind("\n", i, j)
            if nl >= i:
                j = nl + 1
        out.append(text[i:j])
        i = j
    assert "".join(out) == text
    return out


@pytest.fixture(scope="module")
def chunks(corpus):
    """[(corpus name, chunk)] over every corpus file."""
    return [(name, c) for name in CORPORA for c in split_chunks(corpus(name))]


def _path(shared, name) -> str:
    return str(shared / "hf" / name / "tokenizer.json")


def _hf_batch_ids(path: str, texts) -> list:
    """HF's ids (add_special_tokens=False) for each text, on HF's threads (compact arrays)."""
    hf = tokenizers.Tokenizer.from_file(path)
    return [array("l", e.ids) for e in hf.encode_batch(list(texts), add_special_tokens=False)]


@functools.lru_cache(maxsize=None)
def _hf_corpus_ids(path: str, texts: tuple) -> list:
    """_hf_batch_ids, cached: the round-trip tests reuse the original file's ids."""
    return _hf_batch_ids(path, texts)


@pytest.fixture
def python_backend():
    """Run the test on the pure-Python backend (and restore the backend afterwards)."""
    from bpe import _backend

    before = _backend.active().name
    _backend.use("python")
    yield "python"
    _backend.use(before)


_LOADED: dict = {}


def _load(shared, name, backend):
    key = (name, backend)
    if key not in _LOADED:
        t0 = time.perf_counter()
        tok = bpe.Tokenizer.from_hf(shared / "hf" / name)
        assert tok.backend == backend
        print(f"\n[hf files] from_hf({name}) on {backend}: {time.perf_counter() - t0:.2f} s")
        _LOADED[key] = tok
    return _LOADED[key]


def _added_contents(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [t["content"] for t in json.load(f)["added_tokens"]]


def _first_diff(a, b) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _compare_chunks(label, pairs):
    """pairs: [(corpus, chunk, ours, theirs)] -> prints counts, returns problem lines."""
    n_ids = sum(len(theirs) for _, _, _, theirs in pairs)
    bad = [(c, chunk, list(o), list(t)) for c, chunk, o, t in pairs if list(o) != list(t)]
    print(f"[hf files] {label}: {len(pairs)} chunks, {n_ids:,} ids, {len(bad)} chunks differ")
    problems = []
    for c, chunk, o, t in bad[:5]:
        i = _first_diff(o, t)
        problems.append(f"{label} {c}: first difference at id {i}: bpe {o[max(i - 2, 0):i + 3]} "
                        f"vs {t[max(i - 2, 0):i + 3]}")
    return problems


# ------------------------------------------------------------------ corpora


@pytest.mark.parametrize("name", FILES)
def test_corpora_identical_to_hf(name, shared, chunks, cython_backend):
    path = _path(shared, name)
    contents = _added_contents(path)
    texts = tuple(c for _, c in chunks)
    assert not [t for t in contents if any(t in c for c in texts)], "a corpus holds an added token"
    t0 = time.perf_counter()
    theirs = _hf_corpus_ids(path, texts)
    t1 = time.perf_counter()
    tok = _load(shared, name, "cython")
    ours_all = [tok.encode(c, allowed_special="all") for c in texts]
    ours_ordinary = [tok.encode_ordinary(c) for c in texts]
    ours_default = [tok.encode(c) for c in texts]  # no special token in the text: no error
    t2 = time.perf_counter()
    print(f"[hf files] {name}: HF {t1 - t0:.1f} s, bpe (3 encodes of each chunk) {t2 - t1:.1f} s")
    problems = []
    for label, ours in (("allowed_special='all'", ours_all), ("encode_ordinary", ours_ordinary),
                        ("encode", ours_default)):
        problems += _compare_chunks(f"{name} {label}", [(c, chunk, o, t) for (c, chunk), o, t in
                                                         zip(chunks, ours, theirs)])
    decoded = sum(tok.decode(o) != chunk for (_, chunk), o in zip(chunks, ours_all))
    print(f"[hf files] {name}: decode(encode(chunk)) != chunk for {decoded} chunks")
    assert problems == [], "\n".join(problems)
    assert decoded == 0


@pytest.mark.parametrize("name", FILES)
def test_corpus_heads_on_python_backend(name, shared, corpus, python_backend):
    path = _path(shared, name)
    texts = tuple(split_chunks(corpus(c))[0] for c in CORPORA)
    theirs = _hf_corpus_ids(path, texts)
    tok = _load(shared, name, "python")
    t0 = time.perf_counter()
    pairs = [(c, chunk, tok.encode(chunk, allowed_special="all"), t) for c, chunk, t in zip(CORPORA, texts, theirs)]
    print(f"[hf files] {name} python backend: {time.perf_counter() - t0:.1f} s")
    problems = _compare_chunks(f"{name} python", pairs)
    assert problems == [], "\n".join(problems)


def _with_added_tokens(corpus, contents: list[str]) -> list[str]:
    """Corpus lines with each added token between them, next to letters, spaces, newlines."""
    lines = [line for c in CORPORA for line in corpus(c).split("\n")[200:260] if line.strip()]
    texts = []
    for i, content in enumerate(contents):
        a, b = lines[i % len(lines)], lines[(7 * i + 3) % len(lines)]
        texts.append(f"{a}{content}{b}")
        texts.append(f"{a} {content}\n{b} {content}{content}")
    texts.append("".join(contents))
    texts.append(" ".join(contents))
    return texts


@pytest.mark.parametrize("name", FILES)
def test_added_tokens_between_corpus_lines(name, shared, corpus, cython_backend):
    path = _path(shared, name)
    with open(path, encoding="utf-8") as f:
        added = json.load(f)["added_tokens"]
    contents = [t["content"] for t in added]
    texts = _with_added_tokens(corpus, contents)
    tok = _load(shared, name, "cython")
    t0 = time.perf_counter()
    problems = []
    for text in texts:
        problems += check_text(tok, path, text)
    all_special = all(t["special"] for t in added)
    oracle_gap = sum(hf_ordinary_ids(path, t) != hf_special_as_text_ids(path, t) for t in texts)
    print(f"[hf files] {name}: {len(texts)} texts with {len(contents)} added tokens, {len(problems)} problems, "
          f"encode_special_tokens differs from 'no added tokens' on {oracle_gap} texts, "
          f"{time.perf_counter() - t0:.1f} s")
    if all_special:
        assert oracle_gap == 0
    else:
        assert oracle_gap > 0  # qwen3: HF still matches <think> etc. with encode_special_tokens
    assert problems == [], "\n".join(problems[:10])


# ------------------------------------------------------------------ llama.cpp's vectors


@pytest.mark.parametrize("name", FILES)
def test_llamacpp_vectors(name, shared, backend):
    folder = shared / "llamacpp_vocab_tests"
    inp = (folder / f"ggml-vocab-{LLAMACPP[name]}.gguf.inp").read_text(encoding="utf-8")
    out = (folder / f"ggml-vocab-{LLAMACPP[name]}.gguf.out").read_text(encoding="utf-8")
    texts = inp.split(SEP)[:-1]  # see test_llamacpp_vectors.py for the files' layout
    expected = [[int(x) for x in line.split()] for line in out.split("\n")[:-1]]
    assert len(texts) == len(expected) == 46
    hf = tokenizers.Tokenizer.from_file(_path(shared, name))
    tok = _load(shared, name, backend)
    failures = []
    for i, (text, ids) in enumerate(zip(texts, expected)):
        assert hf.encode(text, add_special_tokens=False).ids == ids, f"HF disagrees with llama.cpp on #{i}"
        ours = tok.encode(text, allowed_special="all")
        if ours != ids:
            failures.append(f"#{i} {text[:40]!r}: bpe {ours}, llama.cpp {ids}")
        elif tok.decode(ours) != hf.decode(ours, skip_special_tokens=False):
            failures.append(f"#{i} {text[:40]!r}: decode differs from HF's")
    print(f"[hf files] {name} ({backend}): {len(texts) - len(failures)}/{len(texts)} llama.cpp vectors")
    assert failures == [], "\n".join(failures)


# ------------------------------------------------------------------ to_hf


@pytest.mark.parametrize("name", FILES)
def test_to_hf_of_loaded_file_gives_the_original_ids(name, shared, chunks, corpus, tmp_path, cython_backend):
    path = _path(shared, name)
    texts = tuple(c for _, c in chunks)
    original = _hf_corpus_ids(path, texts)
    tok = _load(shared, name, "cython")
    out = tmp_path / "tokenizer.json"
    t0 = time.perf_counter()
    tok.to_hf(out)
    t1 = time.perf_counter()
    written = _hf_batch_ids(str(out), texts)
    t2 = time.perf_counter()
    print(f"[hf files] to_hf({name}): write {t1 - t0:.1f} s ({out.stat().st_size:,} bytes), HF {t2 - t1:.1f} s")
    problems = _compare_chunks(f"to_hf {name}", [(c, chunk, w, o) for (c, chunk), w, o in zip(chunks, written, original)])
    assert problems == [], "\n".join(problems)
    hf_written = tokenizers.Tokenizer.from_file(str(out))
    hf_original = tokenizers.Tokenizer.from_file(path)
    assert hf_written.get_vocab(with_added_tokens=True) == hf_original.get_vocab(with_added_tokens=True)
    for text in _with_added_tokens(corpus, _added_contents(path)):
        assert hf_written.encode(text, add_special_tokens=False).ids == hf_original.encode(
            text, add_special_tokens=False).ids


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_to_hf_of_bundled_encoding(name, chunks, tmp_path, cython_backend):
    tok = bpe.get_encoding(name)
    out = tmp_path / "tokenizer.json"
    t0 = time.perf_counter()
    tok.to_hf(out)
    t1 = time.perf_counter()
    texts = tuple(c for _, c in chunks)
    theirs = _hf_batch_ids(str(out), texts)
    t2 = time.perf_counter()
    ours = [tok.encode(c, allowed_special="all") for c in texts]
    print(f"[hf files] to_hf({name}): write {t1 - t0:.1f} s, HF {t2 - t1:.1f} s")
    problems = _compare_chunks(f"to_hf {name}", [(c, chunk, o, t) for (c, chunk), o, t in zip(chunks, ours, theirs)])
    assert problems == [], "\n".join(problems)
    hf = tokenizers.Tokenizer.from_file(str(out))
    for special, id_ in tok.special_tokens.items():
        assert hf.encode(f"x{special}y", add_special_tokens=False).ids == tok.encode(f"x{special}y", allowed_special="all")
        assert hf.token_to_id(special) == id_


# ------------------------------------------------------------------ tokenizer_config.json


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_tokenizer_config_fields(name, shared, cython_backend):
    with open(shared / "hf" / name / "tokenizer_config.json", encoding="utf-8") as f:
        config = json.load(f)
    tok = _load(shared, name, "cython")
    cfg = tok.hf_config
    assert isinstance(cfg, dict)
    for key in CONFIG_KEYS:
        assert cfg.get(key) == config.get(key), key
    if name == "llama3":
        assert cfg["bos_token"] == "<|begin_of_text|>" and cfg["eos_token"] == "<|end_of_text|>"
        assert "<|start_header_id|>" in cfg["chat_template"]
    else:
        assert cfg["eos_token"] == "<|im_end|>" and cfg["pad_token"] == "<|endoftext|>"
        assert "<think>" in cfg["chat_template"]
    print(f"[hf files] {name} hf_config: " + ", ".join(f"{k}={str(cfg.get(k))[:30]!r}" for k in CONFIG_KEYS))
    # the config's tokens are added tokens of the file: one id each, HF's
    for key in ("bos_token", "eos_token", "pad_token"):
        if isinstance(cfg.get(key), str):
            ids = tok.encode(cfg[key], allowed_special="all")
            assert len(ids) == 1 and ids == hf_ids(_path(shared, name), cfg[key]), key


@pytest.mark.parametrize("name", FILES)
def test_batches_on_threads_give_hfs_ids(name, shared, chunks, cython_backend, monkeypatch):
    """encode_batch / encode_ordinary_batch on 2 threads (the GIL-free pool) equal HF's ids,
    and the default encode_batch refuses a special token in user text (naming it)."""
    path = _path(shared, name)
    texts = tuple(c for n, c in chunks if n in ("multilingual.txt", "code_js.txt"))
    theirs = [list(t) for t in _hf_corpus_ids(path, tuple(c for _, c in chunks))]
    expected = [t for (n, _), t in zip(chunks, theirs) if n in ("multilingual.txt", "code_js.txt")]
    tok = _load(shared, name, "cython")
    monkeypatch.setattr(bpe.tokenizer, "_THREADS_PER_CPU_CAP", False)  # really 2 threads
    batch = tok.encode_batch(list(texts), num_threads=2, allowed_special="all")
    ordinary = tok.encode_ordinary_batch(list(texts), num_threads=2)
    bad = sum(a != b for a, b in zip(batch, expected)) + sum(a != b for a, b in zip(ordinary, expected))
    print(f"[hf files] {name}: 2-thread batches of {len(texts)} chunks, {bad} differ")
    assert len(batch) == len(expected) and bad == 0
    special = next(t.content for t in tokenizers.Tokenizer.from_file(path).get_added_tokens_decoder().values()
                   if t.special)
    with pytest.raises(bpe.DisallowedSpecialTokenError, match=special.replace("|", r"\|")):
        tok.encode_batch(["user text", f"more {special} text"], num_threads=2)


# ------------------------------------------------------------------ reading the file


@pytest.mark.parametrize("name", FILES)
def test_vocabulary_read_from_the_text_is_the_parsed_one(name, shared, cython_backend):
    """from_hf reads model.vocab and model.merges from the JSON text in the compiled core
    (bpe/_vocab_form.pxi); its tables equal the general Python version's on the parsed file,
    and the vocabulary it leaves in the text equals the parsed dict."""
    from bpe import _core
    from bpe.io.huggingface import FileVocab
    from bpe.models.bpe import MergeBPE

    path = _path(shared, name)
    with open(path, "rb") as f:
        text = f.read()
    data = json.loads(text)["model"]
    general = MergeBPE(vocab=data["vocab"], merges=tuple(data["merges"]))._byte_form_here()
    t = time.perf_counter()
    form = _core.byte_level_form_json(text, *_core.json_model_spans(text))
    seconds = time.perf_counter() - t
    assert form is not None
    for field in ("tokens", "decode_only", "triples", "first", "unmade"):
        assert getattr(form, field) == getattr(general, field), field
    vocab = bpe.Tokenizer.from_hf(path)._pipeline.model.vocab
    assert isinstance(vocab, FileVocab) and dict(vocab) == data["vocab"]
    print(f"[hf files] {name}: {len(form.tokens):,} tokens and {len(form.triples) // 12:,} merges read "
          f"from the text in {seconds:.3f} s, equal to the general reading; rank-shaped: {form.first is not None}")


#: contexts of one character c: inside a word, after a space, next to CJK, Cyrillic, accents,
#: digits and punctuation, doubled (whole characters start on either side of these)
CHAR_CONTEXTS = ["{c}", " {c}", "a{c}b", "日{c}本", "ж{c}ж", "é{c} ", "{c}{c}{c}", " {c}日", "1{c}.", "\u0915{c}"]


@pytest.mark.parametrize("name", FILES)
def test_every_code_point_in_context_gives_hfs_ids(name, shared, cython_backend):
    """Every code point (surrogates aside) in each context of CHAR_CONTEXTS, one per line in
    documents of 512 lines: the compiled path (whole-character units under both rules)
    gives HF's ids, and gives them with the units off too."""
    path = _path(shared, name)
    tok = _load(shared, name, "cython")
    hf = tokenizers.Tokenizer.from_file(path)
    points = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    t0 = time.perf_counter()
    bad, n_docs = [], 0
    for ctx in CHAR_CONTEXTS:
        docs = ["\n".join(ctx.format(c=chr(c)) for c in points[i:i + 512]) for i in range(0, len(points), 512)]
        n_docs += len(docs)
        want = [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
        got = tok.encode_batch(docs, allowed_special="all")
        bad += [(ctx, d[:40]) for d, w, g in zip(docs, want, got) if w != g]
    before = tok._core._set_char_units(False)
    try:
        off = tok.encode_batch(docs, allowed_special="all")
    finally:
        tok._core._set_char_units(before)
    assert off == got  # (the last context's documents, units off)
    print(f"[hf files] {name}: {len(points):,} code points x {len(CHAR_CONTEXTS)} contexts ({n_docs:,} documents), "
          f"{len(bad)} documents differ, {time.perf_counter() - t0:.1f} s")
    assert not bad, bad[:3]


@pytest.mark.parametrize("name", FILES + ["cl100k_base", "o200k_base"])
def test_streaming_decode_of_the_corpora(name, shared, corpus, cython_backend):
    """decode_stream over the ids of the first 200,000 characters of every corpus file, one
    id at a time: the outputs joined are decode(ids) (and the text itself)."""
    tok = bpe.get_encoding(name) if name.endswith("_base") else _load(shared, name, "cython")
    n_ids = steps_out = 0
    t0 = time.perf_counter()
    for c in CORPORA:
        text = corpus(c)[:200_000]
        ids = tok.encode(text, allowed_special="all")
        stream = tok.decode_stream()
        outs = [stream.step(i) for i in ids]
        joined = "".join(o for o in outs if o is not None) + stream.flush()
        assert joined == tok.decode(ids) == text, c
        n_ids += len(ids)
        steps_out += sum(o is not None for o in outs)
    seconds = time.perf_counter() - t0
    print(f"[hf files] {name} decode_stream: {n_ids:,} ids from {len(CORPORA)} corpora, {steps_out:,} steps gave "
          f"text, joined == decode == text ({seconds:.1f} s with the encodes)")


@pytest.mark.parametrize("name", FILES)
def test_offsets_and_word_ids_on_corpora_are_hfs(name, shared, chunks, cython_backend):
    """encode_with_offsets (single, and batched on 2 threads) against HF's Encoding of every
    corpus chunk: ids, offsets and word ids, with and without the post-processor's tokens."""
    path = _path(shared, name)
    hf = tokenizers.Tokenizer.from_file(path)
    tok = _load(shared, name, "cython")
    texts = [c for _, c in chunks]
    bad = []
    for add in (False, True):
        theirs = hf.encode_batch(texts, add_special_tokens=add)
        single = [tok.encode_with_offsets(t, allowed_special="all", add_special_tokens=add) for t in texts]
        batch = tok.encode_with_offsets_batch(texts, allowed_special="all", add_special_tokens=add, num_threads=2)
        for (corpus, _), h, s, b in zip(chunks, theirs, single, batch):
            want = (h.ids, h.offsets, h.word_ids, h.special_tokens_mask)
            for label, e in (("single", s), ("batch", b)):
                if (e.ids, e.offsets, e.word_ids, e.special_tokens_mask) != want:
                    bad.append(f"{name} {corpus} {label} add_special_tokens={add}")
    print(f"[hf files] {name}: offsets of {len(texts)} chunks x 2 x 2 compared, {len(bad)} differ")
    assert bad == []
