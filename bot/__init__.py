"""paperclub core: platform-neutral search, picks and votes for reading groups."""

__version__ = "0.1.0"
