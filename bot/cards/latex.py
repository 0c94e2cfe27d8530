"""LaTeX in titles, abstracts and notes as the Unicode text a card shows.

Only what members read changes: the search index keeps the raw text (its tokenizer strips
markup itself). The converter (pylatexenc) runs on the spans that look like LaTeX and
nowhere else, so the prose around them is left exactly as written: a price of $5, 50%, a
URL, a snake_case name. A span that fails to convert is shown as written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pylatexenc.latex2text import LatexNodes2Text

log = logging.getLogger(__name__)

_BRACED = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"  # an argument, braces nested 3 deep
# Compiled when a card first needs it (_markup): compiling it is ~15 ms of start-up.
MARKUP = (
    # A link is kept whole: a ~ or _ or backslash in it is part of the address.
    r"(?P<url>(?:https?://|www\.)\S+)"
    # $...$ by pandoc's rule: no space inside either dollar and no digit right after the
    # closing one, so "$5 and $10" is money, not math.
    # OpenReview's Markdown export writes $L$ as "$\$L\$$" (or "$\$L$$"): one span, both
    # closing dollars in it, or the second one is left over ("L$ -layer").
    r"|(?P<math>\$\\\$(?:\\[^$]|[^$\\]){1,400}?\\?\$\$(?!\d)|\$\$[^$]{1,600}?\$\$|\$(?=[^\s$])(?:\\.|[^$\\]){1,400}?(?<=\S)\$(?!\d)"
    r"|\\\(.{1,400}?\\\))"
    # The same with escaped dollars: Markdown exports (OpenReview's) write $x$ as \$x\$.
    r"|(?P<escaped>\\\$(?=[^\s$])(?:\\[^$]|[^$\\]){1,400}?(?<=\S)\\\$(?!\d))"
    r"|(?P<command>\\(?P<name>[A-Za-z]+)\*?(?:\[[^\]{}]{0,100}\])?(?:" + _BRACED + r")*)"
    # An accent takes the letter after it (\"o); other symbols stand alone (\%, \&).
    r"|(?P<symbol>\\[\"'`^~=.](?:\{[A-Za-z]\}|[A-Za-z])|\\[^A-Za-z])"
    # {\em x} and {BERT} (a BibTeX title's case protection); "{0, 1}" in prose is left be.
    r"|(?P<group>\{[^{}]*\\[^{}]*\}|\{(?=[^{}]*[A-Za-z])[\w-]{1,40}\})"
    r"|(?P<quoted>``(?P<inner>(?:(?!``).){0,300}?)(?:''|\"))"
    r"|(?P<opening>``)"
    # A tie between words (Fig.~3); "~1 dB" (about one) is prose.
    r"|(?P<tie>(?<=[\w.])~(?=\w))"
)
# A word standing alone among the math, outside \text{...}: "$5 and saves 50% of 8$" is prose.
PROSE = re.compile(r"(?<=\s)[A-Za-z]{2,}(?=[\s,.;:]|\$|$)")
TEXT_ARGUMENT = re.compile(r"\\(?:text\w*|math(?:rm|bf|it|sf|tt)|mbox|operatorname)\*?\{[^{}]*\}")
PRICE = re.compile(r"\$\d[\d.,]*\s+[\w(]")  # "$10 8$"; "$1024 \times 1024$" is math
PERCENT = re.compile(r"(?<!\\)%")
# Superscripts and subscripts inside math: x^{2} -> x², \epsilon^{-1} -> ε⁻¹; what has no
# Unicode form is shown in brackets, ^{d \times d} -> ^(d × d) (LaTeX's braces would go).
SCRIPT = re.compile(r"([\^_])(?:\{([^{}]{1,60})\}|([A-Za-z0-9]))")
SUPERSCRIPT = str.maketrans("0123456789+-=()", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾")
SUBSCRIPT = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
SCRIPTABLE = set("0123456789+-=()")
ESCAPED_DOLLAR = re.compile(r"^\\\$")  # "$\$x$": the export's doubled opening dollar
EXPORTED_END = re.compile(r"\\?\$$")  # and its closing "\$" or "$" before the last dollar
ESCAPED_NAME = re.compile(r"\\\\(?=[A-Za-z])")
PLACEHOLDER = 0xE000  # private-use characters stand in for scripts while pylatexenc runs
# Readers know ε as epsilon (LaTeX's own \epsilon is the rarer lunate ϵ); \| is a norm.
OWN_MACROS = (("epsilon", "ε"), ("|", "‖"))


def readable(text: str) -> str:
    """`text` with its LaTeX spans as Unicode: "8$\\times$ deeper" -> "8× deeper",
    "\\textit{x}" -> "x", "``quotes''" -> "“quotes”". Text without such spans comes back
    unchanged."""
    if not text or not any(mark in text for mark in "\\$`{~"):
        return text
    try:
        return "".join(_pieces(text))
    except Exception:  # a converter bug must not cost the card: show what the source said
        log.warning("LaTeX left as written in %.60r", text, exc_info=True)
        return text


def _pieces(text: str) -> Iterator[str]:
    """The text between the spans as written, and each span converted."""
    done = start = 0
    markup = _markup()
    while match := markup.search(text, start):
        if match.lastgroup in ("math", "escaped") and _prose(match[0]):
            start = match.start() + 1  # "$5 and saves 50% ... 8$": look past that dollar
            continue
        yield text[done : match.start()]
        yield _span(match)
        done = start = match.end()
    yield text[done:]


def _prose(math: str) -> bool:
    """Words or a price between two dollars ("$5 and saves ... 8$", "$10 8$"), not math."""
    return bool(PRICE.match(math) or PROSE.search(TEXT_ARGUMENT.sub(" ", math)))


def _span(match: re.Match[str]) -> str:
    kind, raw = match.lastgroup, match[0]  # the outer group: it closes last
    if kind == "url":
        return raw
    if kind == "quoted":
        return f"“{readable(match['inner'])}”"
    if kind in ("opening", "tie"):
        return "“" if kind == "opening" else " "
    if kind == "command" and not _known(match["name"]):
        return raw  # \Users in a path, or a macro pylatexenc cannot render: as written
    if kind == "escaped":
        return _converted(raw[1:-2] + "$", math=True)
    return _converted(raw, math=kind == "math")


def _converted(raw: str, math: bool = False) -> str:
    raw = PERCENT.sub(r"\\%", raw)  # to LaTeX "%" starts a comment, eating the rest
    try:
        source, scripts = _with_placeholders(raw) if math else (raw, [])
        text = _converter().latex_to_text(source)
    except Exception:  # pylatexenc is lenient, but a span it chokes on is shown as written
        log.debug("LaTeX span left as written: %r", raw, exc_info=True)
        return raw
    for position, script in enumerate(scripts):
        text = text.replace(chr(PLACEHOLDER + position), script)
    text = re.sub(r"\s+", " ", text)
    # Display math comes out padded; the spaces around the span in the source stay.
    return text.strip() if math else text


def _with_placeholders(math: str) -> tuple[str, list[str]]:
    """The math with each script replaced by a placeholder, and the scripts as text."""
    math = _unescaped(math)
    scripts: list[str] = []

    def hold(match: re.Match[str]) -> str:
        scripts.append(_script(match[1], match[2] if match[2] is not None else match[3]))
        return chr(PLACEHOLDER + len(scripts) - 1)

    return SCRIPT.sub(hold, math), scripts


def _unescaped(math: str) -> str:
    """Math escaped twice by a Markdown export, "$\\$\\\\epsilon$", as it was written,
    "$\\epsilon$": an escaped dollar opening math, or a line break before a name, is not."""
    inner = math[1:-1]
    if ESCAPED_DOLLAR.match(inner):  # the export's form: "\$" inside closes and opens math
        inner = EXPORTED_END.sub("", ESCAPED_DOLLAR.sub("", inner)).replace("\\$", "")
    inner = ESCAPED_NAME.sub(r"\\", inner)
    return math[0] + inner + math[-1]


def _script(marker: str, body: str) -> str:
    text = " ".join(_converter().latex_to_text(f"${body}$").split()) if "\\" in body else body
    if text and set(text) <= SCRIPTABLE:
        return text.translate(SUPERSCRIPT if marker == "^" else SUBSCRIPT)
    return marker + (text if len(text) == 1 else f"({text})")


def spoken(word: str) -> str:
    """`word` with the Greek letters conversion wrote named again, "ε-greedy" ->
    " epsilon -greedy", as the tokenizer reads "$\\epsilon$": so a card can find and
    mark the ε of a search for epsilon."""
    if word.isascii():
        return word
    names = _letter_names()
    return "".join(f" {names[ch]} " if ch in names else ch for ch in word)


@lru_cache(maxsize=1)
def _letter_names() -> dict[str, str]:
    """"ε" -> "epsilon", "λ" -> "lambda", "ℓ" -> "ell": from the converter's own table."""
    names: dict[str, str] = {}
    for spec in _converter().latex_context.iter_macro_specs():
        text = getattr(spec, "simplify_repl", None)
        if isinstance(text, str) and len(text) == 1 and ("\u0370" <= text <= "\u03ff" or text == "ℓ"):
            names.setdefault(text, spec.macroname)  # ours first: ε is "epsilon"
    return names


def _known(name: str) -> bool:
    return _converter().latex_context.get_macro_spec(name) is not None


@lru_cache(maxsize=1)
def _markup() -> re.Pattern[str]:
    return re.compile(MARKUP)


@lru_cache(maxsize=1)
def _converter() -> LatexNodes2Text:
    """One converter per process: building its macro table is the slow part."""
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    context = get_default_latex_context_db().filter_context()  # a copy, so ours stay ours
    own = [MacroTextSpec(name, text) for name, text in OWN_MACROS]
    context.add_context_category("paperclub", macros=own, prepend=True)
    return LatexNodes2Text(latex_context=context, math_mode="text", strict_latex_spaces=False)
