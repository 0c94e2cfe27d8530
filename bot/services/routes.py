"""The paths the channels' private pages answer on (bot/memory serves them), apart from
the pages themselves: the links service builds its links on them, and the command line's
help lists them without importing templates and the calendar."""

CALENDAR_PREFIX = "/calendar/"
ARCHIVE_PREFIX = "/archive/"
