"""The edge: the HTTP API that starts one prompt workflow per prompt (arrives with sessions)."""
