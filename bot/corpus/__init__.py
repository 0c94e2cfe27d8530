"""The corpus: readers (a file to paper records), the library (papers in the database), feeds. Imports store, never the search, a command or an adapter."""
