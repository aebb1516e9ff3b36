"""The base of every user-fixable error; the CLI prints these as one line and exits 2."""

#: The longest message an error keeps; a longer one (a huge value quoted in it) keeps its
#: first and last parts, which say what is wrong and what to do, and the count cut between.
MAX_MESSAGE = 2000


class FitgppError(ValueError):
    """Bad input or parameters: the message names what is wrong and where."""

    def __init__(self, *args):
        if len(args) == 1 and isinstance(args[0], str) and len(args[0]) > MAX_MESSAGE:
            m = args[0]
            head, tail = MAX_MESSAGE * 2 // 3, MAX_MESSAGE // 4
            args = (f"{m[:head]} [... {len(m) - head - tail:,} characters ...] {m[-tail:]}",)
        super().__init__(*args)
