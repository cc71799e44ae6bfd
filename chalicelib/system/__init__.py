"""Service-level routes: health."""
