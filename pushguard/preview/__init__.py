"""Offline preview: the mock runtime and the recorded resource graph.

The ``pushguard preview`` command and the Analyzer-protocol client build on these.
"""
