"""Running `paperclub bench`: every engine at every size, each step in its own process.

A build runs in one child process and the serving (cold load, then the queries) in
another, so each peak (ru_maxrss) belongs to one engine and one step. paperclub's build
tokenises on worker processes; their peak is added once per worker (an upper bound,
as they run side by side).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from adapters.bench.search.engines import ENGINES, available
from adapters.bench.search.realistic import CorpusChoice
from adapters.bench.search.synthetic import size_label
from bot.corpus.readers import FILE_MAX

QUERIES_AMONG = 10_000  # queries are about the first papers, which every size holds
ADDED = 1_000  # a day of new papers, added to each built index


@dataclass
class Measurement:
    engine: str
    size: int
    build_s: float | None = None
    build_peak_mb: float | None = None
    index_mb: float | None = None
    load_s: float | None = None
    serve_peak_mb: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    queries: int = 0
    terms: int | None = None  # distinct terms in the engine's dictionary
    add_s: float | None = None  # ADDED new papers until a search finds them
    # paperclub only, with `whole`: `paperclub import` of the corpus (database and
    # index), and the bot's whole `search` command (BM25, cards from the database).
    import_s: float | None = None
    import_peak_mb: float | None = None
    command_p50_ms: float | None = None
    command_p99_ms: float | None = None
    command_peak_mb: float | None = None  # the bot's serving process, answering those
    cold_search_s: float | None = None  # `paperclub search QUERY` as a new process (median)
    import_day_s: float | None = None  # `paperclub import` of ADDED new papers, a process
    note: str = ""


def run_bench(
    sizes: list[int],
    engines: list[str],
    work_dir: Path,
    query_count: int = 200,
    rank_bm25_max: int = 100_000,
    log: Callable[[str], None] = print,
    corpus: CorpusChoice | None = None,
    whole: bool = False,
) -> list[Measurement]:
    corpus = corpus or CorpusChoice()
    queries = corpus.queries(query_count, among=min([*sizes, QUERIES_AMONG]))
    results = []
    for size in sizes:
        for engine in engines:
            measurement = Measurement(engine, size)
            results.append(measurement)
            skip = available(engine) or (
                f"skipped above {size_label(rank_bm25_max)}"
                if engine == "rank-bm25" and size > rank_bm25_max
                else None
            )
            if skip:
                measurement.note = skip
                log(f"{engine} {size_label(size)}: {skip}")
                continue
            directory = work_dir / f"{engine}-{size_label(size)}"
            shutil.rmtree(directory, ignore_errors=True)
            try:
                _measure(measurement, directory, queries, log, corpus)
                if whole and engine == "paperclub":
                    _measure_whole(measurement, directory, queries, log, corpus)
            except Exception as problem:  # noqa: BLE001 - one engine failing must not end the run
                measurement.note = f"failed: {type(problem).__name__}: {problem}"
                log(f"{engine} {size_label(size)}: {measurement.note}")
            finally:
                shutil.rmtree(directory, ignore_errors=True)
    return results


def _measure(
    measurement: Measurement,
    directory: Path,
    queries: list[str],
    log: Callable[[str], None],
    corpus: CorpusChoice,
) -> None:
    label = f"{measurement.engine} {size_label(measurement.size)}"
    log(f"{label}: building")
    build = _in_child(_build_step, measurement.engine, measurement.size, directory, corpus)
    measurement.build_s, measurement.build_peak_mb = build["seconds"], build["peak_mb"]
    measurement.terms = build["terms"]
    measurement.index_mb = _size_mb(directory)
    log(
        f"{label}: built in {build['seconds']:.1f} s, peak {build['peak_mb']:.0f} MB, "
        f"{measurement.index_mb:.0f} MB on disk"
        + (f", {build['terms']:,} distinct terms" if build["terms"] is not None else "")
    )
    serve = _in_child(_serve_step, measurement.engine, directory, queries)
    measurement.load_s, measurement.serve_peak_mb = serve["load_s"], serve["peak_mb"]
    measurement.p50_ms, measurement.p99_ms, measurement.queries = (
        serve["p50_ms"],
        serve["p99_ms"],
        len(queries),
    )
    log(
        f"{label}: load {serve['load_s']:.2f} s, p50 {serve['p50_ms']:.2f} ms, p99 {serve['p99_ms']:.2f} ms"
    )
    if getattr(ENGINES[measurement.engine], "add", None) is not None:
        added = _in_child(_add_step, measurement.engine, measurement.size, directory, corpus)
        measurement.add_s = added["seconds"]
        log(f"{label}: {ADDED:,} papers added and found in {added['seconds']:.2f} s")


def _measure_whole(
    measurement: Measurement,
    directory: Path,
    queries: list[str],
    log: Callable[[str], None],
    corpus: CorpusChoice,
) -> None:
    """`paperclub import` of the corpus as JSON Lines into a new SQLite database, as an
    operator runs it (its own process: database rows, then the index), and the bot's
    whole `search` command over that database."""
    label = f"paperclub {size_label(measurement.size)}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    sources = _in_child(_write_step, measurement.size, directory, corpus)["files"]
    database = f"sqlite:///{directory / 'bench.db'}"
    started = time.perf_counter()
    command = ["import", "--collection", "bench", *sources]
    child = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "--database-url", database, *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _pid, status, usage = os.wait4(child.pid, 0)
    measurement.import_s = time.perf_counter() - started
    measurement.import_peak_mb = usage.ru_maxrss / 1024
    if status != 0:
        raise RuntimeError(f"paperclub import failed: {child.stderr.read().decode()[-500:]}")
    log(
        f"{label}: paperclub import in {measurement.import_s:.1f} s, "
        f"peak {measurement.import_peak_mb:.0f} MB"
    )
    # The steps below meet the library as a bot and the next day's import do: at rest.
    # Right after the import the kernel is still writing out its database and index
    # (11 GB at 2.6M), and every fsync of theirs would wait for that.
    started = time.perf_counter()
    os.sync()
    log(f"{label}: written out to disk in {time.perf_counter() - started:.1f} s more")
    command = _in_child(_command_step, database, queries)
    measurement.command_p50_ms, measurement.command_p99_ms = command["p50_ms"], command["p99_ms"]
    measurement.command_peak_mb = command["peak_mb"]
    log(
        f"{label}: whole search command p50 {command['p50_ms']:.2f} ms, "
        f"p99 {command['p99_ms']:.2f} ms, serving peak {command['peak_mb']:.0f} MB"
    )
    measurement.cold_search_s = _cold_search_s(database, queries)
    log(f"{label}: `paperclub search` from a new process in {measurement.cold_search_s:.2f} s")
    measurement.import_day_s = _import_day_s(measurement.size, directory, database, corpus)
    log(f"{label}: `paperclub import` of {ADDED:,} new papers in {measurement.import_day_s:.2f} s")


COLD_RUNS = 5


def _paperclub(database: str, *command: str) -> tuple[float, str]:
    """One `paperclub` process: its wall time and what it printed; an error if it failed."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "--database-url", database, *command],
        capture_output=True,
        text=True,
        env=_as_installed(),
        check=False,  # a failure is raised below, with what it printed
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"paperclub {command[0]} failed: {done.stderr[-500:]}")
    return seconds, done.stdout


def _as_installed() -> dict[str, str]:
    """The environment of a command as an installed program runs: Python keeps its
    compiled modules (a sandbox's PYTHONDONTWRITEBYTECODE would have every process
    compile the bot's source again, a third of a second, which no user pays)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cold_search_s(database: str, queries: list[str]) -> float:
    """The median wall time of `paperclub search QUERY` as a person runs it: a new
    process each time (start-up, the index opened, cards from the database), after
    one that leaves the compiled modules behind, as any earlier command would."""
    _paperclub(database, "search", queries[-1])
    return float(np.median([_paperclub(database, "search", q)[0] for q in queries[:COLD_RUNS]]))


def _import_day_s(size: int, directory: Path, database: str, corpus: CorpusChoice) -> float:
    """A day of new papers into the imported library: `paperclub import` of ADDED papers
    as one process, timed until it returns; then a search must find the last of them."""
    from adapters.bench.search.realistic import write_jsonl

    papers = list(corpus.papers_after(size, ADDED))
    path = directory / "day.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        write_jsonl(iter(papers), out)
    seconds, _ = _paperclub(database, "import", "--collection", "bench", str(path))
    # Its own abstract finds a paper first; the new papers have ids after the corpus's.
    query = " ".join(papers[-1].text.partition("\n")[2].split()[:60])
    _, printed = _paperclub(database, "search", "--json", "-k", "1", query)
    hits = json.loads(printed)["hits"]
    if not hits or hits[0]["paper_id"] <= size:
        raise RuntimeError(f"{ADDED:,} papers imported, but a search does not find the last")
    return seconds


def _write_step(size: int, directory: Path, corpus: CorpusChoice) -> dict[str, Any]:
    """The corpus as JSON Lines files, each under the import's per-file cap (a million
    papers are about 1.5 GB), as an operator splits a large corpus."""
    from adapters.bench.search.realistic import write_jsonl_parts

    files = write_jsonl_parts(corpus.papers(size), directory / "corpus", PART_BYTES)
    return {"files": [str(f) for f in files]}


PART_BYTES = FILE_MAX // 2  # records differ in length: half the cap leaves room for any


def _command_step(database: str, queries: list[str]) -> dict[str, Any]:
    from bot.app import build_services
    from bot.messages import ChannelRef, Incoming, UserRef

    services = build_services(database)
    core = services.core
    where, member = ChannelRef("console", "bench", "search"), UserRef("console", "u", "U")
    services.search.warm()  # a running bot has its index loaded and its loops compiled
    latencies = []
    for text in queries + queries:  # the first pass warms the caches, the second counts
        started = time.perf_counter()
        reply = core.handle(Incoming(where, member, f"search {text}"))
        latencies.append((time.perf_counter() - started) * 1000)
        if not reply.ok:
            raise RuntimeError(f"search {text!r}: {reply.text}")
    services.db.dispose()
    return {**_percentiles(latencies[len(queries) :]), "peak_mb": _peak_mb()}


def _percentiles(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_ms": float(np.percentile(latencies, 50)),
        "p99_ms": float(np.percentile(latencies, 99)),
    }


def _in_child(step: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(step, *args).result()


def _build_step(engine: str, size: int, directory: Path, corpus: CorpusChoice) -> dict[str, Any]:
    started = time.perf_counter()
    # The corpus is generated as the engine reads it: its time counts in the build.
    terms = ENGINES[engine].build(corpus.papers(size), directory)
    return {"seconds": time.perf_counter() - started, "peak_mb": _peak_mb(), "terms": terms}


def _add_step(engine: str, size: int, directory: Path, corpus: CorpusChoice) -> dict[str, Any]:
    """ADDED new papers into the built index, timed until a search finds the last one."""
    papers = list(corpus.papers_after(size, ADDED))
    started = time.perf_counter()
    search = ENGINES[engine].add(papers, directory)
    seconds = time.perf_counter() - started
    # Its own abstract finds a paper first in any BM25 engine (titles repeat).
    last = papers[-1]
    found = search(" ".join(last.text.split()[:60]))
    if last.paper_id not in found:
        raise RuntimeError(f"paper {last.paper_id} added but not found by its abstract")
    return {"seconds": seconds}


def _serve_step(engine: str, directory: Path, queries: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    search = ENGINES[engine].load(directory)
    load_s = time.perf_counter() - started
    latencies = []
    for text in queries:
        started = time.perf_counter()
        search(text)
        latencies.append((time.perf_counter() - started) * 1000)
    return {"load_s": load_s, **_percentiles(latencies), "peak_mb": _peak_mb()}


def _peak_mb() -> float:
    """This process's peak resident memory, plus its worker processes' (Linux: KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + (os.cpu_count() or 1) * workers if workers else own) / 1024


def _size_mb(directory: Path) -> float:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file()) / 2**20


# --- reporting ---------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the figures came from: cores, processor model, memory, Python."""
    model = ""
    memory_gib = 0.0
    if Path("/proc/cpuinfo").exists():
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        )
    if Path("/proc/meminfo").exists():
        total = next(
            line
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        memory_gib = int(total.split()[1]) / 2**20
    return {
        "nproc": os.cpu_count(),
        "cpu": model or platform.processor(),
        "memory_gib": round(memory_gib, 1),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


COLUMNS = (
    ("engine", "engine", "{}"),
    ("size", "docs", "{}"),
    ("build_s", "build s", "{:.1f}"),
    ("build_peak_mb", "build peak MB", "{:.0f}"),
    ("index_mb", "index MB", "{:.0f}"),
    ("load_s", "load s", "{:.2f}"),
    ("serve_peak_mb", "serve peak MB", "{:.0f}"),
    ("p50_ms", "p50 ms", "{:.2f}"),
    ("p99_ms", "p99 ms", "{:.2f}"),
    ("terms", "terms", "{:,}"),
    ("add_s", f"add {ADDED // 1000}k s", "{:.2f}"),
    ("import_s", "import s", "{:.1f}"),
    ("import_peak_mb", "import peak MB", "{:.0f}"),
    ("command_p50_ms", "command p50 ms", "{:.2f}"),
    ("command_p99_ms", "command p99 ms", "{:.2f}"),
    ("command_peak_mb", "command peak MB", "{:.0f}"),
    ("cold_search_s", "cold search s", "{:.2f}"),
    ("import_day_s", f"import {ADDED // 1000}k s", "{:.2f}"),
)


def table(results: list[Measurement]) -> str:
    """A Markdown table (it reads as plain text too)."""
    rows = [[title for _key, title, _fmt in COLUMNS] + ["note"]]
    for m in results:
        values = asdict(m)
        cells = [
            size_label(m.size)
            if key == "size"
            else ("-" if values[key] is None else fmt.format(values[key]))
            for key, _title, fmt in COLUMNS
        ]
        rows.append(cells + [m.note])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |" for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def write_json(
    results: list[Measurement], path: Path, queries: int, corpus: CorpusChoice | None = None
) -> None:
    corpus = corpus or CorpusChoice()
    path.write_text(
        json.dumps(
            {
                "machine": machine(),
                "corpus": {**asdict(corpus), "description": corpus.describe()},
                "queries": queries,
                "results": [asdict(m) for m in results],
            },
            indent=1,
        ),
        encoding="utf-8",
    )


def read_json(path: Path) -> list[Measurement]:
    names = {f.name for f in fields(Measurement)}
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Measurement(**{k: v for k, v in row.items() if k in names}) for row in data["results"]]


def plot(results: list[Measurement], path: Path) -> bool:
    """Latency against corpus size, log-log, a line per engine (p50 solid, p99 dashed).
    False when matplotlib is not installed (it is in the `bench` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for engine in dict.fromkeys(m.engine for m in results):
        done = sorted(
            (m for m in results if m.engine == engine and m.p50_ms is not None),
            key=lambda m: m.size,
        )
        if not done:
            continue
        line = axes.plot(
            [m.size for m in done], [m.p50_ms for m in done], marker="o", label=f"{engine} p50"
        )[0]
        axes.plot(
            [m.size for m in done],
            [m.p99_ms for m in done],
            linestyle="--",
            marker=".",
            color=line.get_color(),
            label=f"{engine} p99",
        )
    info = machine()
    axes.set(
        xscale="log",
        yscale="log",
        xlabel="corpus size (papers)",
        ylabel="query latency (ms)",
        title=f"BM25 top-10 latency ({info['nproc']} cores, {info['cpu']})",
    )
    axes.title.set_fontsize(9)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True
