"""The corpus readers: the seed files, the fixtures, and every way a file can be broken."""

from __future__ import annotations

import codecs
import json
import re
from functools import cache
from pathlib import Path

import pytest

from bot.corpus.openreview import unescape
from bot.corpus.readers import FORMATS, decode, detect, read_path
from bot.corpus.records import CorpusFormatError, PaperRecord, clean_space, title_key
from tests.conftest import DATA, SEEDS

GNN_TITLE = "Rethinking the Expressive Power of GNNs via Graph Biconnectivity"

# Format -> (sample file, number of papers in it).
SAMPLES = {
    "openreview": (SEEDS / "iclr2021-openreview.md", 860),
    "poster-session": (SEEDS / "iclr2023-poster-session.txt", 135),
    "trending": (SEEDS / "trending-papers.txt", 58),
    "topic-abstracts": (SEEDS / "iclr2022-topics.txt", 17),
    "blog-review": (SEEDS / "iclr2022-blog-review.txt", 21),
    "jsonl": (DATA / "beir_sample.jsonl", 3),
    "bibtex": (DATA / "sample.bib", 3),
    "arxiv": (DATA / "arxiv_sample.atom", 3),
}


@cache
def records_of(fmt: str) -> list[PaperRecord]:
    detected, records = read_path(SAMPLES[fmt][0])
    assert detected == fmt
    return records


def sample_text(fmt: str) -> str:
    return SAMPLES[fmt][0].read_text(encoding="utf-8")


def by_title(fmt: str, title: str) -> PaperRecord:
    return next(r for r in records_of(fmt) if r.title == title)


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line that starts with `needle`."""
    return next(n for n, line in enumerate(text.split("\n"), 1) if line.startswith(needle))


def read_error(tmp_path: Path, data: bytes, fmt: str | None = None) -> CorpusFormatError:
    path = tmp_path / "broken"
    path.write_bytes(data)
    with pytest.raises(CorpusFormatError) as caught:
        read_path(path, fmt)
    return caught.value


def assert_at(error: CorpusFormatError, tmp_path: Path, line: int, message: str) -> None:
    assert str(error).startswith(f"{tmp_path / 'broken'}:{line}: "), str(error)
    assert error.line == line
    assert message in error.message


# --- the seeds and fixtures ------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_each_sample_is_detected_and_read_completely(fmt: str) -> None:
    records = records_of(fmt)
    assert len(records) == SAMPLES[fmt][1]
    assert all(r.title and r.title == r.title.strip() and "  " not in r.title for r in records)
    assert [r.line for r in records] == sorted({r.line for r in records})


def test_clean_space_collapses_every_whitespace_a_regex_knows() -> None:
    """Every character `\\s` matches (NBSP, line and paragraph separators, the C0
    separators) is a space to clean_space, and no other is."""
    spaces = [chr(c) for c in range(0x3001) if re.fullmatch(r"\s", chr(c))]
    assert {"\u00a0", "\u2028", "\x1c", "\x85", "\u3000"} <= set(spaces)
    for space in spaces:
        assert clean_space(f"{space}a{space}{space}b{space}") == "a b"
        # One space inside ASCII text (the quick path for text already clean).
        assert clean_space(f"a{space}b c") == "a b c"
        assert clean_space(f"a b{space}") == clean_space(f"{space}a b") == "a b"
    assert clean_space("a\u200bb c") == "a\u200bb c"  # a zero-width space is no space
    assert clean_space("already clean, once") == "already clean, once"


def test_every_format_has_a_reader() -> None:
    assert set(FORMATS) == set(SAMPLES)


def test_openreview_titles_authors_tracks_and_lines() -> None:
    records = records_of("openreview")
    assert records[0].title == "Net-DNF: Effective Deep Modeling of Tabular Data"
    assert records[0].line == 3
    assert records[0].authors == ["Liran Katzir", "Gal Elidan", "Ran El-Yaniv"]
    assert records[-1].title.startswith("BRECQ: Pushing the Limit of Post-Training Quantization")
    tracks = [r.track for r in records]
    assert [tracks.count(t) for t in ("Oral", "Spotlight", "Poster")] == [53, 114, 693]
    unlinked = by_title(
        "openreview", "Modeling the Second Player in Distributionally Robust Optimization"
    )
    assert unlinked.authors == ["Paul Michel", "Tatsunori Hashimoto", "Graham Neubig"]
    assert all(r.url is None for r in records)  # every link in the seed is a "#" placeholder


def test_openreview_title_escapes_are_removed_but_abstract_latex_is_kept() -> None:
    titles = {r.title for r in records_of("openreview")}
    assert "VA-RED$^2$: Video Adaptive Redundancy Reduction" in titles
    assert "$i$-Mix: A Domain-Agnostic Strategy for Contrastive Representation Learning" in titles
    assert "Class Normalization for (Continual)? Generalized Zero-Shot Learning" in titles
    assert not any("\\$" in t or "\\(" in t or "\\_" in t for t in titles)
    optimism = by_title(
        "openreview",
        "Optimism in Reinforcement Learning with Generalized Linear Function Approximation",
    )
    assert "$\\widetilde{O}(\\sqrt{H^3 T})$" in optimism.abstract


def test_openreview_abstract_includes_continuation_paragraphs() -> None:
    paper = by_title(
        "openreview", "On the Transfer of Disentangled Representations in Realistic Settings"
    )
    assert paper.abstract.startswith("Learning meaningful representations that disentangle")
    assert "over 1,800 annotated real-world images of the same setup." in paper.abstract
    assert paper.abstract.endswith("good predictor for out-of-distribution (OOD) task performance.")


def test_poster_session_awards_tracks_and_authors() -> None:
    records = records_of("poster-session")
    gnn = by_title("poster-session", GNN_TITLE)
    assert gnn.award == "Outstanding Paper"
    assert gnn.track == "top 5%"
    assert gnn.authors == ["Bohang Zhang", "Shengjie Luo", "Liwei Wang", "Di He"]
    duality = by_title(
        "poster-session",
        "On the duality between contrastive and non-contrastive self-supervised learning",
    )
    assert duality.award == "Honorable Mention"
    assert sorted(r.title for r in records if r.award) == sorted([gnn.title, duality.title])
    for award in ("Outstanding Paper", "Honorable Mention"):
        assert not any(award in r.title for r in records)
    assert not any(r.title.startswith("Poster Session") for r in records)
    assert {r.track for r in records} == {"poster accept", "top 25%", "top 5%"}
    first = records[0]
    assert (first.title, first.line) == ("Few-shot Backdoor Attacks via Neural Tangent Kernels", 3)
    assert first.presentation == "Virtual presentation"
    assert first.authors == ["Jonathan Hayase", "Sewoong Oh"]
    single = by_title("poster-session", "Limitless Stability for Graph Convolutional Networks")
    assert single.authors == ["Christian Koke"]
    assert records[-1].title == "Self-supervised learning with rotation-invariant kernels"
    assert records[-1].abstract.startswith("We introduce a regularization loss")


def test_trending_skips_page_chrome() -> None:
    records = records_of("trending")
    assert (records[0].title, records[0].line) == (
        "TRAM: Bridging Trust Regions and Sharpness Aware Minimization",
        11,
    )
    assert records[0].abstract.startswith("Sharpness-aware minimization (SAM)")
    assert records[-1].title.startswith("The Effect of Intrinsic Dataset Properties on")
    chrome = {"new", "subscribe", "byak and the research community", "mar 13"}
    titles = [r.title.lower() for r in records]
    assert not any(t in chrome or "trending papers" in t for t in titles)
    assert all(len(r.abstract) > 1000 for r in records)


def test_trending_chrome_is_skipped_wherever_it_appears(tmp_path: Path) -> None:
    text = sample_text("trending").replace(
        "Quantized GAN for Complex Music", "Subscribe\n\nMar 14\n\nQuantized GAN for Complex Music"
    )
    path = tmp_path / "trending.txt"
    path.write_text(text, encoding="utf-8")
    assert [r.title for r in read_path(path)[1]] == [r.title for r in records_of("trending")]


def test_topic_abstracts_tags_and_derived_titles() -> None:
    records = records_of("topic-abstracts")
    assert [r.tags for r in records[:4]] == [[], [], [], ["Architectural Bias"]]
    assert [r.line for r in records[:4]] == [4, 6, 8, 12]
    tags = [r.tags[0] for r in records[3:]]
    assert tags == (
        ["Architectural Bias"] * 3
        + ["Emergent Communication"] * 2
        + ["Continual Learning"] * 3
        + ["Domain Adaptation"] * 5
        + ["Explaining Learning and Learning Phenomenon"]
    )
    assert not any("ICLR 2022 Interesting Paper Review" in (r.title, *r.tags) for r in records)
    titles = [r.title for r in records]
    assert all(r.title_derived for r in records)
    assert all(0 < len(t) <= 100 for t in titles)
    assert len({title_key(t) for t in titles}) == len(titles)
    assert titles[1] == (  # shortened at a word, within the limit
        "MetaLink: A key assumption in multi-task learning is that test data points have no…"
    )
    assert titles[3].startswith("Compositional Attention: ")
    assert titles[9].startswith("Recursive Gradient Optimization (RGO): ")
    assert titles[0] == (
        "Contrastive learning methods like CLIP train on noisy and uncurated training datasets"
    )
    assert "\\textit" not in titles[8]  # formatting commands are not title text
    assert records[0].abstract.endswith("is desirable.")


def test_blog_review_papers_categories_and_notes() -> None:
    records = records_of("blog-review")
    titles = [r.title for r in records]
    assert titles[0] == (
        "TRANS-ENCODER: Unsupervised sentence-pair modeling through self- and mutual-distillations"
    )
    assert titles[1] == "Weighted Training for Cross-Task Learning"
    assert titles[9] == "Discovering Latent Concepts Learned in BERT"
    assert titles[10].startswith("Pyraformer: Low-Complexity Pyramidal Attention")
    assert titles[-1] == "Enhancing Cross-lingual Transfer by Manifold Mixup"
    assert titles.count("How Do Vision Transformers Work?") == 1
    for not_a_paper in ("Training Strategy", "Symbolic Learning and Structured Prediction",
                        "Table of Content", "Model Soups"):
        assert not any(not_a_paper in t for t in titles)
    assert records[0].tags == ["Training Strategy"]
    assert by_title("blog-review", "Safe Neurosymbolic Learning with Differentiable Symbolic "
                    "Execution").tags == ["Symbolic Learning and Structured Prediction"]
    assert all(r.notes for r in records[:10]) and all(r.tags for r in records[:10])
    assert records[0].notes[0].startswith("The first research work I read")
    assert any("Model Soups" in note for note in records[0].notes)
    vit = by_title("blog-review", "How Do Vision Transformers Work?")
    assert vit.line == 89
    assert vit.notes[0].startswith("This paper presented some empirical findings")
    assert "ViT has smoother loss lanscape than ResNet" in vit.notes[1]
    private = by_title(
        "blog-review", "Large Language Models Can Be Strong Differentially Private Learners"
    )
    assert (private.line, private.tags) == (109, [])
    assert len(private.notes) == 1
    assert private.notes[0].startswith("This looks like a new technique")
    assert by_title("blog-review", "Autoregressive Diffusion Model").notes == []


def test_blog_review_list_item_of_a_reviewed_paper_adds_its_notes(tmp_path: Path) -> None:
    path = tmp_path / "blog.txt"
    path.write_text(
        "Intro.\n\nTable of Content\n\nVision\n\nVision\n\nPaper One\n\nReview of one.\n\n"
        "<Back to Table of Content>\n\nOther papers:\n\n  1. Paper Two\n  2. paper one\n"
        "    • A remark on paper one.\n",
        encoding="utf-8",
    )
    notes = ["Review of one.", "A remark on paper one."]
    assert read_path(path) == (
        "blog-review",
        [PaperRecord("Paper One", 9, tags=["Vision"], notes=notes), PaperRecord("Paper Two", 17)],
    )


def test_jsonl_beir_corpus() -> None:
    first, untitled, third = records_of("jsonl")
    assert first.external_ids == {"beir": "4983"} and not first.title_derived
    assert first.title.startswith("Microstructural development of human newborn")
    assert untitled.title_derived and untitled.line == 3
    assert untitled.title == "Induction of myelodysplasia by myeloid-restricted cell cycle arrest"
    assert untitled.url == "https://example.org/5836"
    assert untitled.authors == ["A. Author", "B. Author"]
    assert third.year == 1994 and third.line == 4


def test_bibtex_fields() -> None:
    vit, bert, causal = records_of("bibtex")
    assert vit.title == "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale"
    assert vit.authors == ["Alexey Dosovitskiy", "Lucas Beyer", "Alexander Kolesnikov"]
    assert vit.venue == "International Conference on Learning Representations"
    assert (vit.year, vit.line) == (2021, 5)
    assert vit.tags == ["vision transformer", "image classification"]
    assert vit.url == "https://openreview.net/forum?id=YicbFdNTTy"
    assert vit.external_ids == {"bibtex": "dosovitskiy2021vit", "openreview": "YicbFdNTTy"}  # from its url
    assert bert.title.startswith("BERT: Pre-training")
    assert bert.external_ids == {"bibtex": "devlin2018bert", "arxiv": "1810.04805"}
    assert bert.abstract.endswith("80.5% (7.7% point absolute improvement).")
    assert causal.authors[0] == "Bernhard Schölkopf"
    assert causal.external_ids == {  # eprint without its version, DOI in lower case
        "bibtex": "scholkopf2021causal",
        "arxiv": "2102.11107",
        "doi": "10.1109/jproc.2021.3058954",
    }


def test_arxiv_feed_fields() -> None:
    attention, bert, maldacena = records_of("arxiv")
    assert attention.title == "Attention Is All You Need"
    assert (attention.line, attention.year) == (10, 2017)
    assert attention.external_ids == {"arxiv": "1706.03762"}
    assert attention.url == "http://arxiv.org/abs/1706.03762v7"
    assert attention.tags == ["cs.CL", "cs.LG"]
    assert attention.authors == ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"]
    assert attention.abstract.startswith("The dominant sequence transduction models are based")
    assert bert.title == (
        "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"
    )
    assert maldacena.external_ids == {"arxiv": "hep-th/9711200", "doi": "10.1023/a:1026654312961"}
    assert maldacena.venue == "Adv.Theor.Math.Phys.2:231-252,1998"
    assert "large $N$ limit" in maldacena.abstract


# --- JSON Lines round trip --------------------------------------------------------------


def test_jsonl_export_round_trip(tmp_path: Path) -> None:
    """What `paperclub export` writes (with its database-only fields) reads back equal,
    each source with its own record."""
    from bot.corpus.export import export_record
    from bot.corpus.merge import source_fields
    from store.models import Paper, PaperExternalId, PaperSource

    originals = [
        *records_of("blog-review")[:2],  # notes with line breaks, tags
        records_of("poster-session")[0],  # presentation, track
        by_title("poster-session", GNN_TITLE),  # award
        records_of("topic-abstracts")[1],  # derived title
        records_of("arxiv")[2],  # external ids, venue, year
    ]
    lines = []
    for number, record in enumerate(originals, 1):
        paper = Paper(id=number * 7, title_key=title_key(record.title), **{
            k: v for k, v in vars(record).items() if k not in ("line", "external_ids", "sources", "vector")
        })
        paper.external_ids = [
            PaperExternalId(scheme=s, value=v) for s, v in record.external_ids.items()
        ]
        fields = source_fields(record)
        paper.sources = [PaperSource(collection="club", source="x.md", line=3, format="jsonl", fields=fields)]
        lines.append(json.dumps(export_record(paper), ensure_ascii=False))
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fmt, back = read_path(path)
    assert fmt == "jsonl"
    assert "fields" not in lines[0]  # one source: it says what the paper shows
    expected = [PaperRecord(**{**vars(r), "line": n}) for n, r in enumerate(originals, 1)]
    assert [PaperRecord(**{**vars(r), "sources": []}) for r in back] == expected
    for record, original in zip(back, originals, strict=True):
        [source] = record.sources
        assert (source.collection, source.source, source.line, source.format) == ("club", "x.md", 3, "jsonl")
        assert source.record == PaperRecord(**{**vars(original), "line": 3})


def test_jsonl_paperclub_schema_by_hand(tmp_path: Path) -> None:
    line = {
        "id": 12, "external_ids": {"arxiv": "2101.00001", "DOI": "10.1/x"}, "title": " A  title ",
        "authors": "Ann Lee, Bo Chen and Cy Dare", "text": "Body.", "url": "https://x.org",
        "track": "Oral", "award": None, "presentation": None, "venue": "ICLR", "year": "2021",
        "tags": ["t"], "notes": ["n"], "title_derived": False, "collections": ["c"], "sources": [],
    }
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(line), encoding="utf-8")
    [record] = read_path(path)[1]
    assert record == PaperRecord(
        title="A title", line=1, authors=["Ann Lee", "Bo Chen", "Cy Dare"], abstract="Body.",
        url="https://x.org", external_ids={"arxiv": "2101.00001", "doi": "10.1/x"}, track="Oral",
        venue="ICLR", year=2021, tags=["t"], notes=["n"],
    )


def test_json_array_is_read_with_element_lines(tmp_path: Path) -> None:
    path = tmp_path / "papers.json"
    path.write_text('[\n  {"title": "One"},\n\n  {"title": "Two",\n   "text": "x"}\n]\n')
    fmt, records = read_path(path)
    assert fmt == "jsonl"
    assert [(r.title, r.line) for r in records] == [("One", 2), ("Two", 4)]


def test_a_vector_is_read_and_scaled_to_unit_length_in_lines_and_arrays(tmp_path: Path) -> None:
    vector = {"model": " m ", "values": [3, 4.0, 0]}
    lines = tmp_path / "v.jsonl"
    lines.write_text(json.dumps({"title": "A"}) + "\n" + json.dumps({"title": "B", "vector": vector}) + "\n")
    array_file = tmp_path / "v.json"
    array_file.write_text(json.dumps([{"title": "A", "vector": None}, {"title": "B", "vector": vector}], indent=1))
    for path in (lines, array_file):
        first, second = read_path(path)[1]
        assert first.vector is None and second.vector is not None
        assert second.vector.model == "m" and second.vector.values.typecode == "f"
        assert list(second.vector.values) == pytest.approx([0.6, 0.8, 0.0])
    huge = {"model": "m", "values": [1e308, -1e308]}  # finite, though its length is not
    [record] = FORMATS["jsonl"](json.dumps({"title": "C", "vector": huge}), "h.jsonl")
    assert record.vector is not None and list(record.vector.values) == pytest.approx([0.7071, -0.7071], abs=1e-4)


# --- detection and decoding -------------------------------------------------------------


def test_detection_does_not_guess(tmp_path: Path) -> None:
    error = read_error(tmp_path, b"Just a note.\n\nNothing here looks like papers.\n")
    assert_at(error, tmp_path, 1, "cannot tell the format of this file; pass --format with one of:")
    assert all(name in error.message for name in FORMATS)


def test_topic_fallback_needs_several_long_paragraphs() -> None:
    prose = "word " * 60
    assert detect(f"Heading\n\n{prose}\n\n{prose}\n\n{prose}\n", "f") == "topic-abstracts"
    with pytest.raises(CorpusFormatError):
        detect(f"Heading\n\n{prose}\n\n{prose}\n", "f")


def test_explicit_format_skips_detection_and_unknown_names_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "trending.txt"
    path.write_text("A Title\n\nIts abstract.\n", encoding="utf-8")
    expected = [PaperRecord("A Title", 1, abstract="Its abstract.")]
    assert read_path(path, "trending") == ("trending", expected)
    with pytest.raises(ValueError, match="openreview"):
        read_path(path, "csv")


def test_decode_accepts_boms_and_any_line_ends() -> None:
    assert decode(b"\xef\xbb\xbfa\r\nb\rc\n", "f") == "a\nb\nc\n"
    assert decode("é\r\nx".encode("utf-16"), "f") == "é\nx"
    assert decode(codecs.BOM_UTF16_BE + "é\nx".encode("utf-16-be"), "f") == "é\nx"


def test_no_papers_is_an_error(tmp_path: Path) -> None:
    assert_at(read_error(tmp_path, b"[]\n"), tmp_path, 1, "no papers found")
    assert_at(read_error(tmp_path, b'@string{x = "y"}\n'), tmp_path, 1, "no papers found")


# --- broken files, for every format ---------------------------------------------------


def _cut_before(text: str, needle: str, keep: int = 0) -> str:
    """The text up to the last occurrence of `needle`, plus `keep` characters of it."""
    return text[: text.rindex(needle) + keep]


def _truncated_openreview() -> tuple[str, int]:
    text = sample_text("openreview")
    return _cut_before(text, "- Yuhang Li, Ruihao Gong", 12), line_of(text, "## [BRECQ")


def _truncated_poster_session() -> tuple[str, int]:
    text = sample_text("poster-session")
    cut = _cut_before(text, "\nLéon Zheng · Gilles Puy")  # ends after the last title
    return cut, line_of(text, "Self-supervised learning with rotation-invariant kernels")


def _truncated_trending() -> tuple[str, int]:
    text = sample_text("trending")
    return text[: text.rindex("\n\n")], 239


def _truncated_topics() -> tuple[str, int]:
    text = sample_text("topic-abstracts")
    return _cut_before(text, " and LSTM architectures were both trained"), 49


def _truncated_blog() -> tuple[str, int]:
    text = sample_text("blog-review")
    return _cut_before(text, " They perform clustering for the word"), 99


def _truncated_jsonl() -> tuple[str, int]:
    text = sample_text("jsonl")
    return _cut_before(text, '"ID elements are short'), 4


def _truncated_bibtex() -> tuple[str, int]:
    text = sample_text("bibtex")
    return _cut_before(text, "  eprint        ="), 23


def _truncated_arxiv() -> tuple[str, int]:
    text = sample_text("arxiv")
    cut = _cut_before(text, "various dimensions includes")
    return cut, cut.count("\n") + 1


TRUNCATED = {
    "openreview": (_truncated_openreview, "has no abstract; is the file truncated?"),
    "poster-session": (_truncated_poster_session, "is the file truncated?"),
    "trending": (_truncated_trending, "has no abstract; is the file truncated?"),
    "topic-abstracts": (_truncated_topics, "stops mid-sentence; is the file truncated?"),
    "blog-review": (_truncated_blog, "not closed by <Back to Table of Content>"),
    "jsonl": (_truncated_jsonl, "the file ends here: is it truncated?"),
    "bibtex": (_truncated_bibtex, "still open at the end of the file: is it truncated"),
    "arxiv": (_truncated_arxiv, "the file ends inside the entry at line 64; is it truncated?"),
}


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_truncated_file_is_refused_at_the_broken_record(fmt: str, tmp_path: Path) -> None:
    make, message = TRUNCATED[fmt]
    text, line = make()
    assert_at(read_error(tmp_path, text.encode("utf-8")), tmp_path, line, message)
    assert_at(read_error(tmp_path, text.encode("utf-8"), fmt), tmp_path, line, message)


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_latin1_file_is_refused_at_the_line_of_the_first_bad_byte(fmt: str, tmp_path: Path) -> None:
    lines = sample_text(fmt).encode("ascii", errors="replace").decode("ascii").split("\n")
    lines[2] += " café"
    data = "\n".join(lines).encode("latin-1")
    expected = "not valid UTF-8 (byte 0xe9); save the file as UTF-8"
    assert_at(read_error(tmp_path, data), tmp_path, 3, expected)
    assert_at(read_error(tmp_path, data.replace(b"\n", b"\r\n"), fmt), tmp_path, 3, expected)


BINARY = {
    "all bytes": (bytes(range(256)) * 4, 1),
    "png header": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00", 2),
    "nul inside text": (b"line one\nline two\nthree\x00four\n", 3),
    "control characters": (b"ab\x01\x02\x03\x04cd\n" * 5, 1),
}


@pytest.mark.parametrize("fmt", [None, *SAMPLES])
@pytest.mark.parametrize("case", list(BINARY))
def test_binary_junk_is_refused(fmt: str | None, case: str, tmp_path: Path) -> None:
    data, line = BINARY[case]
    error = read_error(tmp_path, data, fmt)
    assert_at(error, tmp_path, line, "binary data, not a text corpus file")


@pytest.mark.parametrize("fmt", [None, *SAMPLES])
@pytest.mark.parametrize("data", [b"", b" \n\r\n\t\n", b"\xef\xbb\xbf\n", "\n".encode("utf-16")])
def test_empty_file_is_refused(fmt: str | None, data: bytes, tmp_path: Path) -> None:
    assert_at(read_error(tmp_path, data, fmt), tmp_path, 1, "empty file")


def test_a_few_tabs_and_form_feeds_are_still_text(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"A Title\t\x0c\n\nIts abstract.\n")
    assert read_path(path, "trending")[1][0].title == "A Title"


PROSE = "This paragraph is long enough to read as an abstract of a paper. " * 4
API_ERROR_FEED = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>ArXiv Query: id_list=1234</title>
  <entry>
    <id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id>
    <title>Error</title>
    <summary>incorrect id format for 1234</summary>
  </entry>
</feed>
"""
MALFORMED = {
    "openreview marker without text": (
        "openreview",
        ("## [A](#)\n\n- X, Y\n- abstract@[open-review\\(Poster\\)](#): \n\n"
         "## [B](#)\n- abstract@[open-review\\(Oral\\)](#): Text.\n"),
        1, "paper 'A' has no abstract",
    ),
    "openreview heading without abstract": (
        "openreview",
        "## [A](#)\n- abstract@[x\\(Oral\\)](#): Text.\n\n## [B](#)\n- X, Y\n\n## [C](#)\n",
        4, "paper 'B' has no abstract",
    ),
    "poster paper without abstract": (
        "poster-session",
        ("Poster Session 1\n\nIn-Person Poster presentation / poster accept\nTitle\n\nA · B\n\n"
         "Virtual presentation / poster accept\nOther\n\nC\n\nAbstract.\n"),
        6, "is the file truncated?",
    ),
    "trending pairs out of step": (
        "trending",
        (f"Get trending papers in your email inbox!\n\nTitle one\n\n{PROSE}\n\n{PROSE}\n\n"
         f"Title three\n\n{PROSE}\n"),
        7, "expected a paper title, found a paragraph",
    ),
    "topics ending on a heading": (
        "topic-abstracts",
        f"Topic\n\n{PROSE}\n\n{PROSE}\n\nLast Topic\n", 7, "heading with no abstract",
    ),
    "blog section without review": (
        "blog-review",
        "Intro.\n\nTable of Content\n\nCat\n\nCat\n\nPaper A\n\n<Back to Table of Content>\n",
        9, "no review text for 'Paper A'",
    ),
    "blog section without a title": (
        "blog-review",
        f"Table of Content\n\nCat\n\n{PROSE}\n\n<Back to Table of Content>\n",
        5, "cannot find the reviewed paper's title",
    ),
    "jsonl array line": ("jsonl", '{"title": "a"}\n[1, 2]\n', 2, "expected a JSON object"),
    "jsonl without title or text": (
        "jsonl", '{"title": "a"}\n\n{"_id": "3", "text": ""}\n', 3, "needs a title or a text",
    ),
    "jsonl wrong field type": (
        "jsonl", '{"title": "a"}\n{"title": "b", "tags": "x"}\n', 2, "'tags' must be a list",
    ),
    "jsonl bad year": ("jsonl", '{"title": "b", "year": "soon"}\n', 1, "'year' must be a number"),
    "json array broken": ("jsonl", '[\n{"title": "a"},\n{"title": }\n]\n', 3, "not valid JSON"),
    "jsonl vector not an object": (
        "jsonl", '{"title": "a"}\n{"title": "b", "vector": [1, 2]}\n', 2, "'vector' must be an object",
    ),
    "jsonl vector without a model": (
        "jsonl", '{"title": "b", "vector": {"values": [1, 2]}}\n', 1, "'vector.model' must name the embedding model",
    ),
    "jsonl vector without values": (
        "jsonl", '{"title": "b", "vector": {"model": "m", "values": []}}\n', 1,
        "'vector.values' must be a non-empty list of numbers",
    ),
    "jsonl vector with a string": (
        "jsonl", '{"title": "a"}\n{"title": "b", "vector": {"model": "m", "values": [1, "2"]}}\n', 2,
        "'vector.values' must be numbers: values[1] is \"2\"",
    ),
    "jsonl vector with a boolean": (
        "jsonl", '{"title": "b", "vector": {"model": "m", "values": [true, 1]}}\n', 1,
        "'vector.values' must be numbers: values[0] is true",
    ),
    "jsonl vector with NaN": (
        "jsonl", '{"title": "b", "vector": {"model": "m", "values": [1, 2, NaN]}}\n', 1,
        "'vector.values' must be finite numbers: values[2] is NaN",
    ),
    "jsonl vector past any float": (
        "jsonl", '{"title": "b", "vector": {"model": "m", "values": [1e999, 2]}}\n', 1,
        "'vector.values' must be finite numbers: values[0] is Infinity",
    ),
    "jsonl vector of zeros": (
        "jsonl", '{"title": "b", "vector": {"model": "m", "values": [0, 0.0, -0.0]}}\n', 1,
        "'vector' is all zeros",
    ),
    "json array vector with NaN": (
        "jsonl", '[\n{"title": "a"},\n{"title": "b",\n "vector": {"model": "m", "values": [NaN]}}\n]\n', 3,
        "'vector.values' must be finite numbers: values[0] is NaN",
    ),
    "bibtex entry without title": (
        "bibtex", "@article{a,\n title={X}}\n\n@misc{b,\n author={Y}}\n", 4, "'b' has no title",
    ),
    "bibtex duplicate key": (
        "bibtex", "@misc{a, title={X}}\n@misc{a, title={Y}}\n", 2, "'a' is used twice",
    ),
    "bibtex duplicate field": (
        "bibtex", "@misc{a, title={X}}\n\n@misc{b,\n title={Y},\n title={Z}}\n", 3,
        "a field appears twice in entry 'b': title",
    ),
    "bibtex unbalanced braces": (
        "bibtex", "@misc{a, title={X}}\n\n@misc{b, title={Y}\n@misc{c, title={Z}}\n", 3,
        "cannot parse this BibTeX entry",
    ),
    "arxiv api error": ("arxiv", API_ERROR_FEED, 4, "the arXiv API reported: incorrect id format"),
    "arxiv mismatched tag": (
        "arxiv", sample_text("arxiv").replace("You Need</title>", "You Need</titel>"), 14,
        "broken XML (mismatched tag)",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_record_is_refused_at_its_line(case: str, tmp_path: Path) -> None:
    fmt, text, line, message = MALFORMED[case]
    assert_at(read_error(tmp_path, text.encode("utf-8"), fmt), tmp_path, line, message)


@pytest.mark.parametrize("fmt", ["openreview", "poster-session", "trending", "blog-review"])
def test_record_lines_point_at_the_record(fmt: str) -> None:
    lines = sample_text(fmt).split("\n")
    for record in records_of(fmt):
        start = unescape(lines[record.line - 1])
        if fmt == "poster-session":
            assert "presentation / " in start
            assert record.title in map(clean_space, lines[record.line : record.line + 3])
        else:
            assert title_key(record.title) in title_key(start), (record.line, record.title)


def test_a_latex_command_that_lost_its_backslash_after_a_tie_leaves_no_stray_brace() -> None:
    """Issue 28, finding 10: AdaGCN's abstract ends "AdaGCN~footnote{Code is available at
    \\url{...}.}." in the export; the card showed "available at <...>.}."."""
    from bot.cards.latex import readable
    from bot.corpus.openreview import parse

    text = ("## AdaGCN\n- abstract@[Poster](https://openreview.net/forum?id=x): the approach "
            "AdaGCN~footnote{Code is available at \\url{https://github.com/datake/AdaGCN}.}.\n")
    abstract = parse(text, "t.md")[0].abstract
    assert abstract.endswith("AdaGCN~\\footnote{Code is available at \\url{https://github.com/datake/AdaGCN}.}.")
    assert readable(abstract).endswith("[Code is available at <https://github.com/datake/AdaGCN>.].")
    shown = readable(next(r.abstract for r in records_of("openreview") if r.title.startswith("AdaGCN")))
    assert "}" not in shown
