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
        try:
            desc = create_table(dynamodb, table_name, res["Properties"])
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

    return _environment(template, resolved)


def create_table(dynamodb: Any, table_name: str, properties: dict[str, Any]) -> dict[str, Any]:
    """Create one table of the template (CreateTable, then its TTL setting) and return its description.

    Parameters
    ----------
    dynamodb:
        A boto3 DynamoDB client.
    table_name:
        The physical name.
    properties:
        The template resource's ``Properties`` (``AWS::DynamoDB::Table``).

    Returns
    -------
    dict
        CreateTable's ``TableDescription`` (``TableArn``, ``LatestStreamArn`` when it has a stream).

    Raises
    ------
    botocore.exceptions.ClientError
        ``ResourceInUseException`` when the table exists.
    """
    params = {k: properties[k] for k in _CREATE_TABLE_KEYS if k in properties}
    if "StreamSpecification" in params:  # CloudFormation implies StreamEnabled; the API wants it
        params["StreamSpecification"] = {"StreamEnabled": True, **params["StreamSpecification"]}
    description: dict[str, Any] = dynamodb.create_table(TableName=table_name, **params)["TableDescription"]
    if "TimeToLiveSpecification" in properties:
        dynamodb.update_time_to_live(TableName=table_name, TimeToLiveSpecification=properties["TimeToLiveSpecification"])
    return description


def is_dynamic_reference(value: Any) -> bool:
    """Whether an environment value of the template is a CloudFormation dynamic reference
    (``{{resolve:secretsmanager:...}}``, possibly inside ``Fn::Sub``): a deploy-time secret
    that has no local counterpart."""
    text = value.get("Fn::Sub", "") if isinstance(value, dict) else value
    return isinstance(text, str) and text.startswith("{{resolve:")


def _environment(template: dict[str, Any], resolved: dict[tuple[str, str], str]) -> dict[str, str]:
    """``Globals.Function.Environment.Variables`` with each ``Ref``/``Fn::GetAtt`` looked up in ``resolved``."""
    environment: dict[str, str] = {}
    parameters = template.get("Parameters", {})
    for var, ref in template["Globals"]["Function"]["Environment"]["Variables"].items():
        if isinstance(ref, dict) and ref.get("Ref") in parameters:
            continue  # a deployment parameter: locally the stage's setting (.chalice/config.json) applies
        if is_dynamic_reference(ref):
            continue  # a secret CloudFormation resolves at deployment: locally the setting's default applies
        if isinstance(ref, dict) and "Ref" in ref:
            environment[var] = resolved[(ref["Ref"], "Ref")]
        elif isinstance(ref, dict) and "Fn::GetAtt" in ref:
            logical, attribute = ref["Fn::GetAtt"]
            environment[var] = resolved[(logical, attribute)]
        else:
            environment[var] = str(ref)
    return environment


def placeholder_environment(template: dict[str, Any] | None = None, region: str = "us-east-1",
                            account: str = "000000000000") -> dict[str, str]:
    """The functions' environment with placeholder names, for code that runs before any resource exists.

    ``chalice package`` and the template generator import ``app`` (which reads the stream and
    queue ARNs of its event handlers), and tests of pure logic never create resources; the
    settings still require every resource name (:mod:`chalicelib.kernel.config`). Names are the
    logical ids; ARNs and URLs are built for ``region`` and ``account``, and a table's stream
    ARN ends in ``/stream/placeholder``. Nothing is created or called.

    Returns
    -------
    dict
        Variable name -> value, ready for ``os.environ.update``.
    """
    template = template or load_template()
    resolved: dict[tuple[str, str], str] = {}
    for name in resources_of_type(template, "AWS::DynamoDB::Table"):
        arn = f"arn:aws:dynamodb:{region}:{account}:table/{name}"
        resolved.update({(name, "Ref"): name, (name, "Arn"): arn, (name, "StreamArn"): f"{arn}/stream/placeholder"})
    for name, queue in resources_of_type(template, "AWS::SQS::Queue").items():
        physical = name + (".fifo" if queue["Properties"].get("FifoQueue") else "")  # as create_resources names it
        resolved[(name, "Ref")] = f"https://sqs.{region}.amazonaws.com/{account}/{physical}"
        resolved[(name, "Arn")] = f"arn:aws:sqs:{region}:{account}:{physical}"
    return _environment(template, resolved)


if __name__ == "__main__":
    # `python -m local_stack.resources`: the placeholder environment as NAME=value lines (make package).
    print("\n".join(f"{name}={value}" for name, value in placeholder_environment().items()))
