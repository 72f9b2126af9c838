"""Old import path of ``bpe.pre_tokenizers.patterns``, kept working: ``import bpe.patterns`` gives that very
module (the same object, private names included).  New code imports ``bpe.pre_tokenizers.patterns``."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("bpe.pre_tokenizers.patterns")
