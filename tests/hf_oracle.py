"""Hugging Face ``tokenizers`` as the oracle for ``bpe.Tokenizer.from_hf`` / ``to_hf``.

Shared by tests/test_huggingface.py, test_hf_components.py, test_hf_errors.py and
tests_extended/test_hf_files.py.  ``tokenizers`` is imported normally: without it these tests
fail (they never skip).

Oracles, for a tokenizer.json at ``path``:

* ``hf_ids(path, text)``: ``Tokenizer.from_file(path).encode(text, add_special_tokens=False).ids``
  (every added token matched as Hugging Face matches it);
  ``hf_ids(path, text, add_special_tokens=True)`` adds the post-processor's tokens.
* ``hf_ordinary_ids(path, text)``: the same file with ``"added_tokens": []``, so that no added
  token is matched at all; this is what ``encode_ordinary`` must give.  (Hugging Face's
  ``encode_special_tokens = True`` turns only the *special* added tokens into plain text and
  still matches the non-special ones, so it is the same oracle only for files whose added
  tokens are all special; test_huggingface.py checks that the two agree there.)
* ``hf_decode(path, ids)``: ``decode(ids, skip_special_tokens=False)`` ("" for no ids: HF
  0.23.3 panics there with a right Strip decoder).
"""

from __future__ import annotations

import functools
import json
import os
from typing import Iterable, Optional

import tokenizers

import bpe

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
HF_DATA = os.path.join(DATA, "hf")

#: the fixture names (tests/data/hf/<name>.json), made by scripts/make_hf_fixtures.py
FIXTURES = sorted(f[:-5] for f in os.listdir(HF_DATA) if f.endswith(".json"))

#: decoder types whose output bpe's decode must reproduce
SUPPORTED_DECODERS = {"ByteLevel", "Metaspace", "ByteFallback", "Fuse", "Strip", "Replace", "Sequence"}


def fixture_path(name: str) -> str:
    return os.path.join(HF_DATA, f"{name}.json")


@functools.lru_cache(maxsize=None)
def spec(path: str) -> dict:
    """The parsed tokenizer.json (do not modify: it is cached)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# ------------------------------------------------------------------ the Hugging Face oracles
# Each variant is its own Tokenizer object: encode_special_tokens is state on the object.


@functools.lru_cache(maxsize=None)
def hf(path: str) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_file(path)


@functools.lru_cache(maxsize=None)
def hf_special_as_text(path: str) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer.from_file(path)
    tok.encode_special_tokens = True
    assert tok.encode_special_tokens is True
    return tok


@functools.lru_cache(maxsize=None)
def hf_without_added(path: str) -> tokenizers.Tokenizer:
    d = json.loads(json.dumps(spec(path)))
    d["added_tokens"] = []
    return tokenizers.Tokenizer.from_str(json.dumps(d))


def hf_ids(path: str, text: str, add_special_tokens: bool = False) -> list[int]:
    return hf(path).encode(text, add_special_tokens=add_special_tokens).ids


def hf_ordinary_ids(path: str, text: str) -> list[int]:
    return hf_without_added(path).encode(text, add_special_tokens=False).ids


def hf_special_as_text_ids(path: str, text: str) -> list[int]:
    return hf_special_as_text(path).encode(text, add_special_tokens=False).ids


def hf_decode(path: str, ids: Iterable[int]) -> str:
    ids = list(ids)
    if not ids:
        # tokenizers 0.23.3 panics (index out of bounds in decoders/strip.rs) when a Strip
        # decoder with right > 0 gets no token at all, e.g. Sequence[..., Fuse, Strip(" ", 0, 1)]
        # on []: nothing decodes to "", whatever the decoder
        return ""
    return hf(path).decode(ids, skip_special_tokens=False)


# ------------------------------------------------------------------ facts about a file


def added_tokens(path: str) -> list[dict]:
    return list(spec(path).get("added_tokens") or [])


def special_ids(path: str) -> dict[int, str]:
    """id -> content of the added tokens marked ``"special": true``."""
    return {t["id"]: t["content"] for t in added_tokens(path) if t.get("special")}


def all_added_special(path: str) -> bool:
    return all(t.get("special") for t in added_tokens(path))


def component_types(component: Optional[dict]) -> list[str]:
    """The ``type`` of a component and of everything nested in its Sequence."""
    if not component:
        return []
    out = [component.get("type")]
    for key in ("normalizers", "pretokenizers", "processors", "decoders"):
        for child in component.get(key) or []:
            out += component_types(child)
    return out


def decoder_supported(path: str) -> bool:
    """Whether bpe's decode must equal Hugging Face's for this file (a decoder made only of
    the supported types; files without a decoder are not compared)."""
    types = component_types(spec(path).get("decoder"))
    return bool(types) and set(types) <= SUPPORTED_DECODERS


def vocab_ids(path: str) -> list[int]:
    """Every id the file defines (model vocab and added tokens), sorted."""
    d = spec(path)
    return sorted(set(d["model"]["vocab"].values()) | {t["id"] for t in added_tokens(path)})


# ------------------------------------------------------------------ the contract, text by text


def matched_specials(path: str, text: str) -> set[str]:
    """The special added tokens HF's added-token matcher finds in ``text``.

    A special token can also be a model token that comes out of the model without being in
    the text (<unk> for an unknown character): an id counts as matched only where the piece
    of the text it stands for (its offsets) holds the token's content, before or after the
    normalizer."""
    enc = hf(path).encode(text, add_special_tokens=False)
    specials = special_ids(path)
    norm = hf(path).normalizer
    matched = set()
    for id_, (start, end) in zip(enc.ids, enc.offsets):
        if id_ in specials:
            piece, content = text[start:end], specials[id_]
            if content in piece or (norm is not None and norm.normalize_str(content) in norm.normalize_str(piece)):
                matched.add(content)
    return matched


def expect_default_encode(path: str, text: str):
    """What ``encode(text)`` must do: ``("raise", {special contents HF matched})`` or
    ``("ids", HF's ids)``."""
    matched = matched_specials(path, text)
    return ("raise", matched) if matched else ("ids", hf_ids(path, text))


def check_text(tok, path: str, text: str) -> list[str]:
    """The from_hf contract on one text (see test_huggingface.py): allowed_special="all",
    add_special_tokens=True, the default encode (raise or ids), encode_ordinary and decode
    against HF; returns the list of what went wrong."""
    problems = []
    ours = tok.encode(text, allowed_special="all")
    theirs = hf_ids(path, text)
    if ours != theirs:
        problems.append(f"allowed_special='all' {text!r}: {ours} != HF {theirs}")
    with_post = tok.encode(text, add_special_tokens=True, allowed_special="all")
    theirs_post = hf_ids(path, text, add_special_tokens=True)
    if with_post != theirs_post:
        problems.append(f"add_special_tokens=True {text!r}: {with_post} != HF {theirs_post}")
    kind, expected = expect_default_encode(path, text)
    try:
        got = ("ids", tok.encode(text))
    except bpe.DisallowedSpecialTokenError as exc:
        got = ("raise", exc.token)
    if kind == "raise":
        if got[0] != "raise" or got[1] not in expected:
            problems.append(f"encode {text!r}: {got} but HF matched special {sorted(expected)}")
    elif got != ("ids", expected):
        problems.append(f"encode {text!r}: {got} != HF {expected}")
    ordinary = tok.encode_ordinary(text)
    theirs_ordinary = hf_ordinary_ids(path, text)
    if ordinary != theirs_ordinary:
        problems.append(f"encode_ordinary {text!r}: {ordinary} != HF without added tokens {theirs_ordinary}")
    if decoder_supported(path):
        for ids in (theirs, theirs_post, theirs_ordinary):
            if tok.decode(ids) != hf_decode(path, ids):
                problems.append(f"decode {ids}: {tok.decode(ids)!r} != HF {hf_decode(path, ids)!r}")
    return problems


# ------------------------------------------------------------------ bpe side

_LOADED: dict = {}


def load(path: str, backend: str) -> "bpe.Tokenizer":
    """``bpe.Tokenizer.from_hf(path)`` on the given (active) backend, cached per backend."""
    key = (path, backend)
    tok = _LOADED.get(key)
    if tok is None:
        tok = bpe.Tokenizer.from_hf(path)
        assert tok.backend == backend
        _LOADED[key] = tok
    return tok


# ------------------------------------------------------------------ texts

#: hand-picked texts that pre-tokenizers, normalizers and BPE models treat differently
TRICKY_TEXTS = [
    "",
    " ",
    "  ",
    "   ",
    "\t",
    " \t ",
    "\n",
    "\n\n",
    "\r\n",
    "\r\n\r\n",
    " \r\n ",
    "a\r\nb",
    "line one\nline two\n\nline four\n",
    "   leading spaces",
    "trailing spaces   ",
    "hello  world   three    four",
    "x\ty\t\tz",
    "Hello World",
    "HELLO WORLD",
    "0",
    "42",
    "123",
    "1234",
    "1234567890",
    "3.14159 and 2,718 or 1e-9",
    "in the year 2024, 12 of 365 days",
    "it's",
    "IT'S",
    "'s 'LL 'll 've 'Re 'd 'M 't",
    "don't won't she'll've y'all",
    "é",
    "e\u0301",
    "café vs cafe\u0301",
    "Å (U+00C5) Å (A + ring)",
    "naïve façade Œuvre Straße",
    "\u0301",
    "\u0301\u0301 x",
    " \u0301x",
    "ﬁ ﬂ Ⅻ ① ｆｕｌｌ",
    "\u00a0no-break\u2009thin\u3000ideographic",
    "日本語のテキスト",
    "中文，标点。",
    "한국어 텍스트",
    "Привет, мир!",
    "مرحبا بالعالم",
    "👍",
    "a👍b 👍👍",
    "👨\u200d👩\u200d👧\u200d👦 family",
    "🏳️\u200d🌈 🇫🇷🇩🇪",
    "``quoted'' -- dashes — and … ellipsis",
    "a.b.c, A-B-C; snake_case and CamelCaseWord",
    "<html><body class=\"x\">&amp;</body></html>",
    "def f(x):\n    return x ** 2  # square\n",
    "x" * 60,
    "ab" * 40,
    "\x00\x01\x1f\x7f",
    "\ufffd replacement char",
    "<s> </s> <unk> [CLS] [SEP] [UNK] <|endoftext|>",
    "<|endoftext",
    "|endoftext|>",
    "<|",
    "Mr. Darcy of Pemberley and Netherfield, wonderfully 2024",
]


def read_data(name: str) -> str:
    with open(os.path.join(DATA, name), encoding="utf-8", newline="") as f:
        return f.read()


def corpus_texts() -> list[str]:
    """Longer texts: mixed.txt whole, and the first paragraphs of austen.txt."""
    austen = read_data("austen.txt")
    return [read_data("mixed.txt"), austen[:4000], "\n\n".join(austen.split("\n\n")[10:14])]


def added_token_texts(path: str) -> list[str]:
    """Each added token alone, next to letters, spaces and other added tokens, in other case,
    cut short, and overlapping with itself and the others."""
    contents = [t["content"] for t in added_tokens(path)]
    out = []
    for c in contents:
        out += [
            c,
            f"a{c}b",
            f" {c} ",
            f"x  {c}  y",
            f"\t{c}\n",
            f"{c}{c}",
            f"word{c} word",
            f"{c}.",
            c.upper(),
            c.lower(),
            c[:-1],
            c[1:],
            f"{c[:-1]}{c}",
        ]
    if contents:
        out.append(" ".join(contents))
        out.append("".join(contents))
        out.append("".join(reversed(contents)))
        out += [a + b for a in contents[:6] for b in contents[:6]]
    return out


def all_texts(path: str) -> list[str]:
    return TRICKY_TEXTS + added_token_texts(path) + corpus_texts()


#: words for the mixing strategy of the property tests
WORDS = [
    "the", "The", " the", "cat", "Cat", "hello", "Hello", "world", "it's", "don't", "'s", "'LL",
    "2024", "12", "é", "e\u0301", "日本", "👍", "\u200d", "-", ".", ",", "``", "''", "<", ">",
    "|", "[", "]", "/", "▁", "Ġ", "##", "</w>", "xyz", "yzw", "<a>", "<b>",
]
SPACES = [" ", "  ", "\t", "\n", "\r\n", "\n\n", "\u00a0", "\u3000"]


def json_edit(*keys_and_value):
    """An edit of a tokenizer.json's data that sets ``d[k1][k2]... = value`` (integer keys
    index lists), for the toggles and broken-file cases."""
    *keys, value = keys_and_value

    def edit(d):
        target = d
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return edit
