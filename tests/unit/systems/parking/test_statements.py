"""Statements counted by kind."""

from __future__ import annotations

from stratabench.systems.parking.statements import kind_of


def test_kinds() -> None:
    assert kind_of("SELECT t_product.id FROM t_product WHERE name = %s FOR UPDATE") == "SELECT FOR UPDATE"
    assert kind_of("\n  SELECT count(*) AS count_1 FROM t_order") == "SELECT"
    assert kind_of("UPDATE t_account SET balance=%s") == "UPDATE"
    assert kind_of("INSERT INTO t_order (...) VALUES (...) RETURNING id") == "INSERT"
    assert kind_of("BEGIN") is None
    assert kind_of("SAVEPOINT x") == "OTHER"
