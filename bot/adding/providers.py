"""Where a paper's metadata comes from: arXiv's API, Crossref, OpenReview, or the page a
link names (its citation_* meta tags). Every failure is an `AddProblem` whose text a
member can act on; nothing here touches the database."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

from bot.adding import citation_meta, crossref, openreview
from bot.adding.addresses import policy_from_env
from bot.adding.settings import AddSettings
from bot.adding.web import Answer, ChatFetcher, ChatFetchPolicy, FetchFailed, link_problem
from bot.corpus import arxiv_atom, identifiers
from bot.corpus.identifiers import ARXIV, DOI, OPENREVIEW, PAGE
from bot.corpus.records import CorpusFormatError, PaperRecord
from bot.ops.settings import FeedSettings

log = logging.getLogger(__name__)

Ref = tuple[str, str]  # (scheme, value): ("arxiv", "2106.01345"), ("page", "https://...")
# One request's worth of a line's fetching: the references it answers, and the work.
Work = Callable[[], dict[Ref, "PaperRecord | AddProblem"]]
Job = tuple[list[Ref], Work]
NAMES = {ARXIV: "arXiv", DOI: "Crossref", OPENREVIEW: "OpenReview"}
ARXIV_BATCH = 20  # ids per arXiv API request


class AddProblem(Exception):
    """A paper that could not be added; str() is the member's reply. `outcome` is
    not_found | unreachable | timed_out | busy | refused | unreadable."""

    def __init__(self, outcome: str, message: str):
        super().__init__(message)
        self.outcome = outcome


@dataclass(frozen=True)
class ProviderUrls:
    arxiv: str = "https://export.arxiv.org/api/query"
    crossref: str = "https://api.crossref.org"
    openreview: str = "https://api2.openreview.net"

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> ProviderUrls:
        """PAPERCLUB_ARXIV_API_URL, PAPERCLUB_CROSSREF_API_URL, PAPERCLUB_OPENREVIEW_API_URL."""
        settings = AddSettings.from_env(env)
        return cls(FeedSettings.from_env(env).arxiv_api_url, settings.crossref_api_url, settings.openreview_api_url)


class Providers:
    def __init__(self, urls: ProviderUrls | None = None, fetcher: ChatFetcher | None = None):
        self.urls = urls or ProviderUrls()
        self.fetcher = fetcher or ChatFetcher()

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Providers:
        fetcher = ChatFetcher(ChatFetchPolicy.from_env(env), addresses=policy_from_env(env))
        return cls(ProviderUrls.from_env(env), fetcher)

    def jobs(self, refs: list[Ref], deadline: float | None = None) -> list[Job]:
        """The requests that answer these references, each to run on its own (a line's
        run side by side under its one `deadline`); arXiv ids share requests. A job
        never raises: a bug fetching one link must not cost the line's others."""
        arxiv_ids = [value for scheme, value in refs if scheme == ARXIV]
        batches = [arxiv_ids[start : start + ARXIV_BATCH] for start in range(0, len(arxiv_ids), ARXIV_BATCH)]
        jobs: list[Job] = [([(ARXIV, i) for i in batch], self._arxiv_job(batch, deadline)) for batch in batches]
        return jobs + [([ref], self._one_job(ref, deadline)) for ref in refs if ref[0] != ARXIV]

    def _arxiv_job(self, ids: list[str], deadline: float | None) -> Work:
        def job() -> dict[Ref, PaperRecord | AddProblem]:
            try:
                return {(ARXIV, i): outcome for i, outcome in self.arxiv(ids, deadline).items()}
            except Exception:  # the line's other links still get their answers
                log.exception("fetching arXiv ids for add failed")
                return dict.fromkeys([(ARXIV, i) for i in ids], _unreachable("arXiv"))
        return job

    def _one_job(self, ref: Ref, deadline: float | None) -> Work:
        def job() -> dict[Ref, PaperRecord | AddProblem]:
            try:
                return {ref: self.one(ref, deadline)}
            except AddProblem as problem:
                return {ref: problem}
            except Exception:  # the line's other links still get their answers
                log.exception("fetching a %s reference for add failed", ref[0])
                return {ref: _unreachable(NAMES.get(ref[0], "that page"))}
        return job

    def one(self, ref: Ref, deadline: float | None = None) -> PaperRecord:
        scheme, value = ref
        if scheme == ARXIV:
            outcome = self.arxiv([value], deadline)[value]
            if isinstance(outcome, AddProblem):
                raise outcome
            return outcome
        if scheme == DOI:
            return self.crossref(value, deadline)
        if scheme == OPENREVIEW:
            return self.openreview(value, deadline)
        if scheme == PAGE:
            return self.page(value, deadline)
        raise AddProblem("refused", f"paperclub cannot fetch {scheme} ids.")

    # --- each provider ------------------------------------------------------------------

    def arxiv(self, ids: list[str], deadline: float | None = None) -> dict[str, PaperRecord | AddProblem]:
        url = f"{self.urls.arxiv}?" + urlencode({"id_list": ",".join(ids), "max_results": len(ids)}, safe=",/")
        try:
            body = self._get(ARXIV, url, accept="application/atom+xml", deadline=deadline).text()
            records = arxiv_atom.parse(body, "arXiv API")
        except AddProblem as problem:
            return dict.fromkeys(ids, problem)
        except CorpusFormatError as problem:
            log.warning("the arXiv API answered something unreadable: %s", problem)
            return dict.fromkeys(ids, _unreachable("arXiv"))
        by_id = {r.external_ids.get(ARXIV): r for r in records}
        return {i: by_id.get(i) or AddProblem("not_found", f"arXiv has no paper {i}.") for i in ids}

    def crossref(self, doi: str, deadline: float | None = None) -> PaperRecord:
        url = f"{self.urls.crossref}/works/{quote(doi, safe='/()')}"
        body = self._get(DOI, url, accept="application/json", missing=f"Crossref has no paper with the DOI {doi}.",
                         deadline=deadline)
        try:
            return crossref.parse_work(body.text())
        except crossref.NotAWork as problem:
            log.warning("Crossref answered %s with no work: %s", doi, problem)
            raise _unreachable("Crossref") from None

    def openreview(self, forum: str, deadline: float | None = None) -> PaperRecord:
        url = f"{self.urls.openreview}/notes?" + urlencode({"id": forum})
        missing = f"OpenReview has no paper {forum}."
        body = self._get(OPENREVIEW, url, accept="application/json", missing=missing, deadline=deadline)
        try:
            return openreview.parse_notes(body.text(), forum)
        except openreview.NotANote:
            raise AddProblem("not_found", missing) from None

    def page(self, link: str, deadline: float | None = None) -> PaperRecord:
        if link_problem(link):
            raise unreadable(link)
        host = urlsplit(link).hostname or link
        answer = self._get(PAGE, link, accept="text/html,application/xhtml+xml", vet=True,
                           missing=f"{host} answered that the page does not exist (404).", name=host,
                           deadline=deadline)
        try:
            record = citation_meta.parse_page(answer.text(), answer.url)
        except citation_meta.TitleTooLong as long:
            raise AddProblem("refused", (
                f"That page on {host} gives a citation_title {long.length:,} characters long; a title has at most "
                f"{long.limit}, so this is not one and nothing was added. Try the paper's arXiv id "
                "or DOI instead."
            )) from None
        if record is None:
            raise AddProblem("not_found", (
                f"That page on {host} carries no citation_title tag, so paperclub cannot tell which paper it "
                "is. Try its arXiv id or DOI instead."
            ))
        return record

    def _get(self, scheme: str, url: str, accept: str, vet: bool = False, missing: str = "",
             name: str = "", deadline: float | None = None) -> Answer:
        name = name or NAMES[scheme]
        try:
            return self.fetcher.get(url, vet=vet, accept=accept, deadline=deadline)
        except FetchFailed as failed:
            log.info("fetching for add: %s (%s)", failed, failed.kind)
            raise _problem(failed, name, missing, url) from None


def _problem(failed: FetchFailed, name: str, missing: str, url: str) -> AddProblem:
    if failed.kind == "not_found" and missing:
        return AddProblem("not_found", missing)
    if failed.kind == "timed_out":
        return AddProblem("timed_out", f"{name}: timed out; try again.")
    if failed.kind == "unreadable":
        return unreadable(url)
    if failed.kind == "busy":
        return AddProblem("busy", f"{name} is busy just now (it asked paperclub to slow down); "
                                  "nothing was added. Try again in a minute.")
    if failed.kind == "refused":
        return AddProblem("refused", (
            f"paperclub fetches only pages on public addresses, and {name} is not one (or the link "
            "led there), so nothing was fetched."
        ))
    if failed.kind == "too_large":
        return AddProblem("refused", f"{name} answered with more than paperclub reads for one paper; "
                                     "nothing was added.")
    return _unreachable(name)


def unreadable(link: str) -> AddProblem:
    return AddProblem("unreadable", f"{link}: not a link I can read (check its host name and port).")


def _unreachable(name: str) -> AddProblem:
    return AddProblem("unreachable", f"paperclub could not reach {name} just now, so nothing was added. "
                                     "Try again in a minute.")


def canonical(ref: Ref) -> Ref:
    """The stored spelling of an id reference (pages stay as linked)."""
    return ref if ref[0] == PAGE else identifiers.normalise(*ref)
