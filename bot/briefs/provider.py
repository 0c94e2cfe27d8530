"""The language model behind briefs, reached with the official `openai` client.

The client's own retries and its ten-minute default timeout are far too long for a chat
command, so it is built with `max_retries=0` and every request carries its own timeout:
what is left of the line's deadline, at most the per-call timeout. 429 and 5xx (and a
connection that failed) are retried here with backoff while the deadline allows; a
`Retry-After` longer than what is left ends the line at once ("no brief now"), as does any
other refusal. A completion cut short (`finish_reason` length or content_filter), a
refusal, or a body that is not a chat completion is a failure too: only a whole answer
that finished by itself is returned.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import openai
from openai import OpenAI

from bot.briefs.settings import BriefSettings
from bot.corpus.fetch import retry_after_seconds

ATTEMPTS = 3  # requests a line makes at most (the first and two retries)
BACKOFF = 1.0  # seconds before the first retry, doubled for each further one
MAX_TOKENS = 700  # the answer's length: a brief is a few hundred words at most


@dataclass(frozen=True)
class Completion:
    text: str


@dataclass(frozen=True)
class Failure:
    """Why there is no answer, in words a member reads ("the model did not answer in time")."""

    why: str
    wait: float = 0.0  # seconds the provider asked to wait (its Retry-After), when it said


class Model:
    """One OpenAI-compatible endpoint and model; `sleep` and `monotonic` are injectable so
    tests of the backoff do not wait."""

    def __init__(self, settings: BriefSettings, sleep: Callable[[float], None] = time.sleep,
                 monotonic: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.name = settings.llm_model or ""
        self.client = OpenAI(base_url=settings.llm_base_url, api_key=settings.api_key, max_retries=0,
                             timeout=settings.llm_call_timeout)
        self.sleep = sleep
        self.monotonic = monotonic

    def complete(self, messages: list[dict[str, str]], deadline: float) -> Completion | Failure:
        """The model's answer to `messages`, or why there is none, by `deadline` (monotonic)."""
        for attempt in range(ATTEMPTS):
            left = deadline - self.monotonic()
            if left <= 0:
                return Failure("the model did not answer in time")
            outcome = self._once(messages, min(left, self.settings.llm_call_timeout))
            if not isinstance(outcome, float):
                return outcome
            wait = outcome if outcome > 0 else BACKOFF * 2**attempt
            if attempt == ATTEMPTS - 1 or wait >= deadline - self.monotonic():
                return Failure(_busy(outcome), wait=outcome)
            self.sleep(wait)
        return Failure("the model is busy")  # not reached: the last attempt returns above

    def _once(self, messages: list[dict[str, str]], timeout: float) -> Completion | Failure | float:
        """One request: its answer, a failure, or a float: retry after that many seconds
        (the provider's Retry-After; 0: ours)."""
        try:
            answer = self.client.with_options(timeout=timeout).chat.completions.create(
                model=self.name, messages=messages, max_tokens=MAX_TOKENS, temperature=0.2)  # type: ignore[arg-type]
        except openai.APITimeoutError:
            return Failure("the model did not answer in time")
        except openai.APIStatusError as error:
            if error.status_code == 429 or error.status_code >= 500:
                return retry_after_seconds(error.response.headers) or 0.0
            return Failure(f"the provider refused the request ({error.status_code})")
        except openai.APIConnectionError:
            return 0.0
        except (openai.OpenAIError, ValueError):  # a body that is not JSON, or not a completion
            return Failure("the provider's answer was not a chat completion")
        return _checked(answer)

    def check(self) -> str:
        """Whether the endpoint answers and lists the model (`config check`), in a few words."""
        try:
            listed = [model.id for model in self.client.with_options(timeout=5).models.list()]
        except openai.APIStatusError as error:
            return f"the endpoint answered {error.status_code} to {self.settings.llm_base_url}/models"
        except (openai.OpenAIError, ValueError) as error:
            return f"unreachable: {self.settings.llm_base_url}/models did not answer ({type(error).__name__})"
        if self.name not in listed:
            shown = ", ".join(listed[:5]) + (" ..." if len(listed) > 5 else "")
            return f"answers, but does not list {self.name} (it lists: {shown or 'nothing'})"
        return f"answers, and serves {self.name}"


def _checked(answer: object) -> Completion | Failure:
    choices = getattr(answer, "choices", None)
    if not isinstance(choices, list) or not choices:
        return Failure("the provider's answer was not a chat completion")
    choice = choices[0]
    reason = getattr(choice, "finish_reason", None)
    if reason == "length":
        return Failure("the model's answer was cut short")
    if reason == "content_filter":
        return Failure("the provider's content filter stopped the answer")
    message = getattr(choice, "message", None)
    if getattr(message, "refusal", None):
        return Failure("the model refused")
    content = getattr(message, "content", None)
    if not isinstance(content, str) or not content.strip():
        return Failure("the model's answer was empty")
    return Completion(content)


def _busy(wait: float) -> str:
    if wait >= 60:
        return f"the provider asked to wait {round(min(wait, 86_400) / 60)} minutes"
    return "the provider is busy or failing; try again later"
