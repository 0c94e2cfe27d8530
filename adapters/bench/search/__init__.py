"""`paperclub bench`: our search engine beside rank-bm25, bm25s and tantivy on synthetic corpora; imports bot.search, bot.corpus, and bot.app to time the whole bot."""
