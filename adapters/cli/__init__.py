"""The operator's command line, `paperclub ...`: a face of the core like the console. Imports bot, store and the other adapters."""
