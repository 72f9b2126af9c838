"""Hugging Face's pre-tokenizers (Oniguruma regexes) split exactly like our scanners.

HF ``tokenizers`` splits GPT-2 (``ByteLevel(use_regex=True)``), Llama 3 and Qwen2/2.5/3
(``Split(Regex(...), behavior="isolated")``) with Oniguruma; we split the same patterns with the
hand-written scanners (``bpe._scanner``, ``bpe._reference_scan``) on tiktoken's Unicode 16
tables.  For HF-loaded tokenizers to run on the scanners with the same ids, the pieces must be
the same.  They are, on every code point (surrogates aside) in the contexts below and on the
shared corpora: the Oniguruma in tokenizers 0.23.3 (onig 6.5.3) has Unicode 16 tables, its
``\\s`` is the White_Space property as in Rust's regex, and its case-insensitive contractions
match ``'ſ`` (U+017F LONG S) as ``'s``, as ours do.

The last test pins what Oniguruma (Ruby syntax, as HF compiles it) does with ``$``, ``\\z``,
``\\Z`` and ``{n,m}+``, which decides how a pattern is written into a tokenizer.json.
"""

from __future__ import annotations

import bisect
import itertools
import json

import pytest
from tokenizers import Regex, pre_tokenizers

from bpe import _reference_scan, byte_unicode
from bpe.pre_tokenizers import patterns

try:
    from bpe import _scanner
except ImportError:  # pragma: no cover - the compiled core is built before the checks run
    _scanner = None

# The split regexes as HF's tokenizer.json files write them (shared hf/llama3, hf/qwen3),
# copied here rather than read from bpe's table; the first test checks all three agree.
LLAMA3_SOURCE = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN2_SOURCE = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

NAMES = ["gpt2", "llama3", "qwen2"]

#: every code point c is split in each of these contexts (all code points of a block, in one
#: context, make one text): letters, space prefix, runs of digits and spaces, contractions
#: (with c as the second and third character), CR/LF, a run of four
CONTEXTS = ["a{c}b", " {c}", "{c}{c} 1", "'{c}", "\n{c}x", "{c}'s", "'l{c}", "'{c}e", "{c}{c}{c}{c}x"]

#: code points whose pieces differ from HF's, per pattern: none were found (tokenizers 0.23.3)
EXPECTED_MISMATCHES: dict[str, set[int]] = {"gpt2": set(), "llama3": set(), "qwen2": set()}


def _hf_pre_tokenizer(name):
    if name == "gpt2":
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    source = {"llama3": LLAMA3_SOURCE, "qwen2": QWEN2_SOURCE}[name]
    return pre_tokenizers.Split(Regex(source), behavior="isolated")


def _hf_split(pre, name, text):
    pieces = [piece for piece, _ in pre.pre_tokenize_str(text)]
    if name == "gpt2":  # ByteLevel gives the pieces in GPT-2's byte display alphabet
        pieces = [byte_unicode.from_display(piece).decode("utf-8") for piece in pieces]
    return pieces


def _our_splitters():
    if _scanner is None:
        pytest.fail("the compiled scanner is not built (pip install .)")
    return [("python", _reference_scan.split), ("cython", _scanner.split)]


def _ends(pieces):
    out, pos = set(), 0
    for piece in pieces:
        pos += len(piece)
        out.add(pos)
    return out


def _around(pieces, lo, hi):
    """The pieces that overlap text[lo:hi] (one segment of a block's text)."""
    out, pos = [], 0
    for piece in pieces:
        if pos < hi and pos + len(piece) > lo:
            out.append(piece)
        pos += len(piece)
        if pos >= hi:
            break
    return out


def test_shared_tokenizer_json_pre_tokenizers_are_the_ones_checked(shared):
    # what the checks below construct is what the shared tokenizer.json files hold
    def pre(model):
        with open(shared / "hf" / model / "tokenizer.json", encoding="utf-8") as f:
            return json.load(f)["pre_tokenizer"]

    gpt2 = pre("gpt2")
    assert (gpt2["type"], gpt2["add_prefix_space"], gpt2["use_regex"]) == ("ByteLevel", False, True)
    for model, source, name in (("llama3", LLAMA3_SOURCE, "llama3"), ("qwen3", QWEN2_SOURCE, "qwen2")):
        split, byte_level = pre(model)["pretokenizers"]
        assert (split["type"], split["behavior"], split["invert"]) == ("Split", "Isolated", False)
        assert split["pattern"] == {"Regex": source}
        assert (byte_level["type"], byte_level["use_regex"]) == ("ByteLevel", False)
        assert patterns.NAMED_PATTERNS[name] == source
        assert patterns.resolve(source)[0] == name


@pytest.mark.parametrize("name", NAMES)
def test_every_code_point_in_context_splits_like_hf(name):
    pre = _hf_pre_tokenizer(name)
    splitters = _our_splitters()
    mismatched: dict[int, set[str]] = {}   # code point -> contexts (and backends) where it differs
    examples = []
    block = 0x8000
    for ctx in CONTEXTS:
        for start in range(0, 0x110000, block):
            cps = [cp for cp in range(start, start + block) if not 0xD800 <= cp <= 0xDFFF]
            segments = [ctx.format(c=chr(cp)) for cp in cps]
            text = "".join(segments)
            seg_ends = list(itertools.accumulate(map(len, segments)))
            theirs = _hf_split(pre, name, text)
            assert "".join(theirs) == text
            for label, split in splitters:
                ours = split(text, name)
                if ours == theirs:
                    continue
                # the piece lists differ exactly where their piece ends differ: blame the
                # segment (code point) each such position falls in
                for pos in sorted(_ends(ours) ^ _ends(theirs)):
                    k = min(bisect.bisect_left(seg_ends, pos), len(cps) - 1)
                    cp = cps[k]
                    if cp not in mismatched and len(examples) < 10:
                        lo, hi = seg_ends[k] - len(segments[k]), seg_ends[k]
                        examples.append(f"U+{cp:04X} {label} in {ctx!r}: ours {_around(ours, lo, hi)!r}, "
                                        f"HF {_around(theirs, lo, hi)!r}")
                    mismatched.setdefault(cp, set()).add(f"{label}:{ctx}")
    print(f"\n[hf pre-tokenizers] {name}: {0x110000 - 0x800:,} code points x {len(CONTEXTS)} contexts, "
          f"{len(mismatched)} mismatching code points" + "".join(f"\n  {e}" for e in examples))
    assert set(mismatched) == EXPECTED_MISMATCHES[name], examples


@pytest.mark.parametrize("name", NAMES)
def test_corpora_split_like_hf(name, shared):
    pre = _hf_pre_tokenizer(name)
    splitters = _our_splitters()
    files = sorted((shared / "corpora").glob("*.txt"))
    assert len(files) >= 7
    n_pieces, bad = 0, []
    for path in files:
        with open(path, encoding="utf-8", newline="") as f:  # keep any "\r\n" as it is
            text = f.read()
        pos = 0
        while pos < len(text):  # 64 Ki-character chunks, cut after a newline
            end = text.rfind("\n", pos, pos + 65536) + 1 if pos + 65536 < len(text) else len(text)
            if end <= pos:
                end = min(pos + 65536, len(text))
            chunk = text[pos:end]
            theirs = _hf_split(pre, name, chunk)
            n_pieces += len(theirs)
            for label, split in splitters:
                ours = split(chunk, name)
                if ours != theirs:
                    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                              min(len(ours), len(theirs)))
                    bad.append(f"{path.name}@{pos} {label}: piece {at} ours {ours[at:at + 3]!r}, "
                               f"HF {theirs[at:at + 3]!r}")
            pos = end
    print(f"\n[hf pre-tokenizers] {name}: {len(files)} corpora, {n_pieces:,} pieces, "
          f"{len(bad)} mismatching chunks")
    assert bad == []


def _onig(pattern, text):
    """The stretches of ``text`` an HF Split with ``pattern`` matches (unmatched text dropped)."""
    split = pre_tokenizers.Split(Regex(pattern), behavior="removed", invert=True)
    return [piece for piece, _ in split.pre_tokenize_str(text)]


def test_oniguruma_anchors_and_quantifiers_as_hf_uses_them():
    # `$` is Ruby's: before EVERY "\n" (not before "\r"), and at the end of the text
    assert _onig(r"x$", "x\nx\nx") == ["x", "x", "x"]
    assert _onig(r"x$", "x\r\nx") == ["x"]
    assert _onig(r"\s+$", "a  \nb  \n") == ["  ", "  \n"]       # backtracks to before a "\n"
    # ... so `\s++$` (possessive: the run is taken whole, and ends before a non-space or at the
    # end) only matches at the end of the text, like tiktoken's `\s++$`
    assert _onig(r"\s++$", "a  \nb  \n") == ["  \n"]
    assert _onig(r"\s++$", "a\n \nb") == []
    # `\z` is the very end; `\Z` the end or before a final "\n"; `\A` the start; `^` every line start
    assert _onig(r"x\z", "x\nx\nx") == ["x"] and _onig(r"x\z", "x\n") == []
    assert _onig(r"x\Z", "x\n") == ["x"] and _onig(r"x\Z", "x\n\n") == []
    assert _onig(r"\s+\z", "a  \nb  \n") == ["  \n"]
    assert _onig(r"^x", "x\nx") == ["x", "x"] and _onig(r"\Ax", "x\nx") == ["x"]
    # `{n,m}+` is NOT possessive (Ruby syntax): it repeats the interval, `(?:X{n,m})+`, so
    # cl100k's `\p{N}{1,3}+` takes every digit of a run; `(?>X{n,m})` is the possessive form
    assert _onig(r"\p{N}{1,3}+", "1234567") == ["1234567"]
    assert _onig(r"\p{N}{1,3}+4", "12345") == ["1234"]           # and it backtracks
    assert _onig(r"(?>\p{N}{1,3})", "1234567") == ["123", "456", "7"]
    assert _onig(r"\p{N}{1,3}", "1234567") == ["123", "456", "7"]
    # `?+`, `*+`, `++` are possessive
    assert _onig(r"a++a", "aaaa") == [] and _onig(r"a*+a", "aaaa") == [] and _onig(r"a?+a", "a") == []
    # case-insensitive groups fold fully (one character to several): harmless for the
    # contractions (no character folds to "'s", "ll", "ve", "re"), but note it
    assert _onig(r"(?i:'s)", "'S'\u017f'\u212a") == ["'S", "'\u017f"]
    assert _onig(r"(?i:ss)", "\u00df ss SS \u1e9e") == ["\u00df", "ss", "SS", "\u1e9e"]
    # so cl100k's pattern written verbatim into a tokenizer.json splits runs of four or more
    # digits unlike tiktoken (with `(?>\p{N}{1,3})` it splits the shared corpora like tiktoken)
    assert _onig(patterns.CL100K_PATTERN, "1234567 89") == ["1234567", " ", "89"]
    atomic = patterns.CL100K_PATTERN.replace(r"\p{N}{1,3}+", r"(?>\p{N}{1,3})")
    assert _onig(atomic, "1234567 89") == ["123", "456", "7", " ", "89"]
