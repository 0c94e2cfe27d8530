"""search, show, similar and settings: reading the library and the channel, never changing them."""

from __future__ import annotations

from bot.cards.cards import NEAR_TO_PAPER, card
from bot.cards.latex import readable
from bot.channels.channels import Channels
from bot.corpus.library import Library
from bot.feature import Feature, Features, Kit
from bot.grammar import Command, Param, UsageError
from bot.messages import Incoming, Reply, counted
from bot.search.engine import SearchBackend
from bot.search.hybrid import words_only
from bot.search.query import Query
from bot.services.replies import EMPTY_LIBRARY
from store.models import Paper

SEARCH_RESULTS = 5
SIMILAR_RESULTS = 5
LEXICAL = "--lexical"  # `search --lexical ...`: by words alone, with BM25's exact scores
QUERY_CHARS = 300  # what a form takes for a search: a query, not a pasted abstract


class LookupFeature(Feature):
    """`features` is the whole list: `settings` and `show` gather what every feature adds."""

    name = "lookup"

    def __init__(self, library: Library, search: SearchBackend, channels: Channels, features: Features):
        self.library = library
        self.search_service = search
        self.tokenizer = search.tokenizer
        self.channels = channels
        self.features = features

    @classmethod
    def build(cls, kit: Kit) -> LookupFeature:
        return cls(kit.library, kit.search, kit.channels, kit.features)

    def commands(self) -> list[Command]:
        return [
            Command(
                "search",
                "search QUERY [author:NAME] [track:oral] [in:COLLECTION] [tag:WORD] [year:2021]",
                "Find the best-matching papers (BM25); filters narrow the results.",
                'search diffusion robustness author:"yann lecun"',
                self.search,
                params=(Param("query", "words to search for", required=True, low=1, high=QUERY_CHARS),
                        Param("author", "an author's name"), Param("track", "e.g. oral, spotlight"),
                        Param("collection", "a collection name (see /paper collections)"), Param("tag", "a tag")),
                written='{query} author:"{author}" track:"{track}" in:"{collection}" tag:"{tag}"',
            ),
            Command("show", "show ID", "Show one paper's card with its notes.", "show 42", self.show,
                    params=(Param("paper", "the paper's ID (the number on its card), an arXiv id or a DOI",
                                  required=True),)),
            Command("similar", "similar ID", "Papers like this one.", "similar 42", self.similar,
                    params=(Param("paper", "the paper's ID (the number on its card)", required=True),)),
            Command("settings", "settings", "This channel's settings in one place: schedule, topics, "
                    "collections, meeting, presenters, open poll.", "settings", self.settings_command,
                    brief="This channel's settings in one place.", private=True),
        ]

    def search(self, _incoming: Incoming, args: str) -> Reply:
        words = args.split()
        lexical = LEXICAL in words  # exact BM25, words alone
        if lexical:
            args = " ".join(word for word in words if word != LEXICAL)
        query = Query.parse(args)
        if query.is_empty():
            raise UsageError("Say what to search for.")
        index = words_only(self.search_service.current()) if lexical else self.search_service.current()
        hits = index.search(query, SEARCH_RESULTS)
        spelling = index.spellcheck(query)  # unknown words and what they may have meant
        if not hits:
            empty = index.filtered_count(Query("")) == 0
            return Reply(text=EMPTY_LIBRARY if empty else index.unknown_filter(query) or spelling.no_match(args))
        papers = self.library.get_many(h.paper_id for h in hits)
        cards = [card(papers[h.paper_id], self.tokenizer, h) for h in hits if h.paper_id in papers]
        # Of the papers the filters leave, not of the whole corpus.
        text = f"Top {len(cards)} of {counted(index.filtered_count(query), 'paper')} for `{args}`:"
        note = spelling.note()
        return Reply(text=f"{text}\n{note}" if note else text, cards=cards)

    def show(self, incoming: Incoming, args: str) -> Reply:
        paper = self._paper_arg(args)
        shown = card(paper, self.tokenizer, full=True)
        self.features.on_show(incoming, paper.id, shown)
        return Reply(text=f"Paper {paper.id}:", cards=[shown])

    def similar(self, _incoming: Incoming, args: str) -> Reply:
        paper = self._paper_arg(args)
        hits = self.search_service.current().similar(paper.id, SIMILAR_RESULTS)
        if not hits:
            return Reply(text=f"Nothing in the corpus resembles paper {paper.id}.")
        papers = self.library.get_many(h.paper_id for h in hits)
        cards = [card(papers[h.paper_id], self.tokenizer, h, reason=NEAR_TO_PAPER if h.by_meaning and not h.matched
                      else "") for h in hits if h.paper_id in papers]
        return Reply(text=f"Papers like {paper.id} “{readable(paper.title)}”:", cards=cards)

    def settings_command(self, incoming: Incoming, args: str) -> Reply:
        if args.strip():
            raise UsageError("`settings` takes no arguments.")
        channel = self.channels.get(incoming.channel)
        return Reply(text="\n".join(self.features.settings(channel)), ephemeral=True)

    def _paper_arg(self, args: str) -> Paper:
        return self.library.named(args)
