"""What every client of the workflows shares: the gateway, the CLI and editor bridges.

Clients reach Seawall only through Temporal: handles and timeouts (``temporal_ops``) and the
follower of a prompt's events (``events``). Nothing here imports worker or activity code.
"""
