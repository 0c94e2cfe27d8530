"""What kind of publication a paper is, read from its venue: a conference paper, a
journal article, or a preprint (no venue, or arXiv's). Each export format names the
kinds its own way (BibTeX @inproceedings, RIS CPAPER, CSL paper-conference)."""

from __future__ import annotations

import re

from store.models import Paper

# A venue that names a conference (or its proceedings, a workshop, a symposium), or a track
# (Poster, Oral): the paper is a conference paper; a venue that names arXiv is no venue at
# all; any other venue is a journal.
_CONFERENCE = re.compile(
    r"conference|proceedings|workshop|symposium|neural information processing systems|"
    r"\b(neurips|nips|iclr|icml|cvpr|iccv|eccv|acl|emnlp|naacl|coling|aaai|ijcai|kdd|sigir|www|colt|"
    r"aistats|uai|corl|rss|interspeech|icassp|miccai|wacv|bmvc|icra|iros|chi|uist|sigmod|vldb)\b",
    re.I,
)
_PREPRINT_VENUE = re.compile(r"^\s*(arxiv|corr)\b", re.I)
# An arXiv category (cs.LG, stat.ML, astro-ph.CO, cond-mat.stat-mech): arXiv papers carry
# their primary one as their first tag.
ARXIV_CATEGORY = re.compile(r"^[a-z]+(-[a-z]+)?\.[A-Za-z]+(-[a-z]+)?$")


def publication_kind(paper: Paper) -> str:
    """"conference" (its venue names one, or it has a track or presentation such as
    "Poster", with or without a venue: only a conference has tracks), "journal" (any
    other venue) or "preprint" (no venue and no track, or arXiv/CoRR)."""
    venue = (paper.venue or "").strip()
    if venue and _PREPRINT_VENUE.match(venue):
        return "preprint"
    if paper.track or paper.presentation or _CONFERENCE.search(venue):
        return "conference"
    return "journal" if venue else "preprint"
