"""The corpus: readers (a file to paper records), the library (papers in the database), feeds. Imports store and bot.search, never a command or an adapter."""
