"""Checks for log-error-filter."""
import os
import subprocess
from pathlib import Path

SCRIPT = Path("/app/errors.sh")
OUTPUT = Path("/app/errors.txt")
LOG = Path("/var/log/app/server.log")


def _expected():
    return [line for line in LOG.read_text().splitlines() if " ERROR " in line]


def test_script_is_executable():
    """errors.sh exists and is executable."""
    assert SCRIPT.exists() and os.access(SCRIPT, os.X_OK), "errors.sh missing or not executable"


def test_script_prints_error_lines():
    """Running errors.sh prints exactly the ERROR lines, in order."""
    out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == _expected(), "errors.sh output differs"


def test_errors_file_saved():
    """errors.txt holds the script's output."""
    assert OUTPUT.read_text().splitlines() == _expected(), "errors.txt content differs"
