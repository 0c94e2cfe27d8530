"""Logging for the serving process: one line per event, never a secret or a body.

`event(log, "command", channel=..., command=..., ms=...)` writes `command channel=...
command=... ms=...` as text, or the same fields as keys of one JSON object
(PAPERCLUB_LOG_FORMAT=json, for log platforms that index fields). What gets logged is
chosen at the call: names, ids, outcomes and timings, never what a member typed.
The `Redact` filter is a second line of defence: any secret value from the environment
that still reaches a handler (from a library's message, say) is replaced by ***.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Mapping

from pythonjsonlogger.json import JsonFormatter

from bot.ops.defaults import DATABASE_VARIABLES

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Libraries that say too much at INFO (per-request lines, connection chatter).
QUIET = {
    "apscheduler": logging.WARNING,
    "discord.gateway": logging.WARNING,
    "waitress.queue": logging.WARNING,
    "alembic.runtime.migration": logging.WARNING,  # two lines per /healthz schema check
}


def event(log: logging.Logger, name: str, level: int = logging.INFO, **fields: object) -> None:
    if not log.isEnabledFor(level):
        return
    text = " ".join(f"{key}={_value(value)}" for key, value in fields.items())
    log.log(level, "%s %s", name, text, extra={"event": name, **fields})


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return f'"{text}"' if (" " in text or not text) else text


class DropExpected(logging.Filter):
    """Drops a library's warnings that our own set-up causes on purpose (so they say
    nothing to an operator), matched by the start of the message."""

    def __init__(self, *beginnings: str):
        super().__init__()
        self.beginnings = beginnings

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.beginnings)


def drop_expected(logger: logging.Logger, *beginnings: str) -> None:
    logger.addFilter(DropExpected(*beginnings))


class Redact(logging.Filter):
    """Replaces secret values anywhere in a record's final message with ***."""

    def __init__(self, secrets: Iterable[str]):
        super().__init__()
        # Short values would blank out ordinary words: real secrets are long.
        self.secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        cleaned = self._clean(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            # The formatter keeps exc_text as it is: an exception's message (a library's
            # error quoting its request) is cleaned here too.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._clean(record.exc_text)
        return True

    def _clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def secrets_in(env: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """The values of the secret variables `names` set in `env`, and the passwords inside a
    database URL (after the user name, or as ?password= in its query string). The names
    come from the caller (adapters.platforms.secret_variables): the settings that declare
    a secret are what know it is one, and some of them live above this layer."""
    from store.database import url_secrets

    values = [env[name].strip() for name in sorted(set(names)) if env.get(name, "").strip()]
    for name in DATABASE_VARIABLES:
        if env.get(name):
            values += url_secrets(env[name])
    return values


def configure(level: str = "INFO", fmt: str = "text", env: Mapping[str, str] | None = None, *,
              secrets: Iterable[str]) -> logging.Handler:
    """Root logging for `paperclub serve`: one handler on stderr, the values of the
    variables named in `secrets` (and database passwords) redacted."""
    env = os.environ if env is None else env
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter(TEXT_FORMAT.replace(": ", " "), rename_fields={"levelname": "level"}))
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    handler.addFilter(Redact(secrets_in(env, secrets)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name, quiet in QUIET.items():
        logging.getLogger(name).setLevel(max(quiet, root.level))
    return handler
