"""`paperclub bench-relevance`: what ranking by meaning costs.

- dense top-10 at each of `dense_sizes`, the part of a search that grows with the
  library: by brute force, and through the neighbour index the bot builds from
  NEIGHBOURS_FROM papers (its build time, latency, and how many of brute force's top-10
  it finds). The vectors are made like real ones: the model's vectors of the bundled
  seed abstracts, mixed three at a time with a little noise (uniformly random vectors
  have no neighbours to find); the queries are the model's vectors of held-out seed
  titles;
- at `size` papers of the realistic corpus (imported as `paperclub bench --whole` does),
  each with a random vector stored as the bot stores them: the bot's whole `search`
  command and `similar` with embeddings off and on (the real model embeds each query),
  the serving process's peak memory both ways, and the vectors' bytes in the database;
- the model's throughput on `embed_sample` seed abstracts (real ones), and so the
  time a day's 1,000 new papers take.

Each serving measurement runs in a process of its own, so its peak is its own.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from adapters.bench.search.realistic import CorpusChoice
from adapters.bench.search.runner import _in_child, _percentiles, _write_step
from adapters.bench.search.synthetic import size_label

DIMENSION = 384
DAY = 1_000


def mixed_vectors(anchors: np.ndarray, size: int, seed: int = 1) -> np.ndarray:
    """`size` unit vectors like a library's: each a random mix of three real vectors
    plus noise a third of a vector's length."""
    rng = np.random.default_rng(seed)
    rows = np.empty((size, anchors.shape[1]), dtype=np.float32)
    for start in range(0, size, 65_536):
        n = min(65_536, size - start)
        weights = rng.dirichlet((1.0, 1.0, 1.0), n).astype(np.float32)
        mixed = np.einsum("nk,nkd->nd", weights, anchors[rng.integers(0, len(anchors), (n, 3))])
        mixed += rng.standard_normal(mixed.shape, dtype=np.float32) * np.float32(0.33 / np.sqrt(anchors.shape[1]))
        rows[start:start + n] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    return rows


def dense_top10_ms(size: int, anchors: list[list[float]], queries: list[list[float]]) -> dict[str, float]:
    """Dense top-10 over `size` vectors: by brute force over float32 rows (what a library
    below NEIGHBOURS_FROM does), then as served from there: int8 codes as stored, through
    the neighbour index (p50/p99, build seconds, memory, recall of brute force's top-10)."""
    from bot.search.vectors import Part, VectorMatrix

    rows = mixed_vectors(np.asarray(anchors, dtype=np.float32), size)
    scales = (np.abs(rows).max(axis=1) / 127).astype(np.float32)
    codes = np.clip(np.rint(rows / scales[:, None]), -127, 127).astype(np.int8)
    ids = np.arange(size, dtype=np.int64)
    # Brute force over the vectors as stored (codes times scale), the truth the index is held to.
    rows = codes.astype(np.float32) * scales[:, None]
    brute_force = VectorMatrix("bench", ids, rows)
    del rows
    asked = np.asarray(queries, dtype=np.float32)
    exact, brute = _timed_tops(brute_force, asked)
    result = {**_percentiles(brute), "matrix_mb": brute_force.nbytes / 2**20}
    del brute_force
    served = VectorMatrix.of_parts("bench", Part.empty(DIMENSION), Part(ids, codes, scales))
    started = time.perf_counter()
    served.indexed()
    result["index_build_s"] = time.perf_counter() - started
    found, indexed = _timed_tops(served, asked)
    index = _percentiles(indexed)
    result.update(index_p50_ms=index["p50_ms"], index_p99_ms=index["p99_ms"], index_mb=served.nbytes / 2**20,
                  recall_at_10=float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, exact, strict=True)])))
    return result


def _timed_tops(matrix: Any, asked: np.ndarray) -> tuple[list[list[int]], list[float]]:
    tops, latencies = [], []
    for query in asked:
        started = time.perf_counter()
        tops.append([paper for paper, _ in matrix.top(query, 10)])
        latencies.append((time.perf_counter() - started) * 1000)
    return tops, latencies


def _import(directory: Path, size: int, corpus: CorpusChoice) -> str:
    sources = _in_child(_write_step, size, directory, corpus)["files"]
    database = f"sqlite:///{directory / 'bench.db'}"
    subprocess.run([sys.executable, "-m", "adapters.cli", "--database-url", database, "import", "--collection",
                    "bench", *sources], check=True, capture_output=True)
    return database


def _random_vectors(database: str, model: str) -> dict[str, float]:
    """A random unit vector for every paper, stored as `paperclub embed` stores them;
    the database's growth in bytes."""
    from bot.corpus.embedded import Made, StoredVectors
    from bot.search.vectors import quantised
    from store import Database

    db = Database(database)
    path = Path(database.removeprefix("sqlite:///"))
    before = path.stat().st_size
    stored = StoredVectors(db)
    with db.session() as session:
        from sqlalchemy import select

        from store.models import Paper

        ids = list(session.scalars(select(Paper.id).order_by(Paper.id)))
    rng = np.random.default_rng(2)
    started = time.perf_counter()
    for start in range(0, len(ids), 5000):
        chunk = ids[start:start + 5000]
        rows = rng.standard_normal((len(chunk), DIMENSION), dtype=np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        stored.save(model, [Made(p, "bench", *quantised(r)) for p, r in zip(chunk, rows, strict=True)])
    seconds = time.perf_counter() - started
    db.dispose()
    return {"papers": len(ids), "vectors_mb": (path.stat().st_size - before) / 2**20, "store_s": seconds}


def _serve_step(database: str, env: dict[str, str], queries: list[str], similar: list[int]) -> dict[str, Any]:
    """The bot's whole `search` and `similar` commands, as `paperclub bench --whole` times
    search, in a process whose environment is `env`."""
    os.environ.update(env)
    from bot.app import build_services
    from bot.messages import ChannelRef, Incoming, UserRef

    services = build_services(database)
    core = services.core
    where, member = ChannelRef("console", "bench", "search"), UserRef("console", "u", "U")
    started = time.perf_counter()
    index = services.search.warm()
    warm_s = time.perf_counter() - started

    def timed(lines: list[str]) -> list[float]:
        latencies = []
        for line in lines + lines:  # the first pass warms the caches, the second counts
            started = time.perf_counter()
            reply = core.handle(Incoming(where, member, line))
            latencies.append((time.perf_counter() - started) * 1000)
            if not reply.ok:
                raise RuntimeError(f"{line!r}: {reply.text}")
        return latencies[len(lines):]

    search = _percentiles(timed([f"search {q}" for q in queries]))
    alike = _percentiles(timed([f"similar {p}" for p in similar]))
    # This process's own peak: the runner's adds its children's, and a child forked from a
    # process holding a model counts that process's pages again.
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"search": search, "similar": alike, "peak_mb": peak_mb, "warm_s": warm_s,
            "hybrid": type(index).__name__ == "HybridSearcher"}


def _embedding_step(sample: int, queries: int, model_dir: str | None) -> dict[str, Any]:
    """Papers a second the model embeds, on `sample` of the bundled seed abstracts (real
    ones); those vectors, and `queries` held-out titles', for the dense measurements."""
    from adapters.bench.search.synthetic import seed_records
    from bot.search.embedding import FastEmbedder, paper_text

    model = FastEmbedder(model_dir=Path(model_dir) if model_dir else None)
    records = seed_records()
    texts = [paper_text(r.title, r.abstract or "") for r in records[:sample]]
    model.documents(texts[:32])  # the first batch pays for the session's set-up
    started = time.perf_counter()
    vectors = model.documents(texts)
    rate = len(texts) / (time.perf_counter() - started)
    held_out = [r.title for r in records[sample:]][:queries] or [r.title for r in records[:queries]]
    return {"papers_per_s": rate, "anchors": vectors.tolist(),
            "queries": [model.query(title).tolist() for title in held_out]}


def run(size: int, dense_sizes: list[int], queries: int, embed_sample: int, work: Path,
        log: Callable[[str], None]) -> dict[str, Any]:
    from bot.search.params import DEFAULT_MODEL, MODEL_DIR

    model_dir = os.environ.get(MODEL_DIR)
    result: dict[str, Any] = {"size": size, "model_dir": model_dir, "dense": {}}
    embedded = _in_child(_embedding_step, embed_sample, queries, model_dir)
    rate = result["papers_per_s"] = embedded["papers_per_s"]
    result["day_s"] = DAY / rate
    log(f"embedding: {rate:.1f} papers/s; a day's {DAY:,} new papers in {DAY / rate:.0f} s")
    for n in dense_sizes:
        d = result["dense"][size_label(n)] = _in_child(dense_top10_ms, n, embedded["anchors"], embedded["queries"])
        log(f"dense top-10 over {size_label(n)} vectors: brute force p50 {d['p50_ms']:.1f} / p99 {d['p99_ms']:.1f} "
            f"ms ({d['matrix_mb']:.0f} MB); indexed in {d['index_build_s']:.0f} s, p50 {d['index_p50_ms']:.2f} / "
            f"p99 {d['index_p99_ms']:.2f} ms, recall@10 {d['recall_at_10']:.3f} ({d['index_mb']:.0f} MB)")
    corpus = CorpusChoice()
    directory = work / f"relevance-{size_label(size)}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    database = _import(directory, size, corpus)
    result["store"] = _random_vectors(database, DEFAULT_MODEL)
    log(f"{size_label(size)} vectors in the database: {result['store']['vectors_mb']:.1f} MB")
    asked = corpus.queries(queries, among=min(size, 10_000))
    similar = list(range(1, size + 1, max(size // queries, 1)))[:queries]
    for label, env in (("words", {"PAPERCLUB_EMBEDDINGS": "off"}), ("both", {"PAPERCLUB_EMBEDDINGS": "on"})):
        served = _in_child(_serve_step, database, env, asked, similar)
        result[label] = served
        log(f"{label}: search p50 {served['search']['p50_ms']:.1f} / p99 {served['search']['p99_ms']:.1f} ms, "
            f"similar p50 {served['similar']['p50_ms']:.1f} / p99 {served['similar']['p99_ms']:.1f} ms, "
            f"peak {served['peak_mb']:.0f} MB (hybrid: {served['hybrid']})")
    shutil.rmtree(directory, ignore_errors=True)
    return result


def main(args: list[str] | None = None) -> int:
    import argparse
    import tempfile

    from adapters.bench.search.synthetic import parse_size

    parser = argparse.ArgumentParser(prog="paperclub bench-relevance", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100k", help="papers served (default 100k)")
    parser.add_argument("--dense-sizes", default="100k,1M,2.6M", help="sizes for the dense top-10 alone")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--embed-sample", type=int, default=256, help="papers embedded to time the model")
    parser.add_argument("--work-dir", help="where the library is built (default: the system temp dir)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures here")
    ns = parser.parse_args(args)
    from bot.search.embedding import EmbeddingConfig, load_embedder

    if load_embedder(EmbeddingConfig.from_env()) is None:  # one log line said why
        print("error: bench-relevance needs the model: set PAPERCLUB_MODEL_DIR to its folder, or let "
              "`paperclub embed` download it", file=sys.stderr)
        return 1
    work = Path(ns.work_dir or tempfile.gettempdir())
    result = run(parse_size(ns.size), [parse_size(s) for s in ns.dense_sizes.split(",") if s.strip()], ns.queries,
                 ns.embed_sample, work, lambda line: print(line, flush=True))
    if ns.json:
        Path(ns.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0
