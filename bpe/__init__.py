"""bpe: byte-level BPE tokenizers with a typed Cython core.

Train tokenizers, encode with ids identical to tiktoken (bundled ``r50k_base``/``gpt2``,
``p50k_base``, ``cl100k_base``, ``o200k_base``, no download ever), decode, save and load::

    import bpe
    enc = bpe.get_encoding("o200k_base")
    ids = enc.encode("hello world")
    tok = bpe.Tokenizer.train(texts, vocab_size=4096)

``bpe.backend`` says whether the compiled core ("cython") or the pure-Python reference
("python", also forced by ``BPE_PURE_PYTHON=1``) is in use.
"""

from . import _backend
from .errors import (
    ArgumentError,
    BPEError,
    ChatTemplateError,
    DisallowedSpecialTokenError,
    InputTooLongError,
    ModelInputsError,
    PatternError,
    TokenizerFileError,
    TrainingError,
    TrainingInputNotUTF8Error,
    UnknownEncodingError,
    VocabularyError,
)
from .pre_tokenizers.patterns import NAMED_PATTERNS
from . import tiktoken_files  # the old path of bpe.io.tiktoken
from .registry import Encoding, encoding_for_model, encoding_name_for_model, get_encoding, list_encoding_names, list_encodings, register_encoding, sample_path
from .tokenizer import Tokenizer
from .evaluation import compression
from .training import count_pretokens

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "BPEError",
    "ChatTemplateError",
    "DisallowedSpecialTokenError",
    "InputTooLongError",
    "ModelInputsError",
    "Encoding",
    "NAMED_PATTERNS",
    "PatternError",
    "TokenizerFileError",
    "Tokenizer",
    "TrainingError",
    "TrainingInputNotUTF8Error",
    "UnknownEncodingError",
    "VocabularyError",
    "backend",
    "compression",
    "count_pretokens",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "list_encodings",
    "register_encoding",
    "sample_path",
    "tiktoken_files",
]


def __getattr__(name: str):
    if name == "backend":
        return _backend.active().name
    raise AttributeError(f"module 'bpe' has no attribute {name!r}")
