"""The base of every user-fixable error; the CLI prints these as one line and exits 2."""


class FitgppError(ValueError):
    """Bad input or parameters: the message names what is wrong and where."""
