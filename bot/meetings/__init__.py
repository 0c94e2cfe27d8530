"""Weekly meetings: the reading queue's sessions, the presenter rota and reminders, with their chat commands. Imports store and the lower domains."""
