"""Complete example bots; each file runs as is with ``python -m bot_sdk serve``."""
