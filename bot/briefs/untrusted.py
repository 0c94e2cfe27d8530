"""A model's answer made safe to show: it is untrusted text, like a paper's abstract.

Each part is length-capped; control characters go; mentions (`<!channel>`, `<!here>`,
`<@U123>`, `<#C1>`, `@everyone`, `@here`, a Discord `@1234...` id) are broken with a
zero-width space, so no platform reads them as mentions; links lose their scheme's colon
(`https[:]//...`), so nothing turns them into links to follow. What is left is shown as
paper text is: adapters escape it for Slack's mrkdwn, and the answer is never handed to
the command parser.
"""

from __future__ import annotations

import re
import unicodedata

from bot.briefs.prompt import BriefText

ZWSP = "\u200b"
TLDR_CHARS = 700
CONTRIBUTION_CHARS = 400
QUESTION_CHARS = 300

_MENTION = re.compile(r"([<＜])([@!#])|@(?=[\w.-])")
_SCHEME = re.compile(r"\b([a-z][a-z0-9+.-]{1,15}:(?=//)|(?:mailto|javascript|data|tel|slack|discord):)",
                     re.IGNORECASE)


def safe(text: str, limit: int) -> str:
    """One part of a brief as plain, inert text of at most `limit` characters."""
    kept = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)
    kept = " ".join(kept.split())
    kept = _MENTION.sub(lambda m: f"{m.group(1)}{ZWSP}{m.group(2)}" if m.group(1) else f"@{ZWSP}", kept)
    kept = _SCHEME.sub(lambda m: m.group(1)[:-1] + "[:]", kept)
    return kept if len(kept) <= limit else kept[: limit - 1].rstrip() + "…"


def made_safe(brief: BriefText) -> BriefText:
    q1, q2, q3 = (safe(q, QUESTION_CHARS) for q in brief.questions)
    return BriefText(safe(brief.tldr, TLDR_CHARS), safe(brief.contribution, CONTRIBUTION_CHARS), (q1, q2, q3))
