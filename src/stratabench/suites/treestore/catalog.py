"""The 22 tests of docs/studies/treestore.md §7.2: setups, untimed before/after steps, the timed block, the check.

Each test is declared once as a :class:`TreeTest`. The harness runs its
setup once (or before every try in the ``fresh-state`` mode), then per try
the untimed ``before``, the timed block, the untimed integrity check and
``after``; then the teardown. State carried across tries is whatever the
timed blocks leave, exactly as sysrepo's test program (§7.3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stratabench.systems.treestore.backends.base import OPERATIONAL, RUNNING
from stratabench.systems.treestore.core import Connection, Core, Session
from stratabench.suites.treestore.dataset import Dataset, entries

__all__ = ["FAMILIES", "TESTS", "Fixture", "TreeTest", "family_of"]


@dataclass
class Fixture:
    """What a setup leaves: the test's connection and session, plus extras (subscribers, providers)."""

    conn: Connection
    session: Session
    extra: list[Connection] = field(default_factory=list)


@dataclass(frozen=True)
class TreeTest:
    """One test of the study.

    Attributes
    ----------
    check
        What the integrity check hashes after the timed block: ``result`` (what
        the block returned), ``running`` or ``push`` (the stored state); and
        ``expected``, the key of :attr:`Dataset.hashes` it must equal.
    consumes_state
        Tests 12-15 and 19-22: only try 1 changes data in the ``sysrepo`` mode, so their tries are not
        repeats of one measurement there.
    tries_alike
        Every try starts from the state the setup left: the reads (1-6) change nothing and 16-18 restore
        their precondition in ``before``. An untimed warm-up try then changes nothing the timed tries see.
        (7-11 leave the container ``cont`` behind after try 1, so their try 1 differs from later ones.)
    """

    number: int
    name: str
    setup: Callable[[Core, Dataset], Fixture]
    teardown: Callable[[Fixture, Dataset], None]
    timed: Callable[[Fixture, Dataset], Any]
    check: tuple[str, str]
    before: Callable[[Fixture, Dataset], None] | None = None
    after: Callable[[Fixture, Dataset], None] | None = None
    consumes_state: bool = False
    tries_alike: bool = False

    @property
    def slug(self) -> str:
        return self.name.replace(" ", "-")

    def tries_repeat(self, fresh_state: bool) -> bool:
        """Whether later tries measure the operation of try 1 again (not so for a consumer in the sysrepo mode)."""
        return fresh_state or not self.consumes_state

    def warm_up_changes_nothing(self, fresh_state: bool) -> bool:
        """Whether an untimed try before the timed ones leaves them the state they would see without it."""
        return fresh_state or self.tries_alike


# -- setups (docs/studies/treestore.md §7.1) ------------------------------------------------------

def s0(core: Core, data: Dataset) -> Fixture:
    conn = core.connect()
    return Fixture(conn, conn.session(RUNNING))


def s0o(core: Core, data: Dataset) -> Fixture:
    conn = core.connect()
    return Fixture(conn, conn.session(OPERATIONAL))


def _loaded(fixture: Fixture, data: Dataset, document: dict[str, Any]) -> Fixture:
    fixture.session.merge(document)
    fixture.session.commit(data.bulk_timeout)
    return fixture


def sr(core: Core, data: Dataset) -> Fixture:
    return _loaded(s0(core, data), data, data.lst_document())


def src(core: Core, data: Dataset) -> Fixture:
    conn = core.connect(cache=True)
    return _loaded(Fixture(conn, conn.session(RUNNING)), data, data.lst_document())


def so(core: Core, data: Dataset) -> Fixture:
    return _loaded(s0o(core, data), data, data.lst_document())


def su(core: Core, data: Dataset) -> Fixture:
    return _loaded(s0(core, data), data, data.usr_document())


def sp(core: Core, data: Dataset) -> Fixture:
    fixture = s0o(core, data)
    fixture.session.provide("/perf:cont", lambda path: {"perf:cont": {"lst": entries(data.n)}})
    return fixture


# -- teardowns -------------------------------------------------------------

def t0(fixture: Fixture, data: Dataset) -> None:
    for conn in (*fixture.extra, fixture.conn):
        conn.close()


def tr(fixture: Fixture, data: Dataset) -> None:
    fixture.session.delete("/perf:cont")
    fixture.session.commit(data.bulk_timeout)
    t0(fixture, data)


# -- timed blocks ------------------------------------------------------------

def create_batch(fixture: Fixture, data: Dataset) -> None:
    fixture.session.merge({"perf:cont": {"lst": entries(data.n)}})
    fixture.session.commit(data.bulk_timeout)


def create_user_ordered(fixture: Fixture, data: Dataset) -> None:
    session = fixture.session
    for i in range(data.n):
        session.set(f"/perf:cont/usr-lst[k='{i}']/l", f"l{i}")
    session.commit(data.bulk_timeout)


def create_all(fixture: Fixture, data: Dataset) -> None:
    session = fixture.session
    for i in range(data.n):
        session.set(f"/perf:cont/lst[k1='{i}'][k2='str{i}']/l", f"l{i}")
    session.commit(data.bulk_timeout)


def _remover(path: str) -> Callable[[Fixture, Dataset], None]:
    def remove(fixture: Fixture, data: Dataset) -> None:
        fixture.session.delete(path)
        fixture.session.commit(data.bulk_timeout)
    return remove


remove_lst = _remover("/perf:cont/lst")
remove_usr = _remover("/perf:cont/usr-lst")
remove_cont = _remover("/perf:cont")


def subscribers_open(fixture: Fixture, data: Dataset) -> None:
    core = fixture.conn.core
    for _ in range(12):
        conn = core.connect()
        conn.session(OPERATIONAL).subscribe(lambda event, diff: None)
        fixture.extra.append(conn)


def subscribers_close(fixture: Fixture, data: Dataset) -> None:
    while fixture.extra:
        fixture.extra.pop().close()


def many_change_subs(fixture: Fixture, data: Dataset) -> None:
    for _ in range(10):
        create_all(fixture, data)
        remove_lst(fixture, data)


def remove_target(fixture: Fixture, data: Dataset) -> None:
    fixture.session.delete(data.p_m)
    fixture.session.commit()


def create_target(fixture: Fixture, data: Dataset) -> None:
    fixture.session.set(data.p_m, "l0", strict=True)
    fixture.session.commit()


def create_target_oper(fixture: Fixture, data: Dataset) -> None:
    fixture.session.set(data.p_m, "l0")
    fixture.session.commit()


def modify_target(fixture: Fixture, data: Dataset) -> None:
    fixture.session.set(data.p_m, "l1")
    fixture.session.commit()


TESTS: tuple[TreeTest, ...] = (
    TreeTest(1, "get tree", sr, tr, lambda f, d: f.session.get_data(d.f_m), ("result", "target entry"),
             tries_alike=True),
    TreeTest(2, "get item", sr, tr, lambda f, d: f.session.get_item(d.f_m), ("result", "target value"),
             tries_alike=True),
    TreeTest(3, "get tree hash", sr, tr, lambda f, d: f.session.get_data(d.p_m), ("result", "target entry"),
             tries_alike=True),
    TreeTest(4, "get tree hash cached", src, tr, lambda f, d: f.session.get_data(d.p_m),
             ("result", "target entry"), tries_alike=True),
    TreeTest(5, "get user ordered tree", su, tr, lambda f, d: f.session.get_data("/perf:cont"),
             ("result", "usr"), tries_alike=True),
    TreeTest(6, "get oper tree", sp, t0, lambda f, d: f.session.get_data("/perf:cont"), ("result", "lst"),
             tries_alike=True),
    TreeTest(7, "create batch", s0, t0, create_batch, ("running", "lst"), after=remove_lst),
    TreeTest(8, "create user ordered items", s0, t0, create_user_ordered, ("running", "usr"), after=remove_usr),
    TreeTest(9, "create all items", s0, t0, create_all, ("running", "lst"), after=remove_lst),
    TreeTest(10, "create all items oper", s0o, t0, create_all, ("push", "lst"), after=remove_lst),
    TreeTest(11, "many oper change_subs", s0o, t0, many_change_subs, ("push", "empty cont"),
             before=subscribers_open, after=subscribers_close),
    TreeTest(12, "remove all items", sr, t0, remove_lst, ("running", "empty cont"), consumes_state=True),
    TreeTest(13, "remove all items cached", src, t0, remove_lst, ("running", "empty cont"), consumes_state=True),
    TreeTest(14, "remove whole subtree", sr, t0, remove_cont, ("running", "empty"), consumes_state=True),
    TreeTest(15, "remove whole subtree cached", src, t0, remove_cont, ("running", "empty"), consumes_state=True),
    TreeTest(16, "create an item", sr, tr, create_target, ("running", "created"), before=remove_target,
             tries_alike=True),
    TreeTest(17, "create an item cached", src, tr, create_target, ("running", "created"),
             before=remove_target, tries_alike=True),
    TreeTest(18, "create an item oper", so, tr, create_target_oper, ("push", "created"),
             before=remove_target, tries_alike=True),
    TreeTest(19, "modify an item", sr, tr, modify_target, ("running", "modified"), consumes_state=True),
    TreeTest(20, "modify an item cached", src, tr, modify_target, ("running", "modified"), consumes_state=True),
    TreeTest(21, "remove an item", sr, tr, remove_target, ("running", "removed"), consumes_state=True),
    TreeTest(22, "remove an item cached", src, tr, remove_target, ("running", "removed"), consumes_state=True),
)
"""In table order (docs/studies/treestore.md §7.2); the names are the reference's."""


FAMILIES = {"reads (1-6)": range(1, 7), "bulk writes (7-11)": range(7, 12), "removals (12-15)": range(12, 16),
            "single-item writes (16-22)": range(16, 23)}
"""The tests grouped by what they do, for growth figures and charts."""


def family_of(number: int) -> str:
    return next(family for family, numbers in FAMILIES.items() if number in numbers)
