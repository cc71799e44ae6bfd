"""Listings: create, read, update, pause/resume, delete; meta validated against the category."""
