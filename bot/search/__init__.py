"""Search: tokenizer, BM25 (rank-bm25's scores), the persisted index and the search service, evaluation and the benchmark. Imports numpy, scipy, PyStemmer and store, never another domain."""
