"""Old import path of ``bpe.io.bundle``, kept working: ``import bpe.bundle`` gives that very
module (the same object, private names included).  New code imports ``bpe.io.bundle``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("bpe.io.bundle")
