"""Paper identifiers: every spelling a member types or a source gives, to one stored form."""

from __future__ import annotations

import pytest

from bot.corpus.identifiers import arxiv_id, normalise, normalise_ids, parse

PARSED = [
    # arXiv, new style: version, prefix (any case), links of every kind, the arXiv DOI
    ("2106.01345", ("arxiv", "2106.01345")),
    ("2106.01345v2", ("arxiv", "2106.01345")),
    ("arXiv:2106.01345", ("arxiv", "2106.01345")),
    ("ARXIV:2106.01345v12", ("arxiv", "2106.01345")),
    ("arxiv: 2106.01345", ("arxiv", "2106.01345")),
    ("  arXiv:1706.03762  ", ("arxiv", "1706.03762")),
    ("https://arxiv.org/abs/2106.01345v3", ("arxiv", "2106.01345")),
    ("http://arxiv.org/abs/2106.01345", ("arxiv", "2106.01345")),
    ("https://arxiv.org/pdf/2106.01345.pdf", ("arxiv", "2106.01345")),
    ("https://arxiv.org/pdf/2106.01345v2", ("arxiv", "2106.01345")),
    ("https://arxiv.org/html/2106.01345v1", ("arxiv", "2106.01345")),
    ("https://www.arxiv.org/abs/2106.01345", ("arxiv", "2106.01345")),
    ("http://export.arxiv.org/abs/2106.01345", ("arxiv", "2106.01345")),
    ("arxiv.org/abs/1706.03762", ("arxiv", "1706.03762")),
    ("https://arxiv.org/abs/1706.03762?context=cs", ("arxiv", "1706.03762")),
    ("<https://arxiv.org/abs/1706.03762>", ("arxiv", "1706.03762")),  # as Slack sends links
    ("<https://arxiv.org/abs/1706.03762|the paper>", ("arxiv", "1706.03762")),
    ("10.48550/arXiv.1706.03762", ("arxiv", "1706.03762")),
    ("10.48550/ARXIV.1706.03762", ("arxiv", "1706.03762")),
    ("https://doi.org/10.48550/arXiv.2106.01345", ("arxiv", "2106.01345")),
    ("0704.0001", ("arxiv", "0704.0001")),  # the first new-style id: four digits
    ("1412.9999", ("arxiv", "1412.9999")),
    ("1501.00001", ("arxiv", "1501.00001")),  # five digits from 2015
    # arXiv, old style: the subject class is not part of the id
    ("hep-th/9901001", ("arxiv", "hep-th/9901001")),
    ("hep-th/9901001v2", ("arxiv", "hep-th/9901001")),
    ("math.GT/0309136", ("arxiv", "math/0309136")),
    ("arXiv:math.GT/0309136", ("arxiv", "math/0309136")),
    ("HEP-TH/9901001", ("arxiv", "hep-th/9901001")),
    ("https://arxiv.org/abs/hep-th/9711200v3", ("arxiv", "hep-th/9711200")),
    ("https://arxiv.org/pdf/math.GT/0309136v1.pdf", ("arxiv", "math/0309136")),
    # DOIs: every spelling, stored in lower case
    ("10.1145/3292500.3330701", ("doi", "10.1145/3292500.3330701")),
    ("doi:10.1145/3292500.3330701", ("doi", "10.1145/3292500.3330701")),
    ("DOI:10.1109/JPROC.2021.3058954", ("doi", "10.1109/jproc.2021.3058954")),
    ("10.1109/JPROC.2021.3058954", ("doi", "10.1109/jproc.2021.3058954")),
    ("https://doi.org/10.1145/3292500.3330701", ("doi", "10.1145/3292500.3330701")),
    ("http://dx.doi.org/10.1023/A:1026654312961", ("doi", "10.1023/a:1026654312961")),
    ("doi.org/10.1000/xyz", ("doi", "10.1000/xyz")),
    ("https://doi.org/10.1000%2Fabc", ("doi", "10.1000/abc")),  # percent-encoded slash
    ("10.1002/(SICI)1097-4636", ("doi", "10.1002/(sici)1097-4636")),
    # OpenReview forum links
    ("https://openreview.net/forum?id=YicbFdNTTy", ("openreview", "YicbFdNTTy")),
    ("https://openreview.net/forum?id=YicbFdNTTy&noteId=abc", ("openreview", "YicbFdNTTy")),
    ("https://openreview.net/pdf?id=YicbFdNTTy", ("openreview", "YicbFdNTTy")),
    ("openreview.net/forum?id=YicbFdNTTy", ("openreview", "YicbFdNTTy")),
]

NOT_IDENTIFIERS = [
    "", "12", "#12", "hello", "attention is all you need",
    "1706.0376",  # four digits after 2015
    "1412.12345",  # five digits before 2015
    "0703.1234",  # before new-style ids began
    "1713.03762",  # month 13
    "3.14",
    "hep-th/9913001",  # month 13
    "10.12/x",  # registrant code too short
    "doi:2106.01345",  # not a DOI
    "https://example.org/abs/1706.03762",  # another host
    "https://arxiv.org/list/cs.LG/recent",  # a listing, not a paper
    "https://openreview.net/group?id=ICLR.cc/2021",
    "https://openreview.net/forum",
    "http://[::1/abs/1706.03762",  # broken link
]


@pytest.mark.parametrize(("text", "expected"), PARSED)
def test_each_spelling_parses_to_the_stored_form(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("text", NOT_IDENTIFIERS)
def test_other_text_is_no_identifier(text):
    assert parse(text) is None


def test_arxiv_id_accepts_only_arxiv_ids():
    assert arxiv_id("arXiv:2102.11107v1") == "2102.11107"
    assert arxiv_id("10.48550/arXiv.2102.11107") is None  # a DOI: parse() maps it
    assert arxiv_id("2102.11107.pdf") is None


@pytest.mark.parametrize(
    ("scheme", "value", "expected"),
    [
        ("arxiv", "2102.11107v1", ("arxiv", "2102.11107")),
        ("ArXiv", " arXiv:2102.11107 ", ("arxiv", "2102.11107")),
        ("arxiv", "https://arxiv.org/abs/2102.11107", ("arxiv", "2102.11107")),
        ("doi", "10.1109/JPROC.2021.3058954", ("doi", "10.1109/jproc.2021.3058954")),
        ("doi", "https://doi.org/10.1109/JPROC.2021.3058954", ("doi", "10.1109/jproc.2021.3058954")),
        ("doi", "10.48550/arXiv.1706.03762", ("arxiv", "1706.03762")),
        ("openreview", "https://openreview.net/forum?id=YicbFdNTTy", ("openreview", "YicbFdNTTy")),
        ("openreview", "YicbFdNTTy", ("openreview", "YicbFdNTTy")),
        # What does not read as its scheme is kept as the source gave it, not dropped.
        ("doi", "N/A", ("doi", "N/A")),
        ("arxiv", "1234", ("arxiv", "1234")),
        ("doi", "2106.01345", ("doi", "2106.01345")),  # an arXiv id, but labelled a DOI
        # Other schemes are the sources' own keys.
        ("beir", " 4983 ", ("beir", "4983")),
        ("BibTeX", "Devlin2018", ("bibtex", "Devlin2018")),
    ],
)
def test_a_source_id_is_normalised_by_its_scheme(scheme, value, expected):
    assert normalise(scheme, value) == expected


def test_a_records_ids_gain_the_one_its_url_names_and_keep_their_own():
    assert normalise_ids({"bibtex": "k"}, "https://openreview.net/forum?id=YicbFdNTTy") == {
        "bibtex": "k", "openreview": "YicbFdNTTy",
    }
    assert normalise_ids({}, "arxiv.org/abs/1810.04805v2") == {"arxiv": "1810.04805"}
    assert normalise_ids({}, "https://example.org/paper.pdf") == {}
    # The source's own arXiv id wins over the one its url or its arXiv DOI names.
    ids = {"arxiv": "2101.00001", "doi": "10.48550/arXiv.2101.00002"}
    assert normalise_ids(ids, "https://arxiv.org/abs/2101.00003") == {"arxiv": "2101.00001"}
    # An arXiv DOI alone is the arXiv id.
    assert normalise_ids({"doi": "10.48550/arXiv.2101.00002"}) == {"arxiv": "2101.00002"}
