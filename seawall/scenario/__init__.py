"""Scenario runs: the scenario file format and the driver that runs one through the real
prompt workflow (the test and simulation channel, apart from production prompts)."""
