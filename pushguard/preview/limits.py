"""The preview's limits that the command line shows without loading Pulumi."""

DEFAULT_TIMEOUT = 600.0
"""Seconds a program may run before the preview stops it (``--timeout``)."""
