"""The console adapter: a piped chat session, text and JSON replies, usage on bad input;
and `paperclub console` as a process: a command that raises, a reader that goes away,
Ctrl-C."""

from __future__ import annotations

import io
import json
import queue
import re
import signal
import threading

import pytest

from adapters.console import ConsoleSession, render_card, render_text
from bot.messages import PaperCard, Reply
from tests.processes import paperclub, start_paperclub


def _run(core, lines: str, as_json: bool = False) -> tuple[str, int]:
    out = io.StringIO()
    errors = ConsoleSession(core, channel="c1", user="u1").run(io.StringIO(lines), out, as_json=as_json)
    return out.getvalue(), errors


def test_piped_session_answers_every_line_and_goes_on_after_errors(seeded):
    _library, _search, core = seeded
    output, errors = _run(core, "help\nfrobnicate\nsearch\nshow abc\nsearch graph biconnectivity\n")
    assert errors == 3
    assert "search QUERY" in output and "similar ID" in output  # help lists commands
    assert "Unknown command `frobnicate`" in output
    assert "Usage: search QUERY" in output  # `search` without words prints its usage
    assert "No paper with ID `abc`" in output and "Usage: show ID" in output
    assert "Rethinking the Expressive Power of GNNs via Graph Biconnectivity" in output
    assert "paperclub> " not in output  # no prompt when piped


def test_json_replies_carry_cards_and_ids(seeded):
    _library, _search, core = seeded
    output, _ = _run(core, "search few-shot backdoor attacks\n", as_json=True)
    reply = json.loads(output.splitlines()[0])
    assert reply["ok"] is True
    card = reply["cards"][0]
    assert card["title"] == "Few-shot Backdoor Attacks via Neural Tangent Kernels"
    assert isinstance(card["paper_id"], int) and card["authors"] == ["Jonathan Hayase", "Sewoong Oh"]
    output, _ = _run(core, f"show {card['paper_id']}\nsimilar {card['paper_id']}\n", as_json=True)
    shown, similar = (json.loads(line) for line in output.splitlines())
    assert shown["cards"][0]["paper_id"] == card["paper_id"]
    assert len(similar["cards"]) == 5
    assert card["paper_id"] not in {c["paper_id"] for c in similar["cards"]}


def test_help_for_one_command_gives_an_example(seeded):
    _library, _search, core = seeded
    output, errors = _run(core, "help similar\nhelp nosuch\n")
    assert "Example: similar 42" in output
    assert "There is no command `nosuch`" in output and errors == 1


def test_a_reply_linking_to_a_post_says_where_its_discussion_is():
    from adapters.console import render_text
    from bot.messages import Reply

    text = render_text(Reply(text="Tomorrow: reading group.", link_to="console-7"))
    assert text.endswith("(discussion: the thread of message console-7)")


def test_a_members_card_says_title_match_without_score_or_sources_and_the_operators_shows_them():
    """Issue 46: the console (chat) and `paperclub search` share this renderer; a BM25 score
    and where a paper came from are operator detail."""
    shown = PaperCard(
        paper_id=750, title="Graph Coarsening with Neural Networks", venue="ICLR 2021 · iclr2021 · Poster",
        score=6.321, title_match=True, discussion=[r"@u1, 2026-01-05: 8$\times$ faster"],
        sources=["iclr2021: iclr2021-openreview.md:285 (openreview)"],
    )
    assert render_card(shown).splitlines()[1:] == [
        "    ICLR 2021 · iclr2021 · Poster   title match",
        "    - @u1, 2026-01-05: 8× faster",
    ]
    assert render_card(shown, operator=True).splitlines()[1:] == [
        "    ICLR 2021 · iclr2021 · Poster   score 6.32 · title match",
        "    - @u1, 2026-01-05: 8× faster",
        "    source: iclr2021: iclr2021-openreview.md:285 (openreview)",
    ]
    assert render_text(Reply(cards=[shown])) == render_card(shown)  # what a console member reads


def test_show_in_chat_names_no_source_file_and_search_says_title_match_in_text_and_json(seeded):
    _library, _search, core = seeded
    output, _ = _run(core, "search temporally extended epsilon greedy exploration\n", as_json=True)
    found = json.loads(output)["cards"][0]
    assert found["title"] == "Temporally-Extended ε -Greedy Exploration" and found["title_match"] is True
    assert found["sources"] == []
    output, _ = _run(core, f"show {found['paper_id']}\n")
    assert "Temporally-Extended" in output
    assert "source:" not in output and "iclr2021-openreview.md" not in output  # operator detail


def test_the_demo_shows_a_latex_title_as_unicode_and_a_venue_and_year_line(tmp_path):
    result = paperclub("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^\[\d+\] Temporally-Extended ε -Greedy Exploration$", result.stdout, re.MULTILINE)
    assert "Mini-batch k-means terminates within O(d/ε) iterations" in result.stdout
    # Not its title, so no title match (issue 28); and no score on a card shown in chat (issue 46).
    assert re.search(r"^    ICLR 2021 · Poster$", result.stdout, re.MULTILINE)
    assert not re.search(r"score \d", result.stdout)
    assert "$\\" not in result.stdout
    # The reading list's paper, found by its arXiv id, with its venue and year and a link
    # made from that id.
    assert "/paper show arXiv:1706.03762" in result.stdout
    shown = result.stdout.split("/paper show arXiv:1706.03762", 1)[1]
    assert "Attention Is All You Need" in shown
    assert "    Advances in Neural Information Processing Systems 2017" in shown.splitlines()
    assert "https://arxiv.org/abs/1706.03762" in shown


class RaisingCore:
    """A core with a bug in one command: `boom` raises, every other line is echoed."""

    def handle(self, incoming) -> Reply:
        if incoming.text == "boom":
            raise RuntimeError("a bug in one command")
        return Reply(text=f"echo {incoming.text}")


def test_a_line_that_makes_the_core_raise_gets_an_apology_and_the_session_goes_on():
    output, errors = _run(RaisingCore(), "before\nboom\nafter\n")
    assert output.splitlines() == [
        "echo before",
        "Sorry, that command failed (RuntimeError). The console goes on: try another command.",
        "echo after",
    ]
    assert errors == 1
    output, _ = _run(RaisingCore(), "boom\nafter\n", as_json=True)
    apology, after = (json.loads(line) for line in output.splitlines())
    assert apology["ok"] is False and "RuntimeError" in apology["text"] and after["text"] == "echo after"


# As an operator runs it: stdout block-buffered when piped (this test machine may set -u).
BUFFERED = {"PYTHONUNBUFFERED": ""}


def _first_line(stream, seconds: float = 30.0) -> bytes:
    """A line from a child's stdout, or a failure after `seconds` (never a hung test)."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=seconds)
    except queue.Empty:
        raise AssertionError(f"no line on stdout within {seconds:.0f} s") from None


@pytest.mark.parametrize("argv", [["console"], ["export"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(seeded_copy, tmp_path, argv):
    # `paperclub console < lines | head -1`: far more output than a pipe holds, read once.
    child = start_paperclub(*argv, cwd=tmp_path, env={"PAPERCLUB_DATABASE_URL": seeded_copy, **BUFFERED})
    try:
        child.stdin.write(b"help\n" * 2000)
        child.stdin.close()
        assert _first_line(child.stdout)
        child.stdout.close()
        code = child.wait(timeout=120)
        stderr = child.stderr.read().decode()
    finally:
        child.kill()
    assert code == 1, stderr  # 1 for a closed pipe, as the Python docs advise
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_ctrl_c_ends_the_console_quietly_with_130(seeded_copy, tmp_path):
    child = start_paperclub("console", cwd=tmp_path, env={"PAPERCLUB_DATABASE_URL": seeded_copy, **BUFFERED})
    try:
        child.stdin.write(b"help similar\n")
        child.stdin.flush()
        # Answered while stdin stays open: each reply is flushed as it is written.
        assert _first_line(child.stdout).startswith(b"Usage: similar ID")
        child.send_signal(signal.SIGINT)  # while it waits for the next line
        code = child.wait(timeout=60)
        stderr = child.stderr.read().decode()
    finally:
        child.kill()
    assert code == 130, stderr
    assert stderr == "", stderr


@pytest.mark.parametrize("word", ["exit", "quit", "QUIT", "/exit"])
def test_exit_and_quit_end_the_console_instead_of_printing_the_help(seeded, word):
    _, _, core = seeded
    out = io.StringIO()
    ConsoleSession(core, channel="bye").run(io.StringIO(f"today\n{word}\nhelp\n"), out)
    assert "paperclub commands" not in out.getvalue()  # neither `exit` nor the `help` after it answered
    assert out.getvalue().count("\n") == 1  # only `today` was answered


def test_a_post_on_the_console_shows_the_vote_to_type_and_typing_it_counts(seeded_copy):
    from bot.app import build_services

    services = build_services(seeded_copy)
    session = ConsoleSession(services.core, channel="buttons", user="ann", manager=True)
    posted = session.send("next")
    paper = posted.cards[0].paper_id
    shown = render_text(posted).splitlines()[-1]
    # Buttons name the post; the console, having none, shows what a member types.
    assert shown == (f"[Want to discuss: vote {paper} up]  [Not for us: vote {paper} down]"
                     f"  [I read it: vote {paper} read]")
    assert posted.actions[0].value == f"vote {posted.post_id} up"
    assert session.send(f"vote {paper} up").text.endswith("👍 1 · 👎 0 · read 0")
