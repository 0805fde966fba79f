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

ROOT = Path(__file__).resolve().parents[1]
DURATIONS = Path(__file__).with_name("durations.json")
SHORTEST = 0.5  # seconds


def junit_durations(path):
    """``{test id: seconds}`` of a pytest JUnit XML report."""
    seconds = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        # classname "tests.test_x" (module) or "tests.test_x.TestClass"
        file = next((module.rsplit("/", k)[0] for k in range(module.count("/") + 1)
                     if (ROOT / (module.rsplit("/", k)[0] + ".py")).is_file()), None)
        if file is None:
            continue
        cls = module[len(file) + 1:].replace("/", "::")
        nodeid = f"{file}.py::" + (f"{cls}::" if cls else "") + case.get("name")
        seconds[nodeid] = float(case.get("time", 0.0))
    return seconds


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
