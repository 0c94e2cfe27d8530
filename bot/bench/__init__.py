"""`paperclub bench`: paperclub's search engine against rank-bm25, bm25s and tantivy on
synthetic corpora resampled from the bundled seed abstracts."""
