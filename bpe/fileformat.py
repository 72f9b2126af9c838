"""Old import path of ``bpe.io.native``, kept working: ``import bpe.fileformat`` gives that very
module (the same object, private names included).  New code imports ``bpe.io.native``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("bpe.io.native")
