"""The outcomes of a command that are not the API's answer (exit codes in `main`)."""


class UsageError(Exception):
    """Exit 1: the command line cannot be run as given."""


class Nothing(Exception):
    """Exit 3: nothing to claim, poll or read; `reason` says why in a word (`all_done`, `no_signal`…)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message
