"""End-to-end tests: fakeapi through its real surfaces (processes, kubectl, clients, pytest runs)."""

# Plugins this environment installs for other tests (schemathesis, hypothesis, anyio), turned off
# in the pytest runs of downstream projects these tests start: such a project does not have them,
# and loading them (their modules imported and assertion-rewritten) triples each run's start-up.
UNRELATED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:schemathesis", "-p", "no:anyio")
