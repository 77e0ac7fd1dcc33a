"""The edge: the HTTP API that starts one prompt workflow per prompt, through sessions.

``create_app`` (in ``gateway.app``) builds the FastAPI app; ``python -m gateway`` serves it.
"""
