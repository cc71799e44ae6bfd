"""Create the first administrator and print its API key once (production bootstrap).

Usage::

    python scripts/create_admin_key.py --stack matching-service-prod [--region eu-central-1] [--name "Ops admin"]
    python scripts/create_admin_key.py --users-table T1 --api-keys-table T2

The table names come from the flags, else from the deployed stack (the environment variables
of its ``APIHandler`` function, which ``infra/resources.json`` sets), else from the
``USERS_TABLE`` / ``API_KEYS_TABLE`` environment variables. AWS credentials and region come
from the usual boto3 sources. The key is printed to stdout and never stored in plain text
(only its SHA-256); keep it in a secret store: it cannot be shown again.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Chalice's logical id of the function serving the API (its environment names the tables).
API_FUNCTION = "APIHandler"
TABLE_VARIABLES = ("USERS_TABLE", "API_KEYS_TABLE")


def tables_from_stack(stack: str, cloudformation: Any, lambda_client: Any) -> dict[str, str]:
    """``USERS_TABLE`` and ``API_KEYS_TABLE`` of the deployed stack ``stack``.

    Parameters
    ----------
    stack:
        The CloudFormation stack name.
    cloudformation, lambda_client:
        boto3 clients (``cloudformation``, ``lambda``).

    Raises
    ------
    SystemExit
        The stack's API function lacks one of the variables.
    """
    detail = cloudformation.describe_stack_resource(StackName=stack, LogicalResourceId=API_FUNCTION)["StackResourceDetail"]
    configuration = lambda_client.get_function_configuration(FunctionName=detail["PhysicalResourceId"])
    variables = configuration.get("Environment", {}).get("Variables", {})
    missing = [name for name in TABLE_VARIABLES if name not in variables]
    if missing:
        raise SystemExit(f"stack {stack}: function {detail['PhysicalResourceId']} has no {', '.join(missing)}")
    return {name: variables[name] for name in TABLE_VARIABLES}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Create an administrator user and print its API key once.")
    parser.add_argument("--stack", help="deployed CloudFormation stack to read the table names from")
    parser.add_argument("--region", help="AWS region (default: the boto3 configuration)")
    parser.add_argument("--users-table", help="Users table name (overrides --stack)")
    parser.add_argument("--api-keys-table", help="ApiKeys table name (overrides --stack)")
    parser.add_argument("--name", default="Administrator", help="display name of the administrator")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Create the administrator; returns the exit status."""
    args = parse_args(argv)
    if args.region:
        os.environ["AWS_DEFAULT_REGION"] = args.region
    tables: dict[str, str] = {}
    if args.stack:
        import boto3

        tables = tables_from_stack(args.stack, boto3.client("cloudformation"), boto3.client("lambda"))
    if args.users_table:
        tables["USERS_TABLE"] = args.users_table
    if args.api_keys_table:
        tables["API_KEYS_TABLE"] = args.api_keys_table
    os.environ.update(tables)
    missing = [name for name in TABLE_VARIABLES if not os.environ.get(name)]
    if missing:
        print(f"error: no table name for {', '.join(missing)}: pass --stack or the table flags", file=sys.stderr)
        return 2

    from chalicelib.kernel.config import Settings, settings
    from chalicelib.users.models import AdminUserCreate
    from chalicelib.users.service import create_user

    # Every resource name is a required setting; this script writes the two tables above only.
    for name, field in Settings.model_fields.items():
        if field.is_required():
            os.environ.setdefault(name, f"unused-by-create_admin_key-{name.lower()}")
    settings.cache_clear()
    created = create_user(AdminUserCreate(displayName=args.name, admin=True))
    print(f"Created administrator {created.userId} in {os.environ['USERS_TABLE']}; its API key (shown once):", file=sys.stderr)
    print(created.apiKey)
    return 0


if __name__ == "__main__":
    sys.exit(main())
