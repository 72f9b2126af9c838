"""``python -m bpe``: the command-line interface (see ``bpe.cli``)."""

from .cli import main

raise SystemExit(main())
