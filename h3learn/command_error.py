"""The one exception a subcommand raises to report a failure as a clear message."""


class CommandError(Exception):
    """A failure to report to the user as one clear line (bad input, unreadable file)."""
