"""Checks for json-config-migrate."""
import json
from pathlib import Path

OLD = Path("/app/config.v1.json")
NEW = Path("/app/config.v2.json")


def _load():
    return json.loads(OLD.read_text()), json.loads(NEW.read_text())


class TestMigration:
    def test_hostname_renamed(self):
        """host is renamed to hostname."""
        old, new = _load()
        assert "host" not in new and new["hostname"] == old["host"], "host was not renamed"

    def test_timeout_in_ms(self):
        """timeout seconds become timeout_ms milliseconds."""
        old, new = _load()
        assert new["timeout_ms"] == old["timeout"] * 1000, "timeout_ms is wrong"

    def test_version_added(self):
        """version 2 is recorded."""
        assert _load()[1]["version"] == 2, "version is not 2"

    def test_other_keys_kept(self):
        """Every other key keeps its value."""
        old, new = _load()
        rest = {k: v for k, v in old.items() if k not in ("host", "timeout")}
        assert all(new.get(k) == v for k, v in rest.items()), "other keys changed"


def test_two_space_indent():
    """The file is indented with 2 spaces."""
    text = NEW.read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\n" or \
        text == json.dumps(json.loads(text), indent=2), "not indented with 2 spaces"
