"""Text that remembers which of its characters came from the caller's data.

A :class:`Tracked` string is a ``str`` with two sets of character spans: ``content``, the
characters taken from the messages (and tools, documents, other keyword data), which are
encoded as ordinary text and never as special tokens; and ``assistant``, the text a
``{% generation %}`` block or a built-in template marks as the assistant's (the assistant
mask).  The operations templates use carry the spans into their result exactly: ``+``,
``*``, indexing and slicing, iteration, ``strip``/``lstrip``/``rstrip``, ``split``/``rsplit``/
``splitlines``, ``partition``/``rpartition``, ``replace``, ``join``, ``removeprefix``/
``removesuffix`` and the case changes.  ``%`` and a case change that changes the length mark
the whole result as content when any of it was (the safe side: text wrongly taken for
content only loses its special-token meaning).  :func:`concat` joins pieces the same way;
``bpe.chat.jinja`` makes Jinja use it and marks what other filters and calls make of
tracked text.

It does not render or encode.
"""

from __future__ import annotations

from typing import Iterable

Spans = tuple  # ((start, end), ...): sorted, disjoint, non-empty


def _merge(spans: list) -> Spans:
    out: list = []
    for a, b in sorted(s for s in spans if s[1] > s[0]):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


def _clip(spans: Spans, lo: int, hi: int) -> list:
    """``spans`` cut to ``[lo, hi)`` and moved to start at 0."""
    return [(max(a, lo) - lo, min(b, hi) - lo) for a, b in spans if a < hi and b > lo]


def make(text: str, content=(), assistant=()) -> str:
    """``text`` with these spans: a :class:`Tracked` string, or a plain ``str`` without any."""
    content, assistant = _merge(list(content)), _merge(list(assistant))
    if not content and not assistant:
        return str.__str__(text)
    return Tracked(text, content, assistant)


def data(text: str) -> str:
    """``text`` as caller data: all of it content."""
    return make(text, [(0, len(text))])


def spans(text: str) -> tuple[Spans, Spans]:
    """``(content, assistant)`` spans of any string (none for a plain one)."""
    if isinstance(text, Tracked):
        return text.content, text.assistant
    return (), ()


def concat(pieces: Iterable) -> str:
    """The pieces joined (anything not a ``str`` as ``str(piece)``), spans kept in place."""
    parts = [p if isinstance(p, str) else str(p) for p in pieces]
    content: list = []
    assistant: list = []
    pos = 0
    for p in parts:
        if isinstance(p, Tracked):
            content += [(a + pos, b + pos) for a, b in p.content]
            assistant += [(a + pos, b + pos) for a, b in p.assistant]
        pos += len(p)
    return make("".join(parts), content, assistant)


def mark_assistant(text: str) -> str:
    """``text`` with all of it marked as the assistant's (its content spans kept)."""
    content, assistant = spans(text)
    return make(text, content, list(assistant) + [(0, len(text))])


def has_content(value) -> bool:
    """Whether ``value`` (a string, or lists, tuples and dicts of them) holds content."""
    if isinstance(value, Tracked):
        return bool(value.content)
    if isinstance(value, dict):
        return any(has_content(k) or has_content(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_content(v) for v in value)
    return False


def track(value):
    """Caller data with every string in it (dict keys too) made content, deeply."""
    if isinstance(value, str):
        return data(value)
    if isinstance(value, dict):
        return {track(k): track(v) for k, v in value.items()}
    if isinstance(value, list):
        return [track(v) for v in value]
    if isinstance(value, tuple):
        return tuple(track(v) for v in value)
    return value


class Tracked(str):
    """A ``str`` with ``content`` and ``assistant`` spans (see the module docstring); build
    one with :func:`make`, :func:`data` or :func:`concat`."""

    def __new__(cls, text: str, content: Spans = (), assistant: Spans = ()):
        obj = str.__new__(cls, text)
        obj.content = content
        obj.assistant = assistant
        return obj

    def __str__(self) -> str:
        return self  # str(x) keeps the spans (Jinja turns every output into str)

    def plain(self) -> str:
        return str.__str__(self)

    def _cut(self, lo: int, hi: int) -> str:
        return make(str.__getitem__(self, slice(lo, hi)), _clip(self.content, lo, hi),
                    _clip(self.assistant, lo, hi))

    def _whole(self, text: str, *others) -> str:
        """``text``, made from this string (and ``others``), all content if any of it was."""
        if self.content or any(has_content(o) for o in others):
            return data(text)
        return str.__str__(text)

    # ------------------------------------------------------------ operators

    def __add__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        return concat((self, other))

    def __radd__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        return concat((other, self))

    def __mul__(self, n):
        if not isinstance(n, int):
            return NotImplemented
        return concat([self] * n)

    __rmul__ = __mul__

    def __mod__(self, args):
        return self._whole(str.__mod__(self, args), args)

    def __rmod__(self, template):
        return self._whole(str.__mod__(template, self))

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step == 1:
                return self._cut(start, max(start, stop))
            return self._whole(str.__getitem__(self, key))
        n = len(self)
        i = key + n if isinstance(key, int) and key < 0 else key
        str.__getitem__(self, key)  # (raises as str does)
        return self._cut(i, i + 1)

    def __iter__(self):
        return (self._cut(i, i + 1) for i in range(len(self)))

    # ------------------------------------------------------------ methods that keep spans

    def lstrip(self, chars=None):
        return self._cut(len(self) - len(str.lstrip(self, chars)), len(self))

    def rstrip(self, chars=None):
        return self._cut(0, len(str.rstrip(self, chars)))

    def strip(self, chars=None):
        lo = len(self) - len(str.lstrip(self, chars))
        hi = len(str.rstrip(self, chars))
        return self._cut(lo, hi) if hi > lo else self._cut(0, 0)

    def split(self, sep=None, maxsplit=-1):
        out, pos = [], 0
        for part in str.split(self, sep, maxsplit):
            start = str.find(self, part, pos) if sep is None else pos
            out.append(self._cut(start, start + len(part)))
            pos = start + len(part) + (len(sep) if sep is not None else 0)
        return out

    def rsplit(self, sep=None, maxsplit=-1):
        out, end = [], len(self)
        for part in reversed(str.rsplit(self, sep, maxsplit)):
            start = str.rfind(self, part, 0, end) if sep is None else end - len(part)
            out.append(self._cut(start, start + len(part)))
            end = start - (len(sep) if sep is not None else 0)
        return out[::-1]

    def splitlines(self, keepends=False):
        out, pos = [], 0
        for line in str.splitlines(self, True):
            kept = len(line) if keepends else len(str.splitlines(line)[0]) if str.splitlines(line) else 0
            out.append(self._cut(pos, pos + kept))
            pos += len(line)
        return out

    def partition(self, sep):
        i = str.find(self, sep)
        if i < 0:
            return self._cut(0, len(self)), "", ""
        return self._cut(0, i), self._cut(i, i + len(sep)), self._cut(i + len(sep), len(self))

    def rpartition(self, sep):
        i = str.rfind(self, sep)
        if i < 0:
            return "", "", self._cut(0, len(self))
        return self._cut(0, i), self._cut(i, i + len(sep)), self._cut(i + len(sep), len(self))

    def replace(self, old, new, count=-1):
        if not isinstance(old, str) or not isinstance(new, str):
            return str.replace(self, old, new, count)  # (raises as str does)
        if not old:
            return self._whole(str.replace(self, old, new, count), new)
        pieces, pos = [], 0
        while count != 0:
            i = str.find(self, old, pos)
            if i < 0:
                break
            pieces += [self._cut(pos, i), new]
            pos = i + len(old)
            count -= 1
        pieces.append(self._cut(pos, len(self)))
        return concat(pieces)

    def join(self, iterable):
        items = list(iterable)
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise TypeError(f"sequence item {i}: expected str instance, {type(item).__name__} found")
        pieces = []
        for i, item in enumerate(items):
            if i:
                pieces.append(self)
            pieces.append(item)
        return concat(pieces)

    def removeprefix(self, prefix):
        return self._cut(len(prefix), len(self)) if str.startswith(self, prefix) and prefix else self

    def removesuffix(self, suffix):
        return self._cut(0, len(self) - len(suffix)) if suffix and str.endswith(self, suffix) else self

    def _case(self, text: str) -> str:
        if len(text) == len(self):
            return make(text, self.content, self.assistant)
        return self._whole(text)


def _case_change(method):
    def change(self):
        return self._case(method(self))
    change.__name__ = method.__name__
    return change


# a case change keeps the spans where it keeps the length (one character for one)
for _method in (str.upper, str.lower, str.title, str.capitalize, str.casefold, str.swapcase):
    setattr(Tracked, _method.__name__, _case_change(_method))
