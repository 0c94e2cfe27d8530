"""Provider answers as the real services give them (shapes recorded from export.arxiv.org,
api.crossref.org, api2.openreview.net and aclanthology.org), for the fake in
fake_providers.py. Texts are the papers' real titles, authors and (shortened) abstracts."""

from __future__ import annotations

import json

ATOM_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query?search_query%3D%26id_list%3D{ids}%26start%3D0%26max_results%3D{n}"
        rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query=&amp;id_list={ids}&amp;start=0&amp;max_results={n}</title>
  <id>http://arxiv.org/api/{token}</id>
  <updated>2026-11-23T00:00:00-05:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{total}</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{n}</opensearch:itemsPerPage>
"""

ENTRY = """  <entry>
    <id>http://arxiv.org/abs/{id}{version}</id>
    <updated>{updated}</updated>
    <published>{published}</published>
    <title>{title}</title>
    <summary>{summary}</summary>
{authors}{doi}{journal}    <link href="http://arxiv.org/abs/{id}{version}" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/{id}{version}" rel="related" type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="{category}" scheme="http://arxiv.org/schemas/atom"/>
    <category term="{category}" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
"""

ARXIV = {
    "2106.01345": dict(
        version="v2", published="2021-06-02T17:53:39Z", updated="2021-06-24T17:46:41Z", category="cs.LG",
        title="Decision Transformer: Reinforcement Learning via Sequence Modeling",
        summary=("We introduce a framework that abstracts Reinforcement Learning (RL) as a sequence modeling\n"
                 "problem. This allows us to draw upon the simplicity and scalability of the Transformer\n"
                 "architecture, and associated advances in language modeling such as GPT-x and BERT. In\n"
                 "particular, we present Decision Transformer, an architecture that casts the problem of RL as\n"
                 "conditional sequence modeling."),
        authors=["Lili Chen", "Kevin Lu", "Aravind Rajeswaran", "Kimin Lee", "Aditya Grover", "Michael Laskin",
                 "Pieter Abbeel", "Aravind Srinivas", "Igor Mordatch"],
    ),
    "1706.03762": dict(
        version="v7", published="2017-06-12T17:57:34Z", updated="2023-08-02T00:41:18Z", category="cs.CL",
        title="Attention Is All You Need",
        summary=("The dominant sequence transduction models are based on complex recurrent or convolutional\n"
                 "neural networks in an encoder-decoder configuration. We propose a new simple network\n"
                 "architecture, the Transformer, based solely on attention mechanisms, dispensing with\n"
                 "recurrence and convolutions entirely."),
        authors=["Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit", "Llion Jones",
                 "Aidan N. Gomez", "Lukasz Kaiser", "Illia Polosukhin"],
    ),
    "1810.04805": dict(
        version="v2", published="2018-10-11T00:50:01Z", updated="2019-05-24T20:37:26Z", category="cs.CL",
        title="BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        summary=("We introduce a new language representation model called BERT, which stands for\n"
                 "Bidirectional Encoder Representations from Transformers."),
        authors=["Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"],
    ),
    "1907.10902": dict(
        version="v1", published="2019-07-25T09:08:09Z", updated="2019-07-25T09:08:09Z", category="cs.LG",
        title="Optuna: A Next-generation Hyperparameter Optimization Framework",
        summary=("The purpose of this study is to introduce new design-criteria for next-generation\n"
                 "hyperparameter optimization software."),
        authors=["Takuya Akiba", "Shotaro Sano", "Toshihiko Yanase", "Takeru Ohta", "Masanori Koyama"],
    ),
    "hep-th/9711200": dict(
        version="v3", published="1997-11-27T22:25:35Z", updated="1998-01-22T20:17:16Z", category="hep-th",
        title="The Large N Limit of Superconformal Field Theories and Supergravity",
        summary=("We show that the large $N$ limit of certain conformal field theories in various\n"
                 "dimensions include in their Hilbert space a sector describing supergravity."),
        authors=["Juan M. Maldacena"],
        doi="10.1023/A:1026654312961", journal="Adv.Theor.Math.Phys.2:231-252,1998",
    ),
}


def atom(ids: list[str]) -> str:
    """The arXiv API's answer to id_list=ids: an entry per known id (none: an empty feed)."""
    known = [i for i in ids if i in ARXIV]
    head = ATOM_HEAD.format(ids=",".join(ids), n=len(ids), total=len(known), token="fEw2Kf4Yp3Qx")
    return head + "".join(_entry(i) for i in known) + "</feed>\n"


def _entry(arxiv_id: str) -> str:
    e = ARXIV[arxiv_id]
    authors = "".join(f"    <author>\n      <name>{a}</name>\n    </author>\n" for a in e["authors"])
    doi = (f'    <arxiv:doi xmlns:arxiv="http://arxiv.org/schemas/atom">{e["doi"]}</arxiv:doi>\n'
           if e.get("doi") else "")
    journal = (f'    <arxiv:journal_ref xmlns:arxiv="http://arxiv.org/schemas/atom">{e["journal"]}</arxiv:journal_ref>\n'
               if e.get("journal") else "")
    return ENTRY.format(id=arxiv_id, authors=authors, doi=doi, journal=journal,
                        **{k: v for k, v in e.items() if k not in ("authors", "doi", "journal")})


def _work(doi: str, title: str, authors: list[tuple[str, str]], container: str, year: int, month: int,
          abstract: str, preprint: dict | None, kind: str = "proceedings-article", subtitle: str = "") -> dict:
    message = {
        "indexed": {"date-parts": [[2026, 11, 20]], "date-time": "2026-11-20T08:12:44Z", "timestamp": 1795162364000},
        "publisher-location": "Stroudsburg, PA, USA" if doi.startswith("10.18653") else "New York, NY, USA",
        "reference-count": 52, "publisher": "Association for Computational Linguistics",
        "content-domain": {"domain": [], "crossmark-restriction": False},
        "published-print": {"date-parts": [[year, month]]},
        "DOI": doi, "type": kind,
        "created": {"date-parts": [[year, month, 12]], "date-time": f"{year}-{month:02d}-12T15:24:30Z",
                    "timestamp": 1560353070000},
        "source": "Crossref", "is-referenced-by-count": 58103,
        "title": [title],
        "prefix": doi.split("/")[0],
        "author": [{"given": g, "family": f, "sequence": "first" if n == 0 else "additional", "affiliation": []}
                   for n, (g, f) in enumerate(authors)],
        "member": "1643",
        "container-title": [container],
        "abstract": abstract,
        "link": [{"URL": f"https://example.org/{doi}.pdf", "content-type": "unspecified",
                  "content-version": "vor", "intended-application": "similarity-checking"}],
        "deposited": {"date-parts": [[year, month, 12]]},
        "score": 1,
        "issued": {"date-parts": [[year]]},
        "URL": f"https://doi.org/{doi}",
        "relation": {"has-preprint": [preprint]} if preprint else {},
        **({"subtitle": [subtitle]} if subtitle else {}),
        "published": {"date-parts": [[year]]},
    }
    return {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": message}


CROSSREF = {
    "10.18653/v1/n19-1423": _work(
        "10.18653/v1/N19-1423", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        [("Jacob", "Devlin"), ("Ming-Wei", "Chang"), ("Kenton", "Lee"), ("Kristina", "Toutanova")],
        "Proceedings of the 2019 Conference of the North", 2019, 6,
        "<jats:title>Abstract</jats:title><jats:p>We introduce a new language representation model called "
        "<jats:italic>BERT</jats:italic>, which stands for Bidirectional Encoder Representations from "
        "Transformers.</jats:p><jats:p>BERT obtains new state-of-the-art results on eleven natural language "
        "processing tasks &amp; more.</jats:p>",
        {"id-type": "arxiv", "id": "1810.04805", "asserted-by": "subject"},
    ),
    "10.1145/3292500.3330701": _work(
        "10.1145/3292500.3330701", "Optuna",
        [("Takuya", "Akiba"), ("Shotaro", "Sano"), ("Toshihiko", "Yanase"), ("Takeru", "Ohta"),
         ("Masanori", "Koyama")],
        "Proceedings of the 25th ACM SIGKDD International Conference on Knowledge Discovery &amp; Data Mining",
        2019, 7, "",
        {"id-type": "doi", "id": "10.48550/arXiv.1907.10902", "asserted-by": "subject"},
        subtitle="A Next-generation Hyperparameter Optimization Framework",
    ),
}
CROSSREF_MISSING = "Resource not found."

OPENREVIEW = {
    "2dnO3LLiJ1": {
        "notes": [{
            "id": "2dnO3LLiJ1", "forum": "2dnO3LLiJ1", "number": 4470,
            "invitations": ["ICLR.cc/2024/Conference/-/Submission", "ICLR.cc/2024/Conference/-/Post_Submission",
                            "ICLR.cc/2024/Conference/Submission4470/-/Revision"],
            "domain": "ICLR.cc/2024/Conference", "readers": ["everyone"], "writers": ["ICLR.cc/2024/Conference"],
            "signatures": ["ICLR.cc/2024/Conference/Submission4470/Authors"],
            "content": {
                "title": {"value": "Vision Transformers Need Registers"},
                "authors": {"value": ["Timothée Darcet", "Maxime Oquab", "Julien Mairal", "Piotr Bojanowski"]},
                "authorids": {"value": ["~Timothée_Darcet1", "~Maxime_Oquab1", "~Julien_Mairal1",
                                        "~Piotr_Bojanowski1"]},
                "keywords": {"value": ["Vision transformers", "self-supervised learning", "attention maps"]},
                "abstract": {"value": (
                    "Transformers have recently emerged as a powerful tool for learning visual representations. "
                    "In this paper, we identify and characterize artifacts in feature maps of both supervised and "
                    "self-supervised ViT networks. The artifacts correspond to high-norm tokens appearing during "
                    "inference primarily in low-informative background areas of images, that are repurposed for "
                    "internal computations. We propose a simple yet effective solution based on providing "
                    "additional tokens to the input sequence of the Vision Transformer to fill that role.")},
                "venue": {"value": "ICLR 2024 oral"},
                "venueid": {"value": "ICLR.cc/2024/Conference"},
                "pdf": {"value": "/pdf/2a8a6ea4b3a7d3a8c0a1f1b0b1f1c2d5e2f3a4b5.pdf"},
                "primary_area": {"value": "representation learning for computer vision, audio, language, "
                                          "and other modalities"},
            },
            "cdate": 1695349488432, "pdate": 1705405966137, "odate": 1697213872796,
            "mdate": 1710407203044, "tcdate": 1695349488432, "tmdate": 1710407203044,
            "version": 2,
        }],
        "count": 1,
    },
}

ULMFIT_TITLE = "Universal Language Model Fine-tuning for Text Classification"
ACL_VENUE = ("Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics"
             " (Volume 1: Long Papers)")
ULMFIT_ABSTRACT = (
    "Inductive transfer learning has greatly impacted computer vision, but existing approaches in NLP"
    " still require task-specific modifications and training from scratch. We propose Universal"
    " Language Model Fine-tuning (ULMFiT), an effective transfer learning method that can be applied"
    " to any task in NLP."
)

ACL_PAGE = f"""<!doctype html>
<html lang=en-us>
<head>
<meta charset=utf-8>
<meta name=viewport content="width=device-width,initial-scale=1,shrink-to-fit=no">
<title>{ULMFIT_TITLE} - ACL Anthology</title>
<meta name=generator content="Hugo 0.98.0">
<link rel=stylesheet href=/aclanthology.org/css/main.min.css>
<meta content="{ULMFIT_TITLE}" name=citation_title>
<meta content="Jeremy Howard" name=citation_author>
<meta content="Sebastian Ruder" name=citation_author>
<meta content="{ACL_VENUE}" name=citation_conference_title>
<meta content="2018/7" name=citation_publication_date>
<meta content="https://aclanthology.org/P18-1031.pdf" name=citation_pdf_url>
<meta content="328" name=citation_firstpage>
<meta content="339" name=citation_lastpage>
<meta content="10.18653/v1/P18-1031" name=citation_doi>
<meta property="og:title" content="{ULMFIT_TITLE}">
<meta property="og:image" content="https://aclanthology.org/thumb/P18-1031.jpg">
<meta property="og:description" content="Jeremy Howard, Sebastian Ruder. {ACL_VENUE}. 2018.">
</head>
<body><section id=main><h2 id=title><a href=https://aclanthology.org/P18-1031.pdf>{ULMFIT_TITLE}</a></h2>
<div class="card-body acl-abstract"><h5 class=card-title>Abstract</h5><span>{ULMFIT_ABSTRACT}</span></div>
</section></body></html>
"""

PLAIN_PAGE = """<!doctype html><html><head><title>Our reading list</title>
<meta name="description" content="Papers we liked this year."></head><body><p>Nothing to cite here.</p></body></html>
"""


def crossref_json(doi: str) -> str:
    return json.dumps(CROSSREF[doi])

# A page in latin-1 whose charset only its HTML declares (the HTTP answer says text/html
# with no charset), as older university sites serve them (issue 28, finding 6).
LATIN1_PAGE = """<html><head>
<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">
<title>Café talks</title>
<meta name="citation_title" content="Café au lait: Mélange Models for Naïve Readers">
<meta name="citation_author" content="Zoë Müller">
<meta name="citation_publication_date" content="2019">
</head><body><p>Résumé.</p></body></html>
""".encode("latin-1")

# A page whose citation_* tags would spoof a card: a right-to-left override, a byte-order
# mark and a stack of 50 combining marks in the title, an override in an author's name
# (issue 45, item 9).
SPOOFED_TITLE = "\ufeffG\u0301" + "\u0301" * 49 + "raph networks \u202egnp.exe"
SPOOFED_PAGE = f"""<!doctype html><html><head>
<meta name="citation_title" content="{SPOOFED_TITLE}">
<meta name="citation_author" content="Ada \u202eLovelace">
<meta name="citation_doi" content="10.1000/spoofed">
<meta name="citation_publication_date" content="2024">
</head><body></body></html>
"""

# A citation_title of 1.5 million characters: past the first million characters the page
# reader reads for tags, and inside the 2 MB paperclub reads of an answer.
LONG_TITLE_CHARS = 1_500_000
LONG_TITLE_PAGE = f"""<!doctype html><html><head>
<meta name="citation_title" content="{"Deep learning " * (LONG_TITLE_CHARS // 14)}">
<meta name="citation_doi" content="10.1000/long">
</head><body></body></html>
"""
