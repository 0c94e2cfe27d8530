"""The paths the channels' pages answer on, named apart from the pages themselves so the
command line's help can list them without importing templates and the calendar."""

CALENDAR_PREFIX = "/calendar/"
ARCHIVE_PREFIX = "/archive/"
PREFIXES = (CALENDAR_PREFIX, ARCHIVE_PREFIX)
