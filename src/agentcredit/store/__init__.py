"""The SQLite run store and its exports."""

from agentcredit.store.exports import write_rows
from agentcredit.store.run_store import STORE_NAME, RunStore

__all__ = ["STORE_NAME", "RunStore", "write_rows"]
