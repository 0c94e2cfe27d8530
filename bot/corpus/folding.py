"""How text is compared whatever its case and accents: the one `fold` that a paper's
title key (bot.corpus.records), the tokenizer and the filter values all use.

A module of its own, free of the database models, because the tokenising worker
processes import it and should start without SQLAlchemy.
"""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Unicode-normalise, drop accents, lowercase: "Lähner" -> "lahner"."""
    if text.isascii():  # most abstracts: normalisation would change nothing, and costs most
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFKC", stripped).casefold()
