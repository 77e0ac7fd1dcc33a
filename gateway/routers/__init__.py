"""The gateway's routes, one ``APIRouter`` per resource; ``create_app`` (gateway/app.py)
includes them under ``/v1`` (the health check at the root) with the dependencies of
gateway/dependencies.py.
"""
