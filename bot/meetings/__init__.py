"""Weekly meetings: the reading queue's sessions, the presenter rota and reminders, with their chat commands; imports the shared parts and layers below them, no other feature."""
