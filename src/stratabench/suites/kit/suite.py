"""The suite base class: a study as a matrix of cells run by one engine."""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from dataclasses import replace
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from stratabench.engine.operation import CellSpec, Operation, PairedBound
from stratabench.options import EngineOptions
from stratabench.registry import Registry
from stratabench.settings import Setting, SettingReader

if TYPE_CHECKING:
    from stratabench.options import RunOptions
    from stratabench.results.records import CellResult

__all__ = ["SUITES", "Suite", "min_time_setting"]


def min_time_setting(suite: str, default_min_sample_ns: int) -> Setting:
    """The declaration of ``SUITE.min_time``, which :meth:`Suite.tuned_engine` reads.

    Parameters
    ----------
    suite
        The suite's registered name.
    default_min_sample_ns
        The suite's own calibration target, as passed to ``tuned_engine``.
    """
    return Setting(f"{suite}.min_time", "", "seconds per sample; default: the run's --min-time, at most "
                   f"{default_min_sample_ns / 1e9:g}", "number", minimum=0, maximum=60)


class Suite(ABC):
    """A study: it lists its cells, builds their operations, shapes its tables.

    Subclasses are registered with ``@SUITES.register("name")`` in a study
    package ``stratabench.suites.NAME``, and build their cells with
    :meth:`spec`. Everything a suite needs comes from
    :class:`~stratabench.options.RunOptions`, which crosses into worker
    processes as JSON, so ``prepare`` can rebuild any cell from its spec.
    """

    name: ClassVar[str]
    #: Whether ``stratabench run`` with no suite named includes this suite.
    default: ClassVar[bool] = True
    #: What ``run --full`` runs for this suite (its reference grid), in a few words; empty: the suite has none.
    full_grid: ClassVar[str] = ""
    #: Every ``--set`` setting the suite reads, each with its default (read them with :attr:`config`).
    settings: ClassVar[tuple[Setting, ...]] = ()

    def __init__(self, options: RunOptions) -> None:
        self.options = options

    @classmethod
    def preload(cls) -> tuple[str, ...]:
        """Modules the zygote imports once, so each cell's fresh process starts with them imported.

        A cell imports its plugin and the library under it when it is
        prepared; in a fresh process that costs from milliseconds (a codec)
        to seconds (google-cloud-ndb takes about 2 s), paid again by every
        cell. Here: the suite's own requirements and every installed codec,
        compressor, store and mapper plugin with its requirements (see
        :mod:`stratabench.engine.zygote`), except the drivers of the stores
        that need a server: those come only with a run that names such a
        store (:func:`stratabench.suites.kit.plan.store_drivers`). A run
        without one paid them in every round's zygote start (about 0.1 s) and,
        in every worker's fork and exit, their 12 MB of the zygote's memory
        (1.5 ms of 8 a visit).
        """
        from stratabench.layers.codecs import CODECS
        from stratabench.layers.compressors import COMPRESSORS
        from stratabench.layers.mappers import MAPPERS
        from stratabench.layers.stores import STORES
        modules: list[str] = list(SUITES.info(cls.name).requires)
        for registry in (CODECS, COMPRESSORS, STORES, MAPPERS):
            for info in registry:  # iterating imports every plugin module of the registry
                if info.availability.ok:
                    serves = registry is STORES and getattr(info.cls, "service", None) is not None
                    # A plugin may also name what it imports when made (its ``preload``), beyond its requirements.
                    extras = () if serves else (*info.requires, *getattr(info.cls, "preload", ()))
                    modules += [info.cls.__module__, *extras]
        # Where opening a store looks up its server's processes (open_store): once here, not in each visit (1 ms).
        modules.append("stratabench.services.state")
        # The study's own modules (its operations, its report), which its cells
        # import when prepared: where bytecode is not cached
        # (PYTHONDONTWRITEBYTECODE), each fresh child compiled them again.
        package = importlib.import_module(cls.__module__.rpartition(".")[0])
        modules += [module.name for module in pkgutil.iter_modules(package.__path__, f"{package.__name__}.")]
        return tuple(dict.fromkeys(modules))

    @classmethod
    def warm(cls) -> None:
        """Build once, in the zygote, what the default run's cells would each build alike.

        A child forked afterwards starts with it built: the datasets a study
        generates at its default seed, for instance (about 70 ms a cell for
        the entities). Only pure, cached work belongs here: what a cell
        changes stays in its own process.
        """

    @property
    def config(self) -> SettingReader:
        """The run's values of this suite's declared :attr:`settings`."""
        return SettingReader(type(self), self.options)

    def sized_datasets(self) -> tuple[str, ...]:
        """The registered datasets whose record count ``--size`` sets in this suite (for the memory estimate)."""
        return ()

    @abstractmethod
    def cells(self) -> list[CellSpec]:
        """Every cell of the matrix for these options; cheap, builds no data."""

    @abstractmethod
    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        """Build the operation of one Python cell (runs in the worker).

        ``workdir`` is an empty directory of the cell's own, removed after.
        Raise a :class:`~stratabench.errors.StratabenchError` (for example
        ``UnavailableError``) to fail the cell with a one-line reason.
        """

    def spec(self, name: str, params: Mapping[str, Any], *, language: str = "python",
             env: Mapping[str, str] | None = None, group: str | None = None,
             min_rounds: int | None = None, bounds: tuple[PairedBound, ...] = ()) -> CellSpec:
        """A cell of this suite, carrying this suite's class as the factory that builds its operation.

        ``group`` declares the cells this one is compared with: every cell
        given the same group is measured back to back with the others in
        each round, so the report's ratios between them are paired
        (:func:`stratabench.results.records.paired_ratio_of`). Give a group
        to whatever a verdict, a target or a "vs" column divides: a codec
        and json at one size, a store and the database for one operation.
        ``min_rounds`` raises the cell's floor of rounds
        (:attr:`~stratabench.engine.operation.CellSpec.min_rounds`);
        ``bounds`` declares the verdicts on this cell divided by another that
        the engine samples until decided
        (:attr:`~stratabench.engine.operation.CellSpec.bounds`).
        """
        factory = f"{type(self).__module__}:{type(self).__qualname__}"
        return CellSpec(self.name, name, params, language, env or {}, factory, f"{self.name}/{group}" if group else None,
                        min_rounds, bounds)

    def tuned_engine(self, default_min_sample_ns: int) -> EngineOptions:
        """The run's engine options with this suite's own calibration target.

        Suites of many short operations sample for less than the run's
        ``--min-time`` (never more), so the default run stays quick;
        ``--set SUITE.min_time=SECONDS`` chooses the target explicitly; the
        suite declares it with :func:`min_time_setting`. Attach the result to
        an operation as ``Operation.engine``.
        """
        run = self.options.engine
        name = f"{self.name}.min_time"
        if not self.config.given(name):
            return replace(run, min_sample_ns=min(run.min_sample_ns, default_min_sample_ns))
        return replace(run, min_sample_ns=int(self.config.number(name) * 1e9))

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        """Measure cells whose ``language`` is not Python, yielding each result.

        The default has no external cells; suites with a Go adapter override it.
        """
        return iter(())


#: The suites, one study package (or module) each under :mod:`stratabench.suites`. The registry sits
#: beside the base class, as go-ycsb keeps ``RegisterDBCreator`` beside ``DB`` in ``pkg/ycsb/db.go``, so
#: the base reads its own registration (:meth:`Suite.preload`) without importing the package above it.
SUITES: Registry[type[Suite]] = Registry("suite", "stratabench.suites")
