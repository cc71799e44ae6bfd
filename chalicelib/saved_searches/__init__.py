"""Saved searches and match alerts (issue 14): a percolator over the searches users saved."""
