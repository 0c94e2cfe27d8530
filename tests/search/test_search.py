"""Search as members use it: loose titles, filters, cards, similar papers."""

from __future__ import annotations

import random
import re

import pytest

from bot.messages import ChannelRef, Incoming, UserRef
from bot.search.query import Query, QueryError
from tests.conftest import SEED_COUNTS


def _loosely(title: str, rng: random.Random) -> str:
    """How a member types a half-remembered title: lower case, no punctuation, a word gone."""
    words = re.sub(r"[^\w\s-]", " ", title.lower()).replace("-", " ").split()
    if len(words) > 3:
        del words[rng.randrange(1, len(words))]
    return " ".join(words)


def test_a_loosely_typed_title_finds_that_paper_first(seeded):
    """A whole title typed loosely (lower case, no punctuation) is a title match, first.
    With a word gone it is no longer the title (issue 28: `graph neural networks` is not
    "Graph Coarsening with Neural Networks"), so it is not promoted, but BM25 still ranks
    the paper in the top five (all but one of the seed titles)."""
    library, search, _core = seeded
    index = search.current()
    rng = random.Random(11)
    papers = [p for p in library.iter_papers() if not p.title_derived and len(p.title.split()) >= 4]
    assert len(papers) > 900
    whole, partial = [], []
    for paper in papers:
        typed = re.sub(r"[^\w\s-]", " ", paper.title.lower()).replace("-", " ")
        first = index.search(Query.parse(typed), 1)
        if not re.search(r"[$^\\]", paper.title) and (first[0].paper_id, first[0].title_match) != (paper.id, True):
            whole.append(paper.title)
        if paper.id not in [h.paper_id for h in index.search(Query.parse(_loosely(paper.title, rng)), 5)]:
            partial.append(paper.title)
    assert whole == []
    assert len(partial) <= 1, partial


def test_filters_narrow_the_results(seeded):
    library, search, _core = seeded
    index = search.current()
    papers = library.get_many(
        h.paper_id for h in index.search(Query.parse("learning track:oral"), 50)
    )
    assert papers and all(p.track == "Oral" for p in papers.values())
    hits = index.search(Query.parse('graph author:"Bohang Zhang"'), 10)
    assert [library.get_many([h.paper_id])[h.paper_id].title for h in hits] == [
        "Rethinking the Expressive Power of GNNs via Graph Biconnectivity"
    ]
    hits = index.search(Query.parse("learning in:trending"), 100)
    assert 0 < len(hits) <= SEED_COUNTS["trending"]
    assert all(
        "trending" in p.collections for p in library.get_many(h.paper_id for h in hits).values()
    )
    tagged = index.search(Query.parse('tag:"continual learning"'), 10)
    assert len(tagged) == 3
    assert index.search(Query.parse("learning author:nobodyatall"), 10) == []
    award = index.search(Query.parse('track:"outstanding paper"'), 10)
    assert len(award) == 1


def test_query_parsing():
    query = Query.parse('diffusion author:"Yann LeCun" track:oral robustness in:iclr2021')
    assert query.text == "diffusion robustness"
    assert query.filters == {"author": ["Yann LeCun"], "track": ["oral"], "in": ["iclr2021"]}
    with pytest.raises(QueryError):
        Query.parse('author:"" graphs')


def test_search_reply_has_cards_with_matched_terms_and_snippet(seeded):
    _library, _search, core = seeded

    incoming = Incoming(
        ChannelRef("console", "local", "t"),
        UserRef("console", "u"),
        "search neural tangent kernel backdoor",
    )
    reply = core.handle(incoming)
    assert reply.ok and reply.cards
    top = reply.cards[0]
    assert top.title == "Few-shot Backdoor Attacks via Neural Tangent Kernels"
    assert top.authors_display == "Jonathan Hayase, Sewoong Oh"
    assert {"backdoor", "kernels"} <= {w.lower() for w in top.matched_terms}
    # The preview is the part of the abstract where most query terms meet.
    assert top.snippet.startswith("…") and "neural tangent kernel" in top.snippet.lower()
    assert "poster accept" in top.venue


def test_long_author_lists_are_shortened():
    from bot.cards.cards import authors_display

    assert authors_display(list("ABCDEFG")) == "A, B, C, D, E +2 more"
    assert authors_display(["A", "B"]) == "A, B"


def test_similar_papers_share_the_topic_and_exclude_the_paper(seeded):
    library, search, _core = seeded
    index = search.current()
    hits = index.search(Query.parse("continual learning catastrophic forgetting"), 1)
    source = hits[0].paper_id
    similar = index.similar(source, 5)
    assert len(similar) == 5 and source not in {h.paper_id for h in similar}
    texts = [
        (p.title + " " + p.abstract).lower()
        for p in library.get_many(h.paper_id for h in similar).values()
    ]
    assert sum("forget" in t or "continual" in t for t in texts) >= 4


def _reply(core, text: str):
    return core.handle(Incoming(ChannelRef("console", "local", "t"), UserRef("console", "u"), text))


def test_an_unknown_filter_value_is_named_with_the_values_there_are(seeded):
    _library, _search, core = seeded
    assert _reply(core, "search learning in:nosuch").text == (
        "No collection `nosuch`; collections: blog-review, openreview, poster-session, "
        "topic-abstracts, trending"
    )
    assert _reply(core, "search track:bogus").text == (
        "No track `bogus`; tracks: Honorable Mention, Oral, Outstanding Paper, Poster, "
        "poster accept, Spotlight, top 25%, top 5%"
    )
    assert _reply(core, 'search graphs tag:"no such tag"').text == (
        "No tag `no such tag`; tags: Architectural Bias, Continual Learning, Domain Adaptation, "
        "Emergent Communication, Explaining Learning and Learning Phenomenon, "
        "Symbolic Learning and Structured Prediction, Training Strategy"
    )
    assert _reply(core, "search learning author:nobodyatall").text == (
        "No author matching `nobodyatall`."
    )
    # Each word is someone's, but no paper has an author with both.
    assert _reply(core, 'search author:"Bohang LeCun"').text == (
        "No author matching `Bohang LeCun`."
    )


def test_known_filter_values_in_any_case_are_not_reported(seeded):
    _library, search, core = seeded
    index = search.current()
    query = Query.parse('learning in:TRENDING track:ORAL author:"bohang zhang" tag:continual')
    assert index.unknown_filter(query) is None
    assert _reply(core, "search learning in:Trending").cards
    assert index.unknown_filter(Query.parse("in:trending track:oral in:nosuch")) == (
        "No collection `nosuch`; collections: blog-review, openreview, poster-session, "
        "topic-abstracts, trending"
    )


def test_a_long_list_of_values_shows_the_ten_most_used_then_an_ellipsis():
    from bot.corpus.indexed import IndexedPaper
    from bot.search.builtin.index import SearchIndex
    from bot.search.tokens import Tokenizer

    # Tag t00 is on 1 paper, t01 on 2, ... t13 on 14: the ten most used are t04..t13.
    papers = [
        IndexedPaper(i, f"paper {i}", f"paper {i}", tags=[f"T{t:02d}" for t in range(14) if i <= t])
        for i in range(14)
    ]
    index = SearchIndex.build(1, Tokenizer(), papers)
    assert index.unknown_filter(Query.parse("tag:zz")) == (
        "No tag `zz`; tags: " + ", ".join(f"T{t:02d}" for t in range(4, 14)) + ", …"
    )
    no_collections = "No collection `x`; no paper has collections."
    assert index.unknown_filter(Query.parse("in:x")) == no_collections
