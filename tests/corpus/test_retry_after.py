"""Retry-After read as seconds (bot.corpus.fetch.retry_after_seconds): a number of any
length or a far date is at most a day, never inf (issue 45: messages said "inf s")."""

from __future__ import annotations

import math

import pytest

from bot.corpus.fetch import retry_after_seconds

DAY = 86_400.0


@pytest.mark.parametrize("given, seconds", [
    ("120", 120.0),
    ("0", 0.0),
    ("86401", DAY),
    ("9" * 400, DAY),  # float() of it is inf
    ("Fri, 31 Dec 9999 23:59:59 GMT", DAY),
    ("Thu, 26 Nov 2026 09:02:00 GMT", 120.0),  # against the answer's Date
    ("Thu, 26 Nov 2026 08:00:00 GMT", 0.0),  # in the past: no wait
])
def test_retry_after_is_finite_and_at_most_a_day(given, seconds):
    wait = retry_after_seconds({"Retry-After": given, "Date": "Thu, 26 Nov 2026 09:00:00 GMT"})
    assert wait == seconds and math.isfinite(wait)


@pytest.mark.parametrize("given", ["", "soon", "²", "-5", "1e400"])
def test_retry_after_that_is_not_a_wait_is_none(given):
    assert retry_after_seconds({"Retry-After": given}) is None
