"""Deterministic code only: workflow definitions, the guard, and the contracts they share."""
