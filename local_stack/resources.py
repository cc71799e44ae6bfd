"""Create the template's tables and queues on an AWS endpoint and resolve the functions' environment.

The same ``infra/resources.json`` that ``chalice package --merge-template`` merges into the
production template is read here, so local runs and tests cannot drift from production.
Physical names are the logical ids (prefixed with ``prefix``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError

TEMPLATE_PATH = Path(__file__).resolve().parent.parent / "infra" / "resources.json"

#: Table properties the DynamoDB CreateTable API takes as they are in CloudFormation.
_CREATE_TABLE_KEYS = ("KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "BillingMode", "StreamSpecification")


def load_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    """Return the merge template as a dict."""
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def resources_of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    """The template's resources of CloudFormation type ``kind`` (e.g. ``AWS::DynamoDB::Table``)."""
    return {name: res for name, res in template["Resources"].items() if res["Type"] == kind}


def create_resources(prefix: str = "", template: dict[str, Any] | None = None) -> dict[str, str]:
    """Create every table and queue of the template (idempotent) and return the environment.

    Parameters
    ----------
    prefix:
        Prepended to every physical name (lets several stacks share one endpoint).
    template:
        The template dict; defaults to ``infra/resources.json``.

    Returns
    -------
    dict
        ``Globals.Function.Environment.Variables`` with every ``Ref``/``Fn::GetAtt`` resolved
        to the local physical name, URL or ARN, ready for ``os.environ.update``.
    """
    template = template or load_template()
    dynamodb = boto3.client("dynamodb")
    sqs = boto3.client("sqs")
    resolved: dict[tuple[str, str], str] = {}

    for name, res in resources_of_type(template, "AWS::DynamoDB::Table").items():
        table_name = prefix + name
        props = res["Properties"]
        params = {k: props[k] for k in _CREATE_TABLE_KEYS if k in props}
        if "StreamSpecification" in params:  # CloudFormation implies StreamEnabled; the API wants it
            params["StreamSpecification"] = {"StreamEnabled": True, **params["StreamSpecification"]}
        try:
            desc = dynamodb.create_table(TableName=table_name, **params)["TableDescription"]
            if "TimeToLiveSpecification" in props:
                dynamodb.update_time_to_live(TableName=table_name, TimeToLiveSpecification=props["TimeToLiveSpecification"])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceInUseException":
                raise
            desc = dynamodb.describe_table(TableName=table_name)["Table"]
        resolved[(name, "Ref")] = table_name
        resolved[(name, "Arn")] = desc["TableArn"]
        if "LatestStreamArn" in desc:
            resolved[(name, "StreamArn")] = desc["LatestStreamArn"]

    queues = resources_of_type(template, "AWS::SQS::Queue")
    # Dead-letter queues first: the others' redrive policies name their ARNs.
    for name in sorted(queues, key=lambda n: "RedrivePolicy" in queues[n]["Properties"]):
        props = queues[name]["Properties"]
        attributes = {
            k: str(props[k]) for k in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds") if k in props
        }
        physical = prefix + name
        if props.get("FifoQueue"):  # SQS requires the suffix; CloudFormation adds it to generated names
            physical += ".fifo"
            attributes["FifoQueue"] = "true"
            attributes["ContentBasedDeduplication"] = str(bool(props.get("ContentBasedDeduplication"))).lower()
        if "RedrivePolicy" in props:
            policy = props["RedrivePolicy"]
            dead_letter = policy["deadLetterTargetArn"]["Fn::GetAtt"][0]
            attributes["RedrivePolicy"] = json.dumps(
                {"deadLetterTargetArn": resolved[(dead_letter, "Arn")], "maxReceiveCount": policy["maxReceiveCount"]}
            )
        url = sqs.create_queue(QueueName=physical, Attributes=attributes)["QueueUrl"]
        resolved[(name, "Ref")] = url
        resolved[(name, "Arn")] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    environment: dict[str, str] = {}
    for var, ref in template["Globals"]["Function"]["Environment"]["Variables"].items():
        if isinstance(ref, dict) and "Ref" in ref:
            environment[var] = resolved[(ref["Ref"], "Ref")]
        elif isinstance(ref, dict) and "Fn::GetAtt" in ref:
            logical, attribute = ref["Fn::GetAtt"]
            environment[var] = resolved[(logical, attribute)]
        else:
            environment[var] = str(ref)
    return environment
