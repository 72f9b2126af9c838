"""Old import path of ``bpe.io.tiktoken``, kept working: ``import bpe.tiktoken_files`` gives that very
module (the same object, private names included).  New code imports ``bpe.io.tiktoken``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("bpe.io.tiktoken")
