"""The ``amx`` dialect: no Python op classes (see the package docstring)."""
