"""The group's memory outside the chat: calendar feed, archive page, channel export. Imports store and the lower domains."""
