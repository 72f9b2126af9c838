"""The compiled core's source reads top to bottom (../shared/DESIGN.md's rule for bpe/_core.pyx).

_core.pyx includes its parts at the top, and no part (nor the code of _core.pyx between and
after them) uses a C-level name (cdef function, struct, class, enum or module variable)
that is defined only further down.  The raw C helpers are declared once, in _core.pyx.
"""

from __future__ import annotations

import os
import re

# the sources in the repository (the installed package holds only the built modules)
SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bpe")
DEFINITION = [
    re.compile(r"^(?:cdef|cpdef)\s+(?:inline\s+)?(?:(?:const\s+)?[\w*]+\s+)+?\**(\w+)\s*\(", re.M),
    re.compile(r"^ctypedef struct (\w+)", re.M),
    re.compile(r"^cdef (?:class|struct|enum) (\w+)", re.M),
    re.compile(r"^cdef [\w*]+\s+(\w+)\s*[=\[]", re.M),
]


def _code(text: str) -> str:
    """``text`` without comments and docstrings (names in prose are no uses)."""
    text = re.sub(r'"""[\s\S]*?"""', "", text)
    return "\n".join(line.split("#")[0] for line in text.split("\n"))


def _regions() -> list[tuple[str, str]]:
    """(name, source) of the core in reading order: _core.pyx cut at its includes."""
    with open(os.path.join(SRC, "_core.pyx"), encoding="utf-8") as f:
        core = f.read()
    out, start = [], 0
    for m in re.finditer(r'^include "(.+)"', core, re.M):
        out.append((f"_core.pyx before {m.group(1)}", core[start:m.start()]))
        with open(os.path.join(SRC, m.group(1)), encoding="utf-8") as f:
            out.append((m.group(1), f.read()))
        start = m.end()
    out.append(("_core.pyx after the includes", core[start:]))
    return out


def test_includes_stand_together_at_the_top():
    with open(os.path.join(SRC, "_core.pyx"), encoding="utf-8") as f:
        core = f.read()
    places = [m.start() for m in re.finditer(r'^include "', core, re.M)]
    assert len(places) >= 7
    between = core[places[0]:places[-1]]
    assert not re.search(r"^(?:cdef|def|ctypedef)\b", between, re.M), "code between the includes"
    assert places[0] < core.index("cdef class Encoder")
    assert core.count('cdef extern from "_c_helpers.h"') == 1
    for name in os.listdir(SRC):
        if name.endswith(".pxi"):
            with open(os.path.join(SRC, name), encoding="utf-8") as f:
                assert '"_c_helpers.h"' not in f.read(), f"{name} declares raw C helpers itself"


def test_each_part_uses_only_what_stands_above_it():
    regions = _regions()
    defined = {}
    for index, (_, text) in enumerate(regions):
        for pattern in DEFINITION:
            for m in pattern.finditer(text):
                defined.setdefault(m.group(1), index)
    later = []
    for index, (name, text) in enumerate(regions):
        code = _code(text)
        for word, where in defined.items():
            if where > index and re.search(rf"\b{word}\b", code):
                later.append(f"{name} uses {word}, defined in {regions[where][0]}")
    assert len(defined) > 100  # (the patterns find the definitions)
    assert not later, later
