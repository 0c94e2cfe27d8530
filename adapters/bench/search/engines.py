"""The engines `paperclub bench` compares, each behind the same two steps.

`build(papers, directory)` indexes the papers (streamed from the corpus generator, whose
time counts in the build) and persists them in `directory`; `load(directory)` returns a
function from a query's text to the ids of its top 10. Each engine tokenises the way it is
normally used: paperclub and rank-bm25 with paperclub's tokenizer (paperclub on worker
processes, rank-bm25 in one process), bm25s with its own tokenizer and PyStemmer's English
stemmer, tantivy with its `en_stem` analyzer. rank-bm25 has no index format of its own, so it is pickled.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from bot.corpus.indexed import IndexedPaper
from bot.search.builtin.content import IndexContent
from bot.search.builtin.files import IndexStore, fingerprint
from bot.search.builtin.service import SearchService
from bot.search.params import Bm25Params
from bot.search.query import Query
from bot.search.tokens import Tokenizer

K = 10
Search = Callable[[str], list[int]]


class _NewPapers:
    """A loader as bot.corpus.library.Library is one, of the papers added after the build
    (revision 2): what the search service reads to add a segment."""

    def __init__(self, papers: Iterable[IndexedPaper]):
        self.new = list(papers)

    def revision(self) -> int:
        return 2 if self.new else 1

    def identity(self) -> str:
        return "bench"

    def papers_changed(self, since: int) -> list[IndexedPaper]:
        return self.new if since < 2 else []

    def papers(self) -> list[IndexedPaper]:
        raise AssertionError("the bench adds a segment, it never rebuilds")


class PaperclubEngine:
    name = "paperclub"

    def build(self, papers: Iterable[IndexedPaper], directory: Path) -> int:
        # The papers are streamed into the build, as from the database.
        content = IndexContent.build(papers, Tokenizer())
        meta = {
            "revision": 1,
            "fingerprint": fingerprint(Tokenizer(), Bm25Params()),
            "identity": "bench",
            "stamp": None,
            "papers": content.doc_count,
        }
        IndexStore(directory).save(content.arrays(), meta)
        return len(content.bm25.vocabulary)

    def load(self, directory: Path) -> Search:
        index = SearchService(_NewPapers([]), index_dir=directory).current()
        return lambda text: [hit.paper_id for hit in index.search(Query(text), K)]

    def add(self, papers: Iterable[IndexedPaper], directory: Path) -> Search:
        """A segment of the new papers, as the bot adds one after an import or `add`."""
        service = SearchService(_NewPapers(papers), index_dir=directory)
        index = service.current()
        service.wait_for_merges()  # a merge, if one is due, runs after the papers are searchable
        return lambda text: [hit.paper_id for hit in index.search(Query(text), K)]


class RankBm25Engine:
    add = None  # no index to add to: BM25Okapi is made again from all the documents

    name = "rank-bm25"

    def build(self, papers: Iterable[IndexedPaper], directory: Path) -> int:
        from rank_bm25 import BM25Okapi

        tokenizer = Tokenizer()
        model = BM25Okapi([tokenizer.tokens(p.text) for p in papers])
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / "bm25okapi.pickle", "wb") as out:
            pickle.dump(model, out, protocol=pickle.HIGHEST_PROTOCOL)
        return len(model.idf)

    def load(self, directory: Path) -> Search:
        with open(directory / "bm25okapi.pickle", "rb") as source:
            model = pickle.load(source)  # our own file, written by build above
        tokenizer = Tokenizer()

        def search(text: str) -> list[int]:
            scores = model.get_scores(tokenizer.tokens(text))
            top = np.argpartition(-scores, K)[:K] if len(scores) > K else np.arange(len(scores))
            return [int(d) + 1 for d in top[np.argsort(-scores[top])]]

        return search


class Bm25sEngine:
    add = None  # bm25s indexes a fixed corpus

    name = "bm25s"

    def build(self, papers: Iterable[IndexedPaper], directory: Path) -> int:
        import bm25s
        import Stemmer

        texts = [p.text for p in papers]
        tokens = bm25s.tokenize(
            texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False
        )
        del texts
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        retriever.save(str(directory), show_progress=False)
        return len(tokens.vocab)

    def load(self, directory: Path) -> Search:
        import bm25s
        import Stemmer

        retriever = bm25s.BM25.load(str(directory), mmap=True, show_progress=False)
        stemmer = Stemmer.Stemmer("english")

        def search(text: str) -> list[int]:
            tokens = bm25s.tokenize(
                [text], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
            )
            if not tokens[0]:
                return []
            docs, _scores = retriever.retrieve(tokens, k=K, show_progress=False, n_threads=1)
            return [int(d) + 1 for d in docs[0]]

        return search


class TantivyEngine:
    name = "tantivy"

    def build(self, papers: Iterable[IndexedPaper], directory: Path) -> int | None:
        import tantivy

        directory.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(_tantivy_schema(), path=str(directory))
        writer = index.writer(heap_size=256_000_000, num_threads=2)
        for paper in papers:
            writer.add_document(tantivy.Document(id=paper.paper_id, body=paper.text))
        writer.commit()
        writer.wait_merging_threads()
        return None  # tantivy-py does not tell its dictionary's size

    def add(self, papers: Iterable[IndexedPaper], directory: Path) -> Search:
        import tantivy

        index = tantivy.Index(_tantivy_schema(), path=str(directory))
        writer = index.writer(heap_size=256_000_000, num_threads=2)
        for paper in papers:
            writer.add_document(tantivy.Document(id=paper.paper_id, body=paper.text))
        writer.commit()
        index.reload()
        return self._searcher(index)

    def load(self, directory: Path) -> Search:
        import tantivy

        return self._searcher(tantivy.Index(_tantivy_schema(), path=str(directory)))

    def _searcher(self, index) -> Search:
        searcher = index.searcher()

        def search(text: str) -> list[int]:
            # The query parser has a syntax of its own (+, -, :, quotes); plain words only.
            words = re.sub(r"[^\w\s]", " ", text)
            if not words.strip():
                return []
            hits = searcher.search(index.parse_query(words, ["body"]), K).hits
            return [searcher.doc(address)["id"][0] for _score, address in hits]

        return search


def _tantivy_schema():
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True)
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    return builder.build()


ENGINES = {e.name: e for e in (PaperclubEngine(), RankBm25Engine(), Bm25sEngine(), TantivyEngine())}


def available(name: str) -> str | None:
    """Why an engine cannot run here (its package is missing), or None."""
    module = {"rank-bm25": "rank_bm25", "bm25s": "bm25s", "tantivy": "tantivy"}.get(name)
    if module is None:
        return None
    try:
        __import__(module)
    except ImportError:
        return f"{module} is not installed (pip install 'paperclub[bench]')"
    return None
