"""Print a leg's slowest test files from its JUnit XML: where the minutes of a CI leg went.

Usage: python .ci/slowest_files.py LEG.xml [N]   (N files, 8 by default)
"""

import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter


def slowest_files(junit_xml: str, count: int) -> list[tuple[str, float, int]]:
    seconds: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    for case in ElementTree.parse(junit_xml).iter("testcase"):
        module = case.get("classname", "")  # tests.ralphsite.test_site (a test class adds its name)
        seconds[module] += float(case.get("time") or 0)
        tests[module] += 1
    return [(module, total, tests[module]) for module, total in seconds.most_common(count)]


if __name__ == "__main__":
    for module, total, tests in slowest_files(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8):
        print(f"    {total:6.0f} s  {tests:5d} tests  {module}")
