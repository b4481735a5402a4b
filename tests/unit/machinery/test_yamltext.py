"""fakeapi.machinery.yamltext gives what PyYAML's pure-Python safe classes give, on libyaml when present."""

import pytest
import yaml

from fakeapi.kubeconfig import kubeconfig_text
from fakeapi.machinery import yamltext

DOCUMENTS = {
    "kubeconfig": kubeconfig_text("https://127.0.0.1:6443", ca_pem=b"-----BEGIN CERTIFICATE-----\nx\n", token="t"),
    "implicit types": "a: 1\nb: 1.5\nc: true\nd: null\ne: '007'\nf: 2026-12-01\ng: 0o17\nh: ~\n",
    "anchors and flow": "base: &b {cpu: '1', memory: 1Gi}\nother: *b\nlist: [1, two, {three: 3}]\n",
    "block scalars": "script: |\n  echo one\n  echo two\nfolded: >\n  one\n  two\n",
    "unicode": "name: grüße\nemoji: \"\\u2603\"\n",
}


@pytest.mark.parametrize("text", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_load_and_dump_match_the_safe_classes(text):
    value = yamltext.load(text)
    assert value == yaml.safe_load(text)
    for options in ({}, {"sort_keys": False}, {"default_flow_style": True}):
        assert yamltext.dump(value, **options) == yaml.safe_dump(value, **options)


def test_load_all_reads_every_document():
    text = "---\na: 1\n---\n---\nb: [2]\n"
    assert list(yamltext.load_all(text)) == list(yaml.safe_load_all(text)) == [{"a": 1}, None, {"b": [2]}]


def test_unsafe_tags_are_refused():
    with pytest.raises(yaml.YAMLError):
        yamltext.load("!!python/object/apply:os.system ['true']")
