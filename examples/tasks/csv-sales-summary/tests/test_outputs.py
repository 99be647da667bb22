"""Checks for csv-sales-summary."""
import csv
import hashlib
import json
from pathlib import Path

import pytest

SUMMARY = Path("/app/summary.json")
SALES = Path("/app/sales.csv")
SALES_SHA256 = "5f1c1b0fd1a1c0b86e0f6b6b8a4f0a3f2d36f0c9e1f5c0a7a2b8e4c3d1f0a9b8"


@pytest.fixture
def summary():
    return json.loads(SUMMARY.read_text())


def test_summary_file_exists():
    """summary.json must exist."""
    assert SUMMARY.exists(), "summary.json was not written"


class TestSummaryContent:
    def test_totals_per_region(self, summary):
        """Each region maps to the rounded total of its orders."""
        totals = {}
        with SALES.open() as handle:
            for row in csv.DictReader(handle):
                totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
        expected = {k: round(v, 2) for k, v in totals.items()}
        assert summary == expected, "region totals are wrong"

    def test_regions_sorted(self, summary):
        """Regions appear in alphabetical order."""
        assert list(summary) == sorted(summary), "regions are not in alphabetical order"


def test_sales_unchanged():
    """The input file is left as it was."""
    digest = hashlib.sha256(SALES.read_bytes()).hexdigest()
    assert digest == SALES_SHA256, "sales.csv was modified"
