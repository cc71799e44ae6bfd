"""The typo dictionary (chalicelib/typo_dictionary.py) on in-process moto: add, read budget, corrections."""

from __future__ import annotations

from chalicelib import typo_dictionary
from chalicelib.text_analysis import typos
from tests.integration.helpers import aws_calls


def test_words_are_added_once_and_corrections_read_only_their_buckets(aws: dict[str, str]) -> None:
    assert typo_dictionary.add("t", "jobs", ["python", "pythons", "engineer", "go", "pylon"]) == 4  # "go": too short
    with aws_calls("UpdateItem") as updates:
        assert typo_dictionary.add("t", "jobs", ["python", "engineer"]) == 0  # known: read, nothing written
        assert typo_dictionary.add("t", "jobs", ["pythonic"]) == 1
    assert len(updates) == 1
    typo_dictionary.add("t", "housing", ["pyramid"])
    with aws_calls("BatchGetItem") as reads:
        found = typo_dictionary.corrections("t", ["jobs", "housing"], ["pyhton", "enginer", "rust"])
    assert found == {"pyhton": ["python"], "enginer": ["engineer"], "rust": []}
    # The stated budget: one BatchGetItem of each typo-tolerant word's buckets in each category.
    keys = [k for r in reads for table in r["RequestItems"].values() for k in table["Keys"]]
    assert len(reads) == 1
    assert len(keys) == 2 * (len(typos.buckets_of("pyhton")) + len(typos.buckets_of("enginer")))
    assert typo_dictionary.corrections("t", ["jobs"], ["go"]) == {"go": []}  # no typos: nothing read
