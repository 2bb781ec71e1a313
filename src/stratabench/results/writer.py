"""Streams a results file: the header first, then each cell as it finishes."""

from __future__ import annotations

import json
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from stratabench.errors import OutputError, OutputExistsError
from stratabench.results.format import cell_to_json, trailer_record
from stratabench.results.records import CellResult

__all__ = ["ResultsWriter"]


def _file_in_the_way(directory: Path) -> Path | None:
    """The nearest existing ancestor of ``directory`` (itself included) when it is not a directory."""
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


class ResultsWriter:
    """Appends records to a results file, flushing each one.

    Flushing after every cell means an interrupted or crashed run keeps
    every finished cell on disk, as hyperfine exports after each benchmark.

    Parameters
    ----------
    path
        The file to write; its directory is created if needed.
    header
        The header record (see :func:`stratabench.results.format.header_record`).
    overwrite
        Replace an existing file; without it an existing file is refused,
        so a previous run's results are never clobbered.
    """

    def __init__(self, path: str | Path, header: dict[str, Any], *, overwrite: bool = False) -> None:
        self.path = Path(path)
        blocker = _file_in_the_way(self.path.parent)
        if blocker is not None:
            raise OutputError(f"cannot write results to {self.path}: {blocker} is a file, not a directory")
        if self.path.is_dir():
            raise OutputError(f"cannot write results to {self.path}: it is a directory; "
                              "end --output with / to write a file named for the run into it")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputError(f"cannot write results to {self.path}: {error.strerror or error}") from None
        try:
            self._file: IO[str] = self.path.open("w" if overwrite else "x", encoding="utf-8")
        except FileExistsError:
            raise OutputExistsError(
                f"{self.path} exists; choose another --output or pass --overwrite to replace it"
            ) from None
        except OSError as error:
            raise OutputError(f"cannot write results to {self.path}: {error.strerror}") from None
        #: The round records written so far, for the trailer's summary of the machine.
        self.rounds: list[dict[str, Any]] = []
        self._write(header)

    def _write(self, record: dict[str, Any]) -> None:
        try:
            self._file.write(json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n")
            self._file.flush()
        except OSError as error:
            raise OutputError(f"cannot write results to {self.path}: {error.strerror}") from None

    def write(self, result: CellResult) -> None:
        """Append one cell's record."""
        self._write(cell_to_json(result))

    def write_round(self, record: dict[str, Any]) -> None:
        """Append one finished round's record (:func:`~stratabench.results.format.round_record`), kept in :attr:`rounds`."""
        self._write(record)
        self.rounds.append(record)

    def finish(self, finished: str, environment: dict[str, Any]) -> None:
        """Append the trailer: facts known only at the end of the run (``load_average_end``)."""
        self._write(trailer_record(finished, environment))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
