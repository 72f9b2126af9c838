"""Pre-tokenizers: how text is cut into pieces before BPE.

``patterns`` holds the named split regexes (run by the compiled scanners) and the
``pattern=`` argument's resolution.
"""
