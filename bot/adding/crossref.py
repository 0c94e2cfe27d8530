"""Crossref's REST API (`/works/{doi}`): one work as a PaperRecord.

The abstract comes as JATS XML (`<jats:p>`, `<jats:title>Abstract</jats:title>`): it is
kept as plain text. A `has-preprint` relation naming an arXiv DOI (10.48550/arXiv.X) or
an arXiv id becomes the record's arXiv id too, so the preprint and the published paper
are one paper in the library.
"""

from __future__ import annotations

import html
import re
from typing import Any

from bot.corpus import identifiers
from bot.corpus.fetch import json_answer
from bot.corpus.records import PaperRecord, clean_space

_TAG = re.compile(r"<[^>]*>")
# Tags that end a block of text (a space between two) rather than mark words inside one.
_BLOCK = re.compile(r"</?(?:jats:)?(?:p|title|sec|list|list-item|break|disp-quote)\b[^>]*>", re.I)
_HEADING = re.compile(r"^\s*<jats:title>\s*abstract\s*</jats:title>", re.I)
_DATES = ("published-print", "published-online", "issued", "published", "created")


class NotAWork(ValueError):
    """The answer is not a Crossref work (a changed API, a proxy's error page)."""


def parse_work(body: str) -> PaperRecord:
    try:
        answer = json_answer(body)  # strict, and nesting past reason is refused, not a RecursionError
    except ValueError as problem:
        raise NotAWork(str(problem)) from None
    if not isinstance(answer, dict):
        raise NotAWork("no work in the answer")
    work = answer.get("message")
    if not isinstance(work, dict) or answer.get("message-type") != "work":
        raise NotAWork("no work in the answer")
    title = strip_jats(" ".join(_strings(work.get("title"))[:1]))  # titles carry markup and &amp; too
    subtitle = strip_jats(" ".join(_strings(work.get("subtitle"))[:1]))
    if title and subtitle and subtitle.lower() not in title.lower():  # "Optuna" + "A Next-generation ..."
        title = f"{title}: {subtitle}"
    if not title:
        raise NotAWork("a work without a title")
    doi = str(work.get("DOI") or "")
    return PaperRecord(
        title=title,
        authors=[a for a in (_author(p) for p in work.get("author") or [] if isinstance(p, dict)) if a],
        abstract=strip_jats(str(work.get("abstract") or "")),
        url=f"https://doi.org/{doi}" if doi else work.get("URL"),
        external_ids=identifiers.normalise_ids({identifiers.DOI: doi, **_preprint(work)} if doi else _preprint(work)),
        venue=strip_jats(" ".join(_strings(work.get("container-title"))[:1])) or None,
        year=_year(work),
    )


def strip_jats(text: str) -> str:
    """JATS markup as plain text: tags dropped (paragraphs kept apart), entities decoded,
    the "Abstract" heading some publishers put first left out."""
    text = _HEADING.sub("", text)
    text = _BLOCK.sub(" ", text)
    return clean_space(html.unescape(_TAG.sub("", text)))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _author(person: dict[str, Any]) -> str:
    name = " ".join(str(person.get(k) or "") for k in ("given", "family")).strip()
    return clean_space(name or str(person.get("name") or ""))


def _preprint(work: dict[str, Any]) -> dict[str, str]:
    """The arXiv id a `has-preprint` relation names, when it names one."""
    named = work.get("relation")
    relation = named if isinstance(named, dict) else {}
    for link in relation.get("has-preprint") or []:
        if not isinstance(link, dict):
            continue
        kind, value = str(link.get("id-type") or "").lower(), str(link.get("id") or "")
        found = identifiers.parse(value) if kind in ("doi", "arxiv", "uri") else None
        if found and found[0] == identifiers.ARXIV:
            return {identifiers.ARXIV: found[1]}
    return {}


def _year(work: dict[str, Any]) -> int | None:
    for key in _DATES:
        parts = (work.get(key) or {}).get("date-parts") if isinstance(work.get(key), dict) else None
        if parts and isinstance(parts[0], list) and parts[0] and isinstance(parts[0][0], int):
            return parts[0][0]
    return None
