"""Selectors: exact paths and the one filter form of the study (docs/studies/treestore.md §2.3).

A *path* names nodes exactly: one step per level, the module prefix on the
top step, and on a list step either no predicate (every instance) or one
equality per key in schema order (``[.='v']`` for a leaf-list value). Any
other selector is a *filter*; the evaluator understands child steps,
absolute steps and predicates that join ``child = 'literal'`` tests with
``and``. Anything else is a :class:`~stratabench.errors.UsageError`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from operator import itemgetter
from dataclasses import dataclass
from typing import Any, NamedTuple

from stratabench.errors import UsageError
from stratabench.systems.treestore.schema import LEAF, LEAF_LIST, LIST, SchemaNode
from stratabench.systems.treestore.tree import Inner, Instances, Key, Value, copy_inner, predicate, typed

__all__ = ["Match", "Selector", "Step", "parse", "result_tree", "select"]

_TEST = re.compile(r"""\s*([A-Za-z_][\w.-]*|\.)\s*=\s*(?:'([^']*)'|"([^"]*)")\s*""")
_STEP = re.compile(r"""/(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)((?:\[(?:[^\]'"]|'[^']*'|"[^"]*")*\])*)""")
_PREDICATE = re.compile(r"""\[((?:[^\]'"]|'[^']*'|"[^"]*")*)\]""")
_AND = re.compile(r"\s+and\s+")
_LITERAL = re.compile(r"'([^']*)'|\"([^\"]*)\"")


class Step(NamedTuple):
    """One step: its schema node and its equality tests ``(child name or '.', typed value)``."""

    schema: SchemaNode
    tests: tuple[tuple[str, Value], ...] = ()
    key: Key | None = None
    """The full key when the tests name exactly the keys (or the leaf-list value)."""


@dataclass(frozen=True)
class Selector:
    """A parsed selector; ``exact`` tells a path from a filter."""

    text: str
    steps: tuple[Step, ...]
    exact: bool

    @property
    def names_key_leaf(self) -> bool:
        """Whether the last step is a key leaf of its list (loaded from the entry)."""
        last = self.steps[-1].schema
        return last.kind == LEAF and last.parent is not None and last.name in last.parent.keys


def _tests(text: str, predicates: str) -> tuple[list[tuple[str, str]], bool]:
    """The (name, literal) tests of a step's predicates, and whether each predicate holds one test."""
    tests: list[tuple[str, str]] = []
    single = True
    for body in _PREDICATE.findall(predicates):
        parts = _AND.split(body) if " and " in body else (body,)
        single = single and len(parts) == 1
        for part in parts:
            match = _TEST.fullmatch(part)
            if match is None:
                raise UsageError(f"selector {text!r}: unsupported predicate [{body}]; "
                                 "use child='literal' tests joined by 'and'")
            literal_value = match.group(2)
            tests.append((match.group(1), literal_value if literal_value is not None else match.group(3)))
    return tests, single


def parse(module: SchemaNode, text: str) -> Selector:
    """Parse and classify a selector against ``module``'s schema.

    Selectors that differ only in their literals (the N paths of a bulk
    edit) share one parse of their shape; only the literals are read anew.

    Raises
    ------
    UsageError
        For a relative selector, an unknown node, a wrong module prefix or
        syntax beyond the study's.
    """
    literals = _LITERAL.findall(text)
    if not literals:
        return _parse_shape(module, text)
    try:
        shape = _parse_shape(module, _LITERAL.sub("'0'", text))
    except UsageError:
        return _parse_text(module, text)  # the same error, naming the selector as given
    values = iter(single or double for single, double in literals)
    steps = []
    for step in shape.steps:
        if not step.tests:
            steps.append(step)
            continue
        tests = tuple((name, _typed_test(step.schema, name, next(values), text)) for name, _ in step.tests)
        steps.append(Step(step.schema, tests, None if step.key is None else tuple(value for _, value in tests)))
    return Selector(text, tuple(steps), shape.exact)


def _parse_text(module: SchemaNode, text: str) -> Selector:
    steps: list[Step] = []
    exact, schema, position, end = True, module, 0, len(text)
    while position < end:
        match = _STEP.match(text, position)
        if match is None:
            raise UsageError(f"selector {text!r}: cannot read it from {text[position:]!r}; "
                             f"write steps like /{module.name}:cont/lst[k1='1'][k2='a']")
        position = match.end()
        prefix, name, predicates = match.groups()
        if (not steps and prefix != module.name) or (prefix is not None and prefix != module.name):
            raise UsageError(f"selector {text!r}: the first step must be {module.name}:NAME, "
                             "and no other module is known")
        child = schema.children.get(name)
        if child is None:
            raise UsageError(f"selector {text!r}: {schema.name} has no child {name!r}")
        if predicates:
            raw, single = _tests(text, predicates)
            tests = tuple((test, _typed_test(child, test, value, text)) for test, value in raw)
            wanted = (".",) if child.kind == LEAF_LIST else child.keys if child.kind == LIST else None
            key = tuple(value for _, value in tests) if single and wanted == tuple(t for t, _ in tests) else None
            exact = exact and key is not None
            steps.append(Step(child, tests, key))
        else:
            steps.append(Step(child))
        schema = child
    if not steps:
        raise UsageError(f"selector {text!r}: must be absolute, like /{module.name}:cont")
    return Selector(text, tuple(steps), exact)


_parse_shape = lru_cache(maxsize=1024)(_parse_text)


def _typed_test(schema: SchemaNode, name: str, value: str, text: str) -> Value:
    if name == ".":
        if schema.kind != LEAF_LIST:
            raise UsageError(f"selector {text!r}: [.=...] applies to leaf-lists only")
        return typed(schema, value)
    child = schema.children.get(name)
    if child is None or child.kind != LEAF:
        raise UsageError(f"selector {text!r}: {schema.name} has no leaf {name!r} to test")
    return typed(child, value)


Match = tuple[tuple[tuple[SchemaNode, Key | None], ...], Any]
"""A selected node: its (schema, key) trail from the module and the node (or leaf value)."""


def _filtered(instances: Instances, schema: SchemaNode, tests: tuple[tuple[str, Value], ...]) -> list[tuple[Key, Any]]:
    """The instances that pass every equality test, in order (a linear scan, as for any filter)."""
    entries = instances.ordered().items()
    if schema.kind == LEAF_LIST:
        return [(key, item) for key, item in entries if all(item == value for _, value in tests)]
    names = tuple(name for name, _ in tests)
    wanted = tuple(value for _, value in tests)
    if all(name in schema.keys for name in names):
        # Keys are always present: compare in C through one itemgetter per entry.
        getter = itemgetter(*names)
        want = wanted if len(names) > 1 else wanted[0]
        return [(key, entry) for key, entry in entries if getter(entry.children) == want]
    return [(key, entry) for key, entry in entries
            if all(entry.children.get(name) == value for name, value in tests)]


def select(root: Inner | None, selector: Selector) -> list[Match]:
    """Every node ``selector`` names in the tree, in document order."""
    if root is None:
        return []
    current: list[Match] = [((), root)]
    for step in selector.steps:
        schema = step.schema
        found: list[Match] = []
        for trail, node in current:
            if type(node) is not Inner:
                continue
            child = node.children.get(schema.name)
            if child is None:
                continue
            if type(child) is not Instances:
                found.append(((*trail, (schema, None)), child))
            elif step.key is not None:
                entry = child.entries.get(step.key)
                if entry is not None:
                    found.append(((*trail, (schema, step.key)), entry))
            else:
                chosen = _filtered(child, schema, step.tests) if step.tests else child.ordered().items()
                found.extend(((*trail, (schema, key)), entry) for key, entry in chosen)
        current = found
    return current


def result_tree(module: SchemaNode, matches: list[Match]) -> Inner | None:
    """A new tree of the selected nodes with their ancestors and the keys of every entry on the way."""
    if not matches:
        return None
    root = Inner(module, None)
    for trail, node in matches:
        parent = root
        for depth, (schema, key) in enumerate(trail):
            last = depth == len(trail) - 1
            name = schema.name
            if key is None:
                if last:
                    parent.children[name] = (copy_inner(node, parent) if type(node) is Inner else node)
                    break
                child = parent.children.get(name)
                if child is None:
                    child = parent.children[name] = Inner(schema, parent)
                parent = child
                continue
            instances = parent.children.get(name)
            if instances is None:
                instances = parent.children[name] = Instances(schema, parent)
            if schema.kind == LEAF_LIST:
                instances.entries[key] = key[0]
                break
            entry = instances.entries.get(key)
            if last:
                instances.entries[key] = copy_inner(node, instances)
                break
            if entry is None:
                entry = Inner(schema, instances, dict(zip(schema.keys, key)), key)
                instances.entries[key] = entry
            parent = entry
    return root
