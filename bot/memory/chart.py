"""The archive's one picture: the channel's votes week by week, as an inline SVG.

Only numbers are computed here (bar positions and heights); the template writes the
SVG elements, so every label goes through the same escaping as the rest of the page.

A channel with a few weeks of votes gets a picture as wide as its bars, each bar with its
count above it and its week below, rather than one thin bar at the edge of a year-wide
axis; from FEW_WEEKS on, bars share the full width and the axis names the months.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

WIDTH, HEIGHT = 480, 180
MARGIN_LEFT, MARGIN_BOTTOM, MARGIN_TOP = 36, 26, 12
BAR_MAX = 36  # a few weeks of votes are narrow bars, not one wall of colour
WEEKS_SHOWN = 52
FEW_WEEKS = 8  # up to this many weeks: each labelled with its date and its count
FEW_STEP = 60  # px a week then: room for "28 Sep" under a bar
MARGIN_RIGHT = 8


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    up_y: float
    up_height: float
    down_y: float
    down_height: float
    label: str  # the week, for the bar's <title> (a tooltip, and what screen readers say)
    total: int = 0  # written above the bar when there are few


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    top: int  # the tallest week's votes: the y axis' one label
    ticks: list[tuple[float, str]]  # x, month label (a few weeks: each week's date)
    few: bool = False  # a few weeks: counts above the bars, the picture only as wide as they are
    top_y: float = MARGIN_TOP  # where the tallest bar ends: the y axis' top label
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
    few = len(weeks) <= FEW_WEEKS
    # A few weeks: room above the bars for their counts.
    plot_height = HEIGHT - MARGIN_BOTTOM - MARGIN_TOP - (18 if few else 0)
    step = FEW_STEP if few else min((WIDTH - MARGIN_LEFT) / len(weeks), BAR_MAX)
    bar = min(step * 0.8, BAR_MAX)
    base = HEIGHT - MARGIN_BOTTOM
    bars, ticks, month = [], [], None
    for n, (monday, up, down) in enumerate(weeks):
        x = MARGIN_LEFT + n * step
        up_h, down_h = plot_height * up / top, plot_height * down / top
        bars.append(Bar(round(x + (step - bar) / 2, 1), round(bar, 1), round(base - up_h, 1), round(up_h, 1),
                        round(base - up_h - down_h, 1), round(down_h, 1),
                        f"week of {monday:%d %b %Y}: {up} up, {down} down", up + down))
        if few:
            ticks.append((round(x + step / 2, 1), f"{monday:%d %b}"))
        elif monday.month != month:
            month = monday.month
            ticks.append((round(x, 1), f"{monday:%b}"))
    if few:
        width = round(MARGIN_LEFT + len(weeks) * step + MARGIN_RIGHT)
        return Chart(bars, top, ticks, few=True, top_y=base - plot_height, width=width)
    return Chart(bars, top, _spaced(ticks, step))


def _spaced(ticks: list[tuple[float, str]], step: float) -> list[tuple[float, str]]:
    """Month labels at least 28 px apart, so they never overlap."""
    kept: list[tuple[float, str]] = []
    for x, label in ticks:
        if not kept or x - kept[-1][0] >= 28:
            kept.append((x, label))
    return kept
