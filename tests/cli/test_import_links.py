"""`paperclub import` with links and ids: fetched through the providers `add` uses."""

from __future__ import annotations

from tests.adding.fake_providers import FakeProviders
from tests.processes import paperclub


def test_import_takes_ids_and_links_with_one_line_errors(tmp_path):
    with FakeProviders() as fake:
        run = paperclub("import", "2106.01345", "https://doi.org/10.18653/v1/N19-1423", "arXiv:1810.04805v1",
                        "2106.99999", "--collection", "reading", cwd=tmp_path, env=fake.env())
        again = paperclub("import", "https://arxiv.org/abs/2106.01345v2", cwd=tmp_path, env=fake.env())
    assert run.returncode == 1  # one of them failed
    assert "2106.01345: arxiv, collection reading: 1 added, 0 updated, 0 unchanged" in run.stdout
    assert "https://doi.org/10.18653/v1/N19-1423: doi, collection reading: 1 added" in run.stdout
    assert "arXiv:1810.04805v1: arxiv, collection reading: 0 added, 1 updated" in run.stdout  # BERT's preprint
    assert run.stderr.strip().splitlines()[0] == "error: 2106.99999: arXiv has no paper 2106.99999."
    assert again.returncode == 0 and "collection imported: 0 added, 1 updated" in again.stdout
    listed = paperclub("export", cwd=tmp_path)
    assert listed.stdout.count('"title"') == 2  # two papers: BERT's DOI and preprint are one
