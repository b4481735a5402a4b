"""The control plane starts without the API models: ``fakeapi.models`` makes every pydantic model
class at import (~130 ms with bytecode cached), which ``python -m fakeapi.scheduler`` would pay at
each start."""

import subprocess
import sys


def test_control_plane_does_not_import_the_models():
    code = ("import sys, fakeapi.scheduler.__main__; "
            "print(sorted(m for m in sys.modules if m == 'fakeapi.models' or m.startswith('fakeapi.models.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"the control plane imports the models: {out}"
