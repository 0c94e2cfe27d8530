"""The paper of the day: channels and their schedules, picks, cards, the posts and their replies, the channel commands. Imports store and the lower domains (search, corpus, votes)."""
