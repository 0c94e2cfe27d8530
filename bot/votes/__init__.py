"""Votes on posts and polls for what to read next, with their chat commands. Imports store, search and the daily domain's posts and cards."""
