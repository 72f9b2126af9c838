"""The bundled rank tables against the shared, hash-verified OpenAI files.

``bpe.get_encoding`` reads its own compressed bundle (``bpe/data/*.bpeb``); these checks prove
that it holds exactly the published ranks, special tokens, split patterns and merges.  The
oracles come from the shared files (see ``conftest.py``), never from the bundle.
"""

from __future__ import annotations

import hashlib

import pytest
import tiktoken.load

import bpe

ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
ALL_NAMES = ENCODINGS + ["gpt2"]

#: tiktoken 0.14.0's ``expected_hash`` values (tiktoken_ext/openai_public.py), also in the README.
EXPECTED_SHA256 = {
    "tiktoken/r50k_base.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "tiktoken/p50k_base.tiktoken": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "tiktoken/cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "tiktoken/o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "gpt2/encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "gpt2/vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
}


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable unicode character table (openai/gpt-2 encoder.py)."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def mixed_sample(corpus, head_sample, n_chars=20_000) -> str:
    """The first ``n_chars`` characters (cut at a line end) of each of the seven corpora."""
    names = ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt",
             "code_python.txt", "code_c.txt", "code_js.txt"]
    return "".join(head_sample(corpus(name), n_chars) for name in names)


# ---------------------------------------------------------------- provenance of the oracle


def test_shared_files_have_tiktokens_expected_hashes(shared):
    readme_text = (shared / "README.md").read_text(encoding="utf-8")
    for rel, digest in EXPECTED_SHA256.items():
        assert hashlib.sha256((shared / rel).read_bytes()).hexdigest() == digest, rel
        assert f"| `{rel}` |" in readme_text and f"`{digest}`" in readme_text, rel


def test_constants_copied_from_the_readme_still_match_it(shared, readme):
    """The patterns, special-token ids and token counts hard-coded in conftest.py are the
    README's: a copy error here would make every oracle check below meaningless."""
    text = (shared / "README.md").read_text(encoding="utf-8")
    for name, pat in readme.patterns.items():
        assert f"```\n{pat}\n```" in text, f"pattern of {name} is not a README code block"
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 4:
            rows[cells[0].strip("`")] = line
        if cells and cells[0] in readme.corpora and len(cells) == 8:
            rows[cells[0]] = cells
    for name, specials in readme.special_tokens.items():
        row = rows[name]
        for tok, tid in specials.items():
            assert f"`{tok.replace('|', chr(92) + '|')}` {tid}" in row, (name, tok, tid)
    columns = ["bytes", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
    for corpus_name, counts in readme.token_counts.items():
        cells = rows[corpus_name]
        assert [int(c.replace(",", "")) for c in cells[1:6]] == [counts[c] for c in columns], corpus_name
    assert sorted(readme.token_counts) == sorted(readme.corpora)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_pattern_equals_readme_pattern(name, readme):
    assert bpe.get_encoding(name).pattern == readme.patterns[name]


def test_corpus_files_have_the_readme_sizes(shared, readme):
    for name, counts in readme.token_counts.items():
        assert (shared / "corpora" / name).stat().st_size == counts["bytes"], name


# ---------------------------------------------------------------- ranks, specials, n_vocab


@pytest.mark.parametrize("name", ALL_NAMES)
def test_mergeable_ranks_equal_the_shared_rank_file(name, readme, load_ranks):
    ours = bpe.get_encoding(name).mergeable_ranks
    theirs = load_ranks(readme.rank_files[name])
    assert len(ours) == len(theirs)
    assert ours == theirs


@pytest.mark.parametrize("name", ALL_NAMES)
def test_specials_and_vocab_size_equal_tiktoken(name, backend, oracle):
    tok = bpe.get_encoding(name)
    assert tok.backend == backend
    enc = oracle(name)
    assert tok.special_tokens == enc._special_tokens
    assert tok.special_tokens_set == enc.special_tokens_set
    assert tok.n_vocab == enc.n_vocab
    assert tok.max_token_value == enc.max_token_value
    assert tok.eot_token == enc.eot_token
    # every id tiktoken can decode, we decode to the same bytes
    for token_bytes, rank in enc._mergeable_ranks.items():
        assert tok.decode_single_token_bytes(rank) == token_bytes
    for text, tid in enc._special_tokens.items():
        assert tok.decode_single_token_bytes(tid) == text.encode("utf-8")


def test_gpt2_data_gym_files_give_the_r50k_ranks(shared):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")  # read the files themselves, not a cached copy
        ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=str(shared / "gpt2" / "vocab.bpe"),
            encoder_json_file=str(shared / "gpt2" / "encoder.json"),
        )
    assert len(ranks) == 50256
    assert ranks == bpe.get_encoding("r50k_base").mergeable_ranks
    assert ranks == bpe.get_encoding("gpt2").mergeable_ranks


# ---------------------------------------------------------------- Tokenizer.from_tiktoken


@pytest.mark.parametrize("name", ENCODINGS)
def test_from_tiktoken_file_equals_get_encoding(name, backend, shared, readme, oracle, corpus, head_sample):
    path = shared / "tiktoken" / readme.rank_files[name]
    tok = bpe.Tokenizer.from_tiktoken(path, pattern=name, special_tokens=readme.special_tokens[name])
    ref = bpe.get_encoding(name)
    assert tok.backend == ref.backend == backend
    assert tok.mergeable_ranks == ref.mergeable_ranks
    assert tok.special_tokens == ref.special_tokens
    assert tok.pattern == ref.pattern
    assert tok.n_vocab == ref.n_vocab
    sample = mixed_sample(corpus, head_sample)
    ids = tok.encode_ordinary(sample)
    assert ids == ref.encode_ordinary(sample)
    assert ids == oracle(name).encode_ordinary(sample)
    assert tok.decode(ids) == sample
    with_specials = sample[:5000] + "<|endoftext|>" + sample[-5000:]
    assert tok.encode(with_specials, allowed_special="all") == ref.encode(with_specials, allowed_special="all")


# ---------------------------------------------------------------- merges


@pytest.mark.parametrize("name", ENCODINGS)
def test_recovered_merges_rebuild_every_token_in_rank_order(name, backend):
    tok = bpe.get_encoding(name)
    assert tok.backend == backend
    ranks = tok.mergeable_ranks
    merges = tok.merges
    multi = sorted((t for t in ranks if len(t) >= 2), key=ranks.__getitem__)
    assert len(merges) == len(multi)
    previous = -1
    for (left, right), token in zip(merges, multi):
        assert left + right == token
        rank = ranks[token]
        assert rank > previous  # merge i's concatenation has increasing rank
        assert ranks[left] < rank and ranks[right] < rank
        previous = rank


def _vocab_bpe_merges(shared) -> list[tuple[bytes, bytes]]:
    byte_decoder = {ch: b for b, ch in bytes_to_unicode().items()}
    lines = (shared / "gpt2" / "vocab.bpe").read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("#version")
    body = [line for line in lines[1:] if line]
    merges = []
    for line in body:
        left, right = line.split(" ")
        merges.append((bytes(byte_decoder[c] for c in left), bytes(byte_decoder[c] for c in right)))
    return merges


def test_byte_table_is_the_gpt2_table():
    table = bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    assert table[ord("!")] == "!" and table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ"


@pytest.mark.parametrize("name", ["r50k_base", "gpt2"])
def test_r50k_merges_equal_gpt2_vocab_bpe(name, backend, shared):
    expected = _vocab_bpe_merges(shared)
    assert len(expected) == 50_000
    merges = bpe.get_encoding(name).merges
    assert len(merges) == 50_000
    mismatches = [(i, m, e) for i, (m, e) in enumerate(zip(merges, expected)) if m != e]
    assert not mismatches, f"{len(mismatches)} merges differ from vocab.bpe; first: {mismatches[:3]}"
