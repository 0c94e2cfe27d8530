"""paperclub core: platform-neutral search, the paper of the day, votes and meetings for reading groups. Imports store and libraries, never adapters nor a platform library (tests/test_layout.py checks)."""

__version__ = "0.1.0"
