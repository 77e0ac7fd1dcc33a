"""What the ``outside`` fixture (tests/activities/conftest.py) holds: a secret no tool call
may read or change from a workspace."""

SECRET = "top-secret-outside-content"
