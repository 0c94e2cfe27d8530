"""API keys given in chat, kept encrypted (Fernet: AES with an HMAC) with a key made from
PAPERCLUB_SECRET_KEY, so the database alone gives no one write access to a group library."""

from __future__ import annotations

import base64
import hashlib


class KeyBox:
    """Encrypts and decrypts API keys with the operator's secret; `None` secret: no box."""

    def __init__(self, secret: str):
        # The secret is a long random string, not a Fernet key: SHA-256 turns any such
        # string into the 32 bytes Fernet wants (its entropy is the secret's own).
        from cryptography.fernet import Fernet  # here: only a channel with a Zotero key needs it

        digest = hashlib.sha256(b"paperclub zotero api keys\0" + secret.encode("utf-8")).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(digest))

    def seal(self, api_key: str) -> str:
        return self._fernet.encrypt(api_key.encode("utf-8")).decode("ascii")

    def open(self, sealed: str) -> str | None:
        """The key, or None when it was sealed under another secret (the secret changed)."""
        from cryptography.fernet import InvalidToken

        try:
            return self._fernet.decrypt(sealed.encode("ascii")).decode("utf-8")
        except (InvalidToken, ValueError):
            return None
