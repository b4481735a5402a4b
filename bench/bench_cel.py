"""CEL selector cost benchmark: what admission pays to compile and cost-estimate a selector, and
how long the most expensive selectors admission lets through take to evaluate.

Admission: the median of several uncached ``compile_selector`` calls (cel-cpp compile, checked-AST
serialization, cost estimate, and for dyn-valued selectors the probe evaluation), for a typical
selector, for 10 KiB selectors (the length limit) of the densest kinds, and for upstream's
too-expensive test selector.  Evaluation: for a few families of selectors, the largest member
whose estimate is within ``CELSelectorExpressionMaxCost``, evaluated once on a 32-attribute
device.  Run: ``.venv/bin/python bench/bench_cel.py [--quick]`` (``--quick``: one compilation each).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine_description, markdown_table
from fakeapi.machinery.cel import _env, compile_selector, device_env  # _env: to time cel-cpp alone
from fakeapi.machinery.cel_cost import CEL_SELECTOR_EXPRESSION_MAX_COST as LIMIT
from fakeapi.machinery.cel_cost import CEL_SELECTOR_EXPRESSION_MAX_LENGTH as MAX_LENGTH
from fakeapi.machinery.cel_cost import estimate_cost

RUNS = 9
DRIVER = "gpu.example.com"
TYPICAL = (f'device.attributes["{DRIVER}"].model == "A100" && '
           f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0')
ITEMS_10 = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


def repeated(unit: str, separator: str = " && ") -> str:
    """``unit`` joined as often as fits in the length limit."""
    return separator.join([unit] * ((MAX_LENGTH + len(separator)) // (len(unit) + len(separator))))


ADMISSION = [
    ("typical (attribute and quantity)", TYPICAL),
    ("max length: attribute comparisons", repeated(f'device.attributes["{DRIVER}"].model == "A100"')),
    ("max length: macros `[1].all(x, x > 0)`", repeated("[1].all(x, x > 0)")),
    ("max length: one list literal", "[" + repeated("1", ",")[: MAX_LENGTH - 20] + "].size() > 0"),
    ("rejected: upstream's CEL-cost test", "".join(f"{ITEMS_10}.all(x{i}, " for i in range(7)) + "true" + ")" * 7),
]


def _ms(seconds: float) -> float:
    return round(seconds * 1e3, 2)


def admission_row(name: str, expression: str, runs: int) -> list[object]:
    total, compiled, estimated = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        selector = compile_selector.__wrapped__(expression)  # uncached, as for a new expression
        total.append(time.perf_counter() - start)
        start = time.perf_counter()
        checked = _env().compile(expression).serialize()
        compiled.append(time.perf_counter() - start)
        start = time.perf_counter()
        estimate_cost(checked)
        estimated.append(time.perf_counter() - start)
    verdict = "admitted" if selector.max_cost <= LIMIT else "too complex"
    return [name, len(expression), selector.max_cost, verdict, _ms(statistics.median(compiled)),
            _ms(statistics.median(estimated)), _ms(statistics.median(total))]


def _items(n: int) -> str:
    return "[" + ",".join(["1"] * n) + "]"


EVALUATION: list[tuple[str, Callable[[int], str]]] = [
    ("string grown by replace (n² characters)", lambda n: f'cel.bind(a, "{"a" * n}", a.replace("a", a).size() > 0)'),
    ("map() over n elements (quadratic in cel-cpp)", lambda n: f"{_items(n)}.map(x, x).size() > 0"),
    ("nested all() over the device's attributes, n comparisons each",
     lambda n: f'device.attributes["{DRIVER}"].all(a, device.attributes["{DRIVER}"].all(b, '
               + " && ".join([f'device.attributes["{DRIVER}"][a] + device.attributes["{DRIVER}"][b] != ""'] * n)
               + "))"),
    ("n iterations of 50 quantity comparisons (Python callbacks)",
     lambda n: f"{_items(n)}.all(x, " + " && ".join(
         [f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("1"))'] * 50) + ")"),
]


def largest_admitted(family: Callable[[int], str]) -> str:
    """The family member with the largest n whose estimate is within the limit (and length)."""
    low, high, best = 1, 1 << 16, family(1)
    while low <= high:
        n = (low + high) // 2
        expression = family(n)
        if len(expression) <= MAX_LENGTH and compile_selector(expression).max_cost <= LIMIT:
            best, low = expression, n + 1
        else:
            high = n - 1
    return best


def evaluation_row(name: str, family: Callable[[int], str]) -> list[object]:
    device = device_env(DRIVER, {"name": "gpu-0", "capacity": {"memory": {"value": "80Gi"}},
                                 "attributes": {f"a{i}": {"string": f"{i:064d}"} for i in range(32)}})
    selector = compile_selector(largest_admitted(family))
    start = time.perf_counter()
    selector.evaluate(device)
    return [name, len(selector.expression), selector.max_cost, _ms(time.perf_counter() - start)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: one compilation per selector")
    runs = 1 if parser.parse_args().quick else RUNS
    print(f"Measured with `python bench/bench_cel.py` on {machine_description()}.\n")
    print(f"**Admission**, median of {runs} uncached compilations (limit {LIMIT:,}):\n")
    print(markdown_table(["selector", "length", "estimated cost", "verdict", "cel-cpp compile ms",
                          "estimate ms", "admission total ms"], [admission_row(*case, runs) for case in ADMISSION]))
    print("\n**Evaluation** of the most expensive admitted member of each family, once:\n")
    print(markdown_table(["family", "length", "estimated cost", "evaluate ms"],
                         [evaluation_row(*case) for case in EVALUATION]))


if __name__ == "__main__":
    main()
