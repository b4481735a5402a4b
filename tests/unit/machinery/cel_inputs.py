"""The two selectors of the "CEL with no cost limit" report, rebuilt at their reported lengths.

Before selectors had a cost limit, :data:`ADMISSION_FREEZE` (416 characters) was evaluated on
the probe device at admission: 1.7 s and a std::bad_alloc under a 1 GiB address-space limit
(about 1.5 GB without one).  :data:`SCHEDULING_BLOWUP` (181 characters) was admitted and
exhausted memory when the allocator evaluated it.  Only run them where memory is limited, or
where the fix keeps them from running.
"""

from __future__ import annotations


def squaring_replaces(length: int) -> str:
    """A seed string squared by ``replace`` at each of four binds: len(seed) ** 16 characters."""
    core = ('cel.bind(a, "{}", cel.bind(b, a.replace("a", a), cel.bind(c, b.replace("a", b), '
            'cel.bind(d, c.replace("a", c), d.replace("a", d).size() > 0))))')
    return core.format("a" * (length - len(core) + 2))


def concatenations(length: int, n: int = 30) -> str:
    """A dyn-valued selector (so admission used to run it) that concatenates an 810,000-character
    string with itself n * n times; the attribute domain pads it to ``length``."""
    core = ('cel.bind(a, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", cel.bind(s, a.replace("a", a).replace("a", '
            'a.replace("a", a)), cel.bind(l, [{1}], l.map(i, l.map(j, s + s)).size() > 0 ? '
            'device.allowMultipleAllocations : device.attributes["{0}"].y)))')
    items = ",".join("0" * n)
    return core.format("x" * (length - len(core.format("", items))), items)


SCHEDULING_BLOWUP = squaring_replaces(181)
ADMISSION_FREEZE = concatenations(416)
