"""Channels: each channel's settings, schedule and post history, shared by every feature."""
