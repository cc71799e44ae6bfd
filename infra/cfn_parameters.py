"""Template parameters (the ``Parameters`` section of the merge template), declared one way.

Each builder returns one parameter's declaration in CloudFormation's terms (AWS CloudFormation
User Guide, "Parameters"): a ``String`` constrained by a pattern, or a ``Number`` constrained by
bounds. The modules that use a parameter declare it beside their resources.
"""

from __future__ import annotations

from typing import Any


def string_parameter(description: str, pattern: str, default: str | None = None, constraint: str | None = None) -> dict[str, Any]:
    """A ``String`` parameter whose value must match ``pattern`` (``AllowedPattern``, a Java regular expression).

    Parameters
    ----------
    description:
        What the value is, shown by the console and ``aws cloudformation describe-stacks``.
    pattern:
        The whole value's pattern.
    default:
        The value when the stack gives none; ``None``: the stack must give one.
    constraint:
        What CloudFormation says a refused value should be (``ConstraintDescription``).

    Returns
    -------
    dict[str, Any]
        The parameter's declaration.
    """
    declared: dict[str, Any] = {"Type": "String"}
    if default is not None:
        declared["Default"] = default
    declared["AllowedPattern"] = pattern
    if constraint is not None:
        declared["ConstraintDescription"] = constraint
    declared["Description"] = description
    return declared


def number_parameter(description: str, default: int, minimum: int, maximum: int | None = None) -> dict[str, Any]:
    """A ``Number`` parameter from ``minimum`` to ``maximum`` (no upper bound when ``None``), ``default`` unless given.

    Returns
    -------
    dict[str, Any]
        The parameter's declaration (``Default``, ``MinValue``, ``MaxValue``).
    """
    declared: dict[str, Any] = {"Type": "Number", "Default": default, "MinValue": minimum}
    if maximum is not None:
        declared["MaxValue"] = maximum
    declared["Description"] = description
    return declared
