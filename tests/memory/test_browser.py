"""The archive page in a real browser (Debian's headless Chromium, where installed):
its text as Chromium builds the DOM, and a screenshot at phone width that is not blank
and shows the page's own stylesheet applied under its Content-Security-Policy."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from adapters.runtime import Process
from adapters.wsgi import HealthServer
from tests.conftest import require_programs
from tests.memory.scene import READING_NOTE, XSS_TITLE, build_scene
from tests.memory.test_archive import archive_token

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
NOW = datetime(2026, 10, 1, 9, tzinfo=timezone.utc)
HEADER_BLUE = (0x2F, 0x5D, 0x8A)  # the header's rule and headings: only there if the stylesheet ran


@pytest.fixture(autouse=True)
def _chromium_installed():
    require_programs(CHROMIUM)  # a skip, or under PAPERCLUB_REQUIRE_BROWSER=1 (CI) a failure


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=420,900", *args],
        capture_output=True, text=True, timeout=120, check=False)


def test_chromium_renders_the_archive_readably_at_phone_width(sqlite_db, tmp_path):
    scene = build_scene(f"sqlite:///{tmp_path / 'paperclub.db'}", tmp_path, NOW)
    routes = Process(scene.services, scheduler_on=False).routes()
    server = HealthServer(0, routes.pop("/healthz"), routes)
    server.start()
    try:
        url = f"http://127.0.0.1:{server.server.effective_port}/archive/{archive_token(scene)}"
        dom = chromium(tmp_path, "--dump-dom", url)
        shot = tmp_path / "archive.png"
        taken = chromium(tmp_path, f"--screenshot={shot}", url)
    finally:
        server.stop()
        scene.services.db.dispose()
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "Zebrafish Retina Regeneration as Sparse Coding" in dom.stdout and READING_NOTE in dom.stdout
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom.stdout and "<script>alert(1)" not in dom.stdout
    assert XSS_TITLE.split("</script> ")[1] in dom.stdout
    assert taken.returncode == 0 and shot.exists(), taken.stderr[-2000:]
    pixels = (image.imread(shot)[:, :, :3] * 255).round().astype(np.uint8)
    assert pixels.shape[:2] == (900, 420)
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) > 50  # text, a picture and rules: not a blank page
    assert (pixels == HEADER_BLUE).all(axis=2).sum() > 500  # the nonce'd stylesheet applied
    if keep := os.environ.get("PAPERCLUB_ARCHIVE_SCREENSHOT"):  # to look at it yourself
        shutil.copyfile(shot, keep)
