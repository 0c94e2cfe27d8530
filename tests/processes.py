"""paperclub as a real process for tests: one `paperclub ...` command, or `paperclub serve`
started, waited for and stopped.

Only the environment given counts for Slack, Discord and paperclub settings (the
calling environment's are left out), so a developer's own tokens never leak in.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from adapters import platforms

OWN_PREFIXES = ("SLACK_", "DISCORD_", "PAPERCLUB_", "DATABASE_URL", "PORT")


def ours(name: str) -> bool:
    """A variable paperclub reads: one of its families, or a platform's (the registry's)."""
    return name.startswith(OWN_PREFIXES) or name in platforms.variables()


def paperclub(
    *args: str, cwd: Path, stdin: str = "", env: dict | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """One `paperclub ARGS` run to completion; the caller's database settings are left out."""
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", *args],
        cwd=cwd, input=stdin, capture_output=True, text=True, env=_environment(env), timeout=timeout,
        check=False,  # the callers look at the exit status
    )


def start_paperclub(*args: str, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """`paperclub ARGS` started with stdin, stdout and stderr as pipes (bytes), for a test
    that talks to it line by line, closes its output or interrupts it."""
    return subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", *args], cwd=cwd, env=_environment(env),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_interruptible,  # noqa: PLW1509 - only resets SIGINT; no Popen option undoes an inherited SIG_IGN
    )


def _interruptible() -> None:
    """The child takes Ctrl-C as it would from a terminal. A test run started in the
    background by a shell without job control (`pytest &`) inherits SIGINT ignored, and
    Python then installs no KeyboardInterrupt handler: the child would never see the
    SIGINT a test sends it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _environment(env: dict | None) -> dict:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("PAPERCLUB_DATABASE_URL", "DATABASE_URL")
    }
    environment.update(env or {})
    return environment


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServeProcess:
    def __init__(self, args: list[str], env: dict[str, str], log_path: Path):
        self.args = args
        self.env = {
            **{k: v for k, v in os.environ.items() if not ours(k)},
            "PAPERCLUB_LOG_LEVEL": "INFO",
            **env,
        }
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> ServeProcess:
        with open(self.log_path, "ab") as log:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(
                [sys.executable, "-m", "adapters.cli", "serve", *self.args], env=self.env, stdout=log, stderr=log
            )
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_for_log(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return
            if not self.alive():
                raise AssertionError(f"paperclub serve exited ({self.process.returncode}):\n{self.log()}")
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} in the log within {timeout:.0f} s:\n{self.log()}")

    def wait_until_listening(self, port: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise AssertionError(f"paperclub serve exited ({self.process.returncode}):\n{self.log()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"paperclub serve did not listen on {port} within {timeout:.0f} s")

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM, as a host sends it before a restart; the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"paperclub serve ignored SIGTERM for {timeout:.0f} s:\n{self.log()}") from None

    def kill(self) -> None:
        if self.alive():
            self.process.kill()
            self.process.wait()


def get_json(url: str, timeout: float = 10.0) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"{}")
