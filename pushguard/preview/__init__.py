"""Offline preview: mock runtime, recorded resource graph (the CLI and Analyzer client come later)."""
