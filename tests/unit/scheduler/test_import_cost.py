"""The control plane starts without what it seldom needs: ``fakeapi.models`` makes every pydantic
model class at import (~130 ms with bytecode cached), which ``python -m fakeapi.scheduler`` would
pay at each start; PyYAML (a kubeconfig to read) and croniter (a CronJob to schedule) are ~45 ms
more, imported when first used."""

import json
import subprocess
import sys


def _imported_at_start(*packages: str) -> list[str]:
    """The modules of ``packages`` that starting a control plane imports."""
    code = ("import json, sys, fakeapi.scheduler.__main__; "
            f"print(json.dumps(sorted(m for m in sys.modules if any(m == p or m.startswith(p + '.') "
            f"for p in {packages!r}))))")
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_control_plane_does_not_import_the_models():
    assert _imported_at_start("fakeapi.models") == []


def test_control_plane_starts_without_yaml_and_croniter():
    assert _imported_at_start("yaml", "croniter", "dateutil") == []


def test_yaml_and_croniter_come_when_first_used(tmp_path):
    code = ("import sys; from fakeapi.machinery.cron import parse_schedule; "
            "from fakeapi.scheduler.connection import from_kubeconfig; "
            "parse_schedule('*/5 * * * *'); "
            "print('croniter' in sys.modules, 'yaml' in sys.modules, end=' '); "
            f"from_kubeconfig({str(tmp_path / 'kubeconfig')!r}); print('yaml' in sys.modules)")
    (tmp_path / "kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
        "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:1'}}]\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False", "True"]
