"""Record the tests' measured durations for the longest-first order of ``tests/conftest.py``.

Run the tests with a JUnit report, then merge it into ``tests/durations.json``::

    pytest --junitxml=/tmp/default.xml
    pytest -m slow --junitxml=/tmp/slow.xml
    python tests/record_durations.py /tmp/default.xml /tmp/slow.xml

Tests under half a second are left out (their order does not matter); entries of tests that
no longer exist are dropped. The file only orders the tests: a stale or missing entry makes a
run slower, never different.
"""

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import DURATIONS  # this script runs from tests/ (its directory on sys.path)

ROOT = Path(__file__).resolve().parents[1]
SHORTEST = 0.5  # seconds


def junit_durations(path):
    """``{test id: seconds}`` of a pytest JUnit XML report (classname ``tests.test_x``: the
    test modules here hold functions, no classes)."""
    return {f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}":
            float(case.get("time", 0.0))
            for case in ET.parse(path).getroot().iter("testcase")}


def main(reports):
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    for report in reports:
        seconds.update(junit_durations(report))
    kept = {k: round(v, 1) for k, v in sorted(seconds.items()) if v >= SHORTEST
            and (ROOT / k.split("::", 1)[0]).is_file()}
    DURATIONS.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n")
    print(f"{len(kept)} tests of {SHORTEST} s or more in {DURATIONS.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
