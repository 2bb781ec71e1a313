"""Reading a file the user names: a regular file, and a bounded read.

``report``, ``compare`` and ``load --data`` read a whole file into memory.
Given ``/dev/zero`` they would read until the memory ran out; given a FIFO,
they would wait for a writer for ever. :func:`read_input_file` opens without
blocking, refuses what is not a regular file (naming what it is), and refuses
a file over a size limit before reading it, so neither can happen.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from stratabench.errors import DataError, StratabenchError
from stratabench.units import format_bytes

__all__ = ["file_kind", "read_input_file"]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words: ``a regular file``, ``a FIFO (named pipe)``, ..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_input_file(path: str | Path, *, limit: int, what: str,
                    error: type[StratabenchError] = DataError) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Parameters
    ----------
    path
        The file the user named.
    limit
        The largest size read; a larger file is refused before any byte is.
    what
        What the file should be, for the messages (``a results file``).
    error
        The class of the one-line error raised for a missing, special,
        unreadable or too large file.
    """
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise error(f"{path}: no such file; give {what}") from None
    except OSError as failure:
        raise error(f"{path}: cannot read ({failure.strerror}); give {what}") from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise error(f"{path}: is {file_kind(status.st_mode)}; give {what}")
    if status.st_size > limit:
        os.close(fd)
        raise error(f"{path}: {format_bytes(status.st_size)} is over the {format_bytes(limit)} this reads; "
                    f"give {what} of at most that size")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as file:
        try:
            data = file.read(limit + 1)
        except OSError as failure:
            raise error(f"{path}: cannot read ({failure.strerror})") from None
    if len(data) > limit:  # it grew while being read
        raise error(f"{path}: over the {format_bytes(limit)} this reads; give {what} of at most that size")
    return data
