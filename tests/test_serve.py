"""`paperclub serve slack discord` as a host runs it: SIGTERM mid-post, restart, nothing lost.

A real process, with a fake Slack Web API and a fake Discord (REST and gateway) on
127.0.0.1. Six channels (three on each platform) are due at once; both fakes hold every
post back for a few seconds, so the test can stop the process while the first post is in
flight. The post in flight must finish, the five not started must stay due, and the
restarted process must post each of them: every channel exactly one post.
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from adapters.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack
from bot.app import build_services
from bot.corpus.feeds import Feeds
from bot.messages import ChannelRef, Incoming, UserRef
from bot.services.models import Claim, Post
from store.models import Channel
from tests.fake_discord_api import GUILD_ID, FakeDiscordAPI
from tests.fake_discord_api import TOKEN as DISCORD_TOKEN
from tests.processes import ServeProcess, free_port, get_json

SLACK_CHANNELS = ("C0ALPHA", "C0BETA", "C0GAMMA")
DISCORD_CHANNELS = (1_100_000_000_000_000_301, 1_100_000_000_000_000_302, 1_100_000_000_000_000_303)
POST_SECONDS = 3.0  # how long each fake holds a post's answer back in the first run


def _refs(first: str = "slack") -> list[ChannelRef]:
    slack = [ChannelRef("slack", TEAM, c) for c in SLACK_CHANNELS]
    discord = [ChannelRef("discord", str(GUILD_ID), str(c)) for c in DISCORD_CHANNELS]
    return slack + discord if first == "slack" else discord + slack


def _schedule_all_due_now(url: str, first: str) -> None:
    """The tick posts in the order channels were set up: `first`'s platform is the one
    the SIGTERM interrupts."""
    services = build_services(url)
    due = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%H:%M")
    for ref in _refs(first):
        admin = UserRef(ref.platform, "admin", "admin", is_manager=True)
        reply = services.core.handle(Incoming(ref, admin, f"schedule {due} UTC daily"))
        assert reply.ok, reply.text
    services.db.dispose()


def _posts_arrived(slack: FakeSlack, discord: FakeDiscordAPI) -> int:
    return slack.arrivals.get("chat.postMessage", 0) + len(discord.messages)


def _delivered(slack: FakeSlack, discord: FakeDiscordAPI) -> Counter:
    """Channel -> posts that went out and were answered, on both platforms."""
    slack_posts = [c.params["channel"] for c in slack.calls_to("chat.postMessage") if c.answer.get("ok")]
    discord_posts = [str(m.channel_id) for m in discord.messages if m.answered]
    return Counter(slack_posts + discord_posts)


def _database_state(url: str) -> tuple[Counter, Counter]:
    """(claim states, posts per channel) as the database holds them."""
    services = build_services(url)
    with services.db.session() as session:
        claims = Counter(session.scalars(select(Claim.state)))
        posts = Counter(
            session.scalars(select(Channel.channel).join(Post, Post.channel_id == Channel.id).where(
                Post.state == "sent"))
        )
    services.db.dispose()
    return claims, posts


def _wait(condition, seconds: float, what: str, server: ServeProcess):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        assert server.alive(), server.log()
        time.sleep(0.1)
    raise AssertionError(f"{what} within {seconds:.0f} s:\n{server.log()}")


def _healthz_when(ready, port: int, server: ServeProcess, seconds: float = 60) -> tuple[int, dict]:
    """/healthz's (status, body) once `ready(status, body)` holds, polled until `seconds`
    pass; the last answer goes into the failure."""
    answer: tuple[int, dict] = (0, {})

    def answered() -> bool:
        nonlocal answer
        answer = get_json(f"http://127.0.0.1:{port}/healthz")
        return ready(*answer)

    _wait(answered, seconds, f"/healthz still answers {answer}", server)
    return answer


@pytest.mark.parametrize(
    "seeded_db_url, first",
    [("sqlite", "slack"), pytest.param("postgresql", "discord", marks=pytest.mark.postgres)],
    indirect=["seeded_db_url"],
)
def test_sigterm_mid_post_then_restart_posts_every_channel_exactly_once(seeded_db_url, first, tmp_path):
    _schedule_all_due_now(seeded_db_url, first)
    with FakeSlack() as slack, FakeDiscordAPI(channel_ids=DISCORD_CHANNELS) as discord:
        env = {
            "PAPERCLUB_DATABASE_URL": seeded_db_url,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": slack.api_url,
            "DISCORD_TOKEN": DISCORD_TOKEN,
            "DISCORD_API_URL": discord.api_url,
            "PAPERCLUB_TICK_SECONDS": "2",
        }
        slack.delays["chat.postMessage"] = POST_SECONDS
        discord.post_delay = POST_SECONDS

        # First run: stopped as soon as the first post reaches a platform.
        port = free_port()
        run1 = ServeProcess(["slack", "discord"], {**env, "PORT": str(port)}, tmp_path / "first.log").start()
        try:
            _wait(lambda: _posts_arrived(slack, discord) >= 1, 90, "no post arrived", run1)
            exit_code = run1.terminate()
        finally:
            run1.kill()
        log = run1.log()
        assert exit_code == 0, log
        # The post in flight finished (answered, recorded); none was started after the SIGTERM.
        assert _posts_arrived(slack, discord) == 1, log
        assert sum(_delivered(slack, discord).values()) == 1, log
        claims, posts = _database_state(seeded_db_url)
        assert claims == Counter({"posted": 1, "released": 5}), (claims, log)
        assert posts == Counter({_refs(first)[0].channel: 1})  # the one in flight when the SIGTERM came
        assert "SIGTERM: shutting down" in log and "5 due posts left for the next tick" in log

        # Second run: takes the five released posts at once and posts each exactly once.
        slack.delays["chat.postMessage"] = discord.post_delay = 0.2
        port = free_port()
        run2 = ServeProcess(["slack", "discord"], {**env, "PORT": str(port)}, tmp_path / "second.log").start()
        try:
            _wait(lambda: sum(_delivered(slack, discord).values()) >= 6, 90, "not every channel posted", run2)
            time.sleep(5)  # two more ticks: a doubled post would show now
            code, health = get_json(f"http://127.0.0.1:{port}/healthz")
            exit_code = run2.terminate()
        finally:
            run2.kill()
    log = run1.log() + run2.log()
    assert exit_code == 0, log
    expected = Counter({ref.channel: 1 for ref in _refs()})
    assert _delivered(slack, discord) == expected, log
    assert len(discord.threads) == 3  # each Discord post opened its discussion thread
    claims, posts = _database_state(seeded_db_url)
    assert claims == Counter({"posted": 6}) and posts == expected
    assert code == 200 and health["scheduler"]["status"] == "ok"
    # INFO logs carry no token and nothing that went out in a post.
    for secret in (BOT_TOKEN, SIGNING_SECRET, DISCORD_TOKEN):
        assert secret not in log
    assert "Traceback" not in log, log


def test_with_no_platform_configured_serve_posts_console_channels_and_answers_healthz(seeded_copy, tmp_path):
    services = build_services(seeded_copy)
    due = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%H:%M")
    ref = ChannelRef("console", "local", "reading")
    assert services.core.handle(Incoming(ref, UserRef("console", "me", "me", is_manager=True),
                                         f"schedule {due} UTC daily")).ok
    Feeds(services.db).add("cs-lg", "https://export.arxiv.org/api/query?search_query=cat:cs.LG", "0 6 * * *")
    services.db.dispose()
    port = free_port()
    server = ServeProcess([], {"PAPERCLUB_DATABASE_URL": seeded_copy, "PORT": str(port)},
                          tmp_path / "serve.log").start()
    try:
        server.wait_for_log("posted paper")
        server.wait_until_listening(port)
        # The heartbeat is written when the tick ends, after its posts: wait for it.
        code, health = _healthz_when(lambda code, health: health.get("scheduler", {}).get("status") == "ok",
                                     port, server)
        exit_code = server.terminate()
    finally:
        server.kill()
    log = server.log()
    assert exit_code == 0, log
    assert "paperclub serving /healthz; scheduler for console" in log
    # What to set, in one line, naming no variable a user would not set (SLACK_API_URL is a test hook).
    nothing = [line for line in log.splitlines() if "nothing to serve" in line]
    assert len(nothing) == 1 and "SLACK_API_URL" not in nothing[0], log
    for variable in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DISCORD_TOKEN",
                     "docs/deploying.md"):
        assert variable in nothing[0]
    assert "Paper of the day" in log  # the post itself, printed for the console channel
    assert "scheduled feed refreshes: cs-lg" in log
    assert code == 200 and health["scheduler"]["status"] == "ok" and health["index"]["status"] == "ok"


def test_a_refused_discord_token_stops_serve_with_the_reason(seeded_copy, tmp_path):
    with FakeDiscordAPI(token="the-token-discord-knows") as discord:
        env = {"PAPERCLUB_DATABASE_URL": seeded_copy, "DISCORD_TOKEN": "an-old-token-reset-since",
               "DISCORD_API_URL": discord.api_url}
        server = ServeProcess(["discord"], env, tmp_path / "serve.log").start()
        try:
            exit_code = server.process.wait(timeout=60)
        finally:
            server.kill()
    log = server.log()
    # Not restarted in a loop: Discord resets a token that logs in 1,000 times a day.
    assert exit_code == 1, log
    assert "error: Discord refused DISCORD_TOKEN; copy a fresh token from the Developer Portal" in log
    assert "an-old-token-reset-since" not in log


# --- start-up failures: one line, exit 1 ------------------------------------------------------


def _serve_once(args: list[str], env: dict, tmp_path) -> tuple[int, list[str]]:
    """`paperclub serve ARGS` that is expected to stop by itself: (exit code, its lines)."""
    server = ServeProcess(args, env, tmp_path / "serve.log").start()
    try:
        code = server.process.wait(timeout=60)
    finally:
        server.kill()
    return code, server.log().splitlines()


def _errors(lines: list[str]) -> list[str]:
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    return [line for line in lines if line.startswith("error:")]


def test_serve_with_an_unreachable_database_stops_with_one_line(tmp_path):
    env = {"PAPERCLUB_DATABASE_URL": "postgresql://paperclub:pw-not-shown@127.0.0.1:1/papers", "PORT": str(free_port())}
    code, lines = _serve_once([], env, tmp_path)
    assert code == 1
    assert lines == [("error: PAPERCLUB_DATABASE_URL: cannot connect to postgresql://paperclub:***@127.0.0.1:1/papers: "
                      'connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused')]


def test_serve_on_a_port_already_taken_stops_with_one_line(seeded_copy, tmp_path):
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, lines = _serve_once([], {"PAPERCLUB_DATABASE_URL": seeded_copy, "PORT": str(port)}, tmp_path)
    assert code == 1
    assert lines == [f"error: PORT={port}: cannot listen there (Address already in use)"]


def test_serve_when_slack_cannot_be_reached_stops_with_one_line(seeded_copy, tmp_path):
    env = {"PAPERCLUB_DATABASE_URL": seeded_copy, "PORT": str(free_port()), "SLACK_BOT_TOKEN": BOT_TOKEN,
           "SLACK_SIGNING_SECRET": SIGNING_SECRET, "SLACK_API_URL": "http://127.0.0.1:1/api/"}
    code, lines = _serve_once(["slack"], env, tmp_path)
    assert code == 1
    assert _errors(lines) == [("error: Slack's API at http://127.0.0.1:1/api/ (SLACK_API_URL) did not answer "
                               "when checking SLACK_BOT_TOKEN (Connection refused)")], lines


# --- where it listens: PAPERCLUB_HOST and serve --host (finding 9) ------------------------------


def _answers(address: str, port: int) -> bool:
    """Whether something accepts a connection at address:port (127.0.0.2 is loopback too,
    so a server on 0.0.0.0 accepts there and one on 127.0.0.1 does not)."""
    try:
        socket.create_connection((address, port), timeout=5).close()
        return True
    except ConnectionRefusedError:
        return False


def test_the_health_server_listens_on_every_interface_unless_told(tmp_path):
    from adapters.wsgi import HealthServer, json_endpoint

    endpoint = json_endpoint(lambda: (True, {}))
    everywhere, here = HealthServer(free_port(), endpoint), HealthServer(free_port(), endpoint, host="127.0.0.1")
    try:
        assert _answers("127.0.0.2", everywhere.server.effective_port)  # the default is unchanged: 0.0.0.0
        assert _answers("127.0.0.1", here.server.effective_port)
        assert not _answers("127.0.0.2", here.server.effective_port)
    finally:
        everywhere.server.close()
        here.server.close()


def test_serve_listens_only_on_the_host_it_is_given(seeded_copy, tmp_path):
    port = free_port()
    server = ServeProcess([], {"PAPERCLUB_DATABASE_URL": seeded_copy, "PORT": str(port), "PAPERCLUB_HOST": "127.0.0.1"},
                          tmp_path / "serve.log").start()
    try:
        server.wait_until_listening(port)
        assert get_json(f"http://127.0.0.1:{port}/healthz")[0] in (200, 503)
        assert not _answers("127.0.0.2", port)
        assert server.terminate() == 0, server.log()
    finally:
        server.kill()


def test_serve_host_flag_wins_over_the_variable(monkeypatch, tmp_path):
    import adapters.runtime
    import bot.ops.logs
    from adapters.cli.main import main

    asked = {}
    monkeypatch.setenv("PAPERCLUB_HOST", "0.0.0.0")
    monkeypatch.setattr(adapters.runtime, "serve", lambda *a, **kw: asked.update(kw) or 0)
    monkeypatch.setattr(bot.ops.logs, "configure", lambda *a, **kw: None)  # the test run's logging stays
    assert main(["--database-url", f"sqlite:///{tmp_path / 'x.db'}", "serve", "--host", "127.0.0.1"]) == 0
    assert asked["host"] == "127.0.0.1"


def test_a_host_that_is_not_an_address_is_refused_by_name(capsys):
    from adapters.cli.main import build_parser
    from adapters.config_check import check

    with pytest.raises(SystemExit) as refused:
        build_parser().parse_args(["serve", "--host", "not a host!"])
    assert refused.value.code == 2
    assert "argument --host: 'not a host!' is not an IP address or host name" in capsys.readouterr().err
    text, code = check({"PAPERCLUB_HOST": "not a host!"})
    assert code == 1
    assert ("PAPERCLUB_HOST: 'not a host!' is not an IP address or host name: use e.g. 127.0.0.1 (this machine "
            "only) or 0.0.0.0 (every interface)") in text
