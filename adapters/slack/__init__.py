"""The Slack face: a bolt App over HTTP or Socket Mode, Block Kit rendering, its settings and manifest, and its registry entry (platform.py). Imports slack_bolt, slack_sdk and bot; never discord."""
