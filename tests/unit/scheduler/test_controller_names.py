"""``--controllers``: kube-controller-manager's list semantics over fakeapi's controllers."""

import argparse

import pytest
from fakeapi.scheduler.controllers import names
from fakeapi.scheduler.controllers.names import controller_entries, controllers_argument, enabled_controllers


def test_star_enables_every_controller_and_is_the_default():
    assert enabled_controllers() == enabled_controllers(["*"]) == enabled_controllers(None) == names.KNOWN
    assert names.DEPLOYMENT in names.KNOWN and names.RESOURCE_CLAIM in names.KNOWN


def test_names_alone_enable_only_themselves():
    assert enabled_controllers(["resourceclaim-controller", "job-controller"]) == {names.RESOURCE_CLAIM, names.JOB}
    assert enabled_controllers([]) == frozenset()


def test_a_minus_disables_and_the_first_entry_naming_a_controller_decides():
    assert enabled_controllers(["*", "-deployment-controller"]) == names.KNOWN - {names.DEPLOYMENT}
    assert names.DEPLOYMENT in enabled_controllers(["deployment-controller", "-deployment-controller"])
    assert names.DEPLOYMENT not in enabled_controllers(["-deployment-controller", "*", "deployment-controller"])


def test_upstreams_short_aliases_and_a_comma_separated_string():
    assert enabled_controllers("resourceclaim, -deployment ,*") == names.KNOWN - {names.DEPLOYMENT}
    assert enabled_controllers(["endpoint"]) == {names.ENDPOINTS}
    assert controller_entries(" *,-job,, ") == ("*", "-job")


@pytest.mark.parametrize(("entry", "message"), [
    ("deploymnt", '"deploymnt" is not in the list of known controllers'),
    ("-nope-controller", '"nope-controller" is not in the list of known controllers'),
    ("-garbage-collector-controller", "runs inside fakeapi's API server"),
    ("namespace", "runs inside fakeapi's API server"),
])
def test_unknown_names_are_refused(entry, message):
    with pytest.raises(ValueError, match=message):
        enabled_controllers(["*", entry])
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        controllers_argument(f"*,{entry}")
