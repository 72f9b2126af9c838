"""Special-token semantics of ``encode`` and friends, checked against tiktoken.

The tiktoken oracle is built from *our* bundled rank tables, pattern and special tokens, so
these tests need no network and no data files; they check that the special-token policy
(allowed / disallowed / plain text), the error messages and the batch helpers behave exactly
like tiktoken's, on both backends.
"""

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe

ENCODINGS = ["r50k_base", "gpt2", "p50k_base", "cl100k_base", "o200k_base"]

EOT = "<|endoftext|>"

# tiktoken's values for the real encodings
EXPECTED_EOT = {
    "r50k_base": 50256,
    "gpt2": 50256,
    "p50k_base": 50256,
    "cl100k_base": 100257,
    "o200k_base": 199999,
}
EXPECTED_N_VOCAB = {
    "r50k_base": 50257,
    "gpt2": 50257,
    "p50k_base": 50281,
    "cl100k_base": 100277,
    "o200k_base": 200019,
}

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


def outcome(fn):
    """``("ok", result)`` or ``(exception type name, message)`` for a ValueError."""
    try:
        return ("ok", fn())
    except ValueError as exc:
        return ("ValueError", str(exc))


def sample_text(specials):
    """A text with every special token of the encoding in it, between ordinary words."""
    parts = ["Hello world!"]
    for i, tok in enumerate(sorted(specials)):
        parts.append(tok)
        parts.append(f" item {i} and some text\n")
    return "".join(parts)


# ------------------------------------------------------------------ disallowed by default


@pytest.mark.parametrize("name", ENCODINGS)
def test_default_encode_raises_for_every_special_token(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    assert enc.special_tokens_set == tk.special_tokens_set
    assert EOT in enc.special_tokens_set
    for tok in sorted(enc.special_tokens_set):
        text = f"hello {tok} world"
        with pytest.raises(bpe.DisallowedSpecialTokenError) as info:
            enc.encode(text)
        exc = info.value
        assert isinstance(exc, ValueError)
        assert exc.token == tok
        message = str(exc)
        assert repr(tok) in message
        assert "allowed_special" in message
        assert "disallowed_special" in message
        with pytest.raises(ValueError) as tk_info:
            tk.encode(text)
        assert message == str(tk_info.value)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_first_disallowed_token_is_named(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    text = "a <|endofprompt|> b <|endoftext|> c"
    ours = outcome(lambda: enc.encode(text))
    theirs = outcome(lambda: tk.encode(text))
    assert ours[0] == "ValueError"
    assert "'<|endofprompt|>'" in ours[1].splitlines()[0]
    assert ours == theirs


def test_disallowed_error_is_a_value_error_subclass():
    assert issubclass(bpe.DisallowedSpecialTokenError, ValueError)
    assert issubclass(bpe.DisallowedSpecialTokenError, bpe.BPEError)


# ------------------------------------------------------------------ allowed_special


@pytest.mark.parametrize("name", ENCODINGS)
def test_allowed_all_matches_tiktoken(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    text = sample_text(enc.special_tokens_set)
    ids = enc.encode(text, allowed_special="all")
    assert ids == tk.encode(text, allowed_special="all")
    for tok, tid in enc.special_tokens.items():
        assert ids.count(tid) == text.count(tok) == 1
    assert enc.decode(ids) == text


def test_allowed_one_token_others_still_disallowed(enc_factory):
    enc = enc_factory("cl100k_base")
    tk = oracle(enc)
    allowed = {EOT}
    ok_text = "start<|endoftext|>end"
    ids = enc.encode(ok_text, allowed_special=allowed)
    assert enc.special_tokens[EOT] in ids
    assert ids == tk.encode(ok_text, allowed_special=allowed)

    bad_text = "start<|endoftext|>middle<|fim_prefix|>end"
    ours = outcome(lambda: enc.encode(bad_text, allowed_special=allowed))
    theirs = outcome(lambda: tk.encode(bad_text, allowed_special=allowed))
    assert ours[0] == "ValueError"
    assert "'<|fim_prefix|>'" in ours[1]
    assert ours == theirs
    with pytest.raises(bpe.DisallowedSpecialTokenError) as info:
        enc.encode(bad_text, allowed_special=allowed)
    assert info.value.token == "<|fim_prefix|>"


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("disallowed", [(), set(), frozenset(), []])
def test_disallowed_empty_encodes_special_text_as_plain_text(enc_factory, name, disallowed):
    enc = enc_factory(name)
    tk = oracle(enc)
    text = sample_text(enc.special_tokens_set)
    ids = enc.encode(text, disallowed_special=disallowed)
    assert ids == tk.encode(text, disallowed_special=())
    assert ids == enc.encode_ordinary(text)
    assert not set(ids) & set(enc.special_tokens.values())
    assert enc.decode(ids) == text


def test_token_neither_allowed_nor_disallowed_is_plain_text(enc_factory):
    enc = enc_factory("cl100k_base")
    tk = oracle(enc)
    text = "x<|endoftext|>y<|endofprompt|>z"
    kwargs = dict(allowed_special={EOT}, disallowed_special={"<|fim_prefix|>"})
    ids = enc.encode(text, **kwargs)
    assert ids == tk.encode(text, **kwargs)
    assert enc.special_tokens[EOT] in ids
    assert enc.special_tokens["<|endofprompt|>"] not in ids
    # the <|endofprompt|> part is ordinary text
    assert ids == enc.encode_ordinary("x") + [enc.special_tokens[EOT]] + enc.encode_ordinary("y<|endofprompt|>z")
    # and the disallowed one still raises
    with pytest.raises(bpe.DisallowedSpecialTokenError, match=r"<\|fim_prefix\|>"):
        enc.encode(text + "<|fim_prefix|>", **kwargs)


def test_disallowed_special_may_name_arbitrary_strings_like_tiktoken(enc_factory):
    enc = enc_factory("cl100k_base")
    tk = oracle(enc)
    text = "a forbidden word"
    ours = outcome(lambda: enc.encode(text, disallowed_special={"forbidden"}))
    theirs = outcome(lambda: tk.encode(text, disallowed_special={"forbidden"}))
    assert ours[0] == "ValueError"
    assert ours == theirs


@pytest.mark.parametrize("name", ENCODINGS)
def test_unknown_names_in_allowed_special_are_ignored(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    allowed = {"<|nope|>", "hello"}
    text = "hello <|nope|> world"
    ids = enc.encode(text, allowed_special=allowed)
    assert ids == enc.encode_ordinary(text)
    assert ids == tk.encode(text, allowed_special=allowed)
    # real special tokens are still disallowed by default
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        enc.encode(text + EOT, allowed_special=allowed)
    # and a real one next to an unknown one is allowed
    mixed = {"<|nope|>", EOT}
    ids = enc.encode(text + EOT, allowed_special=mixed)
    assert ids[-1] == enc.eot_token
    assert ids == tk.encode(text + EOT, allowed_special=mixed)


# ------------------------------------------------------------------ encode_ordinary


@pytest.mark.parametrize("name", ENCODINGS)
def test_encode_ordinary_treats_specials_as_text(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    text = sample_text(enc.special_tokens_set)
    ids = enc.encode_ordinary(text)
    assert ids == tk.encode_ordinary(text)
    assert not set(ids) & set(enc.special_tokens.values())
    assert enc.decode(ids) == text
    assert ids != enc.encode(text, allowed_special="all")


SPECIAL_PIECES = ["<|", "|>", "<", ">", "|", "endoftext", "endofprompt", "fim_prefix", "<|endoftext|>",
                  "<|endofprompt|>", "<|fim_middle|>", " ", "a", "\n"]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
def test_encode_ordinary_never_produces_special_ids(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    special_ids = set(enc.special_tokens.values())

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.sampled_from(SPECIAL_PIECES), max_size=20).map("".join))
    def check(text):
        ids = enc.encode_ordinary(text)
        assert not set(ids) & special_ids
        assert ids == tk.encode_ordinary(text)
        assert enc.encode(text, disallowed_special=()) == ids
        assert enc.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")

    check()


POLICY_NAMES = ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                "<|nope|>", "endoftext"]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "p50k_base"])
def test_random_policies_match_tiktoken(enc_factory, backend, name):
    enc = enc_factory(name)
    tk = oracle(enc)

    @settings(max_examples=100 if backend == "cython" else 40, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.lists(st.sampled_from(SPECIAL_PIECES), max_size=15).map("".join),
        st.one_of(st.just("all"), st.frozensets(st.sampled_from(POLICY_NAMES))),
        st.one_of(st.just("all"), st.frozensets(st.sampled_from(POLICY_NAMES))),
    )
    def check(text, allowed, disallowed):
        ours = outcome(lambda: enc.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        theirs = outcome(lambda: tk.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        assert ours == theirs
        if ours[0] == "ok":
            assert enc.decode(ours[1]) == text

    check()


# ------------------------------------------------------------------ adjacent / partial tokens


ADJACENT_TEXTS = [
    "<|endoftext|><|endoftext|>",
    "<|endoftext|",
    "<|endoftext|><|endoftext|",
    "<|endoftext<|endoftext|>",
    "<<|endoftext|>>",
    "<|endoftext|>|>",
    "<|<|endoftext|>|>",
    "|endoftext|>",
    "<|endoftext|>\n<|endoftext|>",
    "x<|endoftext|>y<|endoftext|>z",
    "<|endoftext|><|endofprompt|>",
    "<|fim_prefix|><|fim_middle|><|fim_suffix|>",
    "<|endoftext||>",
    "<| endoftext |>",
]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
@pytest.mark.parametrize("text", ADJACENT_TEXTS)
def test_adjacent_and_partial_special_tokens(enc_factory, name, text):
    enc = enc_factory(name)
    tk = oracle(enc)
    # default policy: same ids or same error as tiktoken
    assert outcome(lambda: enc.encode(text)) == outcome(lambda: tk.encode(text))
    # everything allowed
    ids = enc.encode(text, allowed_special="all")
    assert ids == tk.encode(text, allowed_special="all")
    assert enc.decode(ids) == text
    # only <|endoftext|> allowed
    only_eot = outcome(lambda: enc.encode(text, allowed_special={EOT}))
    assert only_eot == outcome(lambda: tk.encode(text, allowed_special={EOT}))
    # as plain text
    assert enc.encode(text, disallowed_special=()) == tk.encode(text, disallowed_special=())


def test_adjacent_endoftext_gives_two_ids(enc_factory):
    enc = enc_factory("cl100k_base")
    eot = enc.eot_token
    assert enc.encode("<|endoftext|><|endoftext|>", allowed_special="all") == [eot, eot]
    assert enc.encode("<|endoftext|><|endoftext|>", allowed_special={EOT}) == [eot, eot]
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        enc.encode("<|endoftext|><|endoftext|>")


def test_partial_special_token_is_plain_text(enc_factory):
    enc = enc_factory("cl100k_base")
    tk = oracle(enc)
    text = "<|endoftext|"
    ids = enc.encode(text)  # no error: it is not a special token
    assert enc.eot_token not in ids
    assert ids == enc.encode_ordinary(text) == tk.encode(text)
    ids = enc.encode("<|endoftext|><|endoftext|", allowed_special="all")
    assert ids[0] == enc.eot_token
    assert ids.count(enc.eot_token) == 1
    assert ids[1:] == enc.encode_ordinary(text)


# ------------------------------------------------------------------ argument types


@pytest.mark.parametrize("name", ["cl100k_base", "r50k_base"])
def test_bare_string_allowed_special_is_a_type_error(enc_factory, name):
    enc = enc_factory(name)
    with pytest.raises(TypeError, match=r"pass a set") as info:
        enc.encode("hello <|endoftext|>", allowed_special="<|endoftext|>")
    assert "allowed_special={'<|endoftext|>'}" in str(info.value)
    with pytest.raises(TypeError, match=r"pass a set"):
        enc.encode("hello", allowed_special="<|endoftext|>")
    with pytest.raises(TypeError, match=r"disallowed_special.*pass a set"):
        enc.encode("hello", disallowed_special="<|endoftext|>")
    # the one string that is accepted
    assert enc.encode("hello <|endoftext|>", allowed_special="all")[-1] == enc.eot_token


def test_bare_string_allowed_special_in_batch_is_a_type_error(enc_factory):
    enc = enc_factory("cl100k_base")
    with pytest.raises(TypeError, match=r"pass a set"):
        enc.encode_batch(["a", "b"], allowed_special="<|endoftext|>")


# ------------------------------------------------------------------ batch helpers


BATCH = [
    "",
    "hello world",
    "hello <|endoftext|> world",
    "<|endoftext|><|endoftext|>",
    "naïve café 日本語 🙂\n\n  x",
    "<|endofprompt|> and <|fim_prefix|>",
    "1234567890 " * 20,
]


@pytest.mark.parametrize("num_threads", [1, 4])
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "p50k_base"])
def test_encode_batch_equals_per_text(enc_factory, name, num_threads, threads_for_any_batch):
    enc = enc_factory(name)
    tk = oracle(enc)
    got = enc.encode_batch(BATCH, num_threads=num_threads, allowed_special="all")
    assert got == [enc.encode(t, allowed_special="all") for t in BATCH]
    assert got == tk.encode_batch(BATCH, num_threads=num_threads, allowed_special="all")

    plain = enc.encode_batch(BATCH, num_threads=num_threads, disallowed_special=())
    assert plain == [enc.encode(t, disallowed_special=()) for t in BATCH]

    no_specials = [t for t in BATCH if "<|" not in t]
    assert enc.encode_batch(no_specials, num_threads=num_threads) == [enc.encode(t) for t in no_specials]

    with pytest.raises(bpe.DisallowedSpecialTokenError):
        enc.encode_batch(BATCH, num_threads=num_threads)

    ordinary = enc.encode_ordinary_batch(BATCH, num_threads=num_threads)
    assert ordinary == [enc.encode_ordinary(t) for t in BATCH]
    assert ordinary == tk.encode_ordinary_batch(BATCH, num_threads=num_threads)


def test_batch_keeps_order_with_many_texts(enc_factory, threads_for_any_batch):
    enc = enc_factory("cl100k_base")
    texts = [f"text number {i} " * (i % 7) for i in range(50)]
    assert enc.encode_ordinary_batch(texts, num_threads=4) == [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_batch(texts, num_threads=4) == [enc.encode(t) for t in texts]


def test_batch_threads_are_capped_at_the_usable_cpus(enc_factory, monkeypatch):
    # every batch thread is busy all the time: more threads than CPUs only take turns
    enc = enc_factory("o200k_base")
    texts = ["some text to encode, " * 2000] * 8  # 8 x 42K characters: enough for 8 threads
    want = [enc.encode_ordinary(t) for t in texts]
    asked = []
    real_pool = bpe.tokenizer._pool
    monkeypatch.setattr(bpe.tokenizer, "_pool", lambda n: asked.append(n) or real_pool(n))
    monkeypatch.setattr(bpe.tokenizer, "_usable_cpus", lambda: 3)
    assert enc.encode_ordinary_batch(texts, num_threads=8) == want
    monkeypatch.setattr(bpe.tokenizer, "_usable_cpus", lambda: 1)
    assert enc.encode_batch(texts, num_threads=8) == want
    assert asked == [2, 2]  # 3 CPUs: two pool threads (one _pool call each); 1 CPU: none
    assert bpe.tokenizer._usable_cpus() >= 1


@pytest.mark.parametrize("bad", [0, -1])
def test_num_threads_must_be_positive(enc_factory, bad):
    enc = enc_factory("cl100k_base")
    with pytest.raises(ValueError, match="num_threads"):
        enc.encode_batch(["a", "b"], num_threads=bad)
    with pytest.raises(ValueError, match="num_threads"):
        enc.encode_ordinary_batch(["a", "b"], num_threads=bad)
    with pytest.raises(ValueError, match="num_threads"):
        enc.encode_batch([], num_threads=bad)


# ------------------------------------------------------------------ eot / n_vocab / decode


@pytest.mark.parametrize("name", ENCODINGS)
def test_eot_token_and_n_vocab(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    assert enc.eot_token == EXPECTED_EOT[name]
    assert enc.eot_token == tk.eot_token
    assert enc.n_vocab == EXPECTED_N_VOCAB[name]
    assert enc.n_vocab == tk.n_vocab
    assert enc.max_token_value == tk.max_token_value == EXPECTED_N_VOCAB[name] - 1


@pytest.mark.parametrize("name", ENCODINGS)
def test_decode_special_id_gives_its_text(enc_factory, name):
    enc = enc_factory(name)
    tk = oracle(enc)
    for tok, tid in enc.special_tokens.items():
        assert enc.decode([tid]) == tok == tk.decode([tid])
        assert enc.decode_single_token_bytes(tid) == tok.encode("utf-8")
        assert enc.decode_bytes([tid, tid]) == tok.encode("utf-8") * 2
    text = sample_text(enc.special_tokens_set)
    ids = enc.encode(text, allowed_special="all")
    assert enc.decode(ids) == text == tk.decode(ids)


# ------------------------------------------------------------------ special tokens found by the backend
#
# encode, encode_to_array and encode_batch hand the resolved sets to the backend, which finds
# the tokens itself (in C for the compiled core, on the pool threads).  These tests check it
# against a plain scan written here, on token sets tiktoken's encodings do not have: tokens
# that are prefixes of others, one-byte and non-ASCII tokens, and no common first byte.

# the longest token wins where one is a prefix of another (bpe.special documents this);
# tiktoken leaves that case to its hash map's order
ODD_SPECIALS = ["<|a|>", "<|a|>b", "<|a", "x", "xy", "é", "日本", "[CLS]", "\n\n"]
ODD_PIECES = ODD_SPECIALS + ["<", "|", ">", "b", "y", "日", "本", "[", "CLS", "]", " ", "  ", "\n", "'s", "a",
                             "1", "23", "é", "e\u0301", "🙂", "\t", "X"]


def odd_tokenizer(name, split="named"):
    """The bundled ``name`` encoding with ODD_SPECIALS as its special tokens; ``split``
    "named" keeps its pattern (the backend finds special tokens), "custom" and "nfc" take the
    paths where Python finds them (a custom regex; a normalization)."""
    base = bpe.get_encoding(name)
    first = base.max_token_value + 1
    pattern = r" ?\w+| ?[^\w\s]+|\s+" if split == "custom" else name
    return bpe.Tokenizer(base.mergeable_ranks, pattern=pattern, normalization="NFC" if split == "nfc" else None,
                         special_tokens={tok: first + i for i, tok in enumerate(ODD_SPECIALS)})


def first_occurrence(text, names, start=0):
    """``(position, token)`` of the leftmost, then longest, of ``names`` in ``text``, or None."""
    for i in range(start, len(text)):
        here = [t for t in names if text.startswith(t, i)]
        if here:
            return i, max(here, key=len)
    return None


def expected_encoding(tok, text, allowed, disallowed):
    """What encode must give, from first_occurrence and encode_ordinary of the segments."""
    found = first_occurrence(text, disallowed)
    if found is not None:
        return ("DisallowedSpecialTokenError", found[1])
    ids, pos = [], 0
    while True:
        found = first_occurrence(text, allowed, pos)
        end = found[0] if found else len(text)
        if end > pos:
            ids += tok.encode_ordinary(text[pos:end])
        if found is None:
            return ("ok", ids)
        ids.append(tok.special_tokens[found[1]])
        pos = end + len(found[1])


def outcome_named(fn):
    try:
        return ("ok", fn())
    except bpe.DisallowedSpecialTokenError as exc:
        return ("DisallowedSpecialTokenError", exc.token)


@pytest.mark.parametrize("name, split", [("o200k_base", "named"), ("cl100k_base", "named"),
                                         ("o200k_base", "custom"), ("o200k_base", "nfc")])
def test_odd_special_tokens(backend, name, split, threads_for_any_batch):
    tok = odd_tokenizer(name, split)
    assert tok.backend == backend

    @settings(max_examples=150 if backend == "cython" else 40, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(
        st.lists(st.lists(st.sampled_from(ODD_PIECES), max_size=14).map("".join), min_size=1, max_size=4),
        st.one_of(st.just("all"), st.frozensets(st.sampled_from(ODD_SPECIALS))),
        st.frozensets(st.sampled_from(ODD_SPECIALS + ["ab", "<|"])),
    )
    def check(texts, allowed, disallowed):
        allowed_set = frozenset(ODD_SPECIALS) if allowed == "all" else allowed
        want = [expected_encoding(tok, t, allowed_set, disallowed) for t in texts]
        for t, w in zip(texts, want):
            got = outcome_named(lambda: tok.encode(t, allowed_special=allowed, disallowed_special=disallowed))
            assert got == w, t
            arr = outcome_named(lambda: tok.encode_to_array(t, allowed_special=allowed,
                                                             disallowed_special=disallowed))
            assert (arr[0], list(arr[1]) if arr[0] == "ok" else arr[1]) == w
            if w[0] == "ok" and split != "nfc":
                assert tok.decode(w[1]) == t
        # a batch gives every list, or the error of the first text that has one
        errors = [w for w in want if w[0] != "ok"]
        for threads in (1, 2):
            got = outcome_named(lambda: tok.encode_batch(texts, num_threads=threads, allowed_special=allowed,
                                                         disallowed_special=disallowed))
            assert got == (errors[0] if errors else ("ok", [w[1] for w in want]))

    check()


@pytest.mark.parametrize("names", [ODD_SPECIALS, ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>"], ["x"],
                                   ["é", "日本"]])
def test_backend_specials_find_the_leftmost_longest(backend, names):
    core = bpe.get_encoding("o200k_base")._core
    sets = core.specials({t.encode("utf-8"): i for i, t in enumerate(names)})
    assert sorted(sets.tokens) == sorted(names)

    @settings(max_examples=200 if backend == "cython" else 60, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(st.sampled_from(ODD_PIECES + names), max_size=20).map("".join), st.integers(0, 30))
    def check(text, start):
        data = text.encode("utf-8")
        start = min(start, len(data))
        # the expected match, found on the characters and converted to byte positions
        char_start = len(data[:start].decode("utf-8", errors="ignore"))
        while len(text[:char_start].encode("utf-8")) < start:
            char_start += 1  # a start inside a character: the next character
        found = first_occurrence(text, names, char_start)
        want = None if found is None else (len(text[: found[0]].encode("utf-8")), found[1])
        assert sets.find(text, len(text[:char_start].encode("utf-8"))) == want

    check()


@pytest.mark.parametrize("bad", [{}, {b"": 5}])
def test_backend_specials_need_nonempty_tokens(backend, bad):
    core = bpe.get_encoding("o200k_base")._core
    with pytest.raises(ValueError, match="special token|at least one token"):
        core.specials(bad)


def test_backend_specials_find_checks_its_start(backend):
    sets = bpe.get_encoding("o200k_base")._core.specials({b"<|x|>": 1})
    with pytest.raises(ValueError, match="start"):
        sets.find("<|x|>", -1)
    assert sets.find("a<|x|>", 1) == (1, "<|x|>")
    assert sets.find("a<|x|>", 2) is None
    assert sets.find("a<|x|>", 100) is None


def test_unusual_disallowed_names_take_the_python_path(enc_factory):
    # a name no text could be matched for in bytes (empty, or not a str) is checked as before
    enc = enc_factory("cl100k_base")
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        enc.encode("abc", disallowed_special={""})
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        enc.encode("a\ud800b", disallowed_special={"\ud800"})
    with pytest.raises(bpe.DisallowedSpecialTokenError):
        enc.encode_batch(["ok", "a\ud800b"], disallowed_special={"\ud800"})


def test_lone_surrogates_with_allowed_specials_are_fixed_up_like_tiktoken(enc_factory):
    enc = enc_factory("o200k_base")
    tk = oracle(enc)
    for text in ["a\ud800<|endoftext|>b", "\ud83d<|endoftext|>\ude00", "<|endoftext|>\udfff"]:
        want = tk.encode(text, allowed_special="all")
        assert enc.encode(text, allowed_special="all") == want
        assert list(enc.encode_to_array(text, allowed_special="all")) == want
        assert enc.encode_batch([text, text], allowed_special="all") == [want, want]
