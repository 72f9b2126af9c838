"""Pattern names, custom regexes, no-split mode, and the `$` translation."""

import pytest
import regex

import bpe
from bpe import patterns


def test_named_patterns_resolve():
    for name in ("gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3", "qwen2"):
        got_name, src = patterns.resolve(name)
        assert got_name == name and src == patterns.NAMED_PATTERNS[name]
    assert patterns.resolve(None) == (None, None)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "llama3", "qwen2"])
def test_a_named_patterns_source_gets_its_scanner(name):
    # tiktoken's pat_str passed as a string (or compiled) splits like the named pattern: with
    # its scanner, on tiktoken's Unicode tables, not as a custom regex on the regex module's
    source = patterns.NAMED_PATTERNS[name]
    assert patterns.resolve(source)[0] == patterns.resolve(name)[0]
    assert patterns.resolve(regex.compile(source))[0] == patterns.resolve(name)[0]
    assert patterns.resolve(source + "|x")[0] is None


def test_tokenizer_with_tiktokens_pattern_string_matches_tiktoken(backend):
    import tiktoken

    base = bpe.get_encoding("o200k_base")
    tok = bpe.Tokenizer(base.mergeable_ranks, pattern=base.pattern)
    oracle = tiktoken.Encoding(name="o200k-oracle", pat_str=base.pattern, mergeable_ranks=base.mergeable_ranks,
                               special_tokens={})
    # U+10940 is a letter in the regex module's Unicode 17 tables, unassigned in tiktoken's
    text = "I\U00010940'll and \U00010941's"
    custom = tok._core.encode_pieces(patterns.split(patterns.compile_pattern(base.pattern), text))
    assert custom != oracle.encode_ordinary(text)  # what the regex module's tables give
    assert tok.encode_ordinary(text) == oracle.encode_ordinary(text) == base.encode_ordinary(text)


def test_dollar_becomes_end_of_text():
    assert patterns.to_python_syntax(r"\s++$|a") == r"\s++\Z|a"
    assert patterns.to_python_syntax(r"[$]\$") == r"[$]\$"
    assert patterns.to_python_syntax(r"[^]$]$") == r"[^]$]\Z"
    # Python's `$` would also match before a final newline; `\Z` does not
    assert regex.findall(patterns.to_python_syntax(r"a$"), "a\n") == []


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "llama3", "qwen2"])
def test_split_covers_the_text(name):
    compiled = patterns.compile_pattern(patterns.NAMED_PATTERNS[name])
    text = "Hello, world!  It's 2026...\r\n\tnew  line\n\n  end  "
    assert "".join(patterns.split(compiled, text)) == text


def test_custom_pattern_keeps_unmatched_text():
    compiled = patterns.compile_pattern(r"\d+")
    assert patterns.split(compiled, "ab12cd345") == ["ab", "12", "cd", "345"]
    groups = patterns.compile_pattern(r"(\w)\w*")
    assert patterns.split(groups, "hello world") == ["hello", " ", "world"]


def test_no_split_is_whole_text(backend):
    tok = bpe.Tokenizer.train(["the cat the hat the bat"] * 4, 270, pattern=None, min_frequency=1)
    assert tok.pattern is None
    # with no pre-tokenization merges can cross spaces
    assert any(b" " in t and len(t.strip()) > 0 and not t.startswith(b" ") for t in tok.mergeable_ranks
               if len(t) > 2)
    text = "the cat the hat"
    assert tok.decode(tok.encode(text)) == text


def test_llama3_pattern_splits_digits_in_threes():
    compiled = patterns.compile_pattern(patterns.NAMED_PATTERNS["llama3"])
    assert patterns.split(compiled, "1234567") == ["123", "456", "7"]


def test_qwen2_pattern_is_llama3_with_single_digits():
    assert patterns.QWEN2_PATTERN == patterns.LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")
    compiled = patterns.compile_pattern(patterns.NAMED_PATTERNS["qwen2"])
    assert patterns.split(compiled, "x1234567 ٣٤") == ["x", "1", "2", "3", "4", "5", "6", "7", " ", "٣", "٤"]


def test_errors():
    with pytest.raises(bpe.PatternError, match="unknown pattern name 'cl100k'"):
        patterns.resolve("cl100k")
    with pytest.raises(bpe.PatternError, match="invalid split regex"):
        patterns.compile_pattern("(")


# ------------------------------------------------------------------ Oniguruma (HF) syntax

ONIG_TEXTS = ["1234567 89", "a  \nb  \n", "x\nx\nx", "  \n\n  ", "abc   ", "12\n345678\n", ""]
ONIG_PATTERNS = [r"\p{N}{1,3}+", r"\s+$", r"\s++$", r"x$", r"\s+\z", r"\s+\Z", r"^x", r"(?:ab|\d){1,2}+c?"]


def _hf_pieces(pattern: str, text: str) -> list[str]:
    import tokenizers

    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    return [p for p, _ in split.pre_tokenize_str(text)]


@pytest.mark.parametrize("pattern", ONIG_PATTERNS)
def test_hf_regexes_mean_what_oniguruma_means(pattern):
    """compile_hf_regex gives Oniguruma's matches ({n,m}+ repeats, $ ends lines, \\Z, \\z)."""
    from bpe.pre_tokenizers.split import Split

    for text in ONIG_TEXTS:
        assert Split(pattern).pre_tokenize(text) == _hf_pieces(pattern, text), (pattern, text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "llama3", "qwen2"])
def test_named_patterns_written_for_oniguruma_split_the_same(name):
    source = patterns.NAMED_PATTERNS[name]
    written = patterns.to_oniguruma(source)
    assert patterns.name_of_oniguruma_source(written) == patterns.resolve(name)[0]
    compiled = patterns.compile_pattern(source)
    for text in ONIG_TEXTS + ["I'm 2024 km/h\r\n\n  x  ", "ünïcödé 12345 !!!\n\n"]:
        assert patterns.split(compiled, text) == _hf_pieces(written, text), (name, text)
