"""CPU the AWS SDK spends on our side of one DynamoDB call (docs/decisions.md, "The SDK's CPU").

usage: python scripts/sdk_call_cost.py [ROUNDS=7] [CALLS=300]

Against an in-process moto (``mock_aws``), a client built like ``chalicelib.persistence.storage.client``
(the product's session, no client-side validation) calls
GetItem on a one-item table ``CALLS`` times per round. Per call: the calling thread's CPU
(``time.thread_time``) minus the CPU spent inside moto (its ``BotocoreStubber``, standing for
DynamoDB's own work), i.e. what botocore costs the API process: building and serializing the
request, the event hooks, endpoint rules, signing, parsing the answer. Printed as a table
(median, min, max over the rounds, in ms), signed as in production and unsigned as the
integration tests send them (``local_stack.signing``). A measurement, not a budget: the machine's
speed sets the figures, so compare rows of one run.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")

import boto3
from botocore.config import Config
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber

from chalicelib.persistence import storage
from local_stack.signing import skip_signing

_inside_moto = [0.0]
_stubber_call = BotocoreStubber.__call__


def _timed_stubber(self: BotocoreStubber, *args: Any, **kwargs: Any) -> Any:
    started = time.thread_time()
    try:
        return _stubber_call(self, *args, **kwargs)
    finally:
        _inside_moto[0] += time.thread_time() - started


def _client(session: boto3.session.Session) -> Any:
    """A DynamoDB client configured as ``storage.boto_config`` does (without reading settings)."""
    return session.client("dynamodb", config=Config(parameter_validation=False, retries={"mode": "standard", "total_max_attempts": 3}))


def _rounds(client: Any, rounds: int, calls: int) -> list[float]:
    """Client-side CPU per GetItem in ms, one figure per round."""
    figures = []
    for _ in range(rounds):
        _inside_moto[0] = 0.0
        started = time.thread_time()
        for _ in range(calls):
            client.get_item(TableName="t", Key={"pk": {"S": "a"}})
        figures.append((time.thread_time() - started - _inside_moto[0]) / calls * 1000)
    return figures


def main(rounds: int = 7, calls: int = 300) -> None:
    """Print the table (see the module docstring)."""
    BotocoreStubber.__call__ = _timed_stubber  # type: ignore[method-assign]
    with mock_aws():
        signed = _client(storage.session())
        signed.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        signed.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"S": "x" * 200}})
        unsigned_session = boto3.session.Session()
        unsigned_session._session.register_component(  # the product's parser, as storage.session() has it
            "response_parser_factory", storage.session()._session.get_component("response_parser_factory")
        )
        skip_signing(unsigned_session)
        rows = {
            "signed (production)": _rounds(signed, rounds, calls),
            "unsigned (integration tests)": _rounds(_client(unsigned_session), rounds, calls),
        }
    print(f"SDK client-side CPU per GetItem, ms ({rounds} rounds of {calls} calls)\n")
    print("| client | median | min | max |\n|---|---|---|---|")
    for name, figures in rows.items():
        print(f"| {name} | {statistics.median(figures):.3f} | {min(figures):.3f} | {max(figures):.3f} |")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
