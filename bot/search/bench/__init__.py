"""`paperclub bench`: our search engine beside rank-bm25, bm25s and tantivy on synthetic corpora; imports bot.search and bot.corpus."""
