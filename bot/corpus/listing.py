"""What a whole listing says of its papers: the venue and year an operator gives on
`paperclub import FILE --venue "ICLR 2021" --year 2021` (an OpenReview page, a poster
session, a blog's review: they rarely say it per paper), checked before anything is read.

They fill only what a record leaves out: a venue or year a record (or the listing's own
header, read by its reader) gives is never overwritten."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.corpus.records import LIMITS, YEARS, PaperRecord

# A listing's own title that names its venue and year: "ICLR 2022 Interesting Paper Review",
# "NeurIPS-2023 highlights". An acronym of capitals (a lower case letter inside, NeurIPS),
# then the year; nothing else is read as one.
_HEADER = re.compile(r"^(?P<venue>[A-Z][A-Za-z]{1,10}[A-Z])[ -](?P<year>(?:19|20)\d\d)\b")


class ListingProblem(ValueError):
    """A venue or year that cannot be given to a listing: its one-line reason."""


@dataclass(frozen=True)
class ListingFacts:
    venue: str | None = None
    year: int | None = None

    @classmethod
    def checked(cls, venue: str | None, year: str | int | None) -> ListingFacts:
        """The facts as typed, or ListingProblem saying which is wrong and why."""
        return cls(_checked_venue(venue), _checked_year(year))

    def __bool__(self) -> bool:
        return self.venue is not None or self.year is not None

    def fill(self, records: Iterable[PaperRecord]) -> None:
        """Give each record the venue and year it leaves out."""
        for record in records:
            if record.venue is None and self.venue is not None:
                record.venue = self.venue
            if record.year is None and self.year is not None:
                record.year = self.year


def from_header(title: str) -> ListingFacts:
    """The venue and year a listing's own title names ("ICLR 2022 ..."), else none."""
    found = _HEADER.match(title.strip())
    if found is None:
        return ListingFacts()
    return ListingFacts(found["venue"] + " " + found["year"], int(found["year"]))


def _checked_venue(venue: str | None) -> str | None:
    if venue is None:
        return None
    text = " ".join(venue.split()) if venue.isprintable() else ""
    if not text:  # empty, or a control character (a tab, a line break, an escape)
        raise ListingProblem('--venue must be one line of printable text, such as "ICLR 2021"')
    if len(text) > LIMITS["venue"]:
        raise ListingProblem(f"--venue is {len(text):,} characters long, at most {LIMITS['venue']} fit")
    return text


def _checked_year(year: str | int | None) -> int | None:
    if year is None:
        return None
    text = str(year).strip()
    if not re.fullmatch(r"\d{4}", text) or int(text) not in YEARS:
        raise ListingProblem(f"--year {text!r} is not a year: give four digits, {YEARS.start}-{YEARS[-1]}")
    return int(text)
