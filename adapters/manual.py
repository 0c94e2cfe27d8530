"""The manual's generated part: the table of every setting, from the settings models.

mkdocs.yml runs this as a hook: where docs/configuration.md says `<!-- every setting -->`,
the page gets one row per variable of the global settings, every feature's model
(bot.app.settings_models) and every chat platform's (adapters/platforms.py), with its
group and what leaving it unset means. A feature's new setting is in the manual without
an edit to it; tests/test_docs.py checks the page as rendered.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- every setting -->"


def setting_rows() -> list[tuple[str, str, str]]:
    """(variable, group, what unset means) for every variable paperclub reads from its models."""
    from adapters import platforms
    from bot.app import settings_models
    from bot.ops.settings import declared

    rows = [(variable, group, unset or "") for model in settings_models()
            for group, variable, unset in declared(model)]
    for platform in platforms.chat_platforms():
        model = platform.settings()
        unset_texts = getattr(model, "UNSET", {})
        rows += [(variable, platform.title, unset_texts.get(variable, "")) for variable in model.variables()]
    return rows


def settings_table() -> str:
    lines = ["| variable | group | when it is not set |", "| --- | --- | --- |"]
    lines += [f"| `{variable}` | {group} | {_cell(unset) or '-'} |" for variable, group, unset in setting_rows()]
    return "\n".join(lines)


def rendered(markdown: str) -> str:
    """The page with the marker replaced by the table."""
    return markdown.replace(MARKER, settings_table())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def on_page_markdown(markdown: str, **_kwargs: Any) -> str:
    """MkDocs' hook: every page goes through here; only the one with the marker changes."""
    return rendered(markdown) if MARKER in markdown else markdown
