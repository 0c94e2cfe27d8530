"""Adapters: the faces of the core (the command line, the console, Slack, Discord), the serving runtime, and the registry that lists the platforms (platforms.py); they translate and nothing else. Import bot and store.

adapters.bench holds the benchmarks (the wheel leaves them out) and adapters.fakes the fakes of arXiv, OpenAlex, Zotero, Slack and a language model (shipped, for `paperclub sandbox`): the running bot imports neither.
"""
