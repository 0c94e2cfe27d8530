"""The Zotero feature's settings: the Web API's address, the operator's key, and the secret
that encrypts the keys managers give in chat."""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr, field_validator

from bot.corpus.fetch import feed_count
from bot.ops.settings import EnvSettings, base_url, setting

ZOTERO = "Zotero group libraries (zotero link, import zotero:...)"  # its group in `config check`
IMPORT_MAX = 10_000  # items one `import zotero:` (or one run of its feed) reads at most
SECRET_KEY_CHARS = 32  # at least: the secret key is stretched into the encryption key, not guessed


class ZoteroSettings(EnvSettings):
    """The Zotero Web API (bot/zotero): where it is, the operator's key, and the secret that
    encrypts the keys managers give in chat."""

    zotero_api_url: str = setting("https://api.zotero.org", "PAPERCLUB_ZOTERO_API_URL", ZOTERO)
    zotero_api_key: SecretStr | None = setting(
        None, "PAPERCLUB_ZOTERO_API_KEY", ZOTERO,
        unset="none: each channel's manager gives one privately (`zotero key`)")
    secret_key: SecretStr | None = setting(
        None, "PAPERCLUB_SECRET_KEY", ZOTERO,
        unset="none: keys given in chat are refused (nothing to encrypt them with)")
    import_max: int = setting(IMPORT_MAX, "PAPERCLUB_ZOTERO_IMPORT_MAX", ZOTERO,
                              unset=f"{IMPORT_MAX:,} items per `import zotero:` or feed run")

    @field_validator("zotero_api_url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        return base_url(value)

    @field_validator("import_max", mode="before")
    @classmethod
    def _import_max(cls, value: Any) -> Any:
        return feed_count("PAPERCLUB_ZOTERO_IMPORT_MAX", value) if isinstance(value, str) else value

    @field_validator("secret_key", mode="before")
    @classmethod
    def _secret(cls, value: Any) -> Any:
        if isinstance(value, str) and len(value.strip()) < SECRET_KEY_CHARS:
            raise ValueError(f"PAPERCLUB_SECRET_KEY is {len(value.strip())} characters long: give a random string "
                             f"of at least {SECRET_KEY_CHARS} (e.g. the output of `openssl rand -base64 32`)")
        return value

    @property
    def api_key(self) -> str | None:
        return self.zotero_api_key.get_secret_value() if self.zotero_api_key else None

    @property
    def secret(self) -> str | None:
        return self.secret_key.get_secret_value().strip() if self.secret_key else None
