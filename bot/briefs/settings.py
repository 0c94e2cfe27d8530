"""The briefs' settings: which OpenAI-compatible endpoint and model write them, the key (a
secret), how long a member waits, and how many calls a channel may cost a day."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr, field_validator, model_validator

from bot.ops.settings import ConfigError, EnvSettings, base_url, setting

BRIEFS = "Briefs (a language model: brief N)"  # its group in `config check`
DAILY_CALLS = 50  # provider calls a channel may cause a day; cached briefs cost none
DAILY_CALLS_MAX = 100_000
TIMEOUT = 25.0  # seconds a member's line waits for its brief at most, retries included
CALL_TIMEOUT = 20.0  # seconds one request to the provider may take
TIMEOUT_MAX = 600.0  # Discord's interaction token lasts 15 minutes; Slack's response_url 30


class BriefSettings(EnvSettings):
    """An OpenAI-compatible chat completions endpoint (OpenAI, Azure OpenAI, vLLM,
    llama.cpp's server, Ollama's /v1). Unset base URL: briefs are off and `brief` is not
    a command."""

    llm_base_url: str | None = setting(None, "PAPERCLUB_LLM_BASE_URL", BRIEFS,
                                       unset="none: briefs are off (`brief` is not a command)")
    llm_model: str | None = setting(None, "PAPERCLUB_LLM_MODEL", BRIEFS,
                                    unset="none (needed with PAPERCLUB_LLM_BASE_URL)")
    llm_api_key: SecretStr | None = setting(None, "PAPERCLUB_LLM_API_KEY", BRIEFS,
                                            unset="none (Ollama, vLLM and llama.cpp need none)")
    llm_daily_calls: int = setting(DAILY_CALLS, "PAPERCLUB_LLM_DAILY_CALLS", BRIEFS,
                                   unset=f"{DAILY_CALLS} model calls per channel a day")
    llm_timeout: float = setting(TIMEOUT, "PAPERCLUB_LLM_TIMEOUT", BRIEFS,
                                 unset=f"{TIMEOUT:g} seconds a member waits for a brief at most")
    llm_call_timeout: float = setting(CALL_TIMEOUT, "PAPERCLUB_LLM_CALL_TIMEOUT", BRIEFS,
                                      unset=f"{CALL_TIMEOUT:g} seconds one request may take")

    @field_validator("llm_base_url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        return base_url(value)

    @field_validator("llm_model", mode="before")
    @classmethod
    def _model(cls, value: Any) -> Any:
        if isinstance(value, str) and (len(value.strip()) > 200 or any(c.isspace() for c in value.strip())):
            raise ValueError(f"{value[:40]!r} is not a model name (one word, up to 200 characters)")
        return value.strip() if isinstance(value, str) else value

    @field_validator("llm_daily_calls", mode="before")
    @classmethod
    def _daily(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip().isdigit():
                raise ValueError(f"{value!r} is not a whole number of calls")
            value = int(value)
        if isinstance(value, int) and not 0 <= value <= DAILY_CALLS_MAX:
            raise ValueError(f"{value} is out of range: use 0 to {DAILY_CALLS_MAX}")
        return value

    @field_validator("llm_timeout", "llm_call_timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                value = math.nan
        if isinstance(value, (int, float)) and not (math.isfinite(value) and 0 < value <= TIMEOUT_MAX):
            raise ValueError(f"{value!r} is not a number of seconds above 0, up to {TIMEOUT_MAX:g}")
        return value

    @model_validator(mode="after")
    def _both(self) -> BriefSettings:
        if self.llm_base_url and not self.llm_model:
            raise ValueError("PAPERCLUB_LLM_MODEL is not set: name the model PAPERCLUB_LLM_BASE_URL serves "
                             "(e.g. gpt-4o-mini, llama3.1:8b)")
        if self.llm_model and not self.llm_base_url:
            raise ValueError("PAPERCLUB_LLM_BASE_URL is not set: give the endpoint that serves "
                             f"{self.llm_model} (e.g. http://localhost:11434/v1 for Ollama)")
        return self

    @property
    def enabled(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    @property
    def api_key(self) -> str:
        # The client wants a key; local servers ignore it, so a placeholder says "none".
        return self.llm_api_key.get_secret_value() if self.llm_api_key else "none"

    @classmethod
    def connection(cls, env: Mapping[str, str]) -> str | None:
        """Whether the endpoint answers and serves the model (GET /models), for `config check`."""
        try:
            settings = cls.from_env(env)
        except ConfigError:
            return "(see problems)"
        if not settings.enabled:
            return "off: `brief` is not a command"
        from bot.briefs.provider import Model  # the openai client, only when there is one to check

        return Model(settings).check()
