"""Shared services several features use: posts and picks, votes, polls, meetings, private links, member fetches."""
