"""The merge rule: one value per field from a paper's sources, whatever their order."""

from __future__ import annotations

from itertools import permutations

from bot.corpus.merge import merged, source_fields
from bot.corpus.records import PaperRecord


def fields(**values) -> dict:
    return source_fields(PaperRecord(**{"title": "A Paper", **values}))


SOURCES = [
    (("blog", "review.txt", 9), fields(
        title="A paper", notes=["Worth a read."], tags=["Vision"], authors=["A. Lee"],
        abstract="Short.",
    )),
    (("bib", "refs.bib", 40), fields(
        title="A Paper", url="https://example.org/a", year=2021, venue="ICLR",
        authors=["Ann Lee", "Bo Chen"], tags=["vision", "Vision"],
    )),
    (("topics", "topics.txt", 3), fields(
        title="We study a thing at length", title_derived=True,
        abstract="We study a thing at length, and it works.", tags=["Continual Learning"],
    )),
    (("bib", "refs.bib", 12), fields(  # another line of the same file: another paper's row
        title="A Paper", abstract="A medium-length abstract.", track="Oral",
    )),
]


def test_each_field_follows_the_documented_rule():
    shown = merged(SOURCES)
    # Earliest by (collection, source, line): bib/refs.bib:12, bib/refs.bib:40, blog, topics.
    assert (shown["title"], shown["title_derived"]) == ("A Paper", False)
    assert shown["abstract"] == "We study a thing at length, and it works."  # the longest
    assert shown["authors"] == ["Ann Lee", "Bo Chen"]  # the most names
    assert (shown["url"], shown["year"], shown["venue"], shown["track"]) == (
        "https://example.org/a", 2021, "ICLR", "Oral",
    )
    assert shown["tags"] == ["vision", "Vision", "Continual Learning"]
    assert shown["notes"] == ["Worth a read."]
    assert "external_ids" not in shown  # the library holds ids (store.models.Paper.ids)


def test_no_import_order_changes_the_result():
    results = {repr(merged(list(order))) for order in permutations(SOURCES)}
    assert len(results) == 1


def test_ties_go_to_the_earliest_source_and_derived_titles_only_without_an_own_one():
    same_length = [
        (("b", "x", 1), fields(title="Second", abstract="bbbb")),
        (("a", "x", 1), fields(title="First", abstract="aaaa")),
    ]
    assert (merged(same_length)["title"], merged(same_length)["abstract"]) == ("First", "aaaa")
    only_derived = [(("b", "x", 1), fields(title="Derived b", title_derived=True)),
                    (("a", "x", 1), fields(title="Derived a", title_derived=True))]
    assert (merged(only_derived)["title"], merged(only_derived)["title_derived"]) == ("Derived a", True)
    own_later = [*only_derived, (("z", "x", 1), fields(title="Own"))]
    assert (merged(own_later)["title"], merged(own_later)["title_derived"]) == ("Own", False)


def test_a_single_source_shows_exactly_what_it_said():
    record = PaperRecord(title="T", authors=["A"], abstract="x.", url="u", track="Poster",
                         presentation="p", award="w", venue="v", year=2020, tags=["t"], notes=["n"])
    shown = merged([(("c", "s", 1), source_fields(record))])
    assert shown == {k: v for k, v in source_fields(record).items() if k != "external_ids"}


def test_a_single_source_follows_the_rule_of_several():
    """merged() takes a short way for one source; it shows what the general rule shows of
    that source alone: repeated tags and notes once, an empty value as none, a year 0 kept."""
    from bot.corpus.merge import EMPTY, _alone, _of_several

    odd = {**EMPTY, **fields(title="T", tags=["a", "b", "a"], notes=["n", "n"], url="",
                             venue="", year=0, title_derived=True, authors=["x", "x"])}
    cases = [odd, *({**EMPTY, **f} for _key, f in SOURCES)]
    for case in cases:
        assert _alone(case) == _of_several([case])
    assert _alone(odd)["tags"] == ["a", "b"] and _alone(odd)["url"] is None
    assert _alone(odd)["year"] == 0 and _alone(odd)["authors"] == ["x", "x"]


def test_a_filled_in_source_comes_after_every_other_whatever_its_name():
    """What a provider filled in ("filled:openalex", bot/enrich) fills only what no other
    source says: never a url, venue, year, title, abstract or authors a source gave."""
    filled = (("filled:openalex", "openalex.org", 1), fields(
        title="A PAPER", url="https://openalex.example/a.pdf", year=2020, venue="Journal", track="Talk",
        authors=["Ann Lee", "Bo Chen", "Cy Diaz"], abstract="A much longer abstract than any source gave.",
    ))
    own = (("zz-last", "z.txt", 1), fields(title="A Paper", venue="ICLR", authors=["Ann Lee"], abstract="Ours."))
    for order in permutations([filled, own]):
        shown = merged(order)
        assert (shown["title"], shown["venue"], shown["authors"], shown["abstract"]) == (
            "A Paper", "ICLR", ["Ann Lee"], "Ours.")
        assert (shown["url"], shown["year"], shown["track"]) == ("https://openalex.example/a.pdf", 2020, "Talk")
    bare = (("zz-last", "z.txt", 1), fields(title="A Paper"))
    shown = merged([filled, bare])
    assert (shown["title"], shown["authors"]) == ("A Paper", ["Ann Lee", "Bo Chen", "Cy Diaz"])  # nobody named any
