"""The one statement compiler: multi-line sources, joined options, the user's errors as the user's."""

from __future__ import annotations

import pytest

from stratabench.engine.clock import FakeClock
from stratabench.engine.statement import compile_statement, join_lines, one_line, statement_timer
from stratabench.errors import StatementError


def run_once(stmt: str, setup: str = "pass", namespace: dict[str, object] | None = None) -> dict[str, object]:
    seen: dict[str, object] = {}
    scope = {"seen": seen, **(namespace or {})}
    statement_timer(stmt, setup, scope, FakeClock().clock)(1)
    return seen


def test_multi_line_setup_binds_every_line() -> None:
    # The shape that failed with "internal error IndentationError".
    assert run_once("seen['root'] = math.sqrt(x)", "import math\nx = 4") == {"root": 2.0}


def test_indented_sources_are_dedented_and_compound_statements_compile() -> None:
    setup = """
        total = 0
        for n in range(3):
            total += n
    """
    stmt = "if total == 3:\n    seen['total'] = total\nelse:\n    seen['total'] = -1"
    assert run_once(stmt, setup) == {"total": 3}


def test_repeated_options_and_several_statements_join_as_lines_like_python_m_timeit() -> None:
    assert join_lines(["import math", "x = 9"]) == "import math\nx = 9"
    assert join_lines([]) == "pass"
    assert run_once(join_lines(["y = math.sqrt(x)", "seen['y'] = y"]), join_lines(["import math", "x = 9"])) == {"y": 3.0}


def test_the_statement_runs_once_per_loop_and_setup_once_per_call() -> None:
    counts = {"setup": 0, "stmt": 0}
    timed = statement_timer("counts['stmt'] += 1", "counts['setup'] += 1", {"counts": counts}, FakeClock().clock)
    timed(5)
    timed(3)
    assert counts == {"setup": 2, "stmt": 8}


def test_the_loop_reports_its_clock_totals() -> None:
    clock = FakeClock()
    timed = statement_timer("advance(250)", "", {"advance": clock.advance}, clock.clock)
    wall, _ = timed(4)
    assert wall == 1_000


def test_one_line_shows_a_multi_line_statement() -> None:
    assert one_line("x = 1\n\n  y = 2\n") == "x = 1; y = 2"
    assert one_line("sorted(x)") == "sorted(x)"


@pytest.mark.parametrize(
    ("stmt", "setup", "message"),
    [
        ("1 +", "pass", "statement '1 +' is not valid Python: invalid syntax"),
        ("pass", "a = 1\nb = (", "setup line 2 'b = (' is not valid Python: '(' was never closed"),
        ("return 1", "pass", "statement 'return 1' is not valid Python: 'return' outside function"),
    ],
)
def test_a_syntax_error_names_the_part_and_line(stmt: str, setup: str, message: str) -> None:
    with pytest.raises(StatementError) as caught:
        compile_statement(stmt, setup)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("stmt", "setup", "message"),
    [
        ("math.sqrt(2)", "pass", "statement line 1 'math.sqrt(2)' raised NameError: name 'math' is not defined"),
        ("x = 1\ny = 1 / 0", "pass", "statement line 2 'y = 1 / 0' raised ZeroDivisionError: division by zero"),
        ("pass", "import json\njson.loads('{')", "setup line 2 \"json.loads('{')\" raised JSONDecodeError: "
         "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ],
)
def test_the_users_exception_is_the_users_with_its_line(stmt: str, setup: str, message: str) -> None:
    timed = statement_timer(stmt, setup, {}, FakeClock().clock)
    with pytest.raises(StatementError) as caught:
        timed(1)
    assert str(caught.value) == message
    assert caught.value.exit_code == 1 and caught.value.__cause__ is not None


def test_an_error_no_user_line_raised_is_left_alone() -> None:
    # A broken clock is the engine's problem, not the statement's.
    def broken() -> int:
        raise RuntimeError("clock gone")

    clock = FakeClock().clock
    timed = compile_statement("pass").loop_timer({}, type(clock)(wall_ns=broken, cpu_ns=clock.cpu_ns))
    with pytest.raises(RuntimeError, match="clock gone"):
        timed(1)


def _loop_body(code: object) -> list[str]:
    """The instructions between a function's FOR_ITER and its JUMP_BACKWARD: what each loop pays."""
    import dis

    names = [instruction.opname for instruction in dis.get_instructions(code)]  # type: ignore[arg-type]
    return names[names.index("FOR_ITER") + 1:names.index("JUMP_BACKWARD")]


@pytest.mark.parametrize("stmt", ["pass", "x = 1", "d.get('k')"])
def test_the_timed_loop_is_pyperfs_loop_instruction_for_instruction(stmt: str) -> None:
    # A figure meant to read as pyperf's must time the loop pyperf times. (The standard library's timeit template
    # follows the statement with a `pass` line, one NOP more a loop; pyperf's does not.)
    from pyperf._timeit import TEMPLATE

    scope: dict[str, object] = {}
    exec(compile_statement(stmt).code, scope)
    theirs: dict[str, object] = {}
    exec(TEMPLATE.format(stmt=stmt, setup="pass", init="", teardown="pass"), {}, theirs)
    assert _loop_body(scope["timed"].__code__) == _loop_body(theirs["inner"].__code__)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("fresh", "distinct"), [(True, 3), (False, 1)])
def test_each_timed_run_compiles_its_loop_again_unless_counted(fresh: bool, distinct: int) -> None:
    # Where a small loop's code lands in memory sets its speed (3.5 or 4.0 ns for `pass` here), so each run draws a
    # new placement, as pyperf's make_inner does; a count of instructions keeps one compile, which it would swamp.
    codes: list[object] = []
    timed = statement_timer("pass", "import sys; codes.append(sys._getframe().f_code)", {"codes": codes},
                            FakeClock().clock, fresh=fresh)
    for _ in range(3):
        timed(2)
    assert len(codes) == 3 and len({id(code) for code in codes}) == distinct
