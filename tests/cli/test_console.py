"""The console adapter: a piped chat session, text and JSON replies, usage on bad input."""

from __future__ import annotations

import io
import json

from adapters.console import ConsoleSession


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
