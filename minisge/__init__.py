"""minisge: a Grid Engine for a few workstations, on trio."""

__version__ = "0.1.0"
