"""`paperclub status`: the library at a glance, its numbers moving as an import, `paperclub
embed` (the real model from ../shared/models) and a follow change them; one line of
error for a database that is not there or does not answer, and nothing made meanwhile."""

from __future__ import annotations

import io
import json
import shutil

import pytest

from adapters.cli.main import main
from tests.conftest import MINILM

PAPERS = [
    {"title": "Vehicle collisions on motorways", "abstract": "Crashes between cars and lorries on highways."},
    {"title": "Protein folding with attention", "abstract": "A transformer predicts the structure of proteins."},
    {"title": "Graph neural networks for molecules", "abstract": "Message passing predicts chemical properties."},
]
MORE = [{"title": "Kelp forests as carbon sinks", "abstract": "Giant seaweed stores carbon along rocky coasts."}]


@pytest.fixture
def operator(tmp_path, monkeypatch, capsys):
    """`paperclub ARGS` in this process, on a SQLite file in tmp_path, with the model from
    ../shared/models: (exit status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERCLUB_DATABASE_URL", f"sqlite:///{tmp_path / 'paperclub.db'}")
    monkeypatch.setenv("PAPERCLUB_MODEL_DIR", str(MINILM))
    monkeypatch.delenv("PAPERCLUB_EMBEDDINGS", raising=False)

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def jsonl(tmp_path, name: str, papers: list[dict]) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    return str(path)


def status(operator) -> dict[str, str]:
    code, out, err = operator("status")
    assert code == 0 and err == "", err
    return dict(line.split(": ", 1) for line in out.splitlines())


def test_status_follows_an_import_an_embed_and_a_follow(operator, tmp_path, monkeypatch):
    assert operator("import", jsonl(tmp_path, "papers.jsonl", PAPERS))[0] == 0
    before = status(operator)
    assert list(before) == ["Library", "Papers", "Search index", "Embeddings", "Channels"]
    assert before["Library"] == f"sqlite:///{tmp_path / 'paperclub.db'}"
    assert before["Papers"] == "3 in 1 collection"
    assert before["Search index"] == f"3 papers, up to date ({tmp_path / 'paperclub.db.index'})"
    assert before["Embeddings"] == (f"on; model sentence-transformers/all-MiniLM-L6-v2 from {MINILM}: 0 of 3 papers "
                                    "have a vector, 3 to embed (`paperclub embed`)")
    assert before["Channels"] == "0; follows: 0"

    code, out, _err = operator("embed")
    assert code == 0 and "embedded 3 papers" in out
    assert status(operator)["Embeddings"].endswith(": 3 of 3 papers have a vector, none to embed")

    assert operator("import", jsonl(tmp_path, "more.jsonl", MORE))[0] == 0
    after = status(operator)
    assert after["Papers"] == "4 in 2 collections"
    assert after["Search index"].startswith("4 papers, up to date")
    assert after["Embeddings"].endswith(": 3 of 4 papers have a vector, 1 to embed (`paperclub embed`)")

    monkeypatch.setattr("sys.stdin", io.StringIO("follow arxiv cs.LG\n"))  # a manager, in the console
    assert operator("console", "--channel", "ml", "--manager")[0] == 0
    assert status(operator)["Channels"] == "1; follows: 1"
    monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", "off")
    assert status(operator)["Embeddings"] == ("off (PAPERCLUB_EMBEDDINGS=off: words alone); model "
                                              "sentence-transformers/all-MiniLM-L6-v2: 3 of 4 papers have a vector")


def test_a_library_not_imported_yet_says_so_in_one_line_and_makes_no_database(operator, tmp_path):
    code, out, err = operator("status")
    assert code == 1 and out == ""
    assert err == (f"error: PAPERCLUB_DATABASE_URL: no database at sqlite:///{tmp_path / 'paperclub.db'}: nothing "
                   "was imported there yet (`paperclub import FILE` makes one)\n")
    assert not (tmp_path / "paperclub.db").exists()


def test_an_index_not_built_yet_is_said(operator, tmp_path):
    """A library whose index was never written here (another machine's PostgreSQL, a
    deleted index directory): status says so and builds nothing."""
    assert operator("import", jsonl(tmp_path, "papers.jsonl", PAPERS))[0] == 0
    shutil.rmtree(tmp_path / "paperclub.db.index")
    assert status(operator)["Search index"].startswith("not built yet: the next search or `paperclub import` builds it")
    assert not (tmp_path / "paperclub.db.index").exists()
