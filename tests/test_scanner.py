"""The hand-written splitters (compiled and pure) against the regex patterns they replace.

The ``regex`` module's Unicode tables are newer than tiktoken's, so the comparison with regex
leaves out code points unassigned in Python's own Unicode data; tiktoken itself is the oracle
for those (test_tiktoken_identity.test_code_points_in_context).
"""

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import _backend, _reference_scan, patterns
from conftest import read_text

NAMES = ["gpt2", "cl100k_base", "o200k_base", "llama3", "qwen2"]


def _splitters():
    out = [("python", _reference_scan.split)]
    if _backend.COMPILED is not None:
        from bpe import _scanner

        out.append(("cython", _scanner.split))
    return out


def _regex_split(text, name):
    return patterns.split(patterns.compile_pattern(patterns.NAMED_PATTERNS[name]), text)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fixture", ["austen.txt", "mixed.txt"])
def test_fixtures_split_like_regex(name, fixture):
    text = read_text(fixture)
    expected = _regex_split(text, name)
    for label, split in _splitters():
        assert split(text, name) == expected, label


def test_compiled_scanner_is_present():
    if _backend.COMPILED is None:
        pytest.fail("the compiled core is not built (pip install .)")
    assert [label for label, _ in _splitters()] == ["python", "cython"]


@pytest.mark.parametrize("fixture", ["austen.txt", "mixed.txt"])
def test_count_is_the_number_of_pieces_split_gives(fixture):
    # benchmarks' split section times the scanner through count (no strings built)
    if _backend.COMPILED is None:
        pytest.skip("count is the compiled scanner's")
    from bpe import _scanner

    text = read_text(fixture)
    for name in NAMES:
        assert _scanner.count(text, name) == len(_scanner.split(text, name)) > 100, name
    assert _scanner.count("", "o200k_base") == 0


def test_unknown_pattern_names_are_refused_with_the_known_ones():
    if _backend.COMPILED is None:
        pytest.skip("the compiled scanner's names")
    from bpe import _scanner

    for fn in (_scanner.split, _scanner.count):
        with pytest.raises(ValueError, match="no pattern named 'gpt5'.*cl100k_base.*o200k_base"):
            fn("text", "gpt5")


PIECES = [
    " ", "  ", "   ", "\n", "\n\n", "\r\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\u00a0",
    "\u2028", "\u3000", "\u200d", "\ufeff", "'", "'s", "'S", "'t", "'ll", "'LL", "'Ve", "'re", "'m",
    "'d", "'\u017f", "'x", "a", "b", "Z", "ab", "AB", "Hello", "WORLD", "ǅ", "ʰ", "ﬁ", "é", "e\u0301",
    "\u0301", "\u0903", "\u20dd", "ß", "İ", "Σ", "σ", "ᾈ", "1", "12", "1234", "٣", "²", "Ⅻ", "½",
    "日本", "かな", "カナ", "한국", "العربية", "हिन्दी", "!", "?", "...", "/", "//", "$", "_",
    "-", "🙂", "👍🏽", "🇵🇹", "x/", "a\n/", " !", " \n", "\n ", " a", "\ta", "\n\na", "\r\n\r\n ",
]
ASSIGNED = st.characters(blacklist_categories=("Cs", "Cn"))
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(ASSIGNED, max_size=3)), max_size=14).map("".join)


@settings(max_examples=1500, deadline=None)
@given(TEXT)
def test_random_text_splits_like_regex(text):
    for name in NAMES:
        expected = _regex_split(text, name)
        for label, split in _splitters():
            assert split(text, name) == expected, (label, name)


def test_qwen2_splits_digits_one_per_piece():
    # qwen2 is llama3 with \p{N} for \p{N}{1,3}: every digit (any script) is a piece of its own
    text = "x1234567 12\u0663\u0664\u00b2\u2167 a1b22c333 \U0001d7ce\U0001d7cf 'll99\n\n7"
    digits = [ch for ch in text if ch.isdigit() or ch.isnumeric()]
    for label, split in _splitters():
        pieces = split(text, "qwen2")
        assert pieces == _regex_split(text, "qwen2"), label
        assert [p for p in pieces if p in digits] == digits, label
        assert split(text, "llama3") != pieces, label  # llama3 keeps runs of up to three


def test_pieces_cover_the_text_with_unassigned_code_points():
    text = "a\U000323b0's \u1ae7\u1ae7 x\U0010ffff\U000e0001 \u0378\n"
    for name in NAMES:
        for label, split in _splitters():
            pieces = split(text, name)
            assert "".join(pieces) == text and all(pieces), (label, name)


def test_ascii_letter_runs_of_every_length_and_end_byte():
    # The compiled scanner classifies runs of ASCII letters eight bytes at a time: runs of
    # 1..20 letters (both cases, to cross the word boundaries at 8 and 16), ended by every
    # ASCII character, by some non-ASCII letters and marks and by the end of the text, must
    # still split like the regex.
    enders = [chr(b) for b in range(128)] + ["é", "\u0301", "日", "ʰ", ""]
    for length in range(1, 21):
        for word in ("abcdefghijklmnopqrstuvwxyz"[:length], "QRSTUVWXYZABCDEFGHIJKLMNOP"[:length],
                     ("aZ" * 11)[:length], ("Mixed" * 5)[:length]):
            text = "".join(f" {word}{end}x{word}" for end in enders) + " " + word
            for name in NAMES:
                expected = _regex_split(text, name)
                for label, split in _splitters():
                    got = split(text, name)
                    if got != expected:  # report the first difference, not two long lists
                        pytest.fail(f"{label} {name}: {_first_difference(got, expected)}")


def test_every_two_ascii_bytes_start_pieces_like_regex():
    # The compiled scanners decide the commonest pieces (" word", punctuation before a space,
    # runs of spaces, a line feed) from the first two bytes when they are ASCII; every pair
    # of ASCII bytes, and an ASCII byte before some non-ASCII characters, followed by text
    # that can extend or end each shape, must split like the regex.
    seconds = [chr(b) for b in range(128)] + ["é", "\u0301", "日", "ʰ", "\u00a0", "\u2028"]
    tails = ["", "a", "A", "aB", "ab'S x", "  a", " \n", "'ll", "\u0301b", "1"]
    for first in map(chr, range(128)):
        texts = [first + second + tail for second in seconds for tail in tails]
        for name in NAMES:
            for label, split in _splitters():
                bad = [t for t in texts if split(t, name) != _regex_split(t, name)]
                assert not bad, (label, name, bad[:3])


def test_o200k_ascii_rules_agree_with_the_regex_and_the_splitters():
    # tests/o200k_ascii_rules.py tells o200k's pieces of ASCII text by where they start, by
    # rules on character classes and runs (the form a bit-mask scanner works in).  It must
    # agree with the regex and both splitters on the fixtures' ASCII paragraphs and on
    # random strings over the characters the rules turn on (contractions of either case,
    # '/' and line breaks after punctuation, tabs and spaces before each class, digits).
    import random

    import o200k_ascii_rules

    texts = [p for fixture in ("austen.txt", "mixed.txt") for p in read_text(fixture).split("\n\n") if p.isascii()]
    assert len(texts) > 40
    rnd = random.Random(22)
    alphabet = "aAbB zZ'.,/-(\n\r\t1234sStTdDmMrReEvVlL\x0b\x0c\x1f!"
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 14))) for _ in range(20000)]
    texts += [" .x", "..x", "\t.x", ".\n/.x", "d'T'Ms", "don'tcha", "DON'T", "a'rEx", "  123", " \n  x"]
    splitters = _splitters()
    for text in texts:
        expected = _regex_split(text, "o200k_base")
        assert o200k_ascii_rules.split(text) == expected, text
        for label, split in splitters:
            assert split(text, "o200k_base") == expected, (label, text)


# ---- the block path: 64 bytes at once from bit masks (bpe/_scanner.pxd) ----

BLOCK_NAMES = ["o200k_base", "cl100k_base", "llama3", "qwen2"]  # (the patterns that have one)

def _compiled_scanner():
    if _backend.COMPILED is None:
        pytest.skip("the block path is the compiled scanner's")
    from bpe import _scanner

    return _scanner


@contextlib.contextmanager
def _classifier(scanner, wide):
    """The block path with the AVX-512BW classifier (where the CPU has it) or the SSE2 one,
    for a block of a test."""
    old = scanner._set_wide_classifier(wide)
    try:
        yield
    finally:
        scanner._set_wide_classifier(old)


def _first_difference(got, expected):
    at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    return f"piece {at} is {got[at:at + 2]!r}, expected {expected[at:at + 2]!r}"


def _check_blocks(scanner, texts, name="o200k_base"):
    for text in texts:
        expected = _regex_split(text, name)
        one_at_a_time = scanner.split(text, name, blocks=False)
        assert one_at_a_time == expected, (text, _first_difference(one_at_a_time, expected))
        got = scanner.split(text, name)
        assert got == expected, (text, _first_difference(got, expected))
        assert scanner.count(text, name) == len(expected), text


@pytest.mark.parametrize("name", BLOCK_NAMES)
@pytest.mark.parametrize("wide", [True, False])
def test_blocks_split_random_text_like_regex(name, wide):
    # Long random strings over characters that turn the block rules: contractions (and long
    # s), punctuation with its line breaks and slashes, runs of spaces, tabs, line breaks,
    # digits and letters long enough to cross a block's 64 bytes, and non-ASCII characters of
    # each class (letters of two bytes, with and without case, inside a block; the other
    # letters, marks, digits, spaces and punctuation where a block ends).
    import random

    scanner = _compiled_scanner()
    rnd = random.Random(64)
    alphabets = [
        "  \n\n\r\t\x0bab'.//1234567890",
        "aaaa    \n\n   ''sSdDlLrReEvV",
        "1111111 .,/\n\r\t",
        " \t\x0b\x0c\r\n/./",
        "aA'sSlLtTdDmMrReEvV.,/ \n\x1f!",
        "aé ñÉ中文ʰー\u0301٣“—\u00a0x1 .\u0410\u0430's\u2028\x85",
        "\u017f''\u017fa' A\u017fé",
        "\u05d0\u05d1 \u0639\u0631\u0628\u064e\u0663 \u00b2\u00b3 x'y 'll\u01c5",
    ]
    texts = []
    for _ in range(6000):
        text = "".join(rnd.choice(rnd.choice(alphabets)) for _ in range(rnd.randint(1, 200)))
        if rnd.random() < 0.3:
            text = text.replace("a", "x" * rnd.randint(1, 80))
        texts.append(text)
    # (with the AVX-512BW classifier where the CPU has it, and with the SSE2 one)
    with _classifier(scanner, wide):
        _check_blocks(scanner, texts if wide else texts[:2000], name)


def test_o200k_runs_of_caseless_letters_split_like_regex():
    # The compiled o200k scanner takes an optional ASCII prefix and a run of two- and
    # three-byte letters and marks of scripts without case (Lm, Lo, M) at once, when what
    # follows the run is no letter, mark or apostrophe.  Short random strings over those
    # characters and everything that can follow, precede or interrupt such a run: letters
    # with case (ASCII, Latin-1, Cyrillic, titlecase), apostrophes and contractions,
    # digits of each script, punctuation of each width, whitespace with and without line
    # breaks, four-byte letters and symbols.
    import random

    scanner = _compiled_scanner()
    rnd = random.Random(2612)
    alphabet = [" ", " ", "\t", "\n", "\r", "a", "B", "'", "s", "1", ".", "/",
                "\u0639", "\u0631", "\u0628", "\u064e", "\u0663", "\u060c",       # Arabic
                "\u0915", "\u093f", "\u094d", "\u0964", "\u0967",                # Devanagari
                "\u65e5", "\u672c", "\u3002", "\u3005", "\ud55c",                 # CJK, Hangul
                "\u0e01", "\u0e31", "\u0e3f",                                   # Thai
                "\u02b0", "\u0301", "\u20dd", "\u0416", "\u0436", "\u00e9", "\u00c9", "\u01c5",
                "\U0001f600", "\U00020000", "\u017f", "\u2019", "\u00a0", "\u2028"]
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 24))) for _ in range(20000)]
    _check_blocks(scanner, texts)


@pytest.mark.parametrize("name", BLOCK_NAMES)
@pytest.mark.parametrize("construct", [
    "'re", "'s", "'S x", "x'", "'\u017f", "  \n", "\n\n  x", " \t.", "\t1", "1234567", "./\n/x",
    "é", "ÉÉ", "ñ's", "日本", "ʰ", "\u0301", "\u00a0x", "\u2028", "“x", "٣", "Aa", "aA", "  ", ". x",
    "1'D", "\t'll", " 's", "x'y", ".\n\n x", "\u05d0\u05d1'", "\u00b2\u00b3", "\u0639\u064e", " \n ",
])
def test_blocks_at_every_offset_around_64_bytes(name, construct):
    # A block decides the starts up to its last byte, or less before an apostrophe or a run
    # of whitespace that reaches its end, and lets a non-ASCII character after it take part
    # as a one-byte stand-in.  Each construct, placed so that it crosses, meets or follows
    # the 64th byte after a piece start, must split like the regex.
    scanner = _compiled_scanner()
    texts = []
    for filler in ("x", "ab ", "A.", "1 ", "\n"):
        for size in range(48, 72):
            head = (filler * size)[:size]
            for tail in ("", "z", " y", "'ll", "\n"):
                texts.append(head + construct + tail)
                texts.append(" " + head + construct + tail)
    _check_blocks(scanner, texts, name)


def test_block_classes_agree_with_the_portable_classifier_and_bytes():
    # The block path's byte classes: bit k of each mask for byte k of the first 64; bytes
    # past the end count as non-ASCII.  The build's classifiers (AVX-512BW where the CPU has
    # it, SSE2 where the build has it) and the word-at-a-time one must all give exactly
    # these, for every length up to past 64.
    import random

    scanner = _compiled_scanner()
    rnd = random.Random(8)
    tests = {
        "letter": lambda b: b < 128 and chr(b).isalpha(),
        "lower": lambda b: bool(b & 0x20),
        "digit": lambda b: 48 <= b <= 57,
        "space": lambda b: b == 32,
        "ctl": lambda b: 9 <= b <= 13,
        "nl": lambda b: b in (10, 13),
        "apos": lambda b: b == 39,
        "slash": lambda b: b == 47,
    }
    for length in list(range(0, 70)) + [128] * 20:
        data = bytes(rnd.choice([rnd.randrange(256), rnd.randrange(128), 39, 47, 32, 10]) for _ in range(length))
        expected = {"high": sum(1 << k for k in range(64) if k >= length or data[k] >= 0x80)}
        for name, test in tests.items():
            expected[name] = sum(1 << k for k in range(min(length, 64)) if data[k] < 0x80 and test(data[k]))
        for portable, wide in ((False, True), (False, False), (True, False)):
            with _classifier(scanner, wide):
                got = scanner._block_classes(data, portable)
            # (the case bit is only read on letters)
            got["lower"] &= expected["letter"]
            want = dict(expected, lower=expected["lower"] & expected["letter"])
            assert got == want, (length, portable, wide, data)
