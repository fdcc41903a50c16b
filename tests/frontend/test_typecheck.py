"""The page scripts' `// @ts-check` claims hold: TypeScript finds no error in them.

CI's `make test` installs TypeScript first (`make typecheck`); elsewhere the check runs
when `npm ci` has been run, so that the suite never needs node.
"""

import shutil
import subprocess
from pathlib import Path

from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
TSC = ROOT / "node_modules" / ".bin" / "tsc"


def test_tsc_finds_no_type_error_in_the_page_scripts():
    if not TSC.exists() or shutil.which("node") is None:
        skip_or_fail(f"needs node and TypeScript at {TSC} (run `make typecheck` or `npm ci`)")
    result = subprocess.run(
        [str(TSC), "--project", str(ROOT / "tsconfig.json"), "--pretty", "false"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
