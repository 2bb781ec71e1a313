"""The one exception tree of stratabench.

Every failure a user can cause or meet is a subclass of
:class:`StratabenchError` with a one-line message that names the bad input
and what to do about it. Library code raises; only ``stratabench.cli.main``
prints ``error: ...`` and turns the class's ``exit_code`` into the process
exit status.

::

    StratabenchError                 1  anything else that went wrong
    ├── StatementError               1  the user's timed statement or setup is not valid or raised
    ├── GoRunError                   1  a Go build or program failed (adapters.golang)
    ├── ZygoteError                  1  the process that forks each cell's worker failed (engine.zygote)
    ├── UncountableError             1  a cell that callgrind cannot count (engine.count_worker)
    ├── DriverFailure                1  a parking server gave a wrong answer (systems.parking)
    ├── AccessDenied                 1  a tree store's permissions refuse an operation (systems.treestore)
    ├── ItemError                    1  a tree path matched no leaf, or several (systems.treestore)
    ├── SubscriptionError            1  a tree change subscriber failed or timed out (systems.treestore)
    ├── EditError                   65  a tree edit cannot apply (systems.treestore)
    ├── ValidationError             65  a tree breaks its schema; nothing is stored (systems.treestore)
    ├── UsageError                   2  a bad option, argument or value
    │   └── UnknownNameError         2  an unknown suite, codec, store, ...
    ├── DataError                   65  a malformed input file
    │   ├── ResultsFormatError      65  a results file that cannot be read
    │   └── NoCellsError            65  no cell to report or compare (a gate that compared nothing fails)
    ├── UnavailableError            69  a missing package, binary or toolchain
    │   └── GoUnavailableError      69  no Go toolchain, or a Go binary missing (adapters.golang)
    ├── StoreError                  69  a store or server failed or is unreachable
    │   └── ValueTooLargeError      69  a value over a store's item limit
    ├── ServiceError                69  a local server could not start or stop
    ├── IntegrityError              70  decoded data does not hash as expected
    ├── OutputExistsError           73  refusing to overwrite an existing file
    └── OutputError                 74  an output file cannot be written

Exit statuses that are not errors are in :data:`OTHER_EXIT_STATUSES`;
:func:`exit_statuses` lists them all (``stratabench --help`` prints it), so
this module is the one place an exit status is documented.

Context (the file, URL or cell concerned) is added on the way up with
:meth:`StratabenchError.with_context`, which keeps the class and so the exit
code.
"""

from __future__ import annotations

__all__ = [
    "OTHER_EXIT_STATUSES",
    "DataError",
    "IntegrityError",
    "NoCellsError",
    "OutputError",
    "OutputExistsError",
    "ResultsFormatError",
    "ServiceError",
    "StatementError",
    "StoreError",
    "StratabenchError",
    "UnavailableError",
    "UncountableError",
    "UnknownNameError",
    "UsageError",
    "ValueTooLargeError",
    "error_tree",
    "exit_statuses",
]

#: Exit statuses no error class carries.
OTHER_EXIT_STATUSES: dict[int, str] = {
    0: "success",
    1: "run: a cell failed (see its status); compare --fail-above: a significant regression, "
        "a cell with too few samples to judge or a failed cell",
    129: "hung up (SIGHUP); the cells measured so far are kept, private servers stopped",
    130: "interrupted (Ctrl-C); the cells measured so far are kept",
    141: "standard output closed early (a broken pipe)",
    143: "terminated (SIGTERM); the cells measured so far are kept, private servers stopped",
}


class StratabenchError(Exception):
    """Base of every error stratabench reports to its user.

    The message is one line; it names what is wrong and what to do.
    """

    exit_code: int = 1

    def __init__(self, message: str) -> None:
        # One line, always: a multi-line message breaks the CLI's contract
        # of one `error: ...` line and the result records' `error` field.
        super().__init__(" ".join(str(message).split()))

    @property
    def message(self) -> str:
        """The one-line message, without the class name."""
        return str(self.args[0]) if self.args else ""

    def with_context(self, context: str) -> StratabenchError:
        """Return an error of the same class with ``context: `` in front.

        Parameters
        ----------
        context
            What was being worked on: a file name, a URL, a cell name.
        """
        error = type(self).__new__(type(self))
        StratabenchError.__init__(error, f"{context}: {self.message}")
        error.__dict__.update(self.__dict__)
        error.__cause__ = self.__cause__ or self
        return error


class StatementError(StratabenchError):
    """The user's own statement (``timeit``) is not valid Python, or one of its lines raised.

    The message names the part (statement or setup), the line and its text.
    The exit code is 1, as ``python -m timeit`` exits when the statement fails.
    """


class UncountableError(StratabenchError):
    """A cell that ``--count instructions`` cannot count; the cell is reported unsupported, with the reason."""


class UsageError(StratabenchError):
    """An option, argument or value the user gave is not valid."""

    exit_code = 2


class UnknownNameError(UsageError):
    """A suite, codec, compressor, store or mapper name that is not registered."""


class DataError(StratabenchError):
    """An input file (records, dataset, results) is malformed."""

    exit_code = 65


class ResultsFormatError(DataError):
    """A results file is corrupt, truncated or of an unknown format version."""


class NoCellsError(DataError):
    """A results file with no cell to report, or a gate (``compare --fail-above``) that compared no cell.

    A gate that compared nothing has not passed.
    """


class UnavailableError(StratabenchError):
    """Something a plugin needs is missing: a package, a binary, a toolchain."""

    exit_code = 69


class StoreError(StratabenchError):
    """A store failed: its server is unreachable, refused, or died mid-run."""

    exit_code = 69


class ValueTooLargeError(StoreError):
    """A value is larger than the store accepts for one item."""


class ServiceError(StratabenchError):
    """A private local server could not be started, reached or stopped."""

    exit_code = 69


class IntegrityError(StratabenchError):
    """What a data path returned does not hash to what went in."""

    exit_code = 70


class OutputExistsError(StratabenchError):
    """An output file exists and overwriting it was not asked for."""

    exit_code = 73


class OutputError(StratabenchError):
    """An output file or directory cannot be written."""

    exit_code = 74


def exit_statuses() -> dict[int, str]:
    """Every exit status of the ``stratabench`` command and what it means, in order.

    Read from the tree in this module's docstring (one line per class: name,
    status, meaning) and :data:`OTHER_EXIT_STATUSES`; a test checks the tree
    against the classes, so the two cannot drift apart.
    """
    meanings: dict[int, list[str]] = {code: [text] for code, text in OTHER_EXIT_STATUSES.items()}
    for _, code, meaning in error_tree():
        if meaning not in meanings.setdefault(code, []):
            meanings[code].append(meaning)
    return {code: "; ".join(meanings[code]) for code in sorted(meanings)}


def error_tree() -> list[tuple[str, int, str]]:
    """``(class name, exit status, meaning)`` for each line of the tree in this module's docstring."""
    import re

    lines = re.findall(r"^[ │├└─]*([A-Z]\w+)\s+(\d+)\s+(.+)$", __doc__ or "", re.MULTILINE)
    return [(name, int(code), meaning.strip()) for name, code, meaning in lines]
