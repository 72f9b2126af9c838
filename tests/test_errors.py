"""Bad input gives clear errors: the right exception type and a message that says what is wrong."""

import base64
import hashlib
import os

import pytest

import bpe

TRAIN_TEXT = [
    "The quick brown fox jumps over the lazy dog. <|eot|> Pack my box with five dozen liquor jugs. "
    "How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow. 0123456789 " * 20,
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt. " * 20,
]


def byte_ranks():
    return {bytes([b]): b for b in range(256)}


@pytest.fixture
def saved(tmp_path, backend):
    """``(tokenizer, path, lines)`` for a small trained tokenizer saved to ``tmp_path``."""
    tok = bpe.Tokenizer.train(TRAIN_TEXT, 300, special_tokens=["<|eot|>"])
    path = tmp_path / "small.bpe"
    tok.save(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    assert lines[-1] == b"" and lines[-2].startswith(b"sha256 ")
    lines = lines[:-2]  # (without the checksum: write_lines signs what a test writes)
    # precondition: the untouched file loads and encodes like the original
    loaded = bpe.Tokenizer.load(path)
    assert loaded.encode("quick brown <|eot|>", allowed_special="all") == tok.encode(
        "quick brown <|eot|>", allowed_special="all"
    )
    return tok, path, lines


def write_lines(path, lines, sign=True):
    """Write ``lines``; with ``sign``, followed by their checksum line, as a writer that
    gets the rest of the format wrong would: then the checks after the checksum are tested."""
    body = b"".join(line + b"\n" for line in lines)
    if sign and lines and lines[0] == b"bpe-tokenizer 2":
        body += b"sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n"
    path.write_bytes(body)
    return path


def ranks_header_index(lines):
    """0-based index of the ``ranks N`` line."""
    return next(i for i, line in enumerate(lines) if line.startswith(b"ranks "))


# ------------------------------------------------------------------ encode / decode


def test_encode_bytes_is_a_type_error(enc_factory):
    enc = enc_factory("cl100k_base")
    with pytest.raises(TypeError, match=r"must be str, got bytes") as info:
        enc.encode(b"bytes")
    assert "decode" in str(info.value)  # the hint says how to get a str
    with pytest.raises(TypeError, match=r"must be str"):
        enc.encode_ordinary(b"bytes")
    with pytest.raises(TypeError, match=r"must be str, got NoneType"):
        enc.encode(None)
    with pytest.raises(TypeError, match=r"must be str"):
        enc.encode_ordinary_batch(["ok", b"bytes"], num_threads=1)


@pytest.mark.parametrize("bad_id", [10**9, -1, 2**64, 100256])
def test_decode_unknown_id_is_a_key_error(enc_factory, bad_id):
    # 100256 lies in cl100k_base's gap between the ranks and the special tokens
    enc = enc_factory("cl100k_base")
    with pytest.raises(KeyError, match=r"not in the vocabulary"):
        enc.decode([bad_id])
    with pytest.raises(KeyError, match=r"not in the vocabulary"):
        enc.decode_bytes([1, 2, bad_id])
    with pytest.raises(KeyError, match=r"not in the vocabulary"):
        enc.decode_single_token_bytes(bad_id)


@pytest.mark.parametrize("bad_id", ["a", None, 1.0])
def test_decode_non_int_is_a_type_error(enc_factory, bad_id):
    enc = enc_factory("cl100k_base")
    with pytest.raises(TypeError, match=r"token ids must be ints"):
        enc.decode([bad_id])
    with pytest.raises(TypeError, match=r"token ids must be ints"):
        enc.decode_bytes([1, bad_id])


@pytest.mark.parametrize("bad_id", ["a", None, 1.0])
def test_decode_single_token_non_int_is_a_type_error(enc_factory, bad_id):
    enc = enc_factory("cl100k_base")
    with pytest.raises(TypeError, match=r"token ids must be ints"):
        enc.decode_single_token_bytes(bad_id)


# ------------------------------------------------------------------ get_encoding


@pytest.mark.parametrize("name", ["nope", "cl100k", "GPT2", ""])
def test_unknown_encoding(name):
    with pytest.raises(bpe.UnknownEncodingError, match=r"unknown encoding") as info:
        bpe.get_encoding(name)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert repr(name) in message
    for known in ["r50k_base", "gpt2", "p50k_base", "cl100k_base", "o200k_base"]:
        assert known in message
    assert "from_tiktoken" in message


# ------------------------------------------------------------------ training


def test_train_vocab_too_small(backend):
    with pytest.raises(bpe.TrainingError, match=r"at least 256") as info:
        bpe.Tokenizer.train(TRAIN_TEXT, vocab_size=100)
    assert isinstance(info.value, ValueError)
    # special tokens count towards the vocabulary
    with pytest.raises(bpe.TrainingError, match=r"at least 258"):
        bpe.Tokenizer.train(TRAIN_TEXT, vocab_size=257, special_tokens=["<|a|>", "<|b|>"])


def test_train_on_bytes_is_a_type_error(backend):
    with pytest.raises(TypeError, match=r"must be str.*item 0 is bytes"):
        bpe.Tokenizer.train([b"bytes"], 300)
    with pytest.raises(TypeError, match=r"item 1 is bytes"):
        bpe.Tokenizer.train(["fine", b"bytes"], 300)


def test_train_bad_min_frequency(backend):
    with pytest.raises(bpe.TrainingError, match=r"min_frequency"):
        bpe.Tokenizer.train(TRAIN_TEXT, 300, min_frequency=0)


# ------------------------------------------------------------------ constructor


def test_unknown_pattern_name(backend):
    with pytest.raises(bpe.PatternError, match=r"unknown pattern name 'o200k'") as info:
        bpe.Tokenizer(byte_ranks(), pattern="o200k")
    assert isinstance(info.value, ValueError)
    assert "o200k_base" in str(info.value)  # the known names are listed
    with pytest.raises(bpe.PatternError, match=r"unknown pattern name"):
        bpe.Tokenizer.train(TRAIN_TEXT, 300, pattern="o200k")


def test_invalid_regex_pattern(backend):
    with pytest.raises(bpe.PatternError, match=r"invalid split regex") as info:
        bpe.Tokenizer(byte_ranks(), pattern="(unclosed")
    assert isinstance(info.value, ValueError)
    assert "(unclosed" in str(info.value)
    with pytest.raises(bpe.PatternError, match=r"invalid split regex"):
        bpe.Tokenizer.train(TRAIN_TEXT, 300, pattern="(unclosed")


def test_empty_and_non_string_pattern(backend):
    with pytest.raises(bpe.PatternError, match=r"must not be empty"):
        bpe.Tokenizer(byte_ranks(), pattern="")
    with pytest.raises(bpe.PatternError, match=r"got int"):
        bpe.Tokenizer(byte_ranks(), pattern=42)


@pytest.mark.parametrize("missing", [0, 65, 255])
def test_ranks_missing_a_single_byte(backend, missing):
    ranks = byte_ranks()
    del ranks[bytes([missing])]
    with pytest.raises(ValueError, match=r"256") as info:
        bpe.Tokenizer(ranks, pattern=None)
    assert "single-byte" in str(info.value)


def test_special_token_id_clashes_with_a_rank(backend):
    with pytest.raises(ValueError, match=r"special token id 65 is also the rank") as info:
        bpe.Tokenizer(byte_ranks(), pattern=None, special_tokens={"<|x|>": 65})
    assert "256" in str(info.value)  # suggests a free id
    ranks = byte_ranks()
    ranks[b"ab"] = 256
    with pytest.raises(ValueError, match=r"also the rank"):
        bpe.Tokenizer(ranks, pattern=None, special_tokens={"<|ok|>": 257, "<|bad|>": 256})


def test_two_special_tokens_with_one_id(backend):
    """tiktoken accepts two names for one id (o200k_harmony has one): both encode to it, and
    it decodes as the first given."""
    tok = bpe.Tokenizer(byte_ranks(), pattern=None, special_tokens={"<|a|>": 300, "<|b|>": 300})
    assert tok.encode("<|b|>x<|a|>", allowed_special="all") == [300, 120, 300]
    assert tok.decode([300]) == "<|a|>" and tok.n_vocab == 301


def test_special_ids_beyond_2_to_the_32(backend):
    with pytest.raises(ValueError, match=r"below 2\*\*32"):
        bpe.Tokenizer(byte_ranks(), pattern=None, special_tokens={"<|a|>": 2 ** 32})


def test_mergeable_ranks_wrong_types(backend):
    with pytest.raises(TypeError, match=r"dict"):
        bpe.Tokenizer([(b"a", 0)], pattern=None)
    ranks = byte_ranks()
    ranks["ab"] = 256
    with pytest.raises(TypeError, match=r"bytes to non-negative int"):
        bpe.Tokenizer(ranks, pattern=None)


# ------------------------------------------------------------------ Tokenizer.load


def test_load_nonexistent_path(tmp_path):
    path = tmp_path / "does-not-exist.bpe"
    with pytest.raises(bpe.TokenizerFileError, match=r"cannot read the file") as info:
        bpe.Tokenizer.load(path)
    assert isinstance(info.value, ValueError)
    assert str(path) in str(info.value)
    assert info.value.path == path


def test_load_tiktoken_file_hints_from_tiktoken(saved, tmp_path):
    tok, _, _ = saved
    path = tmp_path / "ranks.tiktoken"
    path.write_bytes(
        b"".join(
            base64.b64encode(t) + b" " + str(r).encode() + b"\n"
            for t, r in sorted(tok.mergeable_ranks.items(), key=lambda kv: kv[1])
        )
    )
    with pytest.raises(bpe.TokenizerFileError, match=r"from_tiktoken") as info:
        bpe.Tokenizer.load(path)
    assert info.value.line == 1
    assert "not a bpe tokenizer file" in str(info.value)
    # the same file does load the way the hint says
    loaded = bpe.Tokenizer.from_tiktoken(path, pattern="o200k_base")
    assert loaded.mergeable_ranks == tok.mergeable_ranks


@pytest.mark.parametrize(
    "garbage, phrase",
    [
        (b"this is garbage", r"expected '<base64 token> <rank>'"),
        (b"@@@@ 12", r"not valid base64"),
        (b"QUJD twelve", r"not an integer"),
    ],
)
def test_load_garbage_rank_line_names_the_line(saved, garbage, phrase):
    _, path, lines = saved
    index = ranks_header_index(lines) + 1 + 10  # the 11th rank line, 0-based
    lines[index] = garbage
    write_lines(path, lines)
    with pytest.raises(bpe.TokenizerFileError, match=phrase) as info:
        bpe.Tokenizer.load(path)
    assert info.value.line == index + 1
    assert f"line {index + 1}:" in str(info.value)


def test_load_garbage_merge_line_names_the_line(saved):
    _, path, lines = saved
    merges_index = next(i for i, line in enumerate(lines) if line.startswith(b"merges "))
    assert lines[merges_index] != b"merges none"
    lines[merges_index + 2] = b"not numbers"
    write_lines(path, lines)
    with pytest.raises(bpe.TokenizerFileError, match=r"left_id") as info:
        bpe.Tokenizer.load(path)
    assert info.value.line == merges_index + 3


def test_load_truncated_without_end_line(saved):
    _, path, lines = saved
    assert lines[-1] == b"end"
    write_lines(path, lines[:-1])
    with pytest.raises(bpe.TokenizerFileError, match=r"truncated"):
        bpe.Tokenizer.load(path)


def test_load_truncated_inside_ranks(saved):
    _, path, lines = saved
    index = ranks_header_index(lines)
    write_lines(path, lines[: index + 20])
    with pytest.raises(bpe.TokenizerFileError, match=r"announces \d+ rank lines but ends after 19"):
        bpe.Tokenizer.load(path)


def test_load_truncated_inside_header(saved):
    _, path, lines = saved
    write_lines(path, lines[:3])
    with pytest.raises(bpe.TokenizerFileError, match=r"truncated"):
        bpe.Tokenizer.load(path)


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.1, 0.33, 0.5, 0.77, 0.9, 0.99])
def test_load_truncated_at_any_byte(saved, fraction):
    _, path, _ = saved
    data = path.read_bytes()
    cut = int(len(data) * fraction)
    if data[cut - 1 : cut + 1] == b"d\n":  # never produce the complete file
        cut -= 1
    path.write_bytes(data[:cut])
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.load(path)
    assert str(path) in str(info.value)


def test_load_wrong_version(saved):
    _, path, lines = saved
    assert lines[0] == b"bpe-tokenizer 2"
    lines[0] = b"bpe-tokenizer 99"
    write_lines(path, lines)
    with pytest.raises(bpe.TokenizerFileError, match=r"version '99' is not supported") as info:
        bpe.Tokenizer.load(path)
    assert info.value.line == 1
    assert isinstance(info.value, ValueError)


def test_load_content_after_end(saved):
    _, path, lines = saved
    write_lines(path, lines + [b"extra"])
    with pytest.raises(bpe.TokenizerFileError, match=r"after the closing 'end'") as info:
        bpe.Tokenizer.load(path)
    assert info.value.line == len(lines) + 1


@pytest.mark.parametrize("edit", ["name", "rank", "merge", "special", "swap", "drop", "version 1"])
def test_load_refuses_any_change_after_saving(saved, edit):
    """A file changed after it was saved (one line edited, swapped or dropped, and not
    signed again) is refused before it is read, naming the checksum line; ``verify=False``
    reads it anyway (for files edited on purpose), and then it is the edited tokenizer."""
    tok, path, lines = saved
    signed = path.read_bytes().split(b"\n")[-2]
    first_rank = ranks_header_index(lines) + 1
    merges = next(i for i, line in enumerate(lines) if line.startswith(b"merges "))
    if edit == "name":
        lines[1] = b'name "other"'
    elif edit == "rank":  # the ranks of two tokens exchanged: a well-formed, different tokenizer
        (a, ra), (b, rb) = lines[first_rank + 260].split(), lines[first_rank + 261].split()
        lines[first_rank + 260], lines[first_rank + 261] = a + b" " + rb, b + b" " + ra
    elif edit == "merge":
        lines[merges + 1] = b"0 1"
    elif edit == "special":
        lines[5] = lines[5].replace(b"<|eot|>", b"<|eos|>")
    elif edit == "swap":
        lines[first_rank + 3], lines[first_rank + 4] = lines[first_rank + 4], lines[first_rank + 3]
    elif edit == "drop":
        del lines[first_rank + 10]
        lines[first_rank - 1] = b"ranks %d" % (int(lines[first_rank - 1].split()[1]) - 1)
    else:
        lines[0] = b"bpe-tokenizer 1"
    path.write_bytes(b"".join(line + b"\n" for line in lines) + signed + b"\n")
    with pytest.raises(bpe.TokenizerFileError) as info:
        bpe.Tokenizer.load(path)
    if edit != "version 1":
        assert "sha256" in str(info.value) and info.value.line == len(lines) + 1
        assert "verify=False" in str(info.value)
    else:  # (read as version 1, the checksum line is content after 'end')
        assert "after the closing 'end'" in str(info.value)
    if edit == "name":
        assert bpe.Tokenizer.load(path, verify=False).name == "other"
    if edit == "special":
        assert bpe.Tokenizer.load(path, verify=False).special_tokens_set == {"<|eos|>"}


def test_load_needs_the_checksum_line(saved):
    _, path, lines = saved
    write_lines(path, lines, sign=False)
    with pytest.raises(bpe.TokenizerFileError, match="without its 'sha256' line"):
        bpe.Tokenizer.load(path)
    # a version 1 file (written before the checksum line existed) still loads
    lines[0] = b"bpe-tokenizer 1"
    write_lines(path, lines, sign=False)
    assert bpe.Tokenizer.load(path).n_vocab == 300


def test_load_inconsistent_special_id(saved):
    _, path, lines = saved
    index = next(i for i, line in enumerate(lines) if line.startswith(b"special "))
    lines[index] = b'special "<|eot|>" 5'  # clashes with the rank of byte 5
    write_lines(path, lines)
    with pytest.raises(bpe.TokenizerFileError, match=r"inconsistent.*also the rank"):
        bpe.Tokenizer.load(path)


# ------------------------------------------------------------------ Tokenizer.from_tiktoken


def test_from_tiktoken_invalid_base64_names_the_line(tmp_path, backend):
    lines = [base64.b64encode(bytes([b])) + b" " + str(b).encode() for b in range(256)]
    lines[2] = b"!!notbase64!! 2"
    path = tmp_path / "bad.tiktoken"
    write_lines(path, lines)
    with pytest.raises(bpe.TokenizerFileError, match=r"not valid base64") as info:
        bpe.Tokenizer.from_tiktoken(path, pattern="cl100k_base")
    assert info.value.line == 3
    assert "line 3:" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_from_tiktoken_nonexistent_and_empty(tmp_path, backend):
    with pytest.raises(bpe.TokenizerFileError, match=r"cannot read the file"):
        bpe.Tokenizer.from_tiktoken(tmp_path / "missing.tiktoken", pattern="cl100k_base")
    empty = tmp_path / "empty.tiktoken"
    empty.write_bytes(b"")
    with pytest.raises(bpe.TokenizerFileError, match=r"no tokens"):
        bpe.Tokenizer.from_tiktoken(empty, pattern="cl100k_base")


def test_from_tiktoken_duplicate_rank_names_the_line(tmp_path, backend):
    lines = [base64.b64encode(bytes([b])) + b" " + str(b).encode() for b in range(256)]
    lines.append(base64.b64encode(b"ab") + b" 7")
    path = tmp_path / "dup.tiktoken"
    write_lines(path, lines)
    with pytest.raises(bpe.TokenizerFileError, match=r"rank 7 is given to two tokens") as info:
        bpe.Tokenizer.from_tiktoken(path, pattern="cl100k_base")
    assert info.value.line == 257
    assert os.fspath(path) in str(info.value)


def test_from_tiktoken_with_expected_hash_refuses_other_contents(tmp_path, backend):
    """A line lost from a .tiktoken file still reads as a table (the format has no checksum
    and tiktoken accepts gaps); the file's hash catches it."""
    lines = [base64.b64encode(bytes([b])) + b" " + str(b).encode() for b in range(256)]
    lines += [base64.b64encode(b"ab") + b" 256", base64.b64encode(b"abc") + b" 257"]
    path = write_lines(tmp_path / "small.tiktoken", lines)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    tok = bpe.Tokenizer.from_tiktoken(path, pattern=None, expected_hash=digest.upper())
    assert tok.encode("ab") == [256]
    write_lines(path, lines[:-2] + lines[-1:])  # "ab" lost: it is now made of bytes
    assert bpe.Tokenizer.from_tiktoken(path, pattern=None).encode("ab") == [97, 98]
    with pytest.raises(bpe.TokenizerFileError, match=r"SHA-256 is [0-9a-f]{64}, not the expected"):
        bpe.Tokenizer.from_tiktoken(path, pattern=None, expected_hash=digest)


def test_absurdly_sparse_ids_are_refused_before_allocating(backend):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 2_000_000_000  # a corrupted rank file would ask for gigabytes of tables
    with pytest.raises(ValueError, match="too sparse"):
        bpe.Tokenizer(ranks, pattern=None)


def test_a_damaged_bundle_is_refused(tmp_path):
    """The bundled rank tables are checked against the SHA-256 they were made with: a copy
    with one byte changed (or cut short) raises TokenizerFileError instead of loading."""
    import shutil

    from bpe import registry
    from bpe.io import bundle

    folder = tmp_path / "data"
    shutil.copytree(os.path.dirname(registry.__file__) + "/data", folder)
    assert registry.bundled_ranks("p50k_base", str(folder)) == bpe.get_encoding("p50k_base").mergeable_ranks
    for name, damage in (("r50k_base", lambda d: d[:5000] + bytes([d[5000] ^ 1]) + d[5001:]),
                         ("cl100k_base", lambda d: d[: len(d) // 2])):
        path = folder / f"{name}.bpeb"
        path.write_bytes(damage(path.read_bytes()))
        with pytest.raises(bpe.TokenizerFileError, match="damaged"):
            registry.bundled_ranks(name, str(folder))
    with pytest.raises(bpe.TokenizerFileError, match="p50k_base|r50k_base"):  # (p50k extends r50k)
        registry.bundled_ranks("p50k_base", str(folder))
    # what the checksum guards, the reader refuses on its own too
    for data in (b"not a bundle", bundle.MAGIC + b"{}\n", bundle.MAGIC + b'{"rank_runs": [[0, 3]]}\nxx'):
        with pytest.raises(bpe.TokenizerFileError):
            bundle.unpack(data, "mem")


def test_merges_must_make_the_table(backend):
    """A merge list that does not make the rank table (a part missing or of higher rank, the
    wrong token made, one merge too few or too many) is refused, naming the merge."""
    tok = bpe.Tokenizer.train(TRAIN_TEXT, 290)
    ranks, merges = tok.mergeable_ranks, tok._spec().merges
    assert bpe.Tokenizer(ranks, pattern=None, merges=merges).merges == tok.merges
    first = merges[0]
    for bad, phrase in (([(99999, first[1])] + merges[1:], "merge 0"), ([first[::-1]] + merges[1:], "merge 0"),
                        (merges[:-1], f"{len(merges) - 1} merges for {len(merges)} tokens"),
                        (merges + [first], "merges for"), ([(first[0], 300)] + merges[1:], "merge 0")):
        with pytest.raises(ValueError, match=phrase):
            bpe.Tokenizer(ranks, pattern=None, merges=bad)


# ------------------------------------------------------------------ the error types


def _ranks_with(extra):
    ranks = byte_ranks()
    ranks.update(extra)
    return ranks


# each call is bad input; its error must be a BPEError of this kind (and a ValueError, as
# before these types existed, so that code catching ValueError keeps working)
BAD_INPUT = {
    "count_till_limit(limit=-1)": (lambda: bpe.get_encoding("r50k_base").count_till_limit("a", -1), bpe.ArgumentError),
    "truncate(max_tokens=-2)": (lambda: bpe.get_encoding("r50k_base").truncate("a", -2), bpe.ArgumentError),
    "encode_batch(num_threads=0)": (lambda: bpe.get_encoding("r50k_base").encode_batch(["a"], num_threads=0),
                                    bpe.ArgumentError),
    "Tokenizer(normalization='NFX')": (lambda: bpe.Tokenizer(byte_ranks(), pattern=None, normalization="NFX"),
                                       bpe.ArgumentError),
    "two tokens with one rank": (lambda: bpe.Tokenizer(_ranks_with({b"ab": 256, b"cd": 256}), pattern=None),
                                 bpe.VocabularyError),
    "a single byte missing": (lambda: bpe.Tokenizer({bytes([b]): b for b in range(255)}, pattern=None),
                              bpe.VocabularyError),
    "a special id that a token has": (lambda: bpe.Tokenizer(byte_ranks(), pattern=None, special_tokens={"<|x|>": 65}),
                                      bpe.VocabularyError),
    "a special id of 2**32": (lambda: bpe.Tokenizer(byte_ranks(), pattern=None, special_tokens={"<|x|>": 2 ** 32}),
                              bpe.VocabularyError),
    "ids too sparse": (lambda: bpe.Tokenizer(_ranks_with({b"ab": 10 ** 9}), pattern=None), bpe.VocabularyError),
    "explicit_n_vocab wrong": (lambda: bpe.Tokenizer(byte_ranks(), pattern=None, explicit_n_vocab=300),
                               bpe.VocabularyError),
    "tiktoken's constructor, explicit_n_vocab wrong": (
        lambda: bpe.Encoding("x", pat_str=r"\w+|\s+", mergeable_ranks=byte_ranks(), special_tokens={},
                             explicit_n_vocab=300), bpe.VocabularyError),
    "merges that do not make the table": (
        lambda: bpe.Tokenizer(_ranks_with({b"ab": 256}), pattern=None, merges=[(98, 97)]), bpe.VocabularyError),
    "train_from_counts, a negative count": (
        lambda: bpe.Tokenizer.train_from_counts({b"ab": -1}, 300, pattern=None), bpe.TrainingError),
    "train_from_counts, normalization='NFX'": (
        lambda: bpe.Tokenizer.train_from_counts({b"ab": 1}, 300, pattern=None, normalization="NFX"), bpe.TrainingError),
    "count_pretokens(num_threads=0)": (lambda: bpe.count_pretokens(["a b"], num_threads=0), bpe.TrainingError),
    "count_pretokens(normalization='NFX')": (lambda: bpe.count_pretokens(["a b"], normalization="NFX"),
                                             bpe.TrainingError),
    "register_encoding over a bundled name": (
        lambda: bpe.register_encoding("cl100k_base", lambda: {}), bpe.ArgumentError),
}


@pytest.mark.parametrize("call", sorted(BAD_INPUT))
def test_bad_input_raises_a_bpe_error_that_is_a_value_error(backend, call):
    run, kind = BAD_INPUT[call]
    with pytest.raises(kind) as info:
        run()
    assert isinstance(info.value, bpe.BPEError) and isinstance(info.value, ValueError), type(info.value)
    assert len(str(info.value)) > 20  # says what was wrong


def test_every_error_type_is_exported_and_a_value_error():
    from bpe import errors

    kinds = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, errors.BPEError)]
    assert len(kinds) >= 10
    for kind in kinds:
        assert getattr(bpe, kind.__name__) is kind, kind
        assert kind is errors.BPEError or issubclass(kind, ValueError), kind
