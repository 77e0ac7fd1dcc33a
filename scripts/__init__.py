"""Operator and maintainer scripts: recording replay histories, the chaos suite."""
