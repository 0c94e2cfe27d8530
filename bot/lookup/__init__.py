"""Looking things up: search, show, similar, and a channel's settings in one place."""
