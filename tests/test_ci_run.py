"""CI runs every test: `.ci/run` installs what the browser tests need and makes a missing
browser (or PostgreSQL) an error, never a silent skip (issue 46)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO, require_programs

CI_RUN = (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_ci_installs_chromium_and_its_driver_where_missing_and_requires_them():
    install = re.search(r"^if ! command -v chromium .*? \|\| ! command -v chromedriver .*?; then\n(.*?)^fi$",
                        CI_RUN, re.M | re.S)
    assert install and "apt-get install -y -q chromium chromium-driver" in install.group(1)
    assert re.search(r"^export PAPERCLUB_REQUIRE_BROWSER=1$", CI_RUN, re.M)
    assert re.search(r"^export PAPERCLUB_REQUIRE_POSTGRES=1$", CI_RUN, re.M)
    # Both are set before the tests run.
    assert CI_RUN.index("PAPERCLUB_REQUIRE_BROWSER=1") < CI_RUN.index('eval "$test_command"')


def test_a_missing_browser_skips_the_test_or_fails_it_where_required(tmp_path):
    missing = str(tmp_path / "chromium")
    with pytest.raises(pytest.skip.Exception, match="chromium not installed"):
        require_programs(missing, required=False)
    with pytest.raises(pytest.fail.Exception, match=r"PAPERCLUB_REQUIRE_BROWSER=1 but .*chromium not installed"):
        require_programs(missing, required=True)
    present = tmp_path / "chromedriver"
    present.touch()
    require_programs(str(present), required=True)  # there: nothing to say
