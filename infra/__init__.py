"""CloudFormation merge template generator (``python infra/build_template.py``)."""
