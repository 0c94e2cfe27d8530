"""`python -m adapters.bench.slack`: p50/p99 of signed `/paper search` requests against a
running `paperclub serve slack` process, on the seed corpus, all on 127.0.0.1.

It imports the seeds into a scratch SQLite file with `paperclub import`, starts the
stand-in Slack Web API (adapters/fakes/slack_api.py, which the tests use too), starts the
server as its own process pointed at it, and times each request from sending it to the last
byte of the ack, with a few clients at once as Slack would send them. The request count
is bounded; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from adapters.fakes.slack_api import (
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    signed_headers,
    slash_command,
)
from adapters.slack.config import EVENTS_PATH

MAX_REQUESTS = 10_000
QUERIES = (
    "graph neural networks",
    "diffusion models robustness",
    "reinforcement learning exploration",
    "continual learning forgetting",
    "language models reasoning",
    "adversarial examples",
    "contrastive self-supervised learning",
    "neural tangent kernel",
    "federated learning privacy",
    "transformer attention efficiency",
    "meta-learning few-shot",
    "graph biconnectivity",
    "implicit bias gradient descent",
    "out-of-distribution generalization",
    "model compression int8",
    "author:bengio",
    "track:oral diffusion",
    "in:trending language models",
    "normalizing flows",
    "offline reinforcement learning",
)
SEED_FILES = (
    "iclr2021-openreview.md",
    "iclr2023-poster-session.txt",
    "trending-papers.txt",
    "iclr2022-topics.txt",
    "iclr2022-blog-review.txt",
)


@dataclass
class BenchResult:
    requests: int
    concurrency: int
    failures: int
    latencies_ms: list[float]

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]

    def line(self) -> str:
        return (
            f"{self.requests} signed /paper search requests, {self.concurrency} at a time: "
            f"p50 {self.percentile(50):.1f} ms, p99 {self.percentile(99):.1f} ms, "
            f"max {max(self.latencies_ms):.1f} ms, "
            f"mean {statistics.fmean(self.latencies_ms):.1f} ms, {self.failures} failed"
        )


# --- a server process --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def import_seeds(database_url: str) -> None:
    """The five seed files, through `paperclub import` as a user would."""
    corpus = resources.files("bot") / "demo_corpus"
    paths = [str(corpus / name) for name in SEED_FILES]
    env = {**os.environ, "PAPERCLUB_DATABASE_URL": database_url}
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "import", *paths], env=env, capture_output=True, text=True,
        check=False,  # a failure is raised below, with what the import said
    )
    if done.returncode:
        raise RuntimeError(f"paperclub import failed:\n{done.stderr}")


@contextmanager
def slack_server(
    env: dict[str, str], port: int, log_path: Path, start_timeout: float = 120.0
) -> Iterator[int]:
    """`paperclub serve slack` with `env` on `port` until the block ends; yields the port.
    Slack settings of the calling environment are left out: only `env`'s count."""
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERCLUB_SLACK_"))
    }
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "adapters.cli", "serve", "slack"],
            env={**inherited, **env, "PORT": str(port)},
            stdout=log,
            stderr=log,
        )
        try:
            _wait_until_listening(server, port, start_timeout, log_path)
            yield port
        finally:
            server.terminate()
            server.wait(timeout=30)


def _wait_until_listening(
    server: subprocess.Popen, port: int, timeout: float, log_path: Path
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(
                f"paperclub serve slack exited with {server.returncode}:\n{log_path.read_text()}"
            )
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(
        f"paperclub serve slack did not listen on port {port} within {timeout:.0f} s"
    )


def post_signed(
    port: int, body: str, headers: dict[str, str], timeout: float = 30.0
) -> tuple[int, str]:
    """POST a request to the server's events path on 127.0.0.1: (status, body)."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{EVENTS_PATH}", data=body.encode(), headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


# --- the benchmark -------------------------------------------------------------------------------


def measure(port: int, response_url: str, requests: int, concurrency: int) -> BenchResult:
    """Time `requests` signed searches, `concurrency` clients at a time."""
    def one(n: int) -> tuple[float, bool]:
        body = slash_command(
            f"search {QUERIES[n % len(QUERIES)]}", response_url, user=f"U0BENCH{n % 8}"
        )
        headers = signed_headers(body)
        started = time.perf_counter()
        status, answer = post_signed(port, body, headers)
        elapsed = (time.perf_counter() - started) * 1000
        return elapsed, status == 200 and bool(json.loads(answer or "{}").get("blocks"))

    with ThreadPoolExecutor(concurrency) as pool:
        outcomes = list(pool.map(one, range(requests)))
    return BenchResult(
        requests, concurrency, sum(not ok for _, ok in outcomes), [ms for ms, _ in outcomes]
    )


@contextmanager
def seeded_slack(scratch: Path) -> Iterator[tuple[FakeSlack, int]]:
    """The seeds in a SQLite file under `scratch`, the stand-in Slack Web API, and
    `paperclub serve slack` pointed at both (its log in scratch/server.log): (fake, port)."""
    database_url = f"sqlite:///{scratch / 'slack.db'}"
    import_seeds(database_url)
    env = {
        "PAPERCLUB_DATABASE_URL": database_url,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
    }
    with FakeSlack() as slack, slack_server(
        {**env, "SLACK_API_URL": slack.api_url}, free_port(), scratch / "server.log"
    ) as port:
        yield slack, port


def run(requests: int, concurrency: int, warmup: int = 20) -> BenchResult:
    with (
        tempfile.TemporaryDirectory(prefix="paperclub-slack-bench-") as scratch,
        seeded_slack(Path(scratch)) as (slack, port),
    ):
        measure(port, slack.response_url(), warmup, concurrency)  # warm: index pages, connections
        return measure(port, slack.response_url(), requests, concurrency)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m adapters.bench.slack", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--requests", type=int, default=1000, help="signed searches to time (default 1000)"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="clients at once (default 4)")
    args = parser.parse_args(argv)
    if not 1 <= args.requests <= MAX_REQUESTS or not 1 <= args.concurrency <= 64:
        parser.error(f"--requests is 1 to {MAX_REQUESTS:,}, --concurrency 1 to 64")
    result = run(args.requests, args.concurrency)
    print(result.line())
    return 1 if result.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
