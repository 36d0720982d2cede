"""The ``x86vector`` dialect: no Python op classes (see the package docstring)."""
