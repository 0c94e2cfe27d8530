"""The archive's one picture: the channel's votes week by week, as an inline SVG.

Only numbers are computed here (bar positions and heights); the template writes the
SVG elements, so every label goes through the same escaping as the rest of the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

WIDTH, HEIGHT = 480, 180
MARGIN_LEFT, MARGIN_BOTTOM, MARGIN_TOP = 36, 26, 12
BAR_MAX = 36  # a few weeks of votes are narrow bars, not one wall of colour
WEEKS_SHOWN = 52


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    up_y: float
    up_height: float
    down_y: float
    down_height: float
    label: str  # the week, for the bar's <title> (a tooltip, and what screen readers say)


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    top: int  # the tallest week's votes: the y axis' one label
    ticks: list[tuple[float, str]]  # x, month label
    width: int = WIDTH
    height: int = HEIGHT
    base: float = HEIGHT - MARGIN_BOTTOM
    left: int = MARGIN_LEFT


def votes_chart(weekly: list[tuple[date, int, int]]) -> Chart | None:
    """Stacked bars, up votes below and down votes above, for the last year of weeks."""
    weeks = weekly[-WEEKS_SHOWN:]
    if not weeks:
        return None
    top = max(up + down for _, up, down in weeks) or 1
    plot_height = HEIGHT - MARGIN_BOTTOM - MARGIN_TOP
    step = min((WIDTH - MARGIN_LEFT) / len(weeks), BAR_MAX)
    base = HEIGHT - MARGIN_BOTTOM
    bars, ticks, month = [], [], None
    for n, (monday, up, down) in enumerate(weeks):
        x = MARGIN_LEFT + n * step
        up_h, down_h = plot_height * up / top, plot_height * down / top
        bars.append(Bar(round(x + step * 0.1, 1), round(step * 0.8, 1), round(base - up_h, 1), round(up_h, 1),
                        round(base - up_h - down_h, 1), round(down_h, 1),
                        f"week of {monday:%d %b %Y}: {up} up, {down} down"))
        if monday.month != month:
            month = monday.month
            ticks.append((round(x, 1), f"{monday:%b}"))
    return Chart(bars, top, _spaced(ticks, step))


def _spaced(ticks: list[tuple[float, str]], step: float) -> list[tuple[float, str]]:
    """Month labels at least 28 px apart, so they never overlap."""
    kept: list[tuple[float, str]] = []
    for x, label in ticks:
        if not kept or x - kept[-1][0] >= 28:
            kept.append((x, label))
    return kept
