"""Readers and writers of tokenizer files.

Each module turns one format into plain pipeline data (and back) and never imports
``bpe.tokenizer``: ``native`` (our ``save``/``load`` file), ``tiktoken`` (``.tiktoken`` rank
files), ``bundle`` (the compact rank tables shipped in ``bpe/data``), ``huggingface``
(``tokenizer.json`` and ``tokenizer_config.json``).  ``bpe.Tokenizer`` builds itself from
what they return.
"""
