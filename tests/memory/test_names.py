"""Author names split for the citation formats (bot.memory.names) by BibTeX's rules, and
any name those rules do not fit written whole instead of refused (issue 45: "Mallory }")."""

from __future__ import annotations

import pytest

from bot.memory.citations import _csl_name
from bot.memory.names import Name, split_name


@pytest.mark.parametrize("text, name", [
    ("Alan M. Turing", Name("Turing", "Alan M.")),
    ("Ludwig van Beethoven", Name("van Beethoven", "Ludwig")),
    ("Jean de la Fontaine", Name("de la Fontaine", "Jean")),
    ("Charles Louis de la Vallée Poussin", Name("de la Vallée Poussin", "Charles Louis")),
    ("Turing, Alan", Name("Turing", "Alan")),
    ("van Beethoven, Ludwig", Name("van Beethoven", "Ludwig")),
    ("King, Jr., Martin Luther", Name("King", "Martin Luther", "Jr.")),
    ("Ada  Lovelace", Name("Lovelace", "Ada")),
    ("Élodie Ünal", Name("Ünal", "Élodie")),
])
def test_a_name_splits_as_a_reference_manager_expects(text, name):
    assert split_name(text) == name


@pytest.mark.parametrize("text", [
    "Mallory }", "Anonymous", "{Barnes and Noble}", "a, b, c, d", "Smith, ?", "Smith,", ", Ada", "Smith, , Ada",
    ",", "{", "}", "} {", "", "   ", "?? !!", "1 2",
])
def test_a_name_the_rules_do_not_fit_is_written_whole(text):
    assert split_name(text) is None
    assert _csl_name(text) == {"literal": text}


def test_csl_names_carry_the_suffix():
    assert _csl_name("King, Jr., Martin Luther") == {"family": "King", "given": "Martin Luther", "suffix": "Jr."}
