"""The archive page over real HTTP (the WSGI adapter on 127.0.0.1): the channel's posts,
notes, tallies, queue, meetings and polls; nothing of another channel; escaped text;
private headers; 404 for anything but a live token."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from datetime import datetime, timezone
from html.parser import HTMLParser

import bibtexparser
import pytest
import rispy

from adapters.runtime import Process
from adapters.wsgi import HealthServer
from tests.memory.scene import (
    MALLORY_NOTE,
    MALLORY_TITLE,
    PUBLIC_URL,
    READING_NOTE,
    THEORY_NOTE,
    XSS_TITLE,
    build_scene,
    note_mallory,
)

UTC = timezone.utc
NOW = datetime(2026, 10, 1, 9, tzinfo=UTC)


@pytest.fixture
def scene(db, database_url, tmp_path):  # db: the schema, upgraded
    built = build_scene(database_url, tmp_path, NOW)
    yield built
    built.services.db.dispose()


@pytest.fixture
def server(scene):
    """The routes `paperclub serve` mounts, on a real waitress server on port 0."""
    routes = Process(scene.services, scheduler_on=False).routes()
    health = HealthServer(0, routes.pop("/healthz"), routes)
    health.start()
    yield f"http://127.0.0.1:{health.server.effective_port}"
    health.stop()


def get(url: str) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def archive_token(scene, user="ann", channel="reading", manager=False) -> str:
    reply = scene.member(user, channel=channel, manager=manager).send("archive reset" if manager else "archive")
    assert reply.ok and reply.ephemeral, reply.text
    return re.search(re.escape(PUBLIC_URL) + r"/archive/([A-Za-z0-9_-]+)", reply.text).group(1)


class Text(HTMLParser):
    """The page's visible text, and its tags (to find any <script> the page would run)."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.parts.append(data)


def parsed(body: bytes) -> Text:
    text = Text()
    text.feed(body.decode())
    return text


def test_the_page_shows_the_channels_posts_notes_and_tallies_and_nothing_of_another_channel(scene, server):
    status, _, body = get(f"{server}/archive/{archive_token(scene)}")
    assert status == 200
    page = " ".join(parsed(body).parts)
    assert "Zebrafish Retina Regeneration as Sparse Coding" in page
    assert READING_NOTE in page and "@ann" in page
    assert "2 up, 0 down, 0 read" in page  # the Zebrafish post's tally
    assert "Posted Fri 11 Sep 2026" in page
    # the theory channel's paper and note never show on the reading channel's page
    assert "Quokka" not in body.decode() and THEORY_NOTE not in body.decode() and "narwhal" not in body.decode()
    # and the theory channel's own page has them, and not the reading channel's
    theory = get(f"{server}/archive/{archive_token(scene, 'tess', 'theory')}")[2].decode()
    assert "Quokka Gradient Descent Never Converges" in theory and "narwhal secret" in theory
    assert "Zebrafish" not in theory and "okapi" not in theory


def test_a_script_in_a_title_or_a_note_is_shown_as_text(scene, server):
    body = get(f"{server}/archive/{archive_token(scene)}")[2]
    text = parsed(body)
    assert "script" not in text.tags and "img" not in text.tags and "b" not in text.tags
    assert XSS_TITLE in " ".join(text.parts)  # shown as the member typed it
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert b"&lt;img src=x onerror=alert(2)&gt;" in body


def test_headers_make_the_page_private_and_allow_only_its_own_stylesheet(scene, server):
    status, headers, body = get(f"{server}/archive/{archive_token(scene)}")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Cache-Control"] == "private"
    assert "noindex" in headers["X-Robots-Tag"]
    assert headers["Referrer-Policy"] == "no-referrer"
    policy = headers["Content-Security-Policy"]
    nonce = re.search(r"style-src 'nonce-([A-Za-z0-9_-]+)'", policy).group(1)
    assert policy.startswith("default-src 'none'") and "script-src" not in policy and "unsafe-inline" not in policy
    assert f'<style nonce="{nonce}">'.encode() in body
    assert b"<script" not in body  # no JavaScript at all
    assert b'name="viewport"' in body and b"@media print" in body


def test_wrong_revoked_and_malformed_tokens_are_the_same_plain_404(scene, server):
    old = archive_token(scene)
    new = archive_token(scene, "boss", manager=True)  # archive reset
    plain = get(f"{server}/nothing-here")
    assert plain[0] == 404
    for path in (f"/archive/{old}", f"/archive/{old}.bib", f"/archive/{old}.ris", f"/archive/{old}.json",
                 f"/archive/{new}.txt", f"/archive/{new}.ris.json", f"/archive/{new[:-2]}", "/archive/", "/archive/x",
                 f"/archive/{new}/../{new}", f"/calendar/{new}.ics", "/archive/%00", f"/archive/{new}.ics"):
        status, headers, body = get(server + path)
        assert (status, body) == (404, plain[2]), path
    assert get(f"{server}/archive/{new}")[0] == 200
    status, headers, _ = get(f"{server}/healthz")
    assert status in (200, 503) and headers["Content-Type"] == "application/json"  # still there


def test_too_many_query_fields_are_a_400_and_other_methods_a_405_never_a_500(scene, server, caplog):
    token = archive_token(scene)
    twenty = "&".join(f"f{n}=x" for n in range(19)) + "&q=graph"
    assert get(f"{server}/archive/{token}?{twenty}")[0] == 200
    for path in (f"/archive/{token}", f"/archive/{token}.bib", f"/archive/{token}.ris", "/calendar/x.ics",
                 "/archive/x"):
        for query in (twenty + "&f20=x", "&".join(["q=a"] * 21), "&".join(f"f{n}" for n in range(5000))):
            status, _, body = get(f"{server}{path}?{query}")
            assert (status, body) == (400, b"bad request"), path
    assert all(token not in r.getMessage() for r in caplog.records)  # the log names the route, not the token
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        request = urllib.request.Request(f"{server}/archive/{token}", method=method, data=b"")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 405, method


def test_search_finds_what_the_channel_has_seen_including_its_notes(scene, server):
    token = archive_token(scene)
    found = " ".join(parsed(get(f"{server}/archive/{token}?q=okapi+ablation")[2]).parts)
    assert "Search: “okapi ablation”" in found
    results = found.split("Search: “okapi ablation”")[1].split("Votes over time")[0]
    assert "Zebrafish" in results and "Adversarial" not in results
    other = " ".join(parsed(get(f"{server}/archive/{token}?q=quokka")[2]).parts)
    assert "Nothing this channel has seen matches “quokka”" in other  # another channel's paper
    hostile = get(f"{server}/archive/{token}?q=%3Cscript%3Ealert(3)%3C/script%3E")[2]
    assert b"<script>alert(3)" not in hostile and b"&lt;script&gt;alert(3)" in hostile


def test_the_page_shows_queue_meetings_polls_and_the_votes_picture(scene, server):
    boss = scene.member("boss", manager=True)
    ids = scene.ids
    assert boss.send(f"nominate {ids['Marmot']}").ok
    poll = boss.send("poll 2 1h")
    assert boss.send(f"vote {poll.poll_id} 1").ok and boss.send("poll close").ok
    body = get(f"{server}/archive/{archive_token(scene)}")[2].decode()
    queue = body.split('id="queue"')[1].split("</section>")[0]
    assert "Marmot Transformers for Alpine Weather" in queue
    polls = body.split('id="polls"')[1].split("</section>")[0]
    assert "Marmot Transformers for Alpine Weather (won)" in polls and "1 vote" in polls
    picture = body.split('id="votes"')[1].split("</section>")[0]
    assert "<svg" in picture and picture.count("<rect") >= 2
    assert "2 up, 1 down" in picture  # the week's <title>: both votes were cast this week


def test_the_bibtex_link_gives_the_channels_papers_with_its_notes(scene, server):
    token = archive_token(scene)
    body = get(f"{server}/archive/{token}")[2].decode()
    assert f'href="{token}.bib"' in body
    status, headers, bib = get(f"{server}/archive/{token}.bib")
    assert status == 200 and headers["Content-Type"].startswith("application/x-bibtex")
    assert headers["Cache-Control"] == "private"
    library = bibtexparser.parse_string(bib.decode())
    titles = {e.fields_dict["title"].value for e in library.entries}
    assert titles == {"Zebrafish Retina Regeneration as Sparse Coding", XSS_TITLE}
    zebra = next(e for e in library.entries if e.fields_dict["title"].value.startswith("Zebrafish"))
    assert READING_NOTE in zebra.fields_dict["annote"].value
    assert zebra.fields_dict["author"].value == "Ada Lovelace and Alan Turing"
    assert zebra.fields_dict["eprint"].value == "2101.00001"


def test_the_ris_and_csl_json_links_give_the_channels_papers_as_reference_managers_read_them(scene, server):
    token = archive_token(scene)
    body = get(f"{server}/archive/{token}")[2].decode()
    assert f'href="{token}.ris"' in body and f'href="{token}.json"' in body
    status, headers, text = get(f"{server}/archive/{token}.ris")
    assert status == 200 and headers["Content-Type"].startswith("application/x-research-info-systems")
    assert headers["Content-Disposition"] == 'attachment; filename="paperclub-reading.ris"'
    assert headers["Cache-Control"] == "private" and "sandbox" in headers["Content-Security-Policy"]
    records = {r["title"]: r for r in rispy.loads(text.decode())}
    assert set(records) == {"Zebrafish Retina Regeneration as Sparse Coding", XSS_TITLE}
    zebra = records["Zebrafish Retina Regeneration as Sparse Coding"]
    assert (zebra["year"], zebra["number"], zebra["urls"]) == ("2021", "2101.00001", ["https://arxiv.org/abs/2101.00001"])
    assert any(READING_NOTE in note for note in zebra["notes"]) and THEORY_NOTE not in text.decode()
    status, headers, text = get(f"{server}/archive/{token}.json")
    assert status == 200 and headers["Content-Type"].startswith("application/vnd.citationstyles.csl+json")
    items = json.loads(text)
    assert {i["title"] for i in items} == set(records) and "Quokka" not in text.decode()


def test_an_author_name_no_bibtex_parser_splits_is_in_every_download_and_never_a_500(scene, server):
    """Issue 45: a noted page whose citation_author is "Mallory }" made the .json download
    a 500 (bibtexparser refused to split the name)."""
    note_mallory(scene)
    token = archive_token(scene)
    downloads = {}
    for suffix in (".json", ".bib", ".ris"):
        status, _, body = get(f"{server}/archive/{token}{suffix}")
        assert status == 200, (suffix, body[:300])
        downloads[suffix] = body.decode()
    items = {i["title"]: i for i in json.loads(downloads[".json"])}
    assert items[MALLORY_TITLE]["author"] == [{"literal": "Mallory }"}, {"family": "Lovelace", "given": "Ada"}]
    assert items[MALLORY_TITLE]["container-title"] == "Journal of {Unbalanced Results"
    library = bibtexparser.parse_string(downloads[".bib"])
    assert not library.failed_blocks and len(library.entries) == 3
    mallory = next(e for e in library.entries if e.fields_dict["title"].value == MALLORY_TITLE)
    assert mallory.fields_dict["author"].value == "Mallory and Ada Lovelace"
    assert mallory.fields_dict["journal"].value == "Journal of Unbalanced Results"
    assert "an unmatched brace, a and a in a note" in mallory.fields_dict["annote"].value
    records = {r["title"]: r for r in rispy.loads(downloads[".ris"])}
    assert records[MALLORY_TITLE]["authors"] == ["Mallory }", "Ada Lovelace"]
    assert any(MALLORY_NOTE in note for note in records[MALLORY_TITLE]["notes"])


def test_the_votes_picture_fits_a_few_weeks_and_spreads_a_year():
    from datetime import date, timedelta

    from bot.memory.chart import FEW_WEEKS, WIDTH, votes_chart

    one = votes_chart([(date(2026, 9, 28), 2, 1)])
    assert one.few and one.width < 120 and [b.total for b in one.bars] == [3]
    assert one.ticks == [(one.bars[0].x + one.bars[0].width / 2, "28 Sep")]  # the week under its bar
    assert one.bars[0].down_y == one.top_y  # the tallest bar reaches the top, its count above it
    two = votes_chart([(date(2026, 9, 21), 1, 0), (date(2026, 9, 28), 0, 0)])
    assert two.few and [label for _, label in two.ticks] == ["21 Sep", "28 Sep"]
    year = votes_chart([(date(2026, 1, 5) + timedelta(weeks=n), 1, n % 2) for n in range(FEW_WEEKS + 30)])
    assert not year.few and year.width == WIDTH and [label for _, label in year.ticks][:3] == ["Jan", "Feb", "Mar"]
    assert votes_chart([]) is None
