"""The group's memory outside the chat: calendar feed, archive page, channel export; reads meetings and votes, the features below it."""
