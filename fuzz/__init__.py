"""Fuzzing of bpe: seeded random inputs against oracles until a time budget runs out.

``python -m fuzz --seconds 60`` runs every target in turn (``--targets encode,decode`` picks
some; ``--seed`` fixes the inputs).  Targets are in :mod:`fuzz.targets`; each draws one input
from a ``random.Random`` and checks it, raising on any difference.  The seed of the failing
input is printed, so ``--seed S --targets T --seconds 0`` replays it (one input per target).
Under the sanitizer build (``BPE_SANITIZE=1``, see .ci/run) any out-of-bounds access or
undefined behaviour in the compiled core stops the run with a report.
"""
