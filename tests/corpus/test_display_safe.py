"""Display-safe text (issue 45, item 9): what hides or reorders text, and runaway stacks of
combining marks, leave a paper's texts once, at the corpus boundary; real scripts pass
untouched. Imports here; feeds in tests/follows/test_ingest.py, added links in
tests/adding/test_add.py."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from bot.corpus.display_safe import MARKS_MAX, display_safe, make_display_safe
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord, RestoredSource

RLO, PDF, BOM, ZWSP, LRI, PDI = "\u202e", "\u202c", "\ufeff", "\u200b", "\u2066", "\u2069"
ZWJ, ZWNJ = "\u200d", "\u200c"
ACUTE = "\u0301"
# A title that reads "Attention Is All You Need" on a card until its override turns the
# rest around, with a 50-mark stack above its first letter.
SPOOFED = f"{BOM}A{ACUTE * 50}ttention Is All You Need {RLO}fdp.exe{PDF}"
CLEANED = f"A{ACUTE * MARKS_MAX}ttention Is All You Need fdp.exe"

REAL_TEXT = {
    "Vietnamese": "Mô hình ngôn ngữ lớn cho tiếng Việt: đánh giá và ứng dụng",
    "Vietnamese, decomposed": unicodedata.normalize("NFD", "Nhận dạng tiếng nói tiếng Việt ệ ậ ặ ỗ"),
    "Hindi": "हिंदी के लिए गहन अधिगम: क़्षेत्रीय भाषाओं में प्रश्नोत्तर",
    "Arabic, vowelled": "نماذج اللغة الكبيرة للغة العربية: دراسة مُقارَنة",
    "Persian, with ZWNJ": "یادگیری ماشین برای زبان فارسی می‌شود؟",
    "Sinhala, with ZWJ": "ශ්‍රී ලංකාවේ භාෂා",
    "Malayalam, old chillu": "അവന്‍ മലയാളം",
    "Tibetan stack": "བསྒྲུབས་ སྒྲུཾ",
    "Hebrew, pointed": "בְּרֵאשִׁ֖ית בָּרָ֣א",
    "Thai": "การประมวลผลภาษาไทย น้ำ กั้น",
    "emoji with ZWJ": "Families 👨‍👩‍👧‍👦, a 🏳️‍🌈 flag, a 👩🏽‍💻 coder, 1️⃣ and ❤️",
    "CJK": "大規模言語モデルの日本語評価",
    "a note with line breaks": "First line.\nSecond line,\tindented.",
}


@pytest.mark.parametrize("text", REAL_TEXT.values(), ids=REAL_TEXT.keys())
def test_real_scripts_come_through_unchanged(text):
    assert display_safe(text) == text


def test_overrides_marks_of_order_and_invisible_characters_are_removed():
    assert display_safe(SPOOFED) == f"A{ACUTE * MARKS_MAX}ttention Is All You Need fdp.exe"
    assert display_safe(f"{LRI}Isolated{PDI}\u200e\u200f{ZWSP}\u2060 text\u00ad") == "Isolated text"
    # Tag characters spell invisible ASCII ("ASCII smuggling"): gone, with a flag's tail.
    assert display_safe("Hidden\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065 🏴\U000e0067\U000e0062"
                        "\U000e0073\U000e0063\U000e0074\U000e007f") == "Hidden 🏴"
    assert display_safe("bell\x07 escape\x1b[31m del\x7f c1\x9b") == "bell escape[31m del c1"


def test_whitespace_and_nul_are_left_to_the_readers_and_the_check():
    assert display_safe("tab\tline\nbreak") == "tab\tline\nbreak"
    assert display_safe("Nul\u0000title é") == "Nul\u0000title é"  # refused with its own reason


def test_stacks_are_cut_to_the_marks_real_text_needs():
    assert display_safe("Z" + ACUTE * 50 + "algo") == "Z" + ACUTE * MARKS_MAX + "algo"
    assert display_safe("a" + ACUTE * MARKS_MAX) == "a" + ACUTE * MARKS_MAX
    # A joiner counts as a mark: it cannot split a stack into allowed pieces.
    assert display_safe("a" + (ACUTE * 3 + ZWJ) * 10) == "a" + ACUTE * 3 + ZWJ
    # A removed character between marks does not split one either.
    assert display_safe("a" + ACUTE * 3 + RLO + ACUTE * 3) == "a" + ACUTE * MARKS_MAX
    # Marks past the BMP (musical symbols' combining flags), alone and mixed with others.
    assert display_safe("note \U0001d160" + "\U0001d167" * 20) == "note \U0001d160" + "\U0001d167" * MARKS_MAX
    assert display_safe("b" + (ACUTE + "\U0001d167") * 10 + " 👍") == "b" + (ACUTE + "\U0001d167") * 2 + " 👍"
    huge = "a" + ACUTE * 1_500_000
    assert display_safe(huge) == "a" + ACUTE * MARKS_MAX


def test_joiners_that_join_nothing_go():
    assert display_safe(f"{ZWJ}Lead and {ZWNJ}after a space") == "Lead and after a space"
    assert display_safe(f"a{ZWNJ}{ZWNJ}{ZWNJ}b c{ZWJ}{ZWJ}d") == f"a{ZWNJ}b c{ZWJ}d"


def test_a_record_is_cleaned_in_every_text_it_shows():
    exported = PaperRecord(title=f"Source {RLO}title")
    record = PaperRecord(
        title=SPOOFED,
        authors=[f"Ada {RLO}Lovelace", ZWSP, ""],
        abstract=f"We {LRI}show{PDI} things.\nAnd{BOM} more.",
        tags=[f"nlp{ZWSP}", BOM],
        notes=[f"A {RLO} note\nwith lines", ZWSP],
        venue=f"ACL {RLO} 2024",
        track=BOM,
        url=f"https://example.org/{RLO}",
        external_ids={"doi": "10.1/x"},
        sources=[RestoredSource("c", "s.jsonl", 1, "jsonl", exported)],
    )
    make_display_safe(record)
    assert record.title == CLEANED
    assert record.authors == ["Ada Lovelace", ""]  # an empty one stays (the reader's business)
    assert record.abstract == "We show things.\nAnd more."
    assert record.tags == ["nlp"] and record.notes == ["A  note\nwith lines"]
    assert record.venue == "ACL 2024" and record.track is None
    assert record.url == f"https://example.org/{RLO}"  # the url names the paper: as given
    assert exported.title == "Source title"


def jsonl(path: Path, *objects: dict) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def test_an_import_stores_titles_authors_and_names_cleaned(db, tmp_path):
    library = Library(db)
    path = jsonl(tmp_path / "spoof.jsonl",
                 {"title": SPOOFED, "authors": [f"Grace {RLO}Hopper", f"{BOM}Alan Turing"],
                  "abstract": f"An {RLO}abstract{PDF}.", "venue": f"{LRI}NeurIPS{PDI}", "tags": [f"t{ZWSP}"],
                  "external_ids": {"doi": "10.1000/spoof"}},
                 {"title": REAL_TEXT["Persian, with ZWNJ"], "authors": ["محمد رضایی"],
                  "external_ids": {"doi": "10.1000/fa"}},
                 {"title": REAL_TEXT["emoji with ZWJ"], "authors": ["Nguyễn Văn An"],
                  "external_ids": {"doi": "10.1000/emoji"}})
    summary = library.import_file(path)
    assert summary.added == 3, summary
    paper = library.find("10.1000/spoof")
    assert paper.title == CLEANED
    assert paper.authors == ["Grace Hopper", "Alan Turing"]
    assert paper.abstract == "An abstract." and paper.venue == "NeurIPS" and paper.tags == ["t"]
    [source] = paper.sources
    assert source.fields["authors"] == ["Grace Hopper", "Alan Turing"]  # the source's own copy too
    assert library.find("10.1000/fa").title == REAL_TEXT["Persian, with ZWNJ"]
    assert library.find("10.1000/emoji").title == REAL_TEXT["emoji with ZWJ"]
    # The same spoofed file again is the same paper, unchanged.
    assert library.import_file(path).unchanged == 3


def test_a_title_of_nothing_but_invisible_characters_is_refused(db, tmp_path):
    library = Library(db)
    path = jsonl(tmp_path / "empty.jsonl", {"title": "Fine", "external_ids": {"doi": "10.1/a"}},
                 {"title": f"{RLO}{BOM}{ZWSP}", "external_ids": {"doi": "10.1/b"}})
    with pytest.raises(CorpusFormatError) as raised:
        library.import_file(path)
    assert str(raised.value).startswith(f"{path}:2: the title '\\u202e\\ufeff\\u200b' is only invisible")
    assert library.count() == 0
