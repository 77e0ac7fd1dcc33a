"""``seawall acp``: Seawall as an Agent Client Protocol agent, for editors such as Zed.

The bridge is only a Temporal client (docs/acp.md): an ACP session is a ``SessionWorkflow``,
a turn is a ``PromptWorkflow``, and every update it sends an editor is mapped from the
prompt's agent events (``seawall.client.events.follow_prompt_events``). Modules:

- ``stdio``: the JSON-RPC streams, with stdout kept for protocol frames only and malformed
  input answered with JSON-RPC errors;
- ``mapping``: pure, agent events to ACP updates and a prompt's end to a turn's answer;
- ``replay``: pure, a session's retained conversation to ACP updates (``session/load``);
- ``prompt_text``: pure, ACP prompt content blocks to a Seawall prompt;
- ``modes``: the ACP session modes, which are Seawall's approval modes;
- ``errors``: the JSON-RPC errors the bridge answers, with messages that say what was wrong;
- ``turn``: following one prompt for an editor, permission requests included;
- ``agent``: the ACP methods;
- ``server``: running the agent on stdio and cancelling what it followed when stdin closes.
"""
