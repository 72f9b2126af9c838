"""Regenerate bpe/data/*.bpeb from the .tiktoken rank files (default: ../shared/data/tiktoken).

Usage: python scripts/make_bundles.py [TIKTOKEN_DIR]
The output is committed (it is data, about 1.6 MB in all), so building the package needs no
network and no rank files.
"""

import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from bpe.bundle import pack  # noqa: E402
from bpe.tiktoken_files import load_tiktoken_ranks  # noqa: E402


def main() -> None:
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "data", "tiktoken")
    out_dir = os.path.join(HERE, "..", "bpe", "data")
    loaded = {name: load_tiktoken_ranks(os.path.join(src, f"{name}.tiktoken"))
              for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")}
    for name, ranks in loaded.items():
        base = "r50k_base" if name == "p50k_base" else None
        blob = pack(name, ranks, loaded[base] if base else None, base)
        with open(os.path.join(out_dir, f"{name}.bpeb"), "wb") as f:
            f.write(blob)
        print(f"{name}: {len(ranks)} tokens, {len(blob):,} bytes, sha256 {hashlib.sha256(blob).hexdigest()} "
              "(bpe/registry.py BUNDLE_SHA256)")


if __name__ == "__main__":
    main()
