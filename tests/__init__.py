"""Shared test helpers live in conftest.py."""
