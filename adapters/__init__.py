"""Adapters: the faces of the core (the command line, the console, Slack, Discord), the serving runtime, and the registry that lists the platforms (platforms.py); they translate and nothing else. Import bot and store.

adapters.bench holds the benchmarks and the fake Slack Web API: the running bot never imports it, and the wheel leaves it out.
"""
