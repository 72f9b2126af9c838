"""Command line of the fuzzer (see fuzz/__init__.py)."""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback

from . import targets


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0, help="the whole budget, shared by the targets")
    parser.add_argument("--targets", default=",".join(targets.TARGETS))
    parser.add_argument("--seed", type=int, default=None, help="the first input's seed (default: from the clock)")
    args = parser.parse_args(argv)
    names = args.targets.split(",")
    unknown = [n for n in names if n not in targets.TARGETS]
    if unknown:
        parser.error(f"unknown targets {unknown}; the targets are {', '.join(targets.TARGETS)}")
    first = args.seed if args.seed is not None else int(time.time() * 1000) % 2**32
    share = args.seconds / len(names)
    failed = 0
    print(f"fuzz: seeds from {first}, {share:.0f} s per target", flush=True)
    for name in names:
        run = targets.TARGETS[name]
        deadline = time.monotonic() + share
        seed, tried = first, 0
        while True:
            try:
                run(random.Random(seed))
            except Exception:  # noqa: BLE001 - every failure is reported with its seed
                print(f"FAIL {name} seed {seed} (replay: python -m fuzz --targets {name} --seed {seed} "
                      f"--seconds 0)", flush=True)
                traceback.print_exc()
                failed += 1
                break
            tried += 1
            seed = (seed + 1) % 2**32
            if time.monotonic() >= deadline:
                break
        print(f"{name}: {tried} inputs", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
