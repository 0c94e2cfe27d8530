"""Feature: a channel's papers, votes and notes written to a Zotero group library, and group collections imported."""
