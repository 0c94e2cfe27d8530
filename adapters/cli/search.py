"""The command-line side of search at scale: `paperclub bench`, `paperclub eval`, and
bringing the persisted index up to date after `paperclub import`."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bot.search.params import Bm25Params

DEFAULT_METHODS = "bm25,dense,hybrid"

if TYPE_CHECKING:
    from bot.search.engine import SearchBackend
    from bot.search.evaluation import BeirData, BeirVectors

DEFAULT_SIZES = "10k,100k,1M"


def update_index(search: SearchBackend) -> None:
    """After an import: load, extend or build the index for the new revision and write
    it, so the running bot only has to switch to it."""
    started = time.perf_counter()
    index = search.current()
    # Work the update set off (a merge of segments) would die with this process: it
    # finishes first.
    search.wait_for_merges()
    location = search.location()
    where = f" in {location}" if location is not None else ""
    print(
        f"search index: {index.live_count():,} papers at revision {index.revision}{where} "
        f"({time.perf_counter() - started:.1f} s)",
        file=sys.stderr,
    )


def cmd_eval(args: argparse.Namespace) -> int:
    from bot.search.builtin.index import SearchIndex
    from bot.search.evaluation import (
        METHODS,
        BeirFormatError,
        as_json,
        cross_validated,
        describe,
        evaluate,
        read_beir,
    )

    folder = Path(args.folder)
    try:
        data = read_beir(folder, args.split)
    except (OSError, BeirFormatError) as problem:
        print(f"error: {problem}", file=sys.stderr)
        print(
            f"{folder} should hold corpus.jsonl, queries.jsonl and qrels/{args.split}.tsv",
            file=sys.stderr,
        )
        return 1
    params = Bm25Params(k1=args.k1, b=args.b)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        print(f"error: --methods: use some of {', '.join(METHODS)}", file=sys.stderr)
        return 2
    wants_meaning = bool(set(methods) - {"bm25"}) or args.cv
    vectors = _eval_vectors(data, args) if wants_meaning else None
    if wants_meaning and vectors is None:
        if args.methods != DEFAULT_METHODS or args.cv:
            return 1  # meaning was asked for by name: _eval_vectors said why there is none
        methods = ["bm25"]
    results = [evaluate(data, SearchIndex.build, params=params, title_weight=args.title_weight, method=m,
                        vectors=vectors, weight=args.weight) for m in methods]
    if args.cv and vectors is not None:
        results.append(cross_validated(data, SearchIndex.build, vectors, params=params))
    for result in results:
        print(as_json(result) if args.json else describe(result))
    return 0


def _eval_vectors(data: BeirData, args: argparse.Namespace) -> BeirVectors | None:
    """The folder's vectors under the configured model (made once, then read from the
    cache), or None with one line on stderr saying why there are none."""
    from bot.search.embedding import EmbeddingConfig, load_embedder
    from bot.search.evaluation import embed_beir

    config = EmbeddingConfig.from_env()
    embedder = load_embedder(config) if config.enabled else None
    if embedder is None:
        reason = "embeddings are off" if not config.enabled else "no model loads (see the line above)"
        print(f"note: only bm25: {reason}", file=sys.stderr)
        return None
    cache = Path(args.cache) if args.cache else _default_cache()
    print(f"embedding {len(data.doc_ids):,} documents with {embedder.name} (once: kept in {cache})",
          file=sys.stderr)
    return embed_beir(data, embedder, cache)


def _default_cache() -> Path:
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "paperclub" / "eval"


def cmd_bench(args: argparse.Namespace) -> int:
    from adapters.bench.search.engines import ENGINES
    from adapters.bench.search.realistic import CorpusChoice
    from adapters.bench.search.runner import plot, run_bench, table, write_json
    from adapters.bench.search.synthetic import parse_size, size_label

    try:
        sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
        rank_bm25_max = parse_size(args.rank_bm25_max)
    except ValueError as problem:
        print(f"error: --sizes/--rank-bm25-max: {problem}", file=sys.stderr)
        return 2
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        print(
            f"error: unknown engine {', '.join(unknown)}; choose from {', '.join(ENGINES)}",
            file=sys.stderr,
        )
        return 2
    if not 0.0 <= args.repeat_titles <= 1.0:
        print("error: --repeat-titles is a share between 0 and 1 (e.g. 0.1)", file=sys.stderr)
        return 2
    corpus = CorpusChoice(args.corpus, args.repeat_titles)
    print(f"corpus: {corpus.describe()}", file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.jsonl:  # the same papers as a file, for `paperclub import`
        from adapters.bench.search.realistic import write_jsonl

        Path(args.jsonl).mkdir(parents=True, exist_ok=True)
        for size in sizes:
            path = Path(args.jsonl) / f"{args.corpus}-{size_label(size)}.jsonl"
            with open(path, "w", encoding="utf-8") as file:
                write_jsonl(corpus.papers(size), file)
            print(f"wrote {path}", file=sys.stderr)
    if args.work_dir:  # a named scratch place may not exist yet
        Path(args.work_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="paperclub-bench-", dir=args.work_dir) as work:
        results = run_bench(
            sizes,
            engines,
            Path(work),
            args.queries,
            rank_bm25_max,
            log=lambda line: print(line, file=sys.stderr),
            corpus=corpus,
            whole=args.whole,
        )
    print(table(results))
    write_json(results, out / "bench.json", args.queries, corpus)
    drawn = plot(results, out / "bench.png")
    print(
        f"\nwrote {out / 'bench.json'}"
        + (f" and {out / 'bench.png'}" if drawn else " (no PNG: pip install 'paperclub[bench]')")
    )
    return 0


def cmd_bench_relevance(args: argparse.Namespace) -> int:
    from adapters.bench.search.meaning import main  # the bench extra: loaded only here

    return main(["--size", args.size, "--dense-sizes", args.dense_sizes, "--queries", str(args.queries),
                 "--embed-sample", str(args.embed_sample),
                 *(["--work-dir", args.work_dir] if args.work_dir else []),
                 *(["--json", args.json] if args.json else [])])


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench-relevance", help="what ranking by meaning costs: dense top-10 at scale, the search "
                                               "and similar commands with embeddings off and on, memory, throughput")
    p.add_argument("--size", default="100k", help="papers served (default 100k)")
    p.add_argument("--dense-sizes", default="100k,1M,2.6M", help="sizes for the dense top-10 alone")
    p.add_argument("--queries", type=int, default=100, help="queries and similar papers (default 100)")
    p.add_argument("--embed-sample", type=int, default=256, help="papers embedded to time the model")
    p.add_argument("--work-dir", help="where the library is built (default: the system temp dir)")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    p.set_defaults(func=cmd_bench_relevance)

    p = sub.add_parser("bench", help="time paperclub's search against rank-bm25, bm25s and tantivy")
    p.add_argument(
        "--sizes", default=DEFAULT_SIZES, help=f"synthetic corpus sizes (default {DEFAULT_SIZES})"
    )
    p.add_argument(
        "--engines", default="paperclub,rank-bm25,bm25s,tantivy", help="engines to compare"
    )
    p.add_argument(
        "--queries", type=int, default=200, help="queries per engine and size (default 200)"
    )
    p.add_argument(
        "--corpus",
        choices=["realistic", "resampled"],
        default="realistic",
        help="realistic: a vocabulary growing as SciFact's (Heaps' law), Zipf, topics (default); "
        "resampled: the seed sentences, about 8,000 distinct words at any size",
    )
    p.add_argument(
        "--repeat-titles",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="realistic corpus: the share of papers whose title others share too (e.g. 0.1)",
    )
    p.add_argument(
        "--jsonl", metavar="DIR", help="also write each corpus as JSON Lines for `paperclub import`"
    )
    p.add_argument(
        "--rank-bm25-max", default="100k", help="largest corpus for rank-bm25 (default 100k)"
    )
    p.add_argument(
        "--whole",
        action="store_true",
        help="also time paperclub as the bot runs it: `paperclub import` of each corpus "
        "(SQLite database and index, its peak memory) and the whole `search` command with cards",
    )
    p.add_argument("--out", default="bench-results", help="directory for bench.json and bench.png")
    p.add_argument("--work-dir", help="where the indexes are built (default: the system temp dir)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("eval", help="nDCG@10 and Recall@100 on a BEIR folder")
    p.add_argument("folder", metavar="DIR", help="corpus.jsonl, queries.jsonl and qrels/SPLIT.tsv")
    p.add_argument("--split", default="test", help="qrels file to use (default test)")
    p.add_argument(
        "--k1", type=float, default=Bm25Params.k1, help=f"BM25 k1 (default {Bm25Params.k1})"
    )
    p.add_argument("--b", type=float, default=Bm25Params.b, help=f"BM25 b (default {Bm25Params.b})")
    p.add_argument(
        "--title-weight", type=int, default=1, help="times the title is indexed (default 1)"
    )
    p.add_argument("--methods", default=DEFAULT_METHODS,
                   help="bm25, dense (meaning alone), hybrid (both, as the bot ranks); default all three "
                        "where a model loads")
    p.add_argument("--weight", type=float, help="the hybrid's dense weight (default the bot's, 0.5)")
    p.add_argument("--cv", action="store_true",
                   help="also the hybrid with its weight chosen by 2-fold cross-validation")
    p.add_argument("--cache", metavar="DIR",
                   help="where the documents' vectors are kept (default ~/.cache/paperclub/eval)")
    p.add_argument("--json", action="store_true", help="print each result as a line of JSON")
    p.set_defaults(func=cmd_eval)
