"""Seawall: durable AI-agent prompt loops on Temporal that stop repeated tool-failure loops."""
