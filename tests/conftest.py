"""Test ordering for the two CI cores: the longest tests first.

pytest-xdist (``--dist worksteal``, pyproject.toml) hands each worker a contiguous share of the
collection and lets an idle worker take half of a busy worker's queue. A long audit near the
end of the collection would then run alone on one core while the other waits (in session 39's
slow run one worker sat idle while the other still held a queue of 127 tests). Sorting by the durations measured in a past
run (``tests/durations.json``: seconds per test id, written by
``python tests/record_durations.py``) starts the long audits first and leaves the short tests
for the end, where they fill both cores.

Modules stay contiguous (their module-scoped fixtures are set up once per worker, as before);
modules go in decreasing total measured time, tests within a module in decreasing time, ties
and tests without a measurement in collection order. The order of the tests changes, not which
tests run: under xdist no test could rely on the order anyway.
"""

import json
from pathlib import Path

import pytest

DURATIONS = Path(__file__).with_name("durations.json")


def _measured():
    try:
        return json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}


def longest_first(items, seconds):
    """``items`` reordered: modules by decreasing total of ``seconds`` (test id -> s), tests
    within a module by decreasing ``seconds``; a stable sort (ties, unmeasured tests: as
    collected)."""
    modules = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    total = {m: sum(seconds.get(i.nodeid, 0.0) for i in its) for m, its in modules.items()}
    ordered = []
    for module in sorted(modules, key=lambda m: -total[m]):
        ordered.extend(sorted(modules[module], key=lambda i: -seconds.get(i.nodeid, 0.0)))
    return ordered


@pytest.hookimpl(trylast=True)  # after ``-m`` has deselected: the totals of the tests that run
def pytest_collection_modifyitems(session, config, items):
    seconds = _measured()
    if seconds:
        items[:] = longest_first(items, seconds)
