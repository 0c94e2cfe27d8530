"""Which OpenAlex work is a paper: the same normalised title, and the same people.

A work is the paper's when its title reads the same (bot.corpus.records.title_key: case,
accents, punctuation and spacing aside), its year is within a year of the paper's (a
preprint a year before its conference), and, when the paper names its authors, enough of
their surnames are the work's: at least one, and half of the shorter list. A work of the
same title by other people (a decoy) is not the paper. A paper that names no authors
matches by title alone only when every work of that title has the same people (versions
of one paper); two works of one title by different people leave it unmatched rather than
guessed. Of the works that match, the one with a venue, then the paper's own year, then
the most cited, is taken.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.corpus.records import title_key
from bot.enrich.openalex import Found

YEARS_APART = 1


@dataclass(frozen=True)
class Wanted:
    """A paper the enrichment asks about, as it stands."""

    paper_id: int
    title: str
    title_derived: bool
    key: str
    authors: tuple[str, ...]
    year: int | None


def surnames(names: Iterable[str]) -> frozenset[str]:
    """Each person's family name, normalised: the last word before a comma ("Turing,
    Alan"), else the last word ("Alan Turing")."""
    found = set()
    for name in names:
        family = name.split(",", 1)[0] if "," in name else name
        words = title_key(family).split()
        if words:
            found.add(words[-1])
    return frozenset(found)


def same_people(a: frozenset[str], b: frozenset[str]) -> bool:
    shared = len(a & b)
    return shared >= 1 and 2 * shared >= min(len(a), len(b))


def match(paper: Wanted, works: Iterable[Found]) -> Found | None:
    """The work that is the paper (the rule above), or None."""
    titled = [w for w in works if w.key == paper.key]
    if paper.year is not None:
        titled = [w for w in titled if w.year is None or abs(w.year - paper.year) <= YEARS_APART]
    if not titled:
        return None
    people = surnames(paper.authors)
    if people:
        fitting = [w for w in titled if same_people(people, surnames(w.authors))]
    else:
        first = surnames(titled[0].authors)
        agree = all(same_people(first, surnames(w.authors)) or not (first or w.authors) for w in titled)
        fitting = titled if agree else []
    if not fitting:
        return None
    return min(fitting, key=lambda w: (w.venue is None or w.venue == "arXiv", w.year != paper.year,
                                      -(w.cited_by or 0), w.id))
