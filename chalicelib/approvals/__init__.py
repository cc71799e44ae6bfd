"""Listing approval: tasks on the SQS approval queue, claimed and decided through admin routes."""
