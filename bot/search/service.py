"""The built-in backend under its old name, for bot/app.py alone until it takes an engine
factory (bot.search.builtin.service.open_search); delete this module then. Everything
else imports bot.search.builtin.service or holds a bot.search.engine.SearchBackend."""

from bot.search.builtin.service import SearchService

__all__ = ["SearchService"]
