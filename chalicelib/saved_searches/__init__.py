"""Saved searches and match alerts: a percolator over the searches users saved."""
