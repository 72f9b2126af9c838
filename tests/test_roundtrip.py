"""Property tests: encode/decode round trips and id-for-id agreement with tiktoken.

Runs on both backends (the ``enc_factory`` fixture).  The tiktoken oracle is built from our
bundled data, so no files or network are needed.  Hypothesis settings are applied per test
inside the test body so that the number of examples can depend on the backend (the
pure-Python backend is much slower).
"""

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe

ENCODINGS = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]

MAX_EXAMPLES = {"cython": 150, "python": 40}

_ORACLES: dict = {}


def oracle(ours: bpe.Tokenizer) -> tiktoken.Encoding:
    """A tiktoken ``Encoding`` made from our bundled data (cached per encoding name)."""
    key = ours.name
    enc = _ORACLES.get(key)
    if enc is None:
        enc = tiktoken.Encoding(
            name=f"oracle-{key}",
            pat_str=ours.pattern,
            mergeable_ranks=ours.mergeable_ranks,
            special_tokens=ours.special_tokens,
        )
        _ORACLES[key] = enc
    return enc


def run(backend, strategy, check, factor=1.0):
    """Run ``check`` as a hypothesis test with a backend-dependent number of examples."""
    settings(
        max_examples=max(1, int(MAX_EXAMPLES[backend] * factor)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )(given(strategy)(check))()


def repaired(text: str) -> str:
    """What tiktoken (and we) encode for text with lone surrogates."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# Every code point but surrogates, unassigned ones included: the named patterns split with
# tiktoken's own Unicode tables (see bpe/_scanner.pyx).
NO_SURROGATES = st.characters(blacklist_categories=("Cs",))
TEXT = st.text(alphabet=NO_SURROGATES)

TRICKY_PIECES = [
    " ", "\n", "\r\n", "\t", "'s", "'LL", "123456", "٣٤٥", "é", "e\u0301", "日本語", "🙂", "👍🏽",
    "\u200d", "ǅ", "ʰ", "  a", "!!!", "<|endoftext|>",
    # a few more awkward ones
    "\r", "\n\n", "   ", "'", "'ve", "A", "abc", "ABC", "Hello", "\u00a0", "\u3000", "/", "\n/",
    "x", "1", "12", "ß", "İ", "\U0001F1FA\U0001F1F8", "\u0301", "<|", "|>", "\x00", "\x7f",
]
TRICKY = st.lists(st.sampled_from(TRICKY_PIECES), max_size=30).map("".join)
MIXED = st.lists(st.one_of(st.sampled_from(TRICKY_PIECES), TEXT), max_size=12).map("".join)

SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
PAIR_AS_TWO = st.sampled_from([chr(0xD83D) + chr(0xDE00), chr(0xD800) + chr(0xDC00), chr(0xDBFF) + chr(0xDFFF)])
WITH_SURROGATES = st.lists(
    st.one_of(NO_SURROGATES, SURROGATE, PAIR_AS_TWO, st.sampled_from(TRICKY_PIECES)), max_size=20
).map("".join)


def check_roundtrip(enc, tk, text):
    ids = enc.encode_ordinary(text)
    assert ids == tk.encode_ordinary(text)
    assert enc.decode(ids) == text
    assert enc.decode_bytes(ids) == text.encode("utf-8")


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("name", ENCODINGS)
def test_roundtrip_arbitrary_text(enc_factory, backend, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    run(backend, TEXT, lambda text: check_roundtrip(enc, tk, text))


@pytest.mark.parametrize("name", ENCODINGS)
def test_roundtrip_tricky_text(enc_factory, backend, name):
    enc = enc_factory(name)
    tk = oracle(enc)

    def check(text):
        check_roundtrip(enc, tk, text)
        assert enc.encode(text, disallowed_special=()) == tk.encode(text, disallowed_special=())
        ids = enc.encode(text, allowed_special="all")
        assert ids == tk.encode(text, allowed_special="all")
        assert enc.decode(ids) == text

    run(backend, TRICKY, check)


@pytest.mark.parametrize("name", ENCODINGS)
def test_roundtrip_mixed_text(enc_factory, backend, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    run(backend, MIXED, lambda text: check_roundtrip(enc, tk, text), factor=0.5)


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello world",
        "  leading and trailing spaces  ",
        "line\r\nbreaks\n\n\nand\ttabs\t",
        "numbers 1234567 ١٢٣٤٥",
        "I'M HERE, they'LL see, we've",
        "e\u0301 vs é",
        "👍🏽👨\u200d👩\u200d👧 🙂",
        "ǅemal ʰ ÅngstrÖm",
        "<|endoftext|> is plain text here",
        "a" * 1000,
        " " * 100 + "x",
        "\n" * 50,
        "日本語のテキスト。中文文本。한국어 텍스트.",
    ],
)
def test_roundtrip_examples(enc_factory, name, text):
    enc = enc_factory(name)
    check_roundtrip(enc, oracle(enc), text)


# ------------------------------------------------------------------ lone surrogates


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        "a" + chr(0xD800) + "b",
        chr(0xD83D) + chr(0xDE00),  # a valid pair given as two code points -> U+1F600
        chr(0xDE00) + chr(0xD83D),  # the wrong order -> two lone surrogates
        chr(0xDFFF),
        "x " + chr(0xD800) + chr(0xD800) + " y",
        "hello " + chr(0xD83D) + " world " + chr(0xDE00),
        chr(0xDBFF) + chr(0xDFFF) + "end",
    ],
)
def test_lone_surrogates_examples(enc_factory, name, text):
    enc = enc_factory(name)
    tk = oracle(enc)
    ids = enc.encode_ordinary(text)
    assert ids == tk.encode_ordinary(text)
    assert enc.decode(ids) == repaired(text)
    assert enc.encode(text) == tk.encode(text)
    assert enc.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")


def test_surrogate_pair_joins_into_one_character(enc_factory):
    enc = enc_factory("cl100k_base")
    text = chr(0xD83D) + chr(0xDE00)
    assert enc.decode(enc.encode_ordinary(text)) == "\U0001F600"
    assert enc.encode_ordinary(text) == enc.encode_ordinary("\U0001F600")
    assert enc.decode(enc.encode_ordinary("a" + chr(0xD800) + "b")) == "a\ufffdb"


@pytest.mark.parametrize("name", ENCODINGS)
def test_lone_surrogates_property(enc_factory, backend, name):
    enc = enc_factory(name)
    tk = oracle(enc)

    def check(text):
        ids = enc.encode_ordinary(text)
        assert ids == tk.encode_ordinary(text)
        assert enc.decode(ids) == repaired(text)
        assert enc.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")

    run(backend, WITH_SURROGATES, check, factor=0.5)


# ------------------------------------------------------------------ decoding


@pytest.mark.parametrize("name", ENCODINGS)
def test_decode_bytes_concatenates_single_tokens(enc_factory, backend, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    valid_ids = sorted(set(enc.mergeable_ranks.values()) | set(enc.special_tokens.values()))

    def check(ids):
        data = enc.decode_bytes(ids)
        assert data == b"".join(enc.decode_single_token_bytes(i) for i in ids)
        assert enc.decode_tokens_bytes(ids) == [enc.decode_single_token_bytes(i) for i in ids]
        assert data == tk.decode_bytes(ids)
        assert enc.decode(ids) == data.decode("utf-8", errors="replace") == tk.decode(ids)
        # a generator works as well as a list
        assert enc.decode_bytes(iter(ids)) == data

    run(backend, st.lists(st.sampled_from(valid_ids), max_size=40), check)


def test_decode_long_tokens_and_many_ids(enc_factory, backend):
    # tokens of every length (o200k_base has some of 128 bytes): the compiled decoder copies
    # tokens of up to 16 bytes as two words and longer ones with memcpy, into one buffer
    enc = enc_factory("o200k_base")
    by_length = {}
    for token, rank in enc.mergeable_ranks.items():
        by_length.setdefault(len(token), rank)
    ids = sorted(by_length.values()) * 3 + list(enc.special_tokens.values())
    want = b"".join(enc.decode_single_token_bytes(i) for i in ids)
    assert max(by_length) > 16
    assert enc.decode_bytes(ids) == want
    assert enc.decode_bytes(ids[::-1]) == b"".join(enc.decode_single_token_bytes(i) for i in ids[::-1])
    text = "Décodage: 日本語 🙂 " * 500
    assert enc.decode(enc.encode_ordinary(text)) == text


@pytest.mark.parametrize("num_threads", [1, 2, 8])
def test_decode_batch_equals_each_decode(enc_factory, backend, num_threads):
    enc = enc_factory("o200k_base")
    texts = ["hello world", "", "naïve café 日本語 🙂", "x" * 300]
    batch = [enc.encode_ordinary(t) for t in texts] + [[enc.mergeable_ranks[b"\xe6"]]]
    assert enc.decode_batch(batch, num_threads=num_threads) == [enc.decode(ids) for ids in batch]
    assert enc.decode_batch(batch, num_threads=num_threads)[:4] == texts
    assert enc.decode_batch(batch, errors="ignore")[-1] == ""
    assert enc.decode_bytes_batch(batch, num_threads=num_threads) == [enc.decode_bytes(ids) for ids in batch]
    with pytest.raises(ValueError, match="num_threads"):
        enc.decode_batch(batch, num_threads=0)
    with pytest.raises(KeyError, match="not in the vocabulary"):
        enc.decode_bytes_batch([[1], [10**9]])


def test_custom_pattern_batches_equal_single_calls(backend, threads_for_any_batch):
    base = bpe.get_encoding("cl100k_base")
    tok = bpe.Tokenizer(base.mergeable_ranks, pattern=r" ?\w+| ?[^\w\s]+|\s+",
                        special_tokens={"<|endoftext|>": base.eot_token})
    texts = ["Hello, world!  It's 2026.", "", "<|endoftext|> and more", "日本語のテキスト 🙂" * 20]
    for threads in (1, 4):
        assert tok.encode_ordinary_batch(texts, num_threads=threads) == [tok.encode_ordinary(t) for t in texts]
        assert (tok.encode_batch(texts, num_threads=threads, allowed_special="all")
                == [tok.encode(t, allowed_special="all") for t in texts])


class Index:
    """An integer type that is not an int (as numpy's are): it has ``__index__``."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def test_decode_takes_integer_types_with_index(enc_factory, backend):
    enc = enc_factory("cl100k_base")
    ids = enc.encode_ordinary("hello world")
    assert enc.decode([Index(i) for i in ids]) == "hello world"
    assert enc.decode_bytes([ids[0], Index(ids[1])]) == b"hello world"
    assert enc.decode_single_token_bytes(Index(ids[0])) == b"hello"
    assert enc.decode([True]) == enc.decode([1])  # bool is an int
    with pytest.raises(KeyError, match=r"token id 1000000000 is not"):
        enc.decode([Index(10**9)])
    with pytest.raises(KeyError, match=r"token id -5 is not"):
        enc.decode_bytes([1, Index(-5)])


def test_decode_of_a_list_that_index_changes(enc_factory, backend):
    # an __index__ method that empties the caller's list: the ids are those the list held
    # when decode began (the compiled decoder reads list items without bounds checks)
    enc = enc_factory("cl100k_base")
    ids = enc.encode_ordinary("hello world, again and again")

    class Clearing:
        def __index__(self):
            victim.clear()
            return ids[0]

    victim = ids[:2] + [Clearing()] + ids[2:]
    assert enc.decode_bytes(victim) == enc.decode_bytes(ids[:2] + [ids[0]] + ids[2:])
    assert victim == []


@pytest.mark.parametrize("name", ENCODINGS)
def test_decode_split_multibyte_character(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    byte_id = enc.mergeable_ranks[b"\xe6"]  # the first byte of a 3-byte character like 日
    assert enc.decode_single_token_bytes(byte_id) == b"\xe6"
    with pytest.raises(UnicodeDecodeError):
        enc.decode([byte_id], errors="strict")
    assert enc.decode([byte_id]) == "\ufffd" == tk.decode([byte_id])
    assert enc.decode([byte_id], errors="ignore") == ""

    # splitting the encoding of a multi-byte character byte by byte
    ids = [enc.mergeable_ranks[bytes([b])] for b in "日".encode("utf-8")]
    assert enc.decode(ids, errors="strict") == "日"
    with pytest.raises(UnicodeDecodeError):
        enc.decode(ids[:2], errors="strict")
    assert enc.decode(ids[:2]) == tk.decode(ids[:2])
    assert enc.decode(ids[:2] + enc.encode_ordinary(" ok")).endswith(" ok")
