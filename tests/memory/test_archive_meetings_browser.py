"""The archive page's meetings, polls and votes picture, read through chromedriver from
Debian's headless Chromium: meetings to come (with their length, place, call link and
paper) apart from those held, paper titles that are links, polls named by what they
offered, and a picture of a single week of votes that is one labelled bar, not an empty
year-wide axis. A screenshot is saved under the test's tmp path."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timedelta, timezone

import pytest

from adapters.runtime import Process
from adapters.wsgi import HealthServer, pages_endpoint
from bot.memory.pages import build_pages
from bot.services.routes import ARCHIVE_PREFIX, CALENDAR_PREFIX
from tests.conftest import require_programs
from tests.memory.scene import XSS_TITLE, build_scene
from tests.memory.test_archive import archive_token

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
UTC = timezone.utc
START = datetime(2026, 9, 10, 9, tzinfo=UTC)  # a Thursday: the group's history starts here
NOW = datetime(2026, 10, 5, 16, tzinfo=UTC)  # a Monday, the day before a meeting
CALL = "https://meet.example/abc"
ZEBRAFISH = "Zebrafish Retina Regeneration as Sparse Coding"


@pytest.fixture(autouse=True)
def _chromium_installed():
    require_programs(CHROMIUM, CHROMEDRIVER)  # a skip, or under PAPERCLUB_REQUIRE_BROWSER=1 (CI) a failure


def queue(boss, paper_id: int) -> None:
    """A paper reaches the queue as members put it there: nominate, poll, vote, close."""
    assert boss.send(f"nominate {paper_id}").ok
    poll = boss.send("poll 2 1h")
    assert boss.send(f"vote {poll.poll_id} 1").ok
    assert "now in the reading queue" in boss.send("poll close").text


@pytest.fixture
def archive(tmp_path):
    """A group that met on 15 September, meets next on 6 October with a paper assigned,
    and whose votes all fell in one week; served as `paperclub serve` serves it."""
    scene = build_scene(f"sqlite:///{tmp_path / 'paperclub.db'}", tmp_path, START)
    boss = scene.member("boss", manager=True)
    assert boss.send(f"session every tue 17:00 Europe/Berlin 90m at Room 4.12 {CALL}").ok
    assert boss.send("presenters add @ann @ben").ok
    queue(boss, scene.ids["Zebrafish"])
    deliver = lambda channel, reply: "ref"  # noqa: E731
    scene.services.core.tick(datetime(2026, 9, 14, 15, tzinfo=UTC), deliver, ["console"])  # the day before
    scene.clock.now = datetime(2026, 9, 20, 9, tzinfo=UTC)
    queue(boss, scene.ids["script"])
    scene.services.core.tick(NOW - timedelta(hours=1), deliver, ["console"])  # 6 October's, a day ahead
    scene.clock.now = NOW
    routes = Process(scene.services, scheduler_on=False).routes()
    s = scene.services  # the pages as serve mounts them, on the scene's clock: "upcoming" is after NOW
    pages = pages_endpoint(build_pages(s.library, s.channels, s.meetings, s.votes, s.search.tokenizer,
                                       scene.clock).answer)
    server = HealthServer(0, routes.pop("/healthz"), dict.fromkeys((ARCHIVE_PREFIX, CALENDAR_PREFIX), pages))
    server.start()
    yield f"http://127.0.0.1:{server.server.effective_port}/archive/{archive_token(scene)}"
    server.stop()
    scene.services.db.dispose()


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=420,2600",
                     f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def test_upcoming_meetings_apart_from_past_ones_linked_titles_named_polls_and_a_small_chart(archive, browser,
                                                                                               tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(archive)
    shot = tmp_path / "archive-meetings.png"
    assert browser.save_screenshot(str(shot)) and shot.read_bytes().startswith(b"\x89PNG")
    if keep := os.environ.get("PAPERCLUB_ARCHIVE_SCREENSHOT"):  # to look at it yourself
        shutil.copyfile(shot, keep)
    find, every = browser.find_element, browser.find_elements

    upcoming = every(By.CSS_SELECTOR, "#meetings ul.upcoming > li")
    assert len(upcoming) == 4  # 6, 13, 20 and 27 October
    first = upcoming[0]
    assert first.text.startswith("Tue 06 Oct 2026, 17:00 CEST, 1 hour 30 minutes, at Room 4.12")
    paper = first.find_element(By.CSS_SELECTOR, "a[href='https://example.org/xss']")
    assert paper.text == XSS_TITLE  # a title with <script> in it: a link whose text is the title, as text
    assert "@ann presents" in first.text or "@ben presents" in first.text
    call = first.find_element(By.CSS_SELECTOR, f"a[href='{CALL}']")
    assert call.text == CALL
    assert all("paper to be chosen" in later.text for later in upcoming[1:])
    assert "Tue 27 Oct 2026, 17:00 CET" in upcoming[3].text  # Berlin's winter time from 25 October

    past = every(By.CSS_SELECTOR, "#meetings table tr")[1:]
    assert [row.find_elements(By.TAG_NAME, "td")[0].text for row in past] == ["15 Sep 2026"]
    held = past[0].find_element(By.TAG_NAME, "a")
    assert (held.text, held.get_attribute("href")) == (ZEBRAFISH, "https://arxiv.org/abs/2101.00001")
    assert not any("Oct" in row.text for row in past) and "15 Sep" not in find(By.CSS_SELECTOR, "ul.upcoming").text
    upcoming_heading, past_heading = find(By.ID, "upcoming"), find(By.ID, "past")
    assert upcoming_heading.location["y"] < first.location["y"] < past_heading.location["y"] < past[0].location["y"]

    polls = [heading.text for heading in every(By.CSS_SELECTOR, "#polls h3.poll")]
    assert len(polls) == 2 and all(" or " in name and "poll" not in name.lower() for name in polls)
    assert any(f"“{ZEBRAFISH}”" in name for name in polls)
    winner = find(By.CSS_SELECTOR, "#polls tr.won a[href='https://arxiv.org/abs/2101.00001']")
    assert winner.text == ZEBRAFISH
    for link in every(By.CSS_SELECTOR, "#posts article h3 a"):  # every posted paper with a link is one
        assert link.get_attribute("href").startswith("https://")

    chart = find(By.CSS_SELECTOR, "#votes svg")
    assert chart.get_attribute("class") == "few" and int(chart.get_attribute("width")) < 200
    assert [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text.count")] == ["3"]  # 2 up, 1 down
    assert 0 < chart.size["width"] < 200  # drawn at its own width, not stretched across the page
