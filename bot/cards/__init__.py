"""Paper cards: how a paper reads in chat (LaTeX as text, links, authors, snippets)."""
