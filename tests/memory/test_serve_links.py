"""`paperclub serve` answers the archive and the calendar beside /healthz, on $PORT, in a
deployment without Slack HTTP (a Discord worker, or console channels only)."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from datetime import datetime, timezone

import icalendar

from tests.memory.scene import build_scene
from tests.processes import ServeProcess, free_port

NOW = datetime.now(timezone.utc)


def fetch(url: str) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_serve_answers_the_links_it_gave(sqlite_db, tmp_path):
    url = f"sqlite:///{tmp_path / 'paperclub.db'}"
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    scene = build_scene(url, tmp_path, NOW, public_url=public)
    boss = scene.member("boss", manager=True)
    assert boss.send("session every tue 17:00 Europe/Berlin").ok
    archive = re.search(r"http://\S+/archive/\S+", boss.send("archive").text).group(0)
    calendar = re.search(r"http://\S+\.ics", boss.send("session calendar").text).group(0)
    scene.services.db.dispose()
    server = ServeProcess([], {"PAPERCLUB_DATABASE_URL": url, "PORT": str(port), "PAPERCLUB_PUBLIC_URL": public},
                          tmp_path / "serve.log").start()
    try:
        server.wait_until_listening(port)
        page = fetch(archive)
        feed = fetch(calendar)
        missing = fetch(archive[:-3] + "xyz")
        exit_code = server.terminate()
    finally:
        server.kill()
    assert exit_code == 0, server.log()
    assert page[0] == 200 and b"Zebrafish Retina Regeneration" in page[2]
    assert page[1]["Cache-Control"] == "private" and "nonce-" in page[1]["Content-Security-Policy"]
    assert feed[0] == 200 and feed[1]["Content-Type"] == "text/calendar; charset=utf-8"
    events = list(icalendar.Calendar.from_ical(feed[2]).walk("VEVENT"))
    assert len(events) >= 12  # twelve weeks of Tuesdays ahead
    assert missing[0] == 404
    assert archive.split("/archive/")[1] not in server.log()  # tokens are not logged
