"""`paperclub sandbox` as a newcomer runs it (issue 46): fakes of arXiv and OpenAlex on
127.0.0.1, a follow of each kind fetched by `tick`, what they brought in `following` and
in the digest's preview, with no account and no internet."""

from __future__ import annotations

import re

from tests.processes import paperclub

LINES = ["follow arxiv cs.LG", 'follow author "Ada Lovelace"', "tick", "following", "digest preview", "tick"]


def test_the_sandbox_fetches_a_follow_of_each_kind_and_previews_the_digest(tmp_path):
    done = paperclub("sandbox", "--dir", str(tmp_path), cwd=tmp_path, stdin="\n".join(LINES) + "\n")
    out = done.stdout
    assert done.returncode == 0, done.stderr
    urls = re.findall(r"PAPERCLUB_(?:ARXIV|OPENALEX)_API_URL=http://127\.0\.0\.1:\d+", out)
    assert len(urls) == 2, out  # what points a real serve at the same fakes
    assert "Following cs.LG (Machine Learning)" in out and "Following Ada Lovelace" in out
    assert "tick: 2 follows fetched, 5 papers arrived" in out, out
    assert "1. cs.LG (Machine Learning): 3 new papers this week" in out
    assert "2. Ada Lovelace" in out and "2 new papers this week" in out
    preview = out[out.index("Preview, for you only"):]
    assert "New from your follows" in preview and "Sandbox: Sparse Mixtures of Experts" in preview
    assert out.rstrip().endswith("tick: nothing was due")  # fetched once a day: the second tick has nothing
    assert (tmp_path / "sandbox.db").exists()
