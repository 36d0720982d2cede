"""Integrations with engines that score at scale (``ray``: the ``[ray]`` extra)."""
