"""What the Slack tests share: requests signed like Slack's, sent to the real bolt App or
to the WSGI stack `paperclub serve` runs, and bolt's listeners run inline."""

from __future__ import annotations

import io
from collections.abc import Callable
from concurrent.futures import Executor, Future

from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse

from adapters.fakes.slack_api import FakeSlack, button_click, signed_headers, slash_command

BOSS = "U0BOSS"  # a workspace admin, as users.info tells it
MEMBER = "U0MEMBER"
CHANNEL = "C0READING"


class InlineExecutor(Executor):
    """Runs each submitted function at once, in the caller's thread: a dispatch returns
    once its lazy listener has finished."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as problem:  # noqa: BLE001 - handed to the future, as a pool would
            future.set_exception(problem)
        return future


def send(app: App, body: str, headers: dict | None = None) -> BoltResponse:
    return app.dispatch(BoltRequest(body=body, headers=headers or signed_headers(body)))


def command(
    app: App, slack: FakeSlack, text: str, user: str = MEMBER, team: str = "T0PAPERS", **more
) -> BoltResponse:
    return send(app, slash_command(text, slack.response_url(), user=user, team=team, **more))


def click(app: App, slack: FakeSlack, message: dict, button: int, user: str = MEMBER) -> BoltResponse:
    """A click on the `button`th button of a message the bot posted."""
    buttons = [e for block in message["blocks"] if block["type"] == "actions" for e in block["elements"]]
    chosen = buttons[button]
    return send(
        app, button_click(chosen["value"], chosen["action_id"], message["ts"], slack.response_url(), user=user)
    )


def posted(slack: FakeSlack, method: str = "chat.postMessage") -> dict:
    """The last message sent with `method`, with the ts the fake gave it."""
    call = slack.calls_to(method)[-1]
    return {**call.params, "ts": call.answer["ts"]}


def section_texts(blocks: list[dict]) -> str:
    return "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")


def wsgi_post(
    app: Callable, body: bytes | str, headers: dict[str, str], path: str = "/slack/events"
) -> tuple[int, bytes]:
    """POST through a WSGI app in this process, as waitress would hand it the request."""
    raw = body.encode() if isinstance(body, str) else body
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "3000",
        "wsgi.input": io.BytesIO(raw),
        "wsgi.url_scheme": "http",
        "CONTENT_LENGTH": str(len(raw)),
    }
    for name, value in headers.items():
        key = name.upper().replace("-", "_")
        environ[key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{key}"] = value
    answer: dict = {}

    def start_response(status: str, _headers: list) -> None:
        answer["status"] = int(status.split()[0])

    chunks = app(environ, start_response)
    return answer["status"], b"".join(chunks)
