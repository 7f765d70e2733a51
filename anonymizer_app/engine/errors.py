"""Errors the engine raises: all are ValueErrors whose message is meant for the user."""


class EngineError(ValueError):
    """Base class: the message names the file, line, column or value at fault."""


class InputError(EngineError):
    """A data file or a parameter cannot be used as given."""


class HierarchyError(EngineError):
    """A generalization hierarchy is malformed or does not cover the data."""


class VerificationError(EngineError):
    """An anonymized result does not satisfy what it claims; it must never be stored as a success."""


class UnsatisfiableError(EngineError):
    """The privacy models cannot be met with the given hierarchies and suppression limit."""


class Cancelled(Exception):
    """Raised from a progress callback to stop a running algorithm."""
