"""Exception types of ``bpe`` and the messages they carry.

Every error a user can trigger with bad input is one of these (or a plain ``KeyError`` /
``TypeError`` where Python conventions call for it).  Each message says what was wrong and
what to pass instead.  This module raises nothing by itself.
"""

from __future__ import annotations

from typing import Optional


class BPEError(Exception):
    """Base class of the errors raised by ``bpe``."""


class ArgumentError(BPEError, ValueError):
    """An argument outside what a call accepts: a negative limit, an unknown option name, a
    thread count below one."""


class VocabularyError(BPEError, ValueError):
    """Mergeable ranks, merges or special tokens given in code that do not make a tokenizer
    (two tokens with one rank, a missing single byte, merges that do not make the table, a
    special id that a token already has).  The same problems read from a file are a
    ``TokenizerFileError``."""


class InputTooLongError(BPEError, ValueError):
    """A text or pre-token beyond what the core counts (ids and offsets are 32-bit): split it."""


class PatternError(BPEError, ValueError):
    """A ``pattern=`` argument is not a known name, ``None`` or a valid regex."""


class TrainingError(BPEError, ValueError):
    """Training arguments or input cannot produce a tokenizer."""


class TrainingInputNotUTF8Error(TrainingError):
    """A training file holds bytes that are not UTF-8.  ``path`` names the file, ``offset`` is
    the first bad byte's offset in it and ``sample`` the (up to four) bytes from there, so that
    a front end can word the fix in its own terms (the command line names ``--errors``)."""

    def __init__(self, path: str, offset: int, sample: bytes):
        self.path, self.offset, self.sample = path, offset, sample
        super().__init__(f"{path} is not valid UTF-8 at byte {offset:,} ({sample!r}); fix the file or read it "
                         "with errors='replace' (bad bytes become U+FFFD)")


class UnknownEncodingError(BPEError, ValueError):
    """``get_encoding`` was asked for an encoding that is neither bundled nor registered."""

    def __init__(self, name: object, known: list[str]):
        super().__init__(
            f"unknown encoding {name!r}; the encodings are {', '.join(known)} "
            f"(to load another .tiktoken file use bpe.Tokenizer.from_tiktoken(path, pattern=...), "
            f"or name it with bpe.register_encoding)"
        )


class DisallowedSpecialTokenError(BPEError, ValueError):
    """The text to encode contains a special token that the caller did not allow."""

    def __init__(self, token: str):
        self.token = token
        super().__init__(
            f"Encountered text corresponding to disallowed special token {token!r}.\n"
            f"If you want this text to be encoded as a special token, pass it to "
            f"`allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
            f"If you want this text to be encoded as normal text, disable the check for this "
            f"token by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
            f"To disable this check for all special tokens, pass `disallowed_special=()`.\n"
        )


class TokenizerFileError(BPEError, ValueError):
    """A saved tokenizer (or a ``.tiktoken`` rank file) is corrupted or of the wrong kind."""

    def __init__(self, path: object, problem: str, line: Optional[int] = None):
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}: line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem}")


class ModelInputsError(BPEError, ValueError):
    """The arguments of ``tokenizer(texts, padding=..., truncation=..., ...)`` do not fit
    together or this tokenizer (no pad token to pad with, no length to cut to, ...)."""


class ChatTemplateError(BPEError, ValueError):
    """A chat template cannot be applied: a message of the wrong shape (the error names its
    index), a role the template does not know, a template that raises or does not parse,
    special tokens the template needs that the tokenizer lacks, or jinja2 missing."""
