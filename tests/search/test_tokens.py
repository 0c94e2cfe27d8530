from bot.search.tokens import Tokenizer


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
