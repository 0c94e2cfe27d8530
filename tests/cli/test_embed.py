"""`paperclub embed`, and the command line's search once papers have vectors: the real
model from ../shared/models, in a new process each, as an operator runs them."""

from __future__ import annotations

import json

from tests.conftest import MINILM
from tests.processes import paperclub

PAPERS = [
    {"title": "Vehicle collisions on motorways", "abstract": "Crashes between cars and lorries on highways."},
    {"title": "Protein folding with attention", "abstract": "A transformer predicts the structure of proteins."},
    {"title": "Graph neural networks for molecules", "abstract": "Message passing predicts chemical properties."},
]


def _library(tmp_path) -> dict:
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    env = {"PAPERCLUB_DATABASE_URL": f"sqlite:///{tmp_path / 'paperclub.db'}", "PAPERCLUB_MODEL_DIR": str(MINILM)}
    assert paperclub("import", str(corpus), cwd=tmp_path, env=env).returncode == 0
    return env


def test_embed_gives_every_paper_a_vector_once_and_search_finds_by_meaning(tmp_path):
    env = _library(tmp_path)
    lexical = paperclub("search", "traffic", "accidents", cwd=tmp_path, env=env)
    assert "No papers match" in lexical.stdout  # no vectors yet: words alone, and no paper has these
    status = paperclub("embed", "--status", cwd=tmp_path, env=env)
    assert "0 of 3 papers have a vector, 3 to embed" in status.stdout
    made = paperclub("embed", cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr
    assert "embedded 3 papers" in made.stdout and "3 of 3 have a vector" in made.stdout
    again = paperclub("embed", cwd=tmp_path, env=env)
    assert "embedded 0 papers" in again.stdout  # nothing changed: nothing embedded again
    found = paperclub("search", "traffic", "accidents", "--json", cwd=tmp_path, env=env)
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["title"] == "Vehicle collisions on motorways"
    assert hits[0]["reason"] == "close in meaning to your words, though it uses none of them"
    off = paperclub("search", "traffic", "accidents", cwd=tmp_path, env={**env, "PAPERCLUB_EMBEDDINGS": "off"})
    assert "No papers match" in off.stdout  # switched off: exactly the lexical search
    lexical = paperclub("search", "--lexical", "traffic", "accidents", cwd=tmp_path, env=env)
    assert "No papers match" in lexical.stdout


def test_embed_without_a_model_says_why_and_changes_nothing(tmp_path):
    env = {**_library(tmp_path), "PAPERCLUB_MODEL_DIR": str(tmp_path / "nowhere")}
    result = paperclub("embed", cwd=tmp_path, env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "no model.onnx" in result.stderr and "PAPERCLUB_MODEL_DIR" in result.stderr
    status = paperclub("embed", "--status", cwd=tmp_path, env={**env, "PAPERCLUB_EMBEDDINGS": "off"})
    assert "embeddings off" in status.stdout and "0 of 3 papers have a vector" in status.stdout
    bad = paperclub("embed", "--seconds", "0", cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "must be more than 0" in bad.stderr
