"""The command front ends (packaged as ``minisge.cli``).

These modules import the standard library and the protocol module only, so
that a command starts about as fast as the interpreter does.
"""
