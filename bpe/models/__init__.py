"""Models: what turns one pre-token into ids (byte-level BPE here)."""
