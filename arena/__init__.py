"""The arena's use cases and what they stand on: the store, the records and the configuration.

``service/`` (HTTP) and ``workers/`` (rq's entry points) call into this package; it imports
neither of them. docs/ARCHITECTURE.md draws the layers.
"""
