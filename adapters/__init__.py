"""Adapters: the faces of the core (the command line, the console, Slack, Discord, the serving runtime); they translate and nothing else. Import bot and store."""
