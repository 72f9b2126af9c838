"""Model-ready inputs: what ``tokenizer(texts, padding=..., truncation=...)`` returns.

Turns the tokens of a batch of texts into the rows a model takes, with transformers' names
and rules:

* truncation cuts a text's tokens to a budget, ``max_length`` less the tokens the
  post-processor adds (``add_special_tokens``); with ``return_overflowing_tokens`` the tokens
  cut off come back as further rows, windows of the same budget that overlap the one before
  by ``stride`` tokens (Hugging Face's ``Encoding.truncate``, from either side);
* padding fills rows to the longest row (``padding=True``), to ``max_length``
  (``padding="max_length"``), rounded up to a multiple of ``pad_to_multiple_of``, on the
  tokenizer's padding side, with its pad token (attention 0, special mask 1, no span);
* :class:`BatchEncoding` holds the columns (``input_ids``, ``attention_mask``,
  ``offset_mapping``, ...) and the :class:`~bpe.encoding.Encoding` of each row.

Where transformers only warns (a length to cut or pad to that the tokenizer does not have,
``max_length`` with no room left for text), this raises :class:`~bpe.errors.ModelInputsError`.
It does not encode: ``Tokenizer.__call__`` hands it each text's tokens with their offsets,
before the post-processor, and builds the rows' encodings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .encoding import Encoding
from .errors import ModelInputsError

#: a model_max_length above this means "not set" (transformers' LARGE_INTEGER)
UNSET_LENGTH = 10 ** 20
_PADDING = {False: None, None: None, "do_not_pad": None, True: "longest", "longest": "longest",
            "max_length": "max_length"}
_TRUNCATION = {False: False, "do_not_truncate": False, True: True, "longest_first": True, "only_first": True}
_COLUMNS = ("input_ids", "token_type_ids", "attention_mask", "special_tokens_mask", "offset_mapping", "length")


@dataclass(frozen=True)
class Options:
    """The call's arguments, checked and resolved against the tokenizer (see :func:`resolve`)."""

    add_special_tokens: bool
    budget: Optional[int]          # tokens of text a row may hold; None: no truncation
    stride: int
    truncate_left: bool
    padding: Optional[str]         # None, "longest" or "max_length"
    max_length: Optional[int]
    pad_to_multiple_of: Optional[int]
    pad_left: bool
    pad_id: Optional[int]
    columns: tuple                 # the names of the columns to return, in transformers' order
    overflowing: bool
    tensors: Optional[str]


def _length(value: object, argument: str, least: int) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ModelInputsError(f"{argument} must be an int >= {least} or None, got {value!r}")
    return value


def _side(value: object, argument: str) -> bool:
    if value not in ("left", "right"):
        raise ModelInputsError(f"{argument} must be 'left' or 'right', got {value!r}")
    return value == "left"


def resolve(*, add_special_tokens: bool, padding, truncation, max_length, stride: int, pad_to_multiple_of,
            padding_side, truncation_side, return_tensors, return_token_type_ids, return_attention_mask,
            return_special_tokens_mask, return_offsets_mapping, return_length, return_overflowing_tokens,
            n_added: int, model_max_length, pad_id: Optional[int], pad_token: Optional[str],
            model_input_names) -> Options:
    """Check the arguments of ``Tokenizer.__call__`` and resolve them as transformers does:
    ``max_length`` alone (no ``truncation``, no ``padding``) truncates; ``truncation=True``
    or ``padding="max_length"`` without ``max_length`` use the tokenizer's
    ``model_max_length``.  ``n_added``: tokens the post-processor adds to a text;
    ``pad_id``: the id of ``pad_token`` (None when there is no such token)."""
    try:
        pad = _PADDING[padding]
        if truncation is None:  # transformers: max_length alone asks for truncation
            truncate = max_length is not None and padding is False
        else:
            truncate = _TRUNCATION[truncation]
    except (KeyError, TypeError):
        which, value = ("padding", padding) if padding not in _PADDING else ("truncation", truncation)
        choices = "True, False, 'longest', 'max_length' or 'do_not_pad'" if which == "padding" else \
            "True, False, 'longest_first', 'only_first' or 'do_not_truncate' (pairs of texts are not supported)"
        raise ModelInputsError(f"{which}={value!r} is not one of {choices}") from None
    max_length = _length(max_length, "max_length", 1)
    stride = _length(stride, "stride", 0)
    pad_to_multiple_of = _length(pad_to_multiple_of, "pad_to_multiple_of", 1)
    if max_length is None and (truncate or pad == "max_length"):
        known = model_max_length if isinstance(model_max_length, int) and 0 < model_max_length < UNSET_LENGTH \
            else None
        if known is None:
            what = "truncation" if truncate else "padding='max_length'"
            raise ModelInputsError(
                f"{what} needs a length and this tokenizer has no model_max_length: pass max_length=..."
                " (transformers would warn and leave the texts as they are)")
        max_length = known
    budget = None
    if truncate:
        budget = max_length - n_added
        if budget < 1:
            raise ModelInputsError(
                f"max_length={max_length} leaves no room for text after the {n_added} token(s) that "
                f"add_special_tokens=True adds: pass max_length >= {n_added + 1}, or add_special_tokens=False")
        if stride >= budget:
            raise ModelInputsError(
                f"stride={stride} must be less than the {budget} tokens of text a row holds (max_length="
                f"{max_length}" + (f" less {n_added} added token(s))" if n_added else ")") +
                f": pass stride <= {budget - 1}")
    if pad is not None:
        if pad_id is None:
            raise ModelInputsError(
                "padding needs a pad token and this tokenizer has none" if pad_token is None else
                f"pad_token={pad_token!r} is not a token of this tokenizer" +
                "; pass pad_token=... naming one of its tokens, e.g. its end-of-text token")
        if truncate and pad_to_multiple_of is not None and max_length % pad_to_multiple_of:
            raise ModelInputsError(
                f"truncation to max_length={max_length} and padding to a multiple of {pad_to_multiple_of} "
                "do not fit: pass a max_length that is a multiple of pad_to_multiple_of")
    if return_tensors not in (None, "np"):
        raise ModelInputsError(f"return_tensors={return_tensors!r} is not supported: pass 'np' (numpy; "
                               "torch.from_numpy and friends take it from there) or None")
    if return_token_type_ids is None:
        return_token_type_ids = "token_type_ids" in (model_input_names or ())
    wanted = (True, return_token_type_ids, return_attention_mask, return_special_tokens_mask,
              return_offsets_mapping, return_length)
    return Options(
        add_special_tokens=bool(add_special_tokens), budget=budget, stride=stride,
        truncate_left=_side(truncation_side, "truncation_side"), padding=pad, max_length=max_length,
        pad_to_multiple_of=pad_to_multiple_of, pad_left=_side(padding_side, "padding_side"), pad_id=pad_id,
        columns=tuple(name for name, want in zip(_COLUMNS, wanted) if want),
        overflowing=bool(return_overflowing_tokens), tensors=return_tensors)


def windows(n: int, size: int, stride: int, left: bool) -> list[tuple[int, int]]:
    """The ``(start, stop)`` token ranges truncation makes of ``n`` tokens, as Hugging Face's
    ``Encoding.truncate``: the first is the one kept, the others overflow.  Each holds at
    most ``size`` tokens and overlaps the one before by ``stride``; they go from the start
    of the text (``left``: from its end) until one reaches the other end."""
    if n <= size:
        return [(0, n)]
    step = size - stride  # (>= 1: resolve keeps stride < size)
    out = []
    if not left:
        for start in range(0, n, step):
            stop = min(start + size, n)
            out.append((start, stop))
            if stop == n:
                break
    else:
        for last in range(n - 1, -1, -step):
            start = max(last + 1 - size, 0)
            out.append((start, last + 1))
            if start == 0:
                break
    return out


def cut(parts: tuple, start: int, stop: int) -> tuple:
    """``parts`` (ids, starts, ends, word ids, token strings by index) of tokens
    ``start:stop``."""
    ids, starts, ends, words = parts[:4]
    shown = parts[4] if len(parts) > 4 else None
    if shown:
        shown = {k - start: v for k, v in shown.items() if start <= k < stop}
    return ids[start:stop], starts[start:stop], ends[start:stop], words[start:stop], shown


def assemble(encodings: list[Encoding], sample_map: list[int], options: Options, batched: bool) -> "BatchEncoding":
    """The rows of ``encodings`` (one per text, or more with overflowing windows:
    ``sample_map`` gives each row's text) padded, as columns in a :class:`BatchEncoding`."""
    if options.padding is not None and encodings:
        length = options.max_length if options.padding == "max_length" else max(len(e) for e in encodings)
        step = options.pad_to_multiple_of
        if step:
            length = -(-length // step) * step
        encodings = [e.padded(length, options.pad_id, options.pad_left) for e in encodings]
    read = {"input_ids": lambda e: e.ids, "token_type_ids": lambda e: e.type_ids,
            "attention_mask": lambda e: e.attention_mask, "special_tokens_mask": lambda e: e.special_tokens_mask,
            "offset_mapping": lambda e: e.offsets, "length": len}
    data = {name: [read[name](e) for e in encodings] for name in options.columns}
    if options.overflowing:
        data["overflow_to_sample_mapping"] = list(sample_map)
    if not batched and not options.overflowing and options.tensors is None:
        # one text: its row, not a batch of one (a column of numbers, such as length, stays as is)
        data = {k: v[0] if v and isinstance(v[0], list) else v for k, v in data.items()}
    elif options.tensors == "np":
        data = _as_arrays(data)
    return BatchEncoding(data, encodings)


def _as_arrays(data: dict) -> dict:
    try:
        import numpy
    except ImportError:
        raise ModelInputsError("return_tensors='np' needs numpy, an optional extra: pip install numpy") from None
    out = {}
    for name, rows in data.items():
        lengths = {len(r) for r in rows if isinstance(r, list)}
        if len(lengths) > 1:
            raise ModelInputsError(
                f"the rows of {name!r} have different lengths ({min(lengths)} to {max(lengths)} tokens), so "
                "they make no array: pass padding=True (or padding='max_length' with max_length=...)")
        out[name] = numpy.array(rows, dtype=numpy.int64)
    return out


class BatchEncoding(dict):
    """The columns of a call (``input_ids``, ``attention_mask`` and the others asked for;
    also readable as attributes: ``inputs.input_ids``), with transformers' helpers over the
    rows' :class:`~bpe.encoding.Encoding`: ``tokens(i)``, ``word_ids(i)``,
    ``sequence_ids(i)``, ``token_to_chars``, ``char_to_token``, ``token_to_word``,
    ``word_to_tokens``, ``word_to_chars``.  A call on one text gives its row's lists (not a
    batch of one), and the helpers then need no row index."""

    def __init__(self, data: dict, encodings: list[Encoding]):
        super().__init__(data)
        self._encodings = encodings

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"this BatchEncoding has no column {name!r}; it has {list(self)}") from None

    @property
    def encodings(self) -> list[Encoding]:
        """The :class:`~bpe.encoding.Encoding` of each row."""
        return list(self._encodings)

    def _row(self, index: int) -> Encoding:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"a row index must be an int, got {type(index).__name__}")
        n = len(self._encodings)
        if not -n <= index < n:
            raise IndexError(f"row index {index} is out of range for {n} row(s)")
        return self._encodings[index]

    def tokens(self, batch_index: int = 0) -> list[str]:
        return self._row(batch_index).tokens

    def word_ids(self, batch_index: int = 0) -> list[Optional[int]]:
        return self._row(batch_index).word_ids

    def sequence_ids(self, batch_index: int = 0) -> list[Optional[int]]:
        """0 for each token of the text, None for added tokens and padding."""
        return [None if w is None else 0 for w in self._row(batch_index).word_ids]

    def _lookup(self, method: str, first: int, second: Optional[int]):
        row, index = (0, first) if second is None else (first, second)
        return getattr(self._row(row), method)(index)

    def token_to_chars(self, batch_or_token_index: int, token_index: Optional[int] = None):
        return self._lookup("token_to_chars", batch_or_token_index, token_index)

    def token_to_word(self, batch_or_token_index: int, token_index: Optional[int] = None):
        return self._lookup("token_to_word", batch_or_token_index, token_index)

    def char_to_token(self, batch_or_char_index: int, char_index: Optional[int] = None):
        return self._lookup("char_to_token", batch_or_char_index, char_index)

    def char_to_word(self, batch_or_char_index: int, char_index: Optional[int] = None):
        return self._lookup("char_to_word", batch_or_char_index, char_index)

    def word_to_tokens(self, batch_or_word_index: int, word_index: Optional[int] = None):
        return self._lookup("word_to_tokens", batch_or_word_index, word_index)

    def word_to_chars(self, batch_or_word_index: int, word_index: Optional[int] = None):
        return self._lookup("word_to_chars", batch_or_word_index, word_index)

    def __repr__(self) -> str:
        return f"BatchEncoding({dict.__repr__(self)})"

