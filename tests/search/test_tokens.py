import random
import re
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from importlib import resources

import Stemmer

from adapters.bench.search.realistic import RealisticCorpus
from adapters.bench.search.synthetic import seed_records
from bot.search import tokens
from bot.search.tokens import STOP_WORDS, Tokenizer


def test_scientific_terms_survive():
    t = Tokenizer()
    tokens = t.tokens("GPT-4 runs in int8 with an L2 penalty")
    assert {"gpt-4", "int8", "l2"} <= set(tokens)


def test_hyphenated_words_give_whole_and_parts():
    t = Tokenizer()
    assert t.tokens("multi-task") == ["multi-task", "multi", "task"]
    # so the spaced query meets the hyphenated document
    assert set(t.tokens("multi task")) <= set(t.tokens("multi-task learning"))


def test_latex_markup_is_stripped_but_words_kept():
    t = Tokenizer()
    assert t.tokens(r"\underline{e}dge \textit{catastrophic forgetting} $\alpha$") == t.tokens(
        "edge catastrophic forgetting alpha"
    )


def test_case_accents_stemming_and_stop_words():
    t = Tokenizer()
    assert t.tokens("The Robustness of Lähner's Models") == t.tokens("robust lahner model")
    assert t.tokens("the of and") == []


# --- the fast tokenizer gives exactly what the plain one gave -------------------------
#
# BM25's scores are checked against rank_bm25's on the same tokens, and an index built
# before the fast path must mean the same after it: so every (term, word) pair, in order,
# must equal what this frozen copy of the original, straightforward tokenizer gives.


class _ReferenceTokenizer:
    """The tokenizer as it was before the caches and the chunked lookups (frozen)."""

    _COMMAND = re.compile(r"\\([a-zA-Z]+)\*?(\{)?")
    _MARKUP = re.compile(r"[{}$^_~\\]")
    _TERM = re.compile(r"[0-9a-z]+(?:-[0-9a-z]+)*")

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")

    @staticmethod
    def fold(text: str) -> str:
        if text.isascii():
            return text.lower()
        decomposed = unicodedata.normalize("NFKD", text)
        stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
        return unicodedata.normalize("NFKC", stripped).casefold()

    def strip_latex(self, text: str) -> str:
        def word(match: re.Match[str]) -> str:
            return "" if match.group(2) else f" {match.group(1)} "

        return self._MARKUP.sub("", self._COMMAND.sub(word, text))

    def words(self, text: str) -> list[str]:
        raw = self._TERM.findall(self.fold(self.strip_latex(text)))
        return [w for w in raw if len(w) > 1 and w not in STOP_WORDS]

    def terms_with_words(self, text: str) -> list[tuple[str, str]]:
        stem = self._stemmer.stemWord
        out: list[tuple[str, str]] = []
        for word in self.words(text):
            if "-" in word:
                parts = word.split("-")
                out.append(("-".join(stem(p) for p in parts), word))
                out.extend((stem(p), p) for p in parts if len(p) > 1 and p not in STOP_WORDS)
            else:
                out.append((stem(word), word))
        return out


TRICKY = [
    "",
    " ",
    "\n\t\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u2028\u3000",
    "a",
    "I a x 1 9",
    "the of and to in",
    "\x00",
    "abc\x00def gpt\x00-4 \x00-\x00",
    "GPT-4 runs in int8 with an L2 penalty",
    "multi-task multi--task multi---task -multi-task- --x-- - -- ---",
    "a-b-c a-b -x- x- -x a-bc ab-c the-art state-of-the-art of-the-of on-off 1-2-3 9-a",
    "pre-trained, large-scale. self-supervised; re-use/co-training (semi-supervised)",
    "gpt-4 gpt-4o llama-2-70b bert-base-uncased t5-xxl e-mail x-ray 3-d",
    "model's models' don't it's O'Neil",
    r"\textit{catastrophic forgetting} \underline{e}dge $\alpha$ $\beta_2^{10}$",
    r"\ell \mathbb{R}^n \frac{a}{b} \emph*{x} \\ \{ \} \$ \~ \_ \^ \alpha\beta \textbf{bold-face}",
    r"\(h_\gamma\) \(\geq 2\) $O(n \log n)$ {braces} ~tilde^hat_under",
    "\\",
    "{",
    "}",
    "$",
    "^",
    "_",
    "~",
    "\\x{",
    "\\textit{",
    "\\end",
    "x_{1}-y",
    "snake_case_word",
    "a~b c^d",
    "Lähner's Modèles Élégants naïve café résumé coöperation Æsir ÆØÅ æøå",
    "Straße STRASSE ß ẞ ﬁne-tuning ﬂow ǅ ǈ İstanbul ı",
    "١٢٣ ٤-٥ ²³ ½ ① Ⅻ ｆｕｌｌｗｉｄｔｈ ＧＰＴ－４ 𝐁𝐨𝐥𝐝 𝟙𝟚𝟛 x²-y³",
    "naïve—em-dash–en-dash − minus ‐ hyphen ‑ non-breaking ⁻",
    "日本語のテキスト and Ελληνικά and русский текст model",
    "emoji 😀-test 👍🏽 e\u0301te\u0301 re\u0301sume\u0301 a\u0308-b\u0308",
    "zero\u200bwidth soft\xadhyphen combining\u0336strike",
    "x" * 10_000,
    "-".join(["ab"] * 2_000),
    ("pneumonoultramicroscopicsilicovolcanoconiosis " * 50).strip(),
    " ".join(f"word{i}-{i} the {i}" for i in range(300)),
    "UPPER lower MiXeD CamelCase HTTPServer iPhone",
    "Running runs ran runner easily fairly generously happiness",
]
SURROGATES = ["\ud800", "a\udfffb", "x-\ud83d-y"]


def _pieces_of(texts: list[str]) -> list[str]:
    """Each text, and its lines (short texts exercise other paths than long ones)."""
    return texts + [line for text in texts for line in text.splitlines()]


def _fuzz(count: int, seed: int = 7) -> list[str]:
    """Random strings over an alphabet made of every character class that matters."""
    rng = random.Random(seed)
    atoms = [
        *"abcxyzABCXYZ0189",
        *"-------",
        *"     \n\t",
        *"\\{}$^_~*.,;'()/",
        *"äéÆßİ١²ｆ—–‐😀\x00\u0301\xa0",
        "the",
        "of",
        "a",
        "model",
        "learning",
        "\\textit{",
        "\\alpha",
        "$\\beta$",
        "multi-task",
        "gpt-4",
        "-x-",
        "state-of-the-art",
        "running",
    ]
    return ["".join(rng.choices(atoms, k=rng.randint(0, 60))) for _ in range(count)]


def _assert_same(texts: list[str], tokenizer: Tokenizer | None = None) -> None:
    reference = _ReferenceTokenizer()
    fast = tokenizer or Tokenizer()
    for text in texts:
        expected = reference.terms_with_words(text)
        for _ in range(2):  # a miss, then a hit in the caches
            got = fast.terms_with_words(text)
            assert got == expected, repr(text[:200])
            assert all(type(t) is str and type(w) is str for t, w in got)
        assert fast.tokens(text) == [t for t, _w in expected], repr(text[:200])
        assert fast.words(text) == reference.words(text), repr(text[:200])


def test_same_terms_as_reference_on_tricky_strings():
    _assert_same(TRICKY + [" ".join(TRICKY), "\n".join(TRICKY)])


def test_same_terms_as_reference_on_random_strings():
    _assert_same(_fuzz(5_000))


def test_same_terms_as_reference_on_surrogates():
    reference, fast = _ReferenceTokenizer(), Tokenizer()
    for text in SURROGATES:  # fold accepts lone surrogates; nothing is a term
        assert fast.terms_with_words(text) == reference.terms_with_words(text) == []


def test_same_terms_as_reference_on_seed_corpus():
    corpus = resources.files("bot") / "demo_corpus"
    raw = [
        (corpus / name).read_text(encoding="utf-8")
        for name in sorted(p.name for p in corpus.iterdir())
    ]
    records = seed_records()
    fields = [f for r in records for f in (r.title, r.abstract, *r.notes, *r.authors)]
    assert len(records) > 100
    _assert_same(_pieces_of(raw) + fields)


def test_same_terms_as_reference_on_realistic_corpus():
    papers = list(RealisticCorpus.from_seeds().papers(3_000))
    assert len(papers) == 3_000
    _assert_same([t for p in papers for t in (p.title, p.text)])


def test_word_terms_are_the_reference_terms():
    reference, fast = _ReferenceTokenizer(), Tokenizer()
    for word in ["multi-task", "Robustness", "the", "x", "\\alpha", "gpt-4", "Lähner's", ""]:
        assert fast.word_terms(word) == frozenset(t for t, _w in reference.terms_with_words(word))


def test_caches_are_bounded_and_output_unchanged(monkeypatch):
    monkeypatch.setattr(tokens, "CACHE_LIMIT", 7)
    fast = Tokenizer()
    texts = TRICKY + _fuzz(500, seed=11)
    _assert_same(texts, fast)
    assert len(fast._plain) <= 7 and len(fast._hyphenated) <= 7


def test_threads_share_one_tokenizer(monkeypatch):
    monkeypatch.setattr(tokens, "CACHE_LIMIT", 50)  # caches emptied while others read them
    reference, fast = _ReferenceTokenizer(), Tokenizer()
    texts = TRICKY[:-5] + _fuzz(1_500, seed=3)
    expected = [reference.terms_with_words(t) for t in texts]

    def run(offset: int) -> bool:
        order = texts[offset:] + texts[:offset]
        wanted = expected[offset:] + expected[:offset]
        return all(fast.terms_with_words(t) == e for t, e in zip(order, wanted, strict=True))

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert all(pool.map(run, range(0, 600, 100)))


def test_strip_latex_fast_path_is_exact():
    reference = _ReferenceTokenizer()
    for text in TRICKY + _fuzz(2_000, seed=5):
        assert tokens.strip_latex(text) == reference.strip_latex(text)
