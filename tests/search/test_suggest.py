"""Did you mean: a search whose words no paper has suggests the closest indexed words."""

from __future__ import annotations

import numpy as np

from bot.corpus.indexed import IndexedPaper
from bot.messages import ChannelRef, Incoming, UserRef
from bot.search.builtin.content import IndexContent
from bot.search.builtin.index import SearchIndex
from bot.search.builtin.service import SearchService
from bot.search.builtin.spelling import Spelling
from bot.search.query import Query
from bot.search.suggest import Spellcheck
from bot.search.tokens import Tokenizer

ISSUE_EXAMPLE = "grpah nueral netwroks"


def _search(core, text: str):
    return core.handle(Incoming(ChannelRef("console", "local", "t"), UserRef("console", "u"), text))


def _spelling(counts: dict[str, int]) -> Spelling:
    words = sorted(counts)
    return Spelling.build(words, np.array([counts[w] for w in words]))


def test_the_issues_example_gets_did_you_mean_on_the_seeds(seeded):
    _library, _search_service, core = seeded
    reply = _search(core, f"search {ISSUE_EXAMPLE}")
    assert reply.text == (
        f"No papers match `{ISSUE_EXAMPLE}`. Did you mean `graph neural networks`?"
    )
    assert reply.cards == []


def test_results_with_an_unknown_word_say_which_and_what_it_may_have_meant(seeded):
    _library, _search_service, core = seeded
    reply = _search(core, "search graph neural netwroks")
    assert reply.cards
    assert reply.text.splitlines()[1] == "(no paper has `netwroks`; did you mean `networks`?)"


def test_no_suggestion_when_every_word_is_known(seeded):
    _library, search, core = seeded
    index = search.current()
    check = index.spellcheck(Query.parse("Graph neural networks multi-task gpt-4"))
    assert check.unknown == () and check.corrections == {}
    reply = _search(core, "search graph neural networks")
    assert reply.cards and "did you mean" not in reply.text.lower()
    assert len(reply.text.splitlines()) == 1
    # Known words, no hits (the filter excludes them all): nothing to correct either.
    none = _search(core, "search backdoor tag:continual-learning")
    assert none.text == (
        "No papers match `backdoor tag:continual-learning`. Try fewer or broader words."
    )


def test_a_word_no_paper_has_and_nothing_near_gets_no_suggestion(seeded):
    _library, search, core = seeded
    check = search.current().spellcheck(Query.parse("graph xqzvkw"))
    assert check.unknown == ("xqzvkw",) and check.corrections == {}
    assert _search(core, "search xqzvkw").text == (
        "No papers match `xqzvkw`. Try fewer or broader words."
    )


def test_a_suggestion_never_proposes_the_same_word(seeded):
    _library, search, _core = seeded
    index = search.current()
    spelling = index.content.spelling
    assert spelling.closest("graph") != "graph" and spelling.closest("networks") != "networks"
    assert _spelling({"graph": 9}).closest("graph") is None
    for typed in ("grpah", "nueral", "netwroks", "trasnformer", "difusion", "robstness"):
        meant = index.spellcheck(Query.parse(typed)).corrections[typed]
        assert meant != typed
        assert index.bm25.vocabulary.find(index.tokenizer.tokens(meant)[0]) is not None


def test_numbers_and_short_words_are_not_corrected(seeded):
    _library, search, _core = seeded
    index = search.current()
    check = index.spellcheck(Query.parse("qz 2029 gpt-9 l7 int9 graph"))
    assert check.corrections == {}
    spelling = _spelling({"gpt": 50, "int": 50, "lab": 50, "graph": 50})
    assert [spelling.closest(w) for w in ("gp", "la", "2029", "gpt9", "int9", "grapj")] == [
        None, None, None, None, None, "graph"
    ]


def test_the_closest_word_wins_then_the_most_frequent():
    spelling = _spelling({"graph": 5, "grape": 900, "graphs": 4000, "grasp": 1})
    assert spelling.closest("grpah") == "graph"  # one swap, where "graphs" is two edits
    assert spelling.closest("grapx") == "grape"  # two at one edit: the more frequent
    assert spelling.closest("rgaph") == "graph"  # the first two letters swapped
    assert spelling.closest("gxxxh") is None  # three edits from every word


def test_short_words_get_one_edit_long_ones_two():
    spelling = _spelling({"loss": 10, "attention": 10})
    assert spelling.closest("lpss") == "loss" and spelling.closest("lpsz") is None
    assert spelling.closest("axxentxon") is None  # three edits
    assert spelling.closest("atetntoin") == "attention"  # two swaps


def test_filter_values_stay_as_typed_in_the_suggestion(seeded):
    _library, search, core = seeded
    reply = _search(core, "search Grpah nueral track:oral")
    assert reply.text.endswith("Did you mean `graph neural track:oral`?")
    check = search.current().spellcheck(Query.parse("grpah nueral"))
    assert check.did_you_mean('Grpah author:"Grpah Nueral" nueral tag:grpah') == (
        'graph author:"Grpah Nueral" neural tag:grpah'
    )
    plain = Spellcheck(("grpah",), {"grpah": "graph"})
    assert plain.did_you_mean("Grpah grpahs") == "graph grpahs"  # whole words only


def test_suggested_words_are_typed_forms_of_stems_in_two_papers():
    papers = [
        IndexedPaper(1, "Studies of graphs", "Studies of graphs\nwe studied networks"),
        IndexedPaper(2, "Graph studies", "Graph studies\nmore networking and a netwrok"),
    ]
    index = SearchIndex.build(1, Tokenizer(), papers)
    words = index.content.spelling.words.to_list()
    # "studi" is a stem nobody types; "netwrok" (one paper) is left out.
    assert sorted(words) == ["graph", "graphs", "networking", "networks", "studied", "studies"]
    assert index.spellcheck(Query.parse("studeis")).corrections == {"studeis": "studies"}


def test_an_incremental_build_keeps_the_old_words_and_adds_the_new():
    tokenizer = Tokenizer()
    first = [IndexedPaper(i, f"graph {i}", f"graph {i}\nneural networks") for i in (1, 2)]
    more = [IndexedPaper(i, f"kernel {i}", f"kernel {i}\nbackdoor kernels") for i in (3, 4)]
    base = IndexContent.build(first, tokenizer)
    extended = IndexContent.build(first + more, tokenizer, previous=base)
    index = SearchIndex(2, tokenizer, extended)
    check = index.spellcheck(Query.parse("grpah bakcdoor nueral"))
    assert check.corrections == {"grpah": "graph", "bakcdoor": "backdoor", "nueral": "neural"}


def test_suggestions_survive_the_index_being_saved_and_loaded(seeded_copy):
    from bot.app import build_services

    services = build_services(seeded_copy)
    try:
        built = services.search.current()
        words = getattr(services.search, "words", services.search)  # the engine's own, under a hybrid one
        reloaded = SearchService(words.loader, index_dir=words.store.root)
        loaded = reloaded.current()
        assert loaded.content.spelling.words.to_list() == built.content.spelling.words.to_list()
        assert loaded.spellcheck(Query.parse(ISSUE_EXAMPLE)).corrections == {
            "grpah": "graph", "nueral": "neural", "netwroks": "networks"
        }
    finally:
        services.db.dispose()
