"""rpc-agent: a coding-agent server driven over stdio with line-delimited JSON-RPC 2.0."""

__version__ = "0.1.0"
