"""The longest-first order of the CI's test runs (tests/conftest.py)."""

import json
from types import SimpleNamespace

from .conftest import DURATIONS, longest_first


def _items(*ids):
    return [SimpleNamespace(nodeid=i) for i in ids]


def test_modules_by_total_time_tests_by_time_ties_as_collected():
    items = _items("a.py::x", "a.py::y", "b.py::p", "b.py::q", "b.py::r", "c.py::s")
    seconds = {"a.py::y": 5.0, "b.py::q": 4.0, "b.py::r": 3.0, "c.py::s": 0.1}
    order = [i.nodeid for i in longest_first(items, seconds)]
    # b (7 s) before a (5 s) before c; within b: q, r, then the unmeasured p
    assert order == ["b.py::q", "b.py::r", "b.py::p", "a.py::y", "a.py::x", "c.py::s"]


def test_without_measurements_modules_are_grouped_and_no_test_is_lost():
    items = _items("a.py::x", "b.py::y", "a.py::z")
    assert [i.nodeid for i in longest_first(items, {})] == ["a.py::x", "a.py::z", "b.py::y"]
    assert sorted(longest_first(items, {"b.py::y": 1.0}), key=id) == sorted(items, key=id)


def test_the_recorded_durations_name_existing_test_files():
    from pathlib import Path

    seconds = json.loads(DURATIONS.read_text())
    root = Path(__file__).resolve().parents[1]
    assert len(seconds) > 100 and all(v >= 0.5 for v in seconds.values())
    assert all((root / k.split("::", 1)[0]).is_file() for k in seconds)
