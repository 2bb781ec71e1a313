"""The published figures of sysrepo's study (docs/studies/treestore.md §9) and its way of printing comparisons (§8.1).

Mean seconds over 10 tries per test, for ``JSON DS file``, ``MONGO DS`` and
``REDIS DS`` (MongoDB 8.0, Redis Stack), from sysrepo/sysrepo ``DB_PLG_PERF.md``.
"""

from __future__ import annotations

import math

__all__ = ["PUBLISHED", "REFERENCE_COLUMNS", "comparison", "published_mean", "truncate"]

REFERENCE_COLUMNS = {"json-file": 2, "mongodb": 3, "redis": 4}
"""Which column of a :data:`PUBLISHED` row holds each backend's mean."""

PUBLISHED: dict[int, tuple[tuple[int, str, float, float, float], ...]] = {
    1000: (
        (1, 'get tree', 0.001854, 0.003391, 0.00886),
        (2, 'get item', 0.001778, 0.004908, 0.011593),
        (3, 'get tree hash', 0.001265, 0.00021, 7.9e-05),
        (4, 'get tree hash cached', 1.1e-05, 9.1e-05, 5.5e-05),
        (5, 'get user ordered tree', 0.000771, 0.002773, 0.010339),
        (6, 'get oper tree', 0.003297, 0.009505, 0.005808),
        (7, 'create batch', 0.004387, 0.015844, 0.01864),
        (8, 'create user ordered items', 0.007394, 0.116348, 0.055091),
        (9, 'create all items', 0.009278, 0.019848, 0.023312),
        (10, 'create all items oper', 0.009828, 0.017425, 0.023822),
        (11, 'many oper change_subs', 0.268622, 0.656261, 0.534279),
        (12, 'remove all items', 0.00029, 0.005498, 0.001734),
        (13, 'remove all items cached', 0.00022, 0.005236, 0.000676),
        (14, 'remove whole subtree', 0.000279, 0.00215, 0.001838),
        (15, 'remove whole subtree cached', 0.000227, 0.001359, 0.000744),
        (16, 'create an item', 0.002188, 0.00455, 0.009084),
        (17, 'create an item cached', 0.001278, 0.000725, 0.000773),
        (18, 'create an item oper', 0.003886, 0.003609, 0.003516),
        (19, 'modify an item', 0.001398, 0.004212, 0.009051),
        (20, 'modify an item cached', 0.000505, 0.000737, 0.000476),
        (21, 'remove an item', 0.001403, 0.003979, 0.00845),
        (22, 'remove an item cached', 0.000508, 0.000465, 0.000456),
    ),
    10000: (
        (1, 'get tree', 0.019634, 0.032961, 0.095244),
        (2, 'get item', 0.017939, 0.032789, 0.093283),
        (3, 'get tree hash', 0.014083, 0.000243, 0.000123),
        (4, 'get tree hash cached', 2.8e-05, 0.000227, 0.000153),
        (5, 'get user ordered tree', 0.007701, 0.02699, 0.148259),
        (6, 'get oper tree', 0.031657, 0.034777, 0.040969),
        (7, 'create batch', 0.047354, 0.151078, 0.2208),
        (8, 'create user ordered items', 0.090858, 1.323064, 0.627265),
        (9, 'create all items', 0.106988, 0.218437, 0.264463),
        (10, 'create all items oper', 0.111167, 0.165269, 0.265828),
        (11, 'many oper change_subs', 3.713649, 7.151995, 5.875323),
        (12, 'remove all items', 0.003449, 0.039869, 0.021471),
        (13, 'remove all items cached', 0.002566, 0.039474, 0.007099),
        (14, 'remove whole subtree', 0.002902, 0.01505, 0.022487),
        (15, 'remove whole subtree cached', 0.002584, 0.013198, 0.008592),
        (16, 'create an item', 0.023081, 0.02986, 0.112921),
        (17, 'create an item cached', 0.014541, 0.007017, 0.008093),
        (18, 'create an item oper', 0.041899, 0.034413, 0.041982),
        (19, 'modify an item', 0.015329, 0.028166, 0.131935),
        (20, 'modify an item cached', 0.006262, 0.00484, 0.006567),
        (21, 'remove an item', 0.015146, 0.026894, 0.113544),
        (22, 'remove an item cached', 0.005578, 0.004642, 0.006064),
    ),
    100000: (
        (1, 'get tree', 0.257987, 0.419329, 1.260671),
        (2, 'get item', 0.214855, 0.415434, 1.354169),
        (3, 'get tree hash', 0.182746, 0.000278, 0.000126),
        (4, 'get tree hash cached', 0.000405, 0.003688, 0.002517),
        (5, 'get user ordered tree', 0.092115, 0.345308, 1.757068),
        (6, 'get oper tree', 0.413835, 0.432859, 0.448883),
        (7, 'create batch', 0.658496, 1.749139, 2.471534),
        (8, 'create user ordered items', 0.964103, 14.456433, 5.911053),
        (9, 'create all items', 1.214159, 2.360571, 3.006915),
        (10, 'create all items oper', 1.233159, 1.890673, 3.160048),
        (11, 'many oper change_subs', 42.937387, 80.463488, 68.550078),
        (12, 'remove all items', 0.03681, 0.443124, 0.226741),
        (13, 'remove all items cached', 0.04371, 0.482664, 0.083266),
        (14, 'remove whole subtree', 0.03697, 0.194736, 0.222872),
        (15, 'remove whole subtree cached', 0.04476, 0.167887, 0.093635),
        (16, 'create an item', 0.262785, 0.381125, 1.344594),
        (17, 'create an item cached', 0.23483, 0.171303, 0.166586),
        (18, 'create an item oper', 0.778777, 0.716619, 0.694264),
        (19, 'modify an item', 0.16225, 0.343846, 1.245561),
        (20, 'modify an item cached', 0.107049, 0.100483, 0.108219),
        (21, 'remove an item', 0.161752, 0.364858, 1.291421),
        (22, 'remove an item cached', 0.105254, 0.109074, 0.100165),
    ),
}


def published_mean(n: int, number: int, backend: str) -> float | None:
    """The published mean seconds of test ``number`` on ``backend`` at ``n``, if there is one."""
    column = REFERENCE_COLUMNS.get(backend)
    rows = PUBLISHED.get(n)
    if column is None or rows is None:
        return None
    return float(rows[number - 1][column])


def truncate(value: float, decimals: int = 3) -> float:
    """Truncated, not rounded, as sysrepo prints its comparison column."""
    scale = 10.0 ** decimals
    return float(math.floor(value * scale)) / scale


def comparison(time: float, baseline: float) -> str:
    """sysrepo's comparison column with a word for its colour: ``6.023× faster``, ``1.829× slower``, ``1.000×``."""
    if time <= 0 or baseline <= 0:
        return "n/a"
    if time == baseline:
        return "1.000×"
    larger, smaller = max(time, baseline), min(time, baseline)
    return f"{truncate(larger / smaller):.3f}× {'faster' if time < baseline else 'slower'}"
