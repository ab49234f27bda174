"""``python -m rpc_agent`` is the ``rpc-agent`` command."""

from rpc_agent.cli import command

if __name__ == "__main__":
    raise SystemExit(command())
